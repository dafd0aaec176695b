"""Travel tools: car rental."""

from __future__ import annotations

import datetime as _dt
from typing import Any

from replan.env.corpus.registry import implementation
from replan.env.corpus.travel import facts
from replan.env.world import InvalidValue, ToolContext

_CAR_CLASSES = facts.SEEDS.table("car_classes", dict[str, tuple[str, tuple[int, int]]])
_SUPPLIERS = facts.SEEDS.table("suppliers", list[str])


def _car_offers(
    ctx: ToolContext, param: str, iata: str, date: str, days: int
) -> list[dict[str, Any]]:
    facts.airport_city(param, iata)
    out = []
    for code, (cls, (lo, hi)) in _CAR_CLASSES.items():
        oid = f"CAR-{iata}-{facts.ymd(date)}-{days}-{code}"
        daily = ctx.number(f"car:{iata}:{date}:{code}", lo, hi)
        out.append(
            {
                "offer_id": oid,
                "car_class": cls,
                "supplier": ctx.pick(f"car:{iata}:{code}:sup", _SUPPLIERS),
                "daily_rate_usd": daily,
                "total_usd": round(daily * days, 2),
            }
        )
    out.sort(key=lambda o: (o["total_usd"], o["offer_id"]))
    return out


def _car_by_id(ctx: ToolContext, offer_id: str) -> dict[str, Any]:
    try:
        _, iata, day, days, _code = offer_id.split("-")
        date = facts.iso(day)
        _dt.date.fromisoformat(date)
        offers = _car_offers(ctx, "offer_id", iata, date, int(days))
        return next(o for o in offers if o["offer_id"] == offer_id)
    except (ValueError, StopIteration, InvalidValue) as exc:
        raise InvalidValue("offer_id", f"unknown car offer {offer_id!r}") from exc


@implementation
def search_rental_cars(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    offers = _car_offers(
        ctx, "pickup_airport", args["pickup_airport"], args["pickup_date"], args["rental_days"]
    )
    if args.get("car_class"):
        offers = [o for o in offers if o["car_class"] == args["car_class"]]
    return {"offers": offers, "cheapest_offer_id": offers[0]["offer_id"]}


@implementation
def find_car_hire_deals(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    models = {
        "economy": "Fiat 500",
        "compact": "VW Golf",
        "suv": "Toyota RAV4",
        "premium": "BMW 5 Series",
    }
    offers = _car_offers(
        ctx, "location_iata", args["location_iata"], args["from_date"], args["duration_days"]
    )
    deals = [
        {
            "id": o["offer_id"],
            "vehicle": {"category": o["car_class"], "example": models[o["car_class"]]},
            "vendor": o["supplier"],
            "price": o["total_usd"],
        }
        for o in offers
    ]
    return {"deals": deals, "best_deal": {"id": deals[0]["id"], "price": deals[0]["price"]}}


@implementation
def hold_rental_car(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    o = _car_by_id(ctx, args["offer_id"])
    age = args["driver_age"]
    if age < 21:
        raise InvalidValue("driver_age", "drivers must be at least 21")
    if age < 25 and o["car_class"] == "premium":
        raise InvalidValue("driver_age", "premium cars require a driver aged 25 or over")
    days = int(args["offer_id"].split("-")[3])
    fee = 18.0 * days if age < 25 else 0.0
    extras = {"child_seat": 9.0, "gps": 11.0, "additional_driver": 12.0, "snow_chains": 6.0}
    extra = sum(extras[e] for e in sorted(set(args.get("extras", [])))) * days
    return {
        "hold_id": ctx.new_id("HOLD"),
        "offer_id": args["offer_id"],
        "total_usd": round(o["total_usd"] + fee + extra, 2),
        "young_driver_fee_usd": fee,
    }


@implementation
def confirm_car_rental(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    h = ctx.state.get("car_holds", args["hold_id"]) or {}
    _, iata, day, _days, _code = h["offer_id"].split("-")
    return {
        "confirmation_number": ctx.new_id("RC"),
        "status": "confirmed",
        "total_usd": h["total_usd"],
        "pickup": {"airport": iata, "date": facts.iso(day)},
    }
