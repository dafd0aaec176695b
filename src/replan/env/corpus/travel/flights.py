"""Travel tools: flights."""

from __future__ import annotations

import datetime as _dt
from typing import Any

from replan.env.corpus.registry import implementation
from replan.env.corpus.travel import facts
from replan.env.world import InvalidValue, ToolContext


def _flights(ctx: ToolContext, origin: str, destination: str, date: str) -> list[dict[str, Any]]:
    """The flight table for a route and day: a pure function of (seed, route, date)."""
    if origin == destination:
        raise InvalidValue("destination", "origin and destination are the same airport")
    out = []
    for i in range(3):
        key = f"{origin}-{destination}-{date}-{i}"
        out.append(
            {
                "flight_id": f"FL-{origin}{destination}-{date.replace('-', '')}-{i + 1}",
                "carrier": ctx.pick(key + "c", facts.CARRIERS),
                "departure": f"{date}T{6 + 5 * i:02d}:{ctx.pick(key + 'm', ['05', '20', '40'])}",
                "stops": i % 2,
                "price_usd": ctx.number(key + "p", 180, 1400),
            }
        )
    return out


def _flight_by_id(ctx: ToolContext, flight_id: str, param: str = "flight_id") -> dict[str, Any]:
    """Look an offer up again from its id (ids encode route, date and slot)."""
    try:
        _, route, day, slot = flight_id.split("-")
        date = f"{day[:4]}-{day[4:6]}-{day[6:]}"
        _dt.date.fromisoformat(date)
        if len(route) != 6 or not 1 <= int(slot) <= 3:
            raise ValueError(flight_id)
        return _flights(ctx, route[:3], route[3:], date)[int(slot) - 1]
    except (ValueError, IndexError, InvalidValue) as exc:
        raise InvalidValue(param, f"unknown flight offer {flight_id!r}") from exc


def _fare_rules(ctx: ToolContext, flight_id: str) -> dict[str, Any]:
    brand = ctx.pick(f"fare:{flight_id}", ["Light", "Classic", "Flex"])
    return {
        "fare_brand": brand,
        "refundable": brand != "Light",
        "cancellation_fee_usd": {"Light": 0.0, "Classic": 150.0, "Flex": 0.0}[brand],
        "change_fee_usd": {"Light": 120.0, "Classic": 60.0, "Flex": 0.0}[brand],
        "baggage": {
            "cabin_kg": 8 if brand == "Light" else 10,
            "checked_bags": {"Light": 0, "Classic": 1, "Flex": 2}[brand],
        },
    }


@implementation
def search_flights(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    flights = _flights(ctx, args["origin"], args["destination"], args["date"])
    flights = [f for f in flights if f["stops"] <= args.get("max_stops", 2)]
    cheapest = min(flights, key=lambda f: f["price_usd"])
    return {"flights": flights, "cheapest_flight_id": cheapest["flight_id"]}


@implementation
def find_flight_offers(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    o = facts.city("from_city", args["from_city"])[1]
    d = facts.city("to_city", args["to_city"])[1]
    if o == d:
        raise InvalidValue("to_city", "departure and arrival are served by the same airport")
    flights = _flights(ctx, o, d, args["travel_date"])
    best = min(flights, key=lambda f: f["price_usd"])
    return {"best_offer": best, "offers_found": len(flights)}


@implementation
def get_fare_rules(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _flight_by_id(ctx, args["offer_id"], "offer_id")
    return {"offer_id": args["offer_id"], **_fare_rules(ctx, args["offer_id"])}


@implementation
def quote_flight(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    flight = _flight_by_id(ctx, args["flight_id"])
    total = round(flight["price_usd"] * args.get("passengers", 1), 2)
    return {"quote_id": ctx.new_id("FQ"), "total_usd": total, "flight_id": args["flight_id"]}


@implementation
def book_flight(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    quote = ctx.state.get("flight_quotes", args["quote_id"])
    assert quote is not None  # guaranteed by the precondition
    return {
        "booking_id": ctx.new_id("PNR"),
        "status": "confirmed",
        "charged_usd": quote["total_usd"],
        "flight_id": quote["flight_id"],
    }


@implementation
def get_flight_booking(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    b = ctx.state.get("flight_bookings", args["booking_reference"]) or {}
    return {
        "booking_reference": args["booking_reference"],
        "status": b["status"],
        "traveller": b["traveller"],
        "contact_email": b["email"],
        "itinerary": _flight_by_id(ctx, b["flight_id"]),
        "charged_usd": b["charged_usd"],
    }


@implementation
def cancel_flight_booking(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    b = ctx.state.get("flight_bookings", args["booking_id"]) or {}
    rules = _fare_rules(ctx, b["flight_id"])
    refund = (
        max(0.0, round(b["charged_usd"] - rules["cancellation_fee_usd"], 2))
        if rules["refundable"]
        else 0.0
    )
    return {"booking_id": args["booking_id"], "status": "cancelled", "refund_usd": refund}
