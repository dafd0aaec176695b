"""Travel tools: hotels."""

from __future__ import annotations

from typing import Any

from replan.env.corpus.financial import fx_rate
from replan.env.corpus.registry import implementation
from replan.env.corpus.travel import facts
from replan.env.world import InvalidValue, ToolContext

_HOTEL_A = facts.SEEDS.table("hotel_a", list[str])
_HOTEL_B = facts.SEEDS.table("hotel_b", list[str])


_STAR_RATE = facts.SEEDS.table("star_rate", dict[int, tuple[int, int]])
_AMENITIES = facts.SEEDS.table("amenities", list[str])


def _hotel(ctx: ToolContext, hotel_id: str, param: str = "hotel_id") -> dict[str, Any]:
    """Static facts of a hotel; ids are HTL-<IATA of its city>-<1..4>."""
    try:
        _, iata, idx = hotel_id.split("-")
        city = facts.BY_IATA[iata]
        if not 1 <= int(idx) <= 4:
            raise ValueError(idx)
    except (ValueError, KeyError) as exc:
        raise InvalidValue(param, f"unknown hotel {hotel_id!r}") from exc
    c = facts.CITIES[city]
    stars = ctx.pick(f"htl:{hotel_id}:stars", [2, 3, 3, 4, 4, 5])
    return {
        "hotel_id": hotel_id,
        "city": city,
        "stars": stars,
        "name": f"{ctx.pick(f'htl:{hotel_id}:a', _HOTEL_A)} "
        f"{ctx.pick(f'htl:{hotel_id}:b', _HOTEL_B)} {city}",
        "address": f"{int(ctx.number(f'htl:{hotel_id}:no', 1, 240, 0))} "
        f"{ctx.pick(f'htl:{hotel_id}:st', facts.STREETS)}, {city}",
        "lat": round(c[2] + ctx.number(f"htl:{hotel_id}:lat", -0.03, 0.03, 5), 5),
        "lng": round(c[3] + ctx.number(f"htl:{hotel_id}:lng", -0.03, 0.03, 5), 5),
        "amenities": [
            a
            for a in _AMENITIES
            if a == "wifi" or ctx.number(f"htl:{hotel_id}:{a}", 0, 1) < 0.16 * stars
        ],
    }


def _nightly(ctx: ToolContext, hotel: dict[str, Any], check_in: str) -> float:
    lo, hi = _STAR_RATE[hotel["stars"]]
    return ctx.number(f"htl:{hotel['hotel_id']}:{check_in}", lo, hi)


def _hotels(
    ctx: ToolContext, param: str, city: str, check_in: str, nights: int
) -> list[dict[str, Any]]:
    """The hotels of a city with their price for a stay, cheapest first."""
    iata = facts.city(param, city)[1]
    out = []
    for i in range(1, 5):
        h = _hotel(ctx, f"HTL-{iata}-{i}")
        rate = _nightly(ctx, h, check_in)
        out.append({**h, "nightly_usd": rate, "total_usd": round(rate * nights, 2)})
    out.sort(key=lambda h: (h["total_usd"], h["hotel_id"]))
    return out


@implementation
def search_hotels(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    hs = _hotels(ctx, "city", args["city"], args["check_in"], args["nights"])
    keep = ("hotel_id", "name", "stars", "nightly_usd", "total_usd")
    return {"hotels": [{k: h[k] for k in keep} for h in hs], "cheapest_hotel_id": hs[0]["hotel_id"]}


@implementation
def find_accommodation(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    ccy = args.get("currency", "USD")
    try:
        rate = fx_rate(ctx, "USD", ccy)
    except KeyError as exc:
        raise InvalidValue("currency", f"unsupported currency {ccy!r}") from exc
    hs = _hotels(ctx, "destination", args["destination"], args["arrival_date"], args["stay_nights"])
    props = [
        {
            "property_id": h["hotel_id"],
            "property_name": h["name"],
            "class": h["stars"],
            "price": {"amount": round(h["total_usd"] * rate, 2), "currency": ccy},
        }
        for h in hs
    ]
    return {
        "properties": props,
        "recommended": {
            "property_id": props[0]["property_id"],
            "property_name": props[0]["property_name"],
        },
    }


@implementation
def get_hotel_details(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return _hotel(ctx, args["hotel_id"])


@implementation
def quote_hotel_stay(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    h = _hotel(ctx, args["hotel_id"])
    total = round(_nightly(ctx, h, args["check_in"]) * args["nights"], 2) * args.get("rooms", 1)
    return {
        "quote_id": ctx.new_id("HQ"),
        "hotel_id": args["hotel_id"],
        "check_out": facts.plus_days(args["check_in"], args["nights"]),
        "total_usd": round(total, 2),
        "cancellation": "free_until_48h" if h["stars"] >= 4 else "non_refundable",
    }


@implementation
def reserve_hotel(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    q = ctx.state.get("hotel_quotes", args["hotel_quote_id"]) or {}
    return {
        "reservation_id": ctx.new_id("HR"),
        "status": "confirmed",
        "check_in": q["check_in"],
        "check_out": q["check_out"],
        "total_usd": q["total_usd"],
    }


@implementation
def cancel_hotel_reservation(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return {
        "reservation_id": args["reservation_id"],
        "status": "cancelled",
        "cancellation_code": ctx.new_id("CXL"),
    }
