"""Travel: flights, hotels, trains, car hire, visas and weather-aware trip tools."""

from __future__ import annotations

from typing import Any

from replan.core.tools import Effect, Precondition
from replan.env.corpus.kinds import CITY, DATE, EMAIL, PERSON, USD, kind
from replan.env.corpus.registry import alternatives, initial_state, s, tool
from replan.env.world import InvalidValue, ToolContext

AIRPORT = kind(
    "airport",
    "an IATA airport code",
    ["LIS", "KIX", "DEN", "NBO", "YUL", "KRK", "AKL", "SCL", "TLL", "HAN", "OPO", "AUS"],
)
FLIGHT_ID = kind("flight_id", "a flight offer identifier returned by a flight search")
FLIGHT_QUOTE_ID = kind("flight_quote_id", "a priced, holdable flight quote")
FLIGHT_BOOKING_ID = kind("flight_booking_id", "a confirmed flight booking reference")

_CITY_AIRPORT = {
    "Lisbon": "LIS",
    "Osaka": "KIX",
    "Denver": "DEN",
    "Nairobi": "NBO",
    "Montreal": "YUL",
    "Krakow": "KRK",
    "Auckland": "AKL",
    "Valparaiso": "SCL",
    "Tallinn": "TLL",
    "Hanoi": "HAN",
    "Porto": "OPO",
    "Austin": "AUS",
}
_CARRIERS = ["TAP", "ANA", "United", "Kenya Airways", "Air Canada", "LOT", "Air NZ", "LATAM"]


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
                "carrier": ctx.pick(key + "c", _CARRIERS),
                "departure": f"{date}T{6 + 5 * i:02d}:{ctx.pick(key + 'm', ['05', '20', '40'])}",
                "stops": i % 2,
                "price_usd": ctx.number(key + "p", 180, 1400),
            }
        )
    return out


def _flight_by_id(ctx: ToolContext, flight_id: str) -> dict[str, Any]:
    """Look an offer up again from its id (ids encode route, date and slot)."""
    try:
        _, route, day, slot = flight_id.split("-")
        date = f"{day[:4]}-{day[4:6]}-{day[6:]}"
        return _flights(ctx, route[:3], route[3:], date)[int(slot) - 1]
    except (ValueError, IndexError) as exc:
        raise InvalidValue("flight_id", f"unknown flight offer {flight_id!r}") from exc


_FLIGHT = s.obj(
    {
        "flight_id": s.string("offer id", FLIGHT_ID),
        "carrier": s.string("operating airline"),
        "departure": s.string("local departure time, ISO 8601"),
        "stops": s.integer("number of stops", minimum=0),
        "price_usd": s.number("fare in USD", USD, minimum=0),
    }
)


