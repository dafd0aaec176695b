"""Travel tools: trip costing."""

from __future__ import annotations

from typing import Any

from replan.env.corpus.financial import fx_rate
from replan.env.corpus.registry import implementation
from replan.env.corpus.travel import facts
from replan.env.world import InvalidValue, ToolContext

#: typical daily spend per traveller (lodging excluded), USD
_DAILY_USD = facts.SEEDS.table("daily_usd", dict[str, int])


def _daily_usd(ctx: ToolContext, param: str, city: str) -> float:
    facts.city(param, city)
    return round(_DAILY_USD[city] * (1 + ctx.number(f"col:{city}", -0.08, 0.08, 4)), 2)


def _trip_total(
    ctx: ToolContext, daily_usd: float, days: int, travellers: int, currency: str, param: str
) -> tuple[float, float]:
    try:
        rate = fx_rate(ctx, "USD", currency)
    except KeyError as exc:
        raise InvalidValue(param, f"unsupported currency {currency!r}") from exc
    return round(daily_usd * days * travellers * rate, 2), rate


@implementation
def get_cost_of_living(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    daily = _daily_usd(ctx, "city", args["city"])
    return {
        "city": args["city"],
        "daily_cost_usd": daily,
        "meal_inexpensive_usd": round(daily * 0.16, 2),
        "transit_ticket_usd": round(daily * 0.025, 2),
    }


@implementation
def price_trip_budget(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    total, rate = _trip_total(
        ctx,
        args["daily_cost_usd"],
        args["days"],
        args.get("travellers", 1),
        args["currency"],
        "currency",
    )
    return {"total": total, "currency": args["currency"], "usd_rate": rate}


@implementation
def estimate_trip_budget(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    daily = _daily_usd(ctx, "destination", args["destination"])
    total, _rate = _trip_total(
        ctx,
        daily,
        args["trip_days"],
        args.get("travellers", 1),
        args["home_currency"],
        "home_currency",
    )
    return {
        "destination": args["destination"],
        "estimate": {"amount": total, "currency": args["home_currency"]},
        "daily_cost_usd": daily,
    }