@tool(
    domain="Travel",
    category="source",
    group="flight_search",
    description="Search one-way flights between two airports on a date (Skyscan-style API).",
    params={
        "origin": s.string("IATA code of the departure airport", AIRPORT, pattern="^[A-Z]{3}$"),
        "destination": s.string("IATA code of the arrival airport", AIRPORT, pattern="^[A-Z]{3}$"),
        "date": s.date("departure date"),
        "max_stops": s.integer("maximum number of stops", minimum=0, maximum=2),
    },
    required=["origin", "destination", "date"],
    returns=s.obj({"flights": s.array(_FLIGHT), "cheapest_flight_id": s.string("", FLIGHT_ID)}),
)
def search_flights(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    flights = _flights(ctx, args["origin"], args["destination"], args["date"])
    flights = [f for f in flights if f["stops"] <= args.get("max_stops", 2)]
    cheapest = min(flights, key=lambda f: f["price_usd"])
    return {"flights": flights, "cheapest_flight_id": cheapest["flight_id"]}


@tool(
    domain="Travel",
    category="source",
    group="flight_search",
    description="Find flights by city names; returns the best-value offer (Amadeus-style).",
    params={
        "from_city": s.string("departure city", CITY),
        "to_city": s.string("arrival city", CITY),
        "travel_date": s.date("date of travel"),
    },
    returns=s.obj({"best_offer": _FLIGHT, "offers_found": s.integer(minimum=0)}),
)
def find_flight_offers(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    try:
        o, d = _CITY_AIRPORT[args["from_city"]], _CITY_AIRPORT[args["to_city"]]
    except KeyError as exc:
        raise InvalidValue(
            "from_city" if exc.args[0] == args["from_city"] else "to_city",
            f"no airport known for city {exc.args[0]!r}",
        ) from exc
    flights = _flights(ctx, o, d, args["travel_date"])
    best = min(flights, key=lambda f: f["price_usd"])
    return {"best_offer": best, "offers_found": len(flights)}


alternatives(
    "flight_search",
    "1-1",
    ["search_flights"],
    ["find_flight_offers"],
    description="two flight-search providers over the same fares",
    output_kind=FLIGHT_ID,
)


@tool(
    domain="Travel",
    category="processor",
    description="Price a flight offer for a number of passengers and hold it as a quote.",
    params={
        "flight_id": s.string("offer id from a flight search", FLIGHT_ID, pattern="^FL-"),
        "passengers": s.integer("number of passengers", minimum=1, maximum=9),
    },
    required=["flight_id"],
    returns=s.obj(
        {
            "quote_id": s.string("", FLIGHT_QUOTE_ID),
            "total_usd": s.number("", USD),
            "flight_id": s.string("", FLIGHT_ID),
        }
    ),
    effects=[
        Effect(
            op="create",
            collection="flight_quotes",
            key="quote_id",
            fields={
                "flight_id": "$arg.flight_id",
                "total_usd": "$output.total_usd",
                "status": "open",
            },
        )
    ],
)
def quote_flight(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    flight = _flight_by_id(ctx, args["flight_id"])
    total = round(flight["price_usd"] * args.get("passengers", 1), 2)
    return {"quote_id": ctx.new_id("FQ"), "total_usd": total, "flight_id": args["flight_id"]}


@tool(
    domain="Travel",
    category="action",
    description="Book a held flight quote for a named traveller; consumes the quote.",
    params={
        "quote_id": s.string("quote to book", FLIGHT_QUOTE_ID),
        "traveller_name": s.string("passenger's full name", PERSON, min_len=3),
        "contact_email": s.email("where the e-ticket goes"),
    },
    returns=s.obj(
        {
            "booking_id": s.string("", FLIGHT_BOOKING_ID),
            "status": s.enum(["confirmed"]),
            "charged_usd": s.number("", USD),
        }
    ),
    preconditions=[
        Precondition(
            kind="field_equals",
            collection="flight_quotes",
            arg="quote_id",
            field="status",
            value="open",
            description="the flight quote must exist and still be open",
        )
    ],
    effects=[
        Effect(
            op="update", collection="flight_quotes", key="quote_id", fields={"status": "booked"}
        ),
        Effect(
            op="create",
            collection="flight_bookings",
            key="booking_id",
            fields={
                "quote_id": "$arg.quote_id",
                "traveller": "$arg.traveller_name",
                "email": "$arg.contact_email",
            },
        ),
    ],
)
def book_flight(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    quote = ctx.state.get("flight_quotes", args["quote_id"])
    assert quote is not None  # guaranteed by the precondition
    return {
        "booking_id": ctx.new_id("PNR"),
        "status": "confirmed",
        "charged_usd": quote["total_usd"],
    }


@initial_state
def _travel_state(seed: int) -> dict[str, dict[str, dict[str, Any]]]:
    # quotes and bookings only come from tools; one expired quote exists so that a literal,
    # stale quote id fails its precondition the way a real API would
    return {
        "flight_quotes": {
            "FQ-EXPIRED1": {
                "flight_id": "FL-LISKIX-20261203-1",
                "total_usd": 999.0,
                "status": "expired",
            }
        }
    }


__all__ = ["AIRPORT", "DATE", "EMAIL", "FLIGHT_ID"]
