"""Travel: flights, hotels, trains, car hire, visas, insurance, places and trip costing.

Facts live in private helpers keyed by what they describe (``_flights`` by route and day,
``_hotels`` by city, ``_trains`` by stations and day, ...), so alternative providers agree.
Identifiers encode what they name (``FL-LISKIX-20261203-1``), so a later tool can look the
offer up again without state; quotes, holds and bookings live in state.
"""

from __future__ import annotations

import datetime as _dt
import math
from typing import Any

from replan.core.tools import Effect, Precondition
from replan.env.corpus.financial import FX_RATE, fx_rate
from replan.env.corpus.kinds import (
    ADDRESS,
    CITY,
    COUNT,
    COUNTRY,
    CURRENCY,
    DATE,
    DURATION,
    EMAIL,
    MONEY,
    PERSON,
    URL,
    USD,
    kind,
)
from replan.env.corpus.registry import alternatives, initial_state, s, tool
from replan.env.world import InvalidValue, ToolContext

AIRPORT = kind(
    "airport",
    "an IATA airport code",
    ["LIS", "KIX", "DEN", "NBO", "YUL", "KRK", "AKL", "SCL", "TLL", "HAN", "OPO", "AUS"],
)
LOCAL_DT = kind("local_datetime", "a local date and time without offset, YYYY-MM-DDTHH:MM")
FLIGHT_ID = kind("flight_id", "a flight offer identifier returned by a flight search")
FLIGHT_QUOTE_ID = kind("flight_quote_id", "a priced, holdable flight quote")
FLIGHT_BOOKING_ID = kind("flight_booking_id", "a confirmed flight booking reference")
FARE_BRAND = kind("fare_brand", "a fare family such as Light, Classic or Flex")
HOTEL_ID = kind("hotel_id", "a hotel property identifier")
HOTEL_QUOTE_ID = kind("hotel_quote_id", "a priced hotel stay held for booking")
HOTEL_RESERVATION_ID = kind("hotel_reservation_id", "a confirmed hotel reservation")
GUEST = kind(
    "hotel_guest",
    "the lead guest of a hotel stay: full name and e-mail",
    [
        {"full_name": "Ana Silva", "email": "ana.silva@example.org"},
        {"full_name": "Kenji Mori", "email": "kenji.mori@example.jp"},
        {"full_name": "Wanjiru Kamau", "email": "wanjiru.k@example.co.ke"},
    ],
)
NIGHTS = kind("stay_nights", "a number of hotel nights", [1, 2, 3, 5, 7])
STAR_RATING = kind("star_rating", "a hotel star rating, 1 to 5")
LOCODE = kind(
    "un_locode",
    "a UN/LOCODE location code (country + 3 letters)",
    ["PTLIS", "PTOPO", "PLKRK", "PLWAW", "EETLL", "DEBER", "FRPAR", "ESMAD"],
)
TRAIN_ID = kind("train_id", "a rail journey offer identifier")
TRAIN_TICKET_ID = kind("train_ticket_id", "an issued rail ticket")
TRIP_DAYS = kind("trip_days", "a trip or rental length in days", [3, 5, 7, 10, 14])
CAR_OFFER_ID = kind("car_offer_id", "a rental-car offer identifier")
CAR_HOLD_ID = kind("car_hold_id", "a rental car held for a driver")
CAR_RENTAL_ID = kind("car_rental_id", "a confirmed car rental")
DRIVER_AGE = kind("driver_age", "the age of the main driver in years", [23, 30, 41, 58])
VISA_CATEGORY = kind(
    "visa_category",
    "what a traveller needs to enter a country "
    "(not_required, visa_free, eta, evisa, visa_required)",
)
PASSPORT_NO = kind(
    "passport_number", "a passport number", ["P1234567", "CA9876543", "X4729185", "EK0038291"]
)
VISA_APPLICATION_ID = kind("visa_application_id", "a submitted e-visa / ETA application")
ADVISORY_LEVEL = kind("advisory_level", "a government travel advisory level, 1 (normal) to 4")
INSURANCE_QUOTE_ID = kind("insurance_quote_id", "a travel-insurance quote")
INSURANCE_POLICY_ID = kind("insurance_policy_id", "an issued travel-insurance policy")
TRAVELLER_AGES = kind(
    "traveller_ages", "the ages of everyone travelling", [[34], [29, 31], [45, 43, 12]]
)
POI_ID = kind("poi_id", "a point-of-interest identifier")
POI_CATEGORY = kind(
    "poi_category", "a kind of place to visit", ["museum", "restaurant", "park", "landmark", "cafe"]
)
POI_RATING = kind("poi_rating", "an average visitor rating")
# shared with General (declared in general.py; Office uses the time zone the same way), so that a
# destination's coordinates, time zone and route mode chain into the assistant and calendar tools
LATITUDE = "geo_latitude"
LONGITUDE = "geo_longitude"
DISTANCE_KM = "route_distance_km"
TRAVEL_MODE = "travel_mode"
IANA_TZ = "iana_timezone"
DAILY_COST = kind("daily_cost_usd", "a typical daily spend per traveller at a destination, USD")
UTC_OFFSET = kind("utc_offset_s", "an offset from UTC in seconds")

# -- reference tables -------------------------------------------------------------------------
#: city -> (country, IATA, lat, lon, IANA zone, currency, UN/LOCODE, rail network)
_CITIES: dict[str, tuple[str, str, float, float, str, str, str, str]] = {
    "Lisbon": ("PT", "LIS", 38.7223, -9.1393, "Europe/Lisbon", "EUR", "PTLIS", "EU"),
    "Porto": ("PT", "OPO", 41.1579, -8.6291, "Europe/Lisbon", "EUR", "PTOPO", "EU"),
    "Madrid": ("ES", "MAD", 40.4168, -3.7038, "Europe/Madrid", "EUR", "ESMAD", "EU"),
    "Paris": ("FR", "CDG", 48.8566, 2.3522, "Europe/Paris", "EUR", "FRPAR", "EU"),
    "London": ("GB", "LHR", 51.5074, -0.1278, "Europe/London", "GBP", "GBLON", "EU"),
    "Berlin": ("DE", "BER", 52.52, 13.405, "Europe/Berlin", "EUR", "DEBER", "EU"),
    "Warsaw": ("PL", "WAW", 52.2297, 21.0122, "Europe/Warsaw", "PLN", "PLWAW", "EU"),
    "Krakow": ("PL", "KRK", 50.0647, 19.945, "Europe/Warsaw", "PLN", "PLKRK", "EU"),
    "Tallinn": ("EE", "TLL", 59.437, 24.7536, "Europe/Tallinn", "EUR", "EETLL", "EU"),
    "Osaka": ("JP", "KIX", 34.6937, 135.5023, "Asia/Tokyo", "JPY", "JPOSA", "JP"),
    "Tokyo": ("JP", "HND", 35.6762, 139.6503, "Asia/Tokyo", "JPY", "JPTYO", "JP"),
    "Denver": ("US", "DEN", 39.7392, -104.9903, "America/Denver", "USD", "USDEN", "NA"),
    "Austin": ("US", "AUS", 30.2672, -97.7431, "America/Chicago", "USD", "USAUS", "NA"),
    "New York": ("US", "JFK", 40.7128, -74.006, "America/New_York", "USD", "USNYC", "NA"),
    "Montreal": ("CA", "YUL", 45.5019, -73.5674, "America/Toronto", "CAD", "CAMTR", "NA"),
    "Toronto": ("CA", "YYZ", 43.6532, -79.3832, "America/Toronto", "CAD", "CATOR", "NA"),
    "Nairobi": ("KE", "NBO", -1.2921, 36.8219, "Africa/Nairobi", "KES", "KENBO", "KE"),
    "Mombasa": ("KE", "MBA", -4.0435, 39.6682, "Africa/Nairobi", "KES", "KEMBA", "KE"),
    "Auckland": ("NZ", "AKL", -36.8485, 174.7633, "Pacific/Auckland", "NZD", "NZAKL", "NZ"),
    "Wellington": ("NZ", "WLG", -41.2865, 174.7762, "Pacific/Auckland", "NZD", "NZWLG", "NZ"),
    "Valparaiso": ("CL", "SCL", -33.0472, -71.6127, "America/Santiago", "CLP", "CLVAP", "CL"),
    "Hanoi": ("VN", "HAN", 21.0278, 105.8342, "Asia/Ho_Chi_Minh", "VND", "VNHAN", "VN"),
    "Ho Chi Minh City": ("VN", "SGN", 10.8231, 106.6297, "Asia/Ho_Chi_Minh", "VND", "VNSGN", "VN"),
}
_AIRPORT_NAMES = {
    "LIS": "Humberto Delgado Airport",
    "OPO": "Francisco Sa Carneiro Airport",
    "MAD": "Adolfo Suarez Madrid-Barajas Airport",
    "CDG": "Paris Charles de Gaulle Airport",
    "LHR": "London Heathrow Airport",
    "BER": "Berlin Brandenburg Airport",
    "WAW": "Warsaw Chopin Airport",
    "KRK": "Krakow John Paul II International Airport",
    "TLL": "Lennart Meri Tallinn Airport",
    "KIX": "Kansai International Airport",
    "HND": "Tokyo Haneda Airport",
    "DEN": "Denver International Airport",
    "AUS": "Austin-Bergstrom International Airport",
    "JFK": "John F. Kennedy International Airport",
    "YUL": "Montreal-Trudeau International Airport",
    "YYZ": "Toronto Pearson International Airport",
    "NBO": "Jomo Kenyatta International Airport",
    "MBA": "Moi International Airport",
    "AKL": "Auckland Airport",
    "WLG": "Wellington Airport",
    "SCL": "Arturo Merino Benitez International Airport",
    "HAN": "Noi Bai International Airport",
    "SGN": "Tan Son Nhat International Airport",
}
_BY_IATA = {v[1]: k for k, v in _CITIES.items()}
_BY_LOCODE = {v[6]: k for k, v in _CITIES.items()}
#: standard (non-DST) offset in seconds and display name of each zone
_ZONES = {
    "Europe/Lisbon": (0, "Western European Standard Time"),
    "Europe/London": (0, "Greenwich Mean Time"),
    "Europe/Madrid": (3600, "Central European Standard Time"),
    "Europe/Paris": (3600, "Central European Standard Time"),
    "Europe/Berlin": (3600, "Central European Standard Time"),
    "Europe/Warsaw": (3600, "Central European Standard Time"),
    "Europe/Tallinn": (7200, "Eastern European Standard Time"),
    "Asia/Tokyo": (32400, "Japan Standard Time"),
    "America/Denver": (-25200, "Mountain Standard Time"),
    "America/Chicago": (-21600, "Central Standard Time"),
    "America/New_York": (-18000, "Eastern Standard Time"),
    "America/Toronto": (-18000, "Eastern Standard Time"),
    "Africa/Nairobi": (10800, "East Africa Time"),
    "Pacific/Auckland": (43200, "New Zealand Standard Time"),
    "America/Santiago": (-14400, "Chile Standard Time"),
    "Asia/Ho_Chi_Minh": (25200, "Indochina Time"),
}
_CARRIERS = ["TAP", "ANA", "United", "Kenya Airways", "Air Canada", "LOT", "Air NZ", "LATAM"]


def _city(param: str, name: str) -> tuple[str, str, float, float, str, str, str, str]:
    try:
        return _CITIES[name]
    except KeyError as exc:
        raise InvalidValue(param, f"unknown city {name!r}") from exc


def _airport_city(param: str, iata: str) -> str:
    try:
        return _BY_IATA[iata]
    except KeyError as exc:
        raise InvalidValue(param, f"no service at airport {iata!r}") from exc


def _km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 6371.0 * 2 * math.asin(math.sqrt(a))


def _ymd(date: str) -> str:
    return date.replace("-", "")


def _iso(ymd: str) -> str:
    return f"{ymd[:4]}-{ymd[4:6]}-{ymd[6:]}"


def _plus_days(date: str, days: int) -> str:
    return (_dt.date.fromisoformat(date) + _dt.timedelta(days)).isoformat()


# == flights =====================================================================================
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


_FLIGHT = s.obj(
    {
        "flight_id": s.string("offer id", FLIGHT_ID),
        "carrier": s.string("operating airline"),
        "departure": s.string("local departure time, ISO 8601", LOCAL_DT),
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
    o = _city("from_city", args["from_city"])[1]
    d = _city("to_city", args["to_city"])[1]
    if o == d:
        raise InvalidValue("to_city", "departure and arrival are served by the same airport")
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
    category="source",
    description="Fare conditions of a flight offer: fare brand, refundability, fees, baggage.",
    params={"offer_id": s.string("offer id from a flight search", FLIGHT_ID, pattern="^FL-")},
    returns=s.obj(
        {
            "offer_id": s.string("", FLIGHT_ID),
            "fare_brand": s.enum(["Light", "Classic", "Flex"], "", FARE_BRAND),
            "refundable": s.boolean(),
            "cancellation_fee_usd": s.number("", USD, minimum=0),
            "change_fee_usd": s.number("", USD, minimum=0),
            "baggage": s.obj(
                {"cabin_kg": s.integer(minimum=0), "checked_bags": s.integer("", COUNT, minimum=0)}
            ),
        }
    ),
)
def get_fare_rules(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _flight_by_id(ctx, args["offer_id"], "offer_id")
    return {"offer_id": args["offer_id"], **_fare_rules(ctx, args["offer_id"])}


@tool(
    domain="Travel",
    category="processor",
    description="Price a flight offer for a number of passengers and hold it as a quote.",
    params={
        "flight_id": s.string("offer id from a flight search", FLIGHT_ID, pattern="^FL-"),
        "passengers": s.integer("number of passengers", COUNT, minimum=1, maximum=9),
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
            "flight_id": s.string("", FLIGHT_ID),
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
                "flight_id": "$output.flight_id",
                "charged_usd": "$output.charged_usd",
                "status": "confirmed",
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
        "flight_id": quote["flight_id"],
    }


@tool(
    domain="Travel",
    category="source",
    description="Retrieve a flight booking (PNR): status, traveller and itinerary.",
    params={"booking_reference": s.string("booking reference", FLIGHT_BOOKING_ID, pattern="^PNR-")},
    returns=s.obj(
        {
            "booking_reference": s.string("", FLIGHT_BOOKING_ID),
            "status": s.enum(["confirmed", "cancelled"]),
            "traveller": s.string("", PERSON),
            "contact_email": s.email(""),
            "itinerary": _FLIGHT,
            "charged_usd": s.number("", USD),
        }
    ),
    preconditions=[
        Precondition(
            kind="exists",
            collection="flight_bookings",
            arg="booking_reference",
            description="no such booking",
        )
    ],
)
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


@tool(
    domain="Travel",
    category="action",
    description="Cancel a confirmed flight booking; refund follows the fare rules.",
    params={
        "booking_id": s.string("booking to cancel", FLIGHT_BOOKING_ID, pattern="^PNR-"),
        "reason": s.enum(["change_of_plans", "illness", "schedule_change", "other"]),
    },
    required=["booking_id"],
    returns=s.obj(
        {
            "booking_id": s.string("", FLIGHT_BOOKING_ID),
            "status": s.enum(["cancelled"]),
            "refund_usd": s.number("", USD, minimum=0),
        }
    ),
    preconditions=[
        Precondition(
            kind="field_equals",
            collection="flight_bookings",
            arg="booking_id",
            field="status",
            value="confirmed",
            description="only a confirmed booking can be cancelled",
        )
    ],
    effects=[
        Effect(
            op="update",
            collection="flight_bookings",
            key="booking_id",
            fields={"status": "cancelled", "refund_usd": "$output.refund_usd"},
        )
    ],
)
def cancel_flight_booking(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    b = ctx.state.get("flight_bookings", args["booking_id"]) or {}
    rules = _fare_rules(ctx, b["flight_id"])
    refund = (
        max(0.0, round(b["charged_usd"] - rules["cancellation_fee_usd"], 2))
        if rules["refundable"]
        else 0.0
    )
    return {"booking_id": args["booking_id"], "status": "cancelled", "refund_usd": refund}


# == airports and places =========================================================================
@tool(
    domain="Travel",
    category="source",
    group="airport_code",
    description="Autocomplete airports from a free-text term (Kiwi locations style).",
    params={
        "term": s.string("city, airport name or code", CITY, min_len=2),
        "limit": s.integer("maximum results", minimum=1, maximum=10),
    },
    required=["term"],
    returns=s.obj(
        {
            "locations": s.array(
                s.obj(
                    {
                        "code": s.string("IATA", AIRPORT),
                        "name": s.string("airport name"),
                        "city": s.string("", CITY),
                        "country": s.string("", COUNTRY),
                    }
                )
            )
        }
    ),
)
def airport_autocomplete(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    term = args["term"].strip().lower()
    hits = []
    for code, name in _AIRPORT_NAMES.items():
        city = _BY_IATA[code]
        if term == code.lower() or term in city.lower() or term in name.lower():
            rank = 0 if term in (city.lower(), code.lower()) else 1
            hits.append(
                (
                    rank,
                    code,
                    {"code": code, "name": name, "city": city, "country": _CITIES[city][0]},
                )
            )
    hits.sort(key=lambda h: (h[0], h[1]))
    return {"locations": [h[2] for h in hits][: args.get("limit", 5)]}


@tool(
    domain="Travel",
    category="source",
    group="airport_code",
    description="The main airport serving a city.",
    params={"city": s.string("city name", CITY, min_len=2)},
    returns=s.obj(
        {
            "iata": s.string("", AIRPORT),
            "airport_name": s.string(""),
            "city": s.string("", CITY),
            "country": s.string("", COUNTRY),
        }
    ),
)
def resolve_city_airport(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    info = _city("city", args["city"])
    return {
        "iata": info[1],
        "airport_name": _AIRPORT_NAMES[info[1]],
        "city": args["city"],
        "country": info[0],
    }


alternatives(
    "airport_code",
    "1-1",
    ["airport_autocomplete"],
    ["resolve_city_airport"],
    description="two airport directories",
    output_kind=AIRPORT,
)


@tool(
    domain="Travel",
    category="source",
    group="destination_timezone",
    description="Geocode a city to coordinates (Google Geocoding style).",
    params={
        "address": s.string("city to geocode", CITY, min_len=2),
        "region": s.string("ccTLD region bias, e.g. pt", pattern="^[a-z]{2}$"),
    },
    required=["address"],
    returns=s.obj(
        {
            "status": s.enum(["OK"]),
            "results": s.array(
                s.obj(
                    {
                        "formatted_address": s.string("", ADDRESS),
                        "geometry": s.obj(
                            {
                                "location": s.obj(
                                    {"lat": s.number("", LATITUDE), "lng": s.number("", LONGITUDE)}
                                )
                            }
                        ),
                        "country_code": s.string("", COUNTRY),
                    }
                ),
                min_items=1,
            ),
        }
    ),
)
def geocode_destination(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    c = _city("address", args["address"])
    return {
        "status": "OK",
        "results": [
            {
                "formatted_address": f"{args['address']}, {c[0]}",
                "geometry": {"location": {"lat": c[2], "lng": c[3]}},
                "country_code": c[0],
            }
        ],
    }


@tool(
    domain="Travel",
    category="source",
    group="destination_timezone",
    description="Time zone at a coordinate (Google Time Zone style; standard time).",
    params={
        "lat": s.number("latitude", LATITUDE, minimum=-90, maximum=90),
        "lng": s.number("longitude", LONGITUDE, minimum=-180, maximum=180),
        "timestamp": s.integer("seconds since epoch (ignored: standard time)", minimum=0),
    },
    required=["lat", "lng"],
    returns=s.obj(
        {
            "status": s.enum(["OK"]),
            "timeZoneId": s.string("", IANA_TZ),
            "timeZoneName": s.string("display name"),
            "rawOffset": s.integer("", UTC_OFFSET),
            "dstOffset": s.integer("", UTC_OFFSET),
        }
    ),
)
def timezone_at_coordinates(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    lat, lng = args["lat"], args["lng"]
    best = min(_CITIES.values(), key=lambda c: _km(lat, lng, c[2], c[3]))
    if _km(lat, lng, best[2], best[3]) <= 250:
        zone = best[4]
        raw, name = _ZONES[zone]
    else:  # open ocean / unmapped: nautical time zone
        hours = round(lng / 15)
        zone = "Etc/GMT" if hours == 0 else f"Etc/GMT{'-' if hours > 0 else '+'}{abs(hours)}"
        raw, name = hours * 3600, f"UTC{hours:+d}"
    return {
        "status": "OK",
        "timeZoneId": zone,
        "timeZoneName": name,
        "rawOffset": raw,
        "dstOffset": 0,
    }


@tool(
    domain="Travel",
    category="source",
    group="destination_timezone",
    description="Find the UN/LOCODE of a city.",
    params={
        "city": s.string("city name", CITY, min_len=2),
        "country": s.string("ISO alpha-2 to disambiguate", COUNTRY, pattern="^[A-Z]{2}$"),
    },
    required=["city"],
    returns=s.obj(
        {
            "locode": s.string("", LOCODE),
            "name": s.string("", CITY),
            "country": s.string("", COUNTRY),
        }
    ),
)
def lookup_locode(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    c = _city("city", args["city"])
    if args.get("country") not in (None, c[0]):
        raise InvalidValue("country", f"{args['city']} is not in {args['country']}")
    return {"locode": c[6], "name": args["city"], "country": c[0]}


def _dms(value: float, pos: str, neg: str, width: int) -> str:
    minutes = round(abs(value) * 60)
    return f"{minutes // 60:0{width}d}{minutes % 60:02d}{pos if value >= 0 else neg}"


@tool(
    domain="Travel",
    category="source",
    group="destination_timezone",
    description="UN/LOCODE entry of a location: functions, coordinates, IATA code and time zone.",
    params={"locode": s.string("UN/LOCODE, 5 letters", LOCODE, pattern="^[A-Z]{2}[A-Z2-9]{3}$")},
    returns=s.obj(
        {
            "locode": s.string("", LOCODE),
            "name": s.string("", CITY),
            "country": s.string("", COUNTRY),
            "functions": s.array(s.enum(["port", "rail", "road", "airport"])),
            "coordinates": s.string("UN/LOCODE DDMMN DDDMMW"),
            "iata": s.string("", AIRPORT),
            "timezone": s.string("", IANA_TZ),
        }
    ),
)
def get_locode_details(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    try:
        name = _BY_LOCODE[args["locode"]]
    except KeyError as exc:
        raise InvalidValue("locode", f"unknown UN/LOCODE {args['locode']!r}") from exc
    c = _CITIES[name]
    funcs = ["rail", "road", "airport"]
    if name in (
        "Lisbon",
        "Porto",
        "Tallinn",
        "Osaka",
        "Tokyo",
        "New York",
        "Montreal",
        "Mombasa",
        "Auckland",
        "Wellington",
        "Valparaiso",
        "Ho Chi Minh City",
    ):
        funcs.insert(0, "port")
    return {
        "locode": args["locode"],
        "name": name,
        "country": c[0],
        "functions": funcs,
        "coordinates": f"{_dms(c[2], 'N', 'S', 2)} {_dms(c[3], 'E', 'W', 3)}",
        "iata": c[1],
        "timezone": c[4],
    }


alternatives(
    "destination_timezone",
    "N-N",
    ["geocode_destination", "timezone_at_coordinates"],
    ["lookup_locode", "get_locode_details"],
    description="geocode then time-zone lookup, or UN/LOCODE lookup then its entry",
    output_kind=IANA_TZ,
)


@tool(
    domain="Travel",
    category="source",
    description="Government travel advisory level for a destination country.",
    params={"country": s.string("destination, ISO alpha-2", COUNTRY, pattern="^[A-Z]{2}$")},
    returns=s.obj(
        {
            "country": s.string("", COUNTRY),
            "level": s.integer("1 normal .. 4 do not travel", ADVISORY_LEVEL, minimum=1, maximum=4),
            "label": s.enum(
                [
                    "Exercise normal precautions",
                    "Exercise increased caution",
                    "Reconsider travel",
                    "Do not travel",
                ]
            ),
            "last_updated": s.date(""),
        }
    ),
)
def get_travel_advisory(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    c = args["country"]
    level = {
        "FR": 2,
        "DE": 2,
        "GB": 2,
        "ES": 2,
        "KE": 2,
        "MX": 2,
        "CO": 3,
        "VE": 4,
        "UA": 4,
        "HT": 4,
    }.get(c, 1)
    labels = [
        "Exercise normal precautions",
        "Exercise increased caution",
        "Reconsider travel",
        "Do not travel",
    ]
    updated = _plus_days("2026-06-01", int(ctx.number(f"adv:{c}", 0, 150, 0)))
    return {"country": c, "level": level, "label": labels[level - 1], "last_updated": updated}


# == hotels ======================================================================================
_HOTEL_A = ["Grand", "Casa", "Park", "Harbour", "Old Town", "Central", "Riverside", "Boutique"]
_HOTEL_B = ["Hotel", "Suites", "Inn", "Residences", "Palace"]
_STREETS = [
    "Main Street",
    "Station Road",
    "Market Square",
    "Harbour Lane",
    "Castle Hill",
    "Garden Avenue",
    "River Walk",
]
_STAR_RATE = {2: (45, 90), 3: (80, 160), 4: (140, 280), 5: (260, 560)}
_AMENITIES = ["wifi", "breakfast", "pool", "gym", "parking", "spa", "airport_shuttle"]


def _hotel(ctx: ToolContext, hotel_id: str, param: str = "hotel_id") -> dict[str, Any]:
    """Static facts of a hotel; ids are HTL-<IATA of its city>-<1..4>."""
    try:
        _, iata, idx = hotel_id.split("-")
        city = _BY_IATA[iata]
        if not 1 <= int(idx) <= 4:
            raise ValueError(idx)
    except (ValueError, KeyError) as exc:
        raise InvalidValue(param, f"unknown hotel {hotel_id!r}") from exc
    c = _CITIES[city]
    stars = ctx.pick(f"htl:{hotel_id}:stars", [2, 3, 3, 4, 4, 5])
    return {
        "hotel_id": hotel_id,
        "city": city,
        "stars": stars,
        "name": f"{ctx.pick(f'htl:{hotel_id}:a', _HOTEL_A)} "
        f"{ctx.pick(f'htl:{hotel_id}:b', _HOTEL_B)} {city}",
        "address": f"{int(ctx.number(f'htl:{hotel_id}:no', 1, 240, 0))} "
        f"{ctx.pick(f'htl:{hotel_id}:st', _STREETS)}, {city}",
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
    iata = _city(param, city)[1]
    out = []
    for i in range(1, 5):
        h = _hotel(ctx, f"HTL-{iata}-{i}")
        rate = _nightly(ctx, h, check_in)
        out.append({**h, "nightly_usd": rate, "total_usd": round(rate * nights, 2)})
    out.sort(key=lambda h: (h["total_usd"], h["hotel_id"]))
    return out


_NIGHTS = s.integer("number of nights", NIGHTS, minimum=1, maximum=30)


@tool(
    domain="Travel",
    category="source",
    group="hotel_search",
    description="Search hotels in a city for a stay; prices per night and in total, cheapest first.",
    params={
        "city": s.string("city", CITY, min_len=2),
        "check_in": s.date("arrival date"),
        "nights": _NIGHTS,
        "guests": s.integer("total number of guests", COUNT, minimum=1, maximum=8),
    },
    required=["city", "check_in", "nights"],
    returns=s.obj(
        {
            "hotels": s.array(
                s.obj(
                    {
                        "hotel_id": s.string("", HOTEL_ID),
                        "name": s.string("hotel name"),
                        "stars": s.integer("", STAR_RATING, minimum=1, maximum=5),
                        "nightly_usd": s.number("", USD),
                        "total_usd": s.number("", USD),
                    }
                )
            ),
            "cheapest_hotel_id": s.string("", HOTEL_ID),
        }
    ),
)
def search_hotels(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    hs = _hotels(ctx, "city", args["city"], args["check_in"], args["nights"])
    keep = ("hotel_id", "name", "stars", "nightly_usd", "total_usd")
    return {"hotels": [{k: h[k] for k in keep} for h in hs], "cheapest_hotel_id": hs[0]["hotel_id"]}


@tool(
    domain="Travel",
    category="source",
    group="hotel_search",
    description="Find places to stay at a destination (Booking-style); recommends the best price.",
    params={
        "destination": s.string("destination city", CITY, min_len=2),
        "arrival_date": s.date("check-in date"),
        "stay_nights": _NIGHTS,
        "adults": s.integer("number of adults", COUNT, minimum=1, maximum=8),
        "currency": s.string("display currency for prices", CURRENCY, pattern="^[A-Z]{3}$"),
    },
    required=["destination", "arrival_date", "stay_nights"],
    returns=s.obj(
        {
            "properties": s.array(
                s.obj(
                    {
                        "property_id": s.string("", HOTEL_ID),
                        "property_name": s.string(""),
                        "class": s.integer("stars", STAR_RATING),
                        "price": s.obj(
                            {
                                "amount": s.number("stay total", MONEY),
                                "currency": s.string("", CURRENCY),
                            }
                        ),
                    }
                )
            ),
            "recommended": s.obj(
                {"property_id": s.string("", HOTEL_ID), "property_name": s.string("")}
            ),
        }
    ),
)
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


alternatives(
    "hotel_search",
    "1-1",
    ["search_hotels"],
    ["find_accommodation"],
    description="two hotel search providers over the same inventory",
    output_kind=HOTEL_ID,
)


@tool(
    domain="Travel",
    category="source",
    description="Details of one hotel: name, stars, address, coordinates and amenities.",
    params={"hotel_id": s.string("hotel", HOTEL_ID, pattern="^HTL-[A-Z]{3}-[0-9]$")},
    returns=s.obj(
        {
            "hotel_id": s.string("", HOTEL_ID),
            "name": s.string(""),
            "stars": s.integer("", STAR_RATING, minimum=1, maximum=5),
            "address": s.string("", ADDRESS),
            "city": s.string("", CITY),
            "lat": s.number("", LATITUDE),
            "lng": s.number("", LONGITUDE),
            "amenities": s.array(s.enum(_AMENITIES)),
        }
    ),
)
def get_hotel_details(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return _hotel(ctx, args["hotel_id"])


@tool(
    domain="Travel",
    category="processor",
    description="Price a stay at a hotel and hold the rate as a quote.",
    params={
        "hotel_id": s.string("hotel", HOTEL_ID, pattern="^HTL-[A-Z]{3}-[0-9]$"),
        "check_in": s.date("arrival date"),
        "nights": _NIGHTS,
        "rooms": s.integer("number of rooms", COUNT, minimum=1, maximum=5),
    },
    required=["hotel_id", "check_in", "nights"],
    returns=s.obj(
        {
            "quote_id": s.string("", HOTEL_QUOTE_ID),
            "hotel_id": s.string("", HOTEL_ID),
            "check_out": s.date("departure date"),
            "total_usd": s.number("", USD, minimum=0),
            "cancellation": s.enum(["free_until_48h", "non_refundable"]),
        }
    ),
    effects=[
        Effect(
            op="create",
            collection="hotel_quotes",
            key="quote_id",
            fields={
                "hotel_id": "$arg.hotel_id",
                "check_in": "$arg.check_in",
                "check_out": "$output.check_out",
                "total_usd": "$output.total_usd",
                "status": "open",
            },
        )
    ],
)
def quote_hotel_stay(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    h = _hotel(ctx, args["hotel_id"])
    total = round(_nightly(ctx, h, args["check_in"]) * args["nights"], 2) * args.get("rooms", 1)
    return {
        "quote_id": ctx.new_id("HQ"),
        "hotel_id": args["hotel_id"],
        "check_out": _plus_days(args["check_in"], args["nights"]),
        "total_usd": round(total, 2),
        "cancellation": "free_until_48h" if h["stars"] >= 4 else "non_refundable",
    }


@tool(
    domain="Travel",
    category="action",
    description="Reserve a quoted hotel stay for a guest; consumes the quote.",
    params={
        "hotel_quote_id": s.string("quote from quote_hotel_stay", HOTEL_QUOTE_ID, pattern="^HQ-"),
        "guest": s.obj(
            {"full_name": s.string("", PERSON, min_len=3), "email": s.email("")},
            "lead guest",
            GUEST,
        ),
        "special_requests": s.string("free text for the hotel", max_len=300),
    },
    required=["hotel_quote_id", "guest"],
    returns=s.obj(
        {
            "reservation_id": s.string("", HOTEL_RESERVATION_ID),
            "status": s.enum(["confirmed"]),
            "check_in": s.date(""),
            "check_out": s.date(""),
            "total_usd": s.number("", USD),
        }
    ),
    preconditions=[
        Precondition(
            kind="field_equals",
            collection="hotel_quotes",
            arg="hotel_quote_id",
            field="status",
            value="open",
            description="the hotel quote must exist and still be open",
        )
    ],
    effects=[
        Effect(
            op="update",
            collection="hotel_quotes",
            key="hotel_quote_id",
            fields={"status": "reserved"},
        ),
        Effect(
            op="create",
            collection="hotel_reservations",
            key="reservation_id",
            fields={
                "quote_id": "$arg.hotel_quote_id",
                "guest": "$arg.guest",
                "total_usd": "$output.total_usd",
                "status": "confirmed",
            },
        ),
    ],
)
def reserve_hotel(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    q = ctx.state.get("hotel_quotes", args["hotel_quote_id"]) or {}
    return {
        "reservation_id": ctx.new_id("HR"),
        "status": "confirmed",
        "check_in": q["check_in"],
        "check_out": q["check_out"],
        "total_usd": q["total_usd"],
    }


@tool(
    domain="Travel",
    category="action",
    description="Cancel a hotel reservation.",
    params={"reservation_id": s.string("reservation", HOTEL_RESERVATION_ID, pattern="^HR-")},
    returns=s.obj(
        {
            "reservation_id": s.string("", HOTEL_RESERVATION_ID),
            "status": s.enum(["cancelled"]),
            "cancellation_code": s.string(""),
        }
    ),
    preconditions=[
        Precondition(
            kind="field_equals",
            collection="hotel_reservations",
            arg="reservation_id",
            field="status",
            value="confirmed",
            description="only a confirmed reservation can be cancelled",
        )
    ],
    effects=[
        Effect(
            op="update",
            collection="hotel_reservations",
            key="reservation_id",
            fields={"status": "cancelled"},
        )
    ],
)
def cancel_hotel_reservation(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return {
        "reservation_id": args["reservation_id"],
        "status": "cancelled",
        "cancellation_code": ctx.new_id("CXL"),
    }


# == trains ======================================================================================
#: national rail operator per country (cross-border runs go to either side's operator)
_RAIL_OPERATOR = {
    "PT": "CP",
    "ES": "Renfe",
    "FR": "SNCF",
    "GB": "LNER",
    "DE": "DB",
    "PL": "PKP Intercity",
    "EE": "Elron",
    "US": "Amtrak",
    "CA": "VIA Rail",
    "KE": "Madaraka Express",
    "NZ": "KiwiRail",
    "VN": "Vietnam Railways",
    "CL": "EFE",
}
_RAIL = {
    "EU": ("EUR", 140, ["CP", "Renfe", "SNCF", "DB", "PKP Intercity", "Elron", "Eurostar"]),
    "JP": ("JPY", 220, ["JR West", "JR Central", "JR East"]),
    "NA": ("USD", 85, ["Amtrak", "VIA Rail"]),
    "KE": ("KES", 80, ["Madaraka Express"]),
    "NZ": ("NZD", 70, ["KiwiRail"]),
    "VN": ("VND", 60, ["Vietnam Railways"]),
    "CL": ("CLP", 60, ["EFE"]),
}


def _station(param: str, locode: str) -> str:
    try:
        return _BY_LOCODE[locode]
    except KeyError as exc:
        raise InvalidValue(param, f"no rail station at {locode!r}") from exc


def _operator(ctx: ToolContext, key: str, c1: str, c2: str, operators: list[str]) -> str:
    if c1 == c2 == "JP":
        return ctx.pick(key + ":op", operators)
    if c1 != c2 and "GB" in (c1, c2):
        return "Eurostar"
    return ctx.pick(key + ":op", sorted({_RAIL_OPERATOR[c1], _RAIL_OPERATOR[c2]}))


def _trains(
    ctx: ToolContext, o: str, d: str, date: str, params: tuple[str, str] = ("origin", "destination")
) -> list[dict[str, Any]]:
    """Rail departures between two stations on a day (same network only), cheapest fare per run."""
    a, b = _CITIES[_station(params[0], o)], _CITIES[_station(params[1], d)]
    if o == d:
        raise InvalidValue(params[1], "origin and destination are the same station")
    if a[7] != b[7]:
        raise InvalidValue(params[1], f"no rail connection between {o} and {d}")
    ccy, speed, operators = _RAIL[a[7]]
    km = _km(a[2], a[3], b[2], b[3]) * 1.2
    mins = int(km / speed * 60) + 20
    rate = fx_rate(ctx, "USD", ccy)
    out = []
    for i, hour in enumerate((6, 9, 13, 18)):
        key = f"trn:{o}{d}:{date}:{i}"
        dep = _dt.datetime.fromisoformat(f"{date}T{hour:02d}:00") + _dt.timedelta(
            minutes=int(ctx.number(key + ":m", 0, 55, 0))
        )
        dur = mins + int(ctx.number(key + ":x", 0, 40, 0))
        usd = ctx.number(key + ":p", 8 + km * 0.06, 20 + km * 0.18)
        price = round(usd * rate) * 1.0 if ccy in ("JPY", "VND", "CLP") else round(usd * rate, 2)
        out.append(
            {
                "train_id": f"TRN-{o}{d}-{_ymd(date)}-{i + 1}",
                "operator": _operator(ctx, key, a[0], b[0], operators),
                "departs": dep.isoformat(timespec="minutes"),
                "arrives": (dep + _dt.timedelta(minutes=dur)).isoformat(timespec="minutes"),
                "duration_min": dur,
                "price": price,
                "currency": ccy,
            }
        )
    return out


def _train_by_id(ctx: ToolContext, train_id: str) -> dict[str, Any]:
    try:
        _, pair, day, slot = train_id.split("-")
        date = _iso(day)
        _dt.date.fromisoformat(date)
        return _trains(ctx, pair[:5], pair[5:], date)[int(slot) - 1]
    except (ValueError, IndexError, InvalidValue) as exc:
        raise InvalidValue("train_id", f"unknown train {train_id!r}") from exc


_STATION = s.string("station UN/LOCODE", LOCODE, pattern="^[A-Z]{2}[A-Z2-9]{3}$")
_JOURNEY = s.obj(
    {
        "train_id": s.string("", TRAIN_ID),
        "operator": s.string("rail operator"),
        "departs": s.string("local departure, ISO 8601", LOCAL_DT),
        "arrives": s.string("local arrival, ISO 8601", LOCAL_DT),
        "duration_min": s.integer("", DURATION, minimum=1),
        "price": s.number("cheapest standard fare", MONEY, minimum=0),
        "currency": s.string("", CURRENCY),
    }
)


@tool(
    domain="Travel",
    category="source",
    group="rail_search",
    description="Search train journeys between two stations on a date (Trainline style).",
    params={
        "from_station": s.string(
            "departure station UN/LOCODE", LOCODE, pattern="^[A-Z]{2}[A-Z2-9]{3}$"
        ),
        "to_station": s.string(
            "arrival station UN/LOCODE", LOCODE, pattern="^[A-Z]{2}[A-Z2-9]{3}$"
        ),
        "departure_date": s.date("travel date"),
        "passengers": s.integer("", COUNT, minimum=1, maximum=9),
    },
    required=["from_station", "to_station", "departure_date"],
    returns=s.obj({"journeys": s.array(_JOURNEY), "cheapest_train_id": s.string("", TRAIN_ID)}),
)
def search_trains(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    js = _trains(
        ctx,
        args["from_station"],
        args["to_station"],
        args["departure_date"],
        ("from_station", "to_station"),
    )
    return {
        "journeys": js,
        "cheapest_train_id": min(js, key=lambda j: (j["price"], j["train_id"]))["train_id"],
    }


@tool(
    domain="Travel",
    category="source",
    group="rail_search",
    description="Timetable query between two stations with the best fare (Deutsche Bahn style).",
    params={
        "origin": _STATION,
        "destination": _STATION,
        "date": s.date("day of travel"),
        "bahncard": s.enum([0, 25, 50], "discount card held (display only)"),
    },
    required=["origin", "destination", "date"],
    returns=s.obj(
        {
            "connections": s.array(
                s.obj(
                    {
                        "id": s.string("", TRAIN_ID),
                        "dep": s.string("HH:MM"),
                        "arr": s.string("HH:MM"),
                        "changes": s.integer(minimum=0),
                        "fare": s.number("", MONEY),
                    }
                )
            ),
            "best_price": s.obj(
                {
                    "id": s.string("", TRAIN_ID),
                    "fare": s.number("", MONEY),
                    "currency": s.string("", CURRENCY),
                }
            ),
        }
    ),
)
def query_rail_timetable(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    js = _trains(ctx, args["origin"], args["destination"], args["date"])
    conns = [
        {
            "id": j["train_id"],
            "dep": j["departs"][11:],
            "arr": j["arrives"][11:],
            "changes": 0 if j["duration_min"] < 240 else 1,
            "fare": j["price"],
        }
        for j in js
    ]
    best = min(js, key=lambda j: (j["price"], j["train_id"]))
    return {
        "connections": conns,
        "best_price": {"id": best["train_id"], "fare": best["price"], "currency": best["currency"]},
    }


alternatives(
    "rail_search",
    "1-1",
    ["search_trains"],
    ["query_rail_timetable"],
    description="two rail booking engines over the same timetable",
    output_kind=TRAIN_ID,
)


@tool(
    domain="Travel",
    category="action",
    description="Buy a ticket for a train journey.",
    params={
        "train_id": s.string("journey from a rail search", TRAIN_ID, pattern="^TRN-"),
        "passenger_name": s.string("", PERSON, min_len=3),
        "fare_class": s.enum(["standard", "first"], "travel class"),
        "seat_preference": s.enum(["window", "aisle", "table", "none"]),
    },
    required=["train_id", "passenger_name"],
    returns=s.obj(
        {
            "ticket_id": s.string("", TRAIN_TICKET_ID),
            "coach": s.integer(minimum=1),
            "seat": s.string("seat number"),
            "amount": s.number("price paid", MONEY),
            "currency": s.string("", CURRENCY),
            "departs": s.string("local departure, ISO 8601", LOCAL_DT),
        }
    ),
    effects=[
        Effect(
            op="create",
            collection="train_tickets",
            key="ticket_id",
            fields={
                "train_id": "$arg.train_id",
                "passenger": "$arg.passenger_name",
                "amount": "$output.amount",
                "status": "issued",
            },
        )
    ],
)
def book_train_ticket(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    j = _train_by_id(ctx, args["train_id"])
    first = args.get("fare_class") == "first"
    amount = j["price"] * 1.6 if first else j["price"]
    amount = round(amount) * 1.0 if j["currency"] in ("JPY", "VND", "CLP") else round(amount, 2)
    tid = ctx.new_id("TKT")
    return {
        "ticket_id": tid,
        "coach": 1 + int(ctx.number(tid + ":c", 0, 3 if first else 9, 0)),
        "seat": f"{int(ctx.number(tid + ':s', 1, 80, 0))}{ctx.pick(tid + ':l', 'ABCD')}",
        "amount": amount,
        "currency": j["currency"],
        "departs": j["departs"],
    }


# == car rental ==================================================================================
_CAR_CLASSES = {
    "ECON": ("economy", (28, 55)),
    "COMP": ("compact", (35, 70)),
    "SUVX": ("suv", (60, 120)),
    "PREM": ("premium", (95, 190)),
}
_SUPPLIERS = ["Hertz", "Avis", "Sixt", "Europcar", "Enterprise"]


def _car_offers(
    ctx: ToolContext, param: str, iata: str, date: str, days: int
) -> list[dict[str, Any]]:
    _airport_city(param, iata)
    out = []
    for code, (cls, (lo, hi)) in _CAR_CLASSES.items():
        oid = f"CAR-{iata}-{_ymd(date)}-{days}-{code}"
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
        date = _iso(day)
        _dt.date.fromisoformat(date)
        offers = _car_offers(ctx, "offer_id", iata, date, int(days))
        return next(o for o in offers if o["offer_id"] == offer_id)
    except (ValueError, StopIteration, InvalidValue) as exc:
        raise InvalidValue("offer_id", f"unknown car offer {offer_id!r}") from exc


_DAYS = s.integer("rental length in days", TRIP_DAYS, minimum=1, maximum=60)


@tool(
    domain="Travel",
    category="source",
    group="car_search",
    description="Search rental cars at an airport for a pickup date and length of rental.",
    params={
        "pickup_airport": s.string("IATA code", AIRPORT, pattern="^[A-Z]{3}$"),
        "pickup_date": s.date("pickup day"),
        "rental_days": _DAYS,
        "car_class": s.enum([v[0] for v in _CAR_CLASSES.values()], "only this class"),
    },
    required=["pickup_airport", "pickup_date", "rental_days"],
    returns=s.obj(
        {
            "offers": s.array(
                s.obj(
                    {
                        "offer_id": s.string("", CAR_OFFER_ID),
                        "car_class": s.string(""),
                        "supplier": s.string("rental company"),
                        "daily_rate_usd": s.number("", USD),
                        "total_usd": s.number("", USD),
                    }
                )
            ),
            "cheapest_offer_id": s.string("", CAR_OFFER_ID),
        }
    ),
)
def search_rental_cars(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    offers = _car_offers(
        ctx, "pickup_airport", args["pickup_airport"], args["pickup_date"], args["rental_days"]
    )
    if args.get("car_class"):
        offers = [o for o in offers if o["car_class"] == args["car_class"]]
    return {"offers": offers, "cheapest_offer_id": offers[0]["offer_id"]}


@tool(
    domain="Travel",
    category="source",
    group="car_search",
    description="Compare car-hire deals across suppliers; returns the best deal (broker style).",
    params={
        "location_iata": s.string("pickup airport", AIRPORT, pattern="^[A-Z]{3}$"),
        "from_date": s.date("pickup date"),
        "duration_days": _DAYS,
        "driver_age": s.integer("age of the driver", DRIVER_AGE, minimum=18, maximum=99),
    },
    required=["location_iata", "from_date", "duration_days"],
    returns=s.obj(
        {
            "deals": s.array(
                s.obj(
                    {
                        "id": s.string("", CAR_OFFER_ID),
                        "vehicle": s.obj({"category": s.string(""), "example": s.string("model")}),
                        "vendor": s.string(""),
                        "price": s.number("total, USD", USD),
                    }
                )
            ),
            "best_deal": s.obj({"id": s.string("", CAR_OFFER_ID), "price": s.number("", USD)}),
        }
    ),
)
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


alternatives(
    "car_search",
    "1-1",
    ["search_rental_cars"],
    ["find_car_hire_deals"],
    description="rental company search vs car-hire broker",
    output_kind=CAR_OFFER_ID,
)


@tool(
    domain="Travel",
    category="processor",
    description="Hold a rental-car offer for a driver, adding any young-driver surcharge.",
    params={
        "offer_id": s.string("car offer", CAR_OFFER_ID, pattern="^CAR-"),
        "driver_age": s.integer("main driver's age", DRIVER_AGE, minimum=18, maximum=99),
        "extras": s.array(
            s.enum(["child_seat", "gps", "additional_driver", "snow_chains"]),
            "optional extras",
            max_items=4,
        ),
    },
    required=["offer_id", "driver_age"],
    returns=s.obj(
        {
            "hold_id": s.string("", CAR_HOLD_ID),
            "offer_id": s.string("", CAR_OFFER_ID),
            "total_usd": s.number("", USD),
            "young_driver_fee_usd": s.number("", USD, minimum=0),
        }
    ),
    effects=[
        Effect(
            op="create",
            collection="car_holds",
            key="hold_id",
            fields={
                "offer_id": "$arg.offer_id",
                "total_usd": "$output.total_usd",
                "status": "held",
            },
        )
    ],
)
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


@tool(
    domain="Travel",
    category="action",
    description="Confirm a held rental car in the driver's name; consumes the hold.",
    params={
        "hold_id": s.string("car hold", CAR_HOLD_ID, pattern="^HOLD-"),
        "driver_name": s.string("", PERSON, min_len=3),
        "license_country": s.string(
            "country that issued the licence", COUNTRY, pattern="^[A-Z]{2}$"
        ),
    },
    returns=s.obj(
        {
            "confirmation_number": s.string("", CAR_RENTAL_ID),
            "status": s.enum(["confirmed"]),
            "total_usd": s.number("", USD),
            "pickup": s.obj({"airport": s.string("", AIRPORT), "date": s.date("")}),
        }
    ),
    preconditions=[
        Precondition(
            kind="field_equals",
            collection="car_holds",
            arg="hold_id",
            field="status",
            value="held",
            description="the car hold must exist and still be held",
        )
    ],
    effects=[
        Effect(op="update", collection="car_holds", key="hold_id", fields={"status": "confirmed"}),
        Effect(
            op="create",
            collection="car_rentals",
            key="confirmation_number",
            fields={
                "hold_id": "$arg.hold_id",
                "driver": "$arg.driver_name",
                "total_usd": "$output.total_usd",
                "status": "confirmed",
            },
        ),
    ],
)
def confirm_car_rental(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    h = ctx.state.get("car_holds", args["hold_id"]) or {}
    _, iata, day, _days, _code = h["offer_id"].split("-")
    return {
        "confirmation_number": ctx.new_id("RC"),
        "status": "confirmed",
        "total_usd": h["total_usd"],
        "pickup": {"airport": iata, "date": _iso(day)},
    }


# == visas =======================================================================================
_EU = {"PT", "PL", "EE", "DE", "FR", "ES", "IT", "NL"}
_TRUSTED = {"US", "CA", "JP", "NZ", "GB", "CL", "AU", "KR"}
_VISA_COUNTRIES = _EU | _TRUSTED | {"KE", "VN"}


def _visa_rule(passport: str, dest: str) -> tuple[str, int | None, float]:
    """(category, max stay in days or None, fee in USD) for a passport entering a country."""
    if dest not in _VISA_COUNTRIES:
        raise InvalidValue("destination", f"no entry data for {dest!r}")
    if passport not in _VISA_COUNTRIES:
        raise InvalidValue("passport", f"no entry data for passports of {passport!r}")
    if passport == dest or (dest in _EU and passport in _EU):
        return "not_required", None, 0.0
    if dest in _EU:
        return ("visa_free", 90, 0.0) if passport in _TRUSTED else ("visa_required", 90, 97.0)
    if dest == "GB":
        return ("eta", 180, 21.0) if passport in _EU | _TRUSTED else ("visa_required", 180, 150.0)
    if dest == "US":
        if passport == "CA":
            return "visa_free", 180, 0.0
        return ("eta", 90, 21.0) if passport in _EU | _TRUSTED else ("visa_required", 90, 185.0)
    if dest == "CA":
        if passport == "US":
            return "visa_free", 180, 0.0
        return ("eta", 180, 5.0) if passport in _EU | _TRUSTED else ("visa_required", 180, 75.0)
    if dest in ("JP", "CL"):
        return ("visa_free", 90, 0.0) if passport in _EU | _TRUSTED else ("visa_required", 90, 30.0)
    if dest == "KE":
        return "eta", 90, 33.0
    if dest == "VN":
        if passport in {"DE", "FR", "ES", "IT", "GB", "JP", "KR", "PL", "NL"}:
            return "visa_free", 45, 0.0
        return "evisa", 90, 25.0
    if dest in ("NZ", "AU"):
        if {passport, dest} == {"NZ", "AU"}:
            return "visa_free", None, 0.0
        return ("eta", 90, 14.0) if passport in _EU | _TRUSTED else ("visa_required", 90, 140.0)
    return ("visa_free", 90, 0.0) if passport in _EU | _TRUSTED else ("evisa", 30, 50.0)


_VISA_TYPES = ["not_required", "visa_free", "eta", "evisa", "visa_required"]


def _visa(args: dict[str, Any], p_param: str, d_param: str) -> tuple[str, int | None, float]:
    try:
        return _visa_rule(args[p_param], args[d_param])
    except InvalidValue as exc:
        raise InvalidValue(p_param if exc.param == "passport" else d_param, exc.message) from exc


@tool(
    domain="Travel",
    category="source",
    group="visa_check",
    description="Does a passport holder need a visa for a destination, and for how long may they stay?",
    params={
        "passport_country": s.string("ISO alpha-2 of the passport", COUNTRY, pattern="^[A-Z]{2}$"),
        "destination_country": s.string(
            "ISO alpha-2 of the destination", COUNTRY, pattern="^[A-Z]{2}$"
        ),
        "purpose": s.enum(["tourism", "business", "transit"]),
    },
    required=["passport_country", "destination_country"],
    returns=s.obj(
        {
            "visa_type": s.enum(_VISA_TYPES, "", VISA_CATEGORY),
            "max_stay_days": {
                "type": ["integer", "null"],
                "minimum": 1,
                "description": "null: no limit",
                "x-kind": "trip_days",
            },
            "fee_usd": s.number("", USD, minimum=0),
        }
    ),
)
def check_visa_requirement(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    vt, stay, fee = _visa(args, "passport_country", "destination_country")
    return {"visa_type": vt, "max_stay_days": stay, "fee_usd": fee}


@tool(
    domain="Travel",
    category="source",
    group="visa_check",
    description="Entry requirements for a nationality at a destination: visa, passport validity, health.",
    params={
        "nationality": s.string("ISO alpha-2", COUNTRY, pattern="^[A-Z]{2}$"),
        "destination": s.string("ISO alpha-2", COUNTRY, pattern="^[A-Z]{2}$"),
        "language": s.enum(["en", "fr", "es", "de"], "answer language"),
    },
    required=["nationality", "destination"],
    returns=s.obj(
        {
            "destination": s.string("", COUNTRY),
            "requirements": s.obj(
                {
                    "visa": s.obj(
                        {
                            "category": s.enum(_VISA_TYPES, "", VISA_CATEGORY),
                            "apply_online": s.boolean(),
                        }
                    ),
                    "passport_validity_months": s.integer(minimum=0),
                    "vaccinations": s.array(s.string("vaccine")),
                }
            ),
        }
    ),
)
def get_entry_requirements(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    vt, _stay, _fee = _visa(args, "nationality", "destination")
    dest = args["destination"]
    vacc = ["yellow_fever"] if dest == "KE" else []
    return {
        "destination": dest,
        "requirements": {
            "visa": {"category": vt, "apply_online": vt in ("eta", "evisa")},
            "passport_validity_months": 0
            if vt == "not_required"
            else 6
            if dest in ("KE", "VN", "CL")
            else 3,
            "vaccinations": vacc,
        },
    }


alternatives(
    "visa_check",
    "1-1",
    ["check_visa_requirement"],
    ["get_entry_requirements"],
    description="two entry-requirement databases",
    output_kind=VISA_CATEGORY,
)


@tool(
    domain="Travel",
    category="action",
    description="Submit an online e-visa / electronic travel authorisation application.",
    params={
        "applicant_name": s.string("as in the passport", PERSON, min_len=3),
        "passport_number": s.string("", PASSPORT_NO, pattern="^[A-Z0-9]{6,9}$"),
        "nationality": s.string("ISO alpha-2", COUNTRY, pattern="^[A-Z]{2}$"),
        "destination_country": s.string("ISO alpha-2", COUNTRY, pattern="^[A-Z]{2}$"),
        "arrival_date": s.date("planned arrival"),
    },
    returns=s.obj(
        {
            "application_id": s.string("", VISA_APPLICATION_ID),
            "authorisation": s.enum(["eta", "evisa", "visa", "visa_waiver_registration"]),
            "fee_usd": s.number("", USD, minimum=0),
            "status": s.enum(["submitted"]),
        }
    ),
    effects=[
        Effect(
            op="create",
            collection="visa_applications",
            key="application_id",
            fields={
                "applicant": "$arg.applicant_name",
                "destination": "$arg.destination_country",
                "arrival_date": "$arg.arrival_date",
                "authorisation": "$output.authorisation",
                "status": "submitted",
            },
        )
    ],
)
def submit_evisa_application(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    vt, _stay, fee = _visa(args, "nationality", "destination_country")
    if vt == "not_required":
        raise InvalidValue("destination_country", "no entry authorisation is needed")
    auth = {
        "eta": "eta",
        "evisa": "evisa",
        "visa_required": "visa",
        "visa_free": "visa_waiver_registration",
    }[vt]
    return {
        "application_id": ctx.new_id("VA"),
        "authorisation": auth,
        "fee_usd": fee,
        "status": "submitted",
    }


@tool(
    domain="Travel",
    category="source",
    description="Status of a submitted e-visa / ETA application.",
    params={"application_id": s.string("application", VISA_APPLICATION_ID, pattern="^VA-")},
    returns=s.obj(
        {
            "application_id": s.string("", VISA_APPLICATION_ID),
            "status": s.enum(["approved", "in_review"]),
            "valid_from": s.date(""),
            "authorisation": s.string(""),
        }
    ),
    preconditions=[
        Precondition(
            kind="exists",
            collection="visa_applications",
            arg="application_id",
            description="no such application",
        )
    ],
)
def get_evisa_status(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    a = ctx.state.get("visa_applications", args["application_id"]) or {}
    return {
        "application_id": args["application_id"],
        "status": ctx.pick(f"visa:{args['application_id']}", ["approved", "approved", "in_review"]),
        "valid_from": a["arrival_date"],
        "authorisation": a["authorisation"],
    }


# == travel insurance ============================================================================
@tool(
    domain="Travel",
    category="processor",
    description="Quote travel insurance for a trip and its travellers.",
    params={
        "destination_country": s.string("ISO alpha-2", COUNTRY, pattern="^[A-Z]{2}$"),
        "departure_date": s.date("trip start"),
        "trip_days": s.integer("trip length", TRIP_DAYS, minimum=1, maximum=180),
        "traveller_ages": s.array(
            s.integer(minimum=0, maximum=99),
            "age of each traveller",
            TRAVELLER_AGES,
            min_items=1,
            max_items=9,
        ),
        "coverage": s.enum(["basic", "standard", "premium"], "cover level"),
        "trip_cost_usd": s.number("non-refundable trip cost to cover", USD, minimum=0),
    },
    required=["destination_country", "departure_date", "trip_days", "traveller_ages"],
    returns=s.obj(
        {
            "quote_id": s.string("", INSURANCE_QUOTE_ID),
            "premium_usd": s.number("", USD, minimum=0),
            "limits": s.obj(
                {
                    "medical_usd": s.number("", USD),
                    "cancellation_usd": s.number("", USD),
                    "baggage_usd": s.number("", USD),
                }
            ),
            "return_date": s.date(""),
        }
    ),
    effects=[
        Effect(
            op="create",
            collection="insurance_quotes",
            key="quote_id",
            fields={
                "premium_usd": "$output.premium_usd",
                "destination": "$arg.destination_country",
                "start": "$arg.departure_date",
                "end": "$output.return_date",
                "status": "open",
            },
        )
    ],
)
def quote_travel_insurance(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    cover = args.get("coverage", "standard")
    region = (
        1.8
        if args["destination_country"] in ("US", "CA")
        else 1.2
        if args["destination_country"] in ("JP", "AU", "NZ", "GB")
        else 1.0
    )
    level = {"basic": 0.7, "standard": 1.0, "premium": 1.6}[cover]
    per_day = 0.0
    for age in args["traveller_ages"]:
        per_day += 2.1 * (0.5 if age < 18 else 1.0 if age < 40 else 1.4 if age < 65 else 2.5)
    trip_cost = args.get("trip_cost_usd", 0.0)
    premium = per_day * args["trip_days"] * region * level
    if cover != "basic":
        premium += trip_cost * 0.04
    return {
        "quote_id": ctx.new_id("IQ"),
        "premium_usd": round(premium, 2),
        "limits": {
            "medical_usd": {"basic": 50000.0, "standard": 250000.0, "premium": 1000000.0}[cover],
            "cancellation_usd": 0.0 if cover == "basic" else float(trip_cost),
            "baggage_usd": {"basic": 500.0, "standard": 1500.0, "premium": 3000.0}[cover],
        },
        "return_date": _plus_days(args["departure_date"], args["trip_days"]),
    }


@tool(
    domain="Travel",
    category="action",
    description="Buy a quoted travel-insurance policy; consumes the quote.",
    params={
        "insurance_quote_id": s.string("quote", INSURANCE_QUOTE_ID, pattern="^IQ-"),
        "policyholder_name": s.string("", PERSON, min_len=3),
        "policyholder_email": s.email("where the certificate goes"),
    },
    returns=s.obj(
        {
            "policy_number": s.string("", INSURANCE_POLICY_ID),
            "status": s.enum(["active"]),
            "premium_charged_usd": s.number("", USD),
            "certificate_url": s.string("", URL),
        }
    ),
    preconditions=[
        Precondition(
            kind="field_equals",
            collection="insurance_quotes",
            arg="insurance_quote_id",
            field="status",
            value="open",
            description="the insurance quote must exist and still be open",
        )
    ],
    effects=[
        Effect(
            op="update",
            collection="insurance_quotes",
            key="insurance_quote_id",
            fields={"status": "purchased"},
        ),
        Effect(
            op="create",
            collection="insurance_policies",
            key="policy_number",
            fields={
                "quote_id": "$arg.insurance_quote_id",
                "holder": "$arg.policyholder_name",
                "status": "active",
            },
        ),
    ],
)
def purchase_travel_insurance(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    q = ctx.state.get("insurance_quotes", args["insurance_quote_id"]) or {}
    pol = ctx.new_id("POL")
    return {
        "policy_number": pol,
        "status": "active",
        "premium_charged_usd": q["premium_usd"],
        "certificate_url": f"https://insure.example.com/certificates/{pol}.pdf",
    }


# == points of interest ==========================================================================
_POI_NAMES = {
    "museum": (
        "MUS",
        [
            "{c} Museum of Art",
            "National History Museum",
            "Museum of {c}",
            "Contemporary Art Centre",
            "Science and Technology Museum",
        ],
    ),
    "restaurant": (
        "RST",
        ["Casa {c}", "The Copper Pot", "Harbour Grill", "Noodle Bar 88", "Green Table"],
    ),
    "park": (
        "PRK",
        [
            "{c} Botanical Garden",
            "Central Park",
            "Riverside Gardens",
            "Hilltop Viewpoint Park",
            "Old Fort Park",
        ],
    ),
    "landmark": (
        "LMK",
        ["Old Town Square", "{c} Cathedral", "City Hall Tower", "Harbour Bridge", "Royal Palace"],
    ),
    "cafe": (
        "CAF",
        [
            "Bean and Leaf",
            "Cafe Central",
            "Morning Ritual Coffee",
            "The Daily Grind",
            "Kettle and Crumb",
        ],
    ),
}
_POI_CODES = {v[0]: k for k, v in _POI_NAMES.items()}


def _poi(ctx: ToolContext, poi_id: str, param: str) -> dict[str, Any]:
    try:
        _, iata, code, idx = poi_id.split("-")
        city, cat = _BY_IATA[iata], _POI_CODES[code]
        if not 1 <= int(idx) <= len(_POI_NAMES[cat][1]):
            raise ValueError(idx)
        name = _POI_NAMES[cat][1][int(idx) - 1].format(c=city)
    except (ValueError, KeyError, IndexError) as exc:
        raise InvalidValue(param, f"unknown place {poi_id!r}") from exc
    c = _CITIES[city]
    return {
        "poi_id": poi_id,
        "name": name,
        "category": cat,
        "city": city,
        "rating": ctx.number(f"poi:{poi_id}:r", 3.6, 4.9, 1),
        "lat": round(c[2] + ctx.number(f"poi:{poi_id}:lat", -0.04, 0.04, 5), 5),
        "lng": round(c[3] + ctx.number(f"poi:{poi_id}:lng", -0.04, 0.04, 5), 5),
        "address": f"{int(ctx.number(f'poi:{poi_id}:no', 1, 200, 0))} "
        f"{ctx.pick(f'poi:{poi_id}:st', _STREETS)}, {city}",
    }


def _pois(ctx: ToolContext, param: str, city: str, category: str) -> list[dict[str, Any]]:
    """The places of a category in a city, best rated first."""
    iata = _city(param, city)[1]
    code = _POI_NAMES[category][0]
    out = [_poi(ctx, f"POI-{iata}-{code}-{i}", param) for i in range(1, 6)]
    out.sort(key=lambda p: (-p["rating"], p["poi_id"]))
    return out


@tool(
    domain="Travel",
    category="source",
    group="poi_search",
    description="Points of interest of a category in a city, best rated first.",
    params={
        "city": s.string("city", CITY, min_len=2),
        "category": s.enum(list(_POI_NAMES), "kind of place", POI_CATEGORY),
        "limit": s.integer("maximum results", minimum=1, maximum=5),
    },
    required=["city", "category"],
    returns=s.obj(
        {
            "results": s.array(
                s.obj(
                    {
                        "poi_id": s.string("", POI_ID),
                        "name": s.string("place name"),
                        "rating": s.number("out of 5", POI_RATING, minimum=0, maximum=5),
                        "address": s.string("", ADDRESS),
                        "lat": s.number("", LATITUDE),
                        "lng": s.number("", LONGITUDE),
                    }
                )
            ),
            "count": s.integer(minimum=0),
        }
    ),
)
def search_points_of_interest(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    ps = _pois(ctx, "city", args["city"], args["category"])[: args.get("limit", 5)]
    keep = ("poi_id", "name", "rating", "address", "lat", "lng")
    return {"results": [{k: p[k] for k in keep} for p in ps], "count": len(ps)}


@tool(
    domain="Travel",
    category="source",
    group="poi_search",
    description="Explore venues near a place by section (Foursquare style, ratings out of 10).",
    params={
        "near": s.string("city to explore", CITY, min_len=2),
        "section": s.enum(list(_POI_NAMES), "venue section", POI_CATEGORY),
        "open_now": s.boolean("only venues open now"),
    },
    required=["near", "section"],
    returns=s.obj(
        {
            "venues": s.array(
                s.obj(
                    {
                        "id": s.string("", POI_ID),
                        "name": s.string(""),
                        "location": s.obj(
                            {
                                "formatted_address": s.string("", ADDRESS),
                                "lat": s.number("", LATITUDE),
                                "lng": s.number("", LONGITUDE),
                            }
                        ),
                        "rating": s.number("out of 10", minimum=0, maximum=10),
                    }
                )
            ),
            "top_pick_id": s.string("", POI_ID),
        }
    ),
)
def explore_nearby_places(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    ps = _pois(ctx, "near", args["near"], args["section"])
    venues = [
        {
            "id": p["poi_id"],
            "name": p["name"],
            "location": {"formatted_address": p["address"], "lat": p["lat"], "lng": p["lng"]},
            "rating": round(p["rating"] * 2, 1),
        }
        for p in ps
    ]
    return {"venues": venues, "top_pick_id": venues[0]["id"]}


alternatives(
    "poi_search",
    "1-1",
    ["search_points_of_interest"],
    ["explore_nearby_places"],
    description="two places directories rating the same venues",
    output_kind=POI_ID,
)


@tool(
    domain="Travel",
    category="processor",
    description="Distance and travel time between two places in the same city by a travel mode.",
    params={
        "origin_poi_id": s.string("start place", POI_ID, pattern="^POI-"),
        "destination_poi_id": s.string("end place", POI_ID, pattern="^POI-"),
        "mode": s.enum(["walking", "driving", "transit", "bicycling"], "", TRAVEL_MODE),
    },
    required=["origin_poi_id", "destination_poi_id"],
    returns=s.obj(
        {
            "distance_km": s.number("", DISTANCE_KM, minimum=0),
            "duration_min": s.integer("", DURATION, minimum=1),
            "mode": s.string("", TRAVEL_MODE),
        }
    ),
)
def estimate_route(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    a = _poi(ctx, args["origin_poi_id"], "origin_poi_id")
    b = _poi(ctx, args["destination_poi_id"], "destination_poi_id")
    if a["poi_id"] == b["poi_id"]:
        raise InvalidValue("destination_poi_id", "origin and destination are the same place")
    if a["city"] != b["city"]:
        raise InvalidValue("destination_poi_id", "the two places are in different cities")
    mode = args.get("mode", "walking")
    km = round(_km(a["lat"], a["lng"], b["lat"], b["lng"]) * 1.3, 2)
    speed, wait = {
        "walking": (4.8, 0),
        "bicycling": (15, 0),
        "driving": (28, 3),
        "transit": (20, 6),
    }[mode]
    return {"distance_km": km, "duration_min": max(1, round(km / speed * 60 + wait)), "mode": mode}


# == trip costing ================================================================================
#: typical daily spend per traveller (lodging excluded), USD
_DAILY_USD = {
    "Lisbon": 95,
    "Porto": 85,
    "Madrid": 120,
    "Paris": 180,
    "London": 200,
    "Berlin": 130,
    "Warsaw": 75,
    "Krakow": 65,
    "Tallinn": 90,
    "Osaka": 110,
    "Tokyo": 130,
    "Denver": 160,
    "Austin": 150,
    "New York": 220,
    "Montreal": 130,
    "Toronto": 145,
    "Nairobi": 70,
    "Mombasa": 60,
    "Auckland": 140,
    "Wellington": 130,
    "Valparaiso": 70,
    "Hanoi": 45,
    "Ho Chi Minh City": 50,
}


def _daily_usd(ctx: ToolContext, param: str, city: str) -> float:
    _city(param, city)
    return round(_DAILY_USD[city] * (1 + ctx.number(f"col:{city}", -0.08, 0.08, 4)), 2)


def _trip_total(
    ctx: ToolContext, daily_usd: float, days: int, travellers: int, currency: str, param: str
) -> tuple[float, float]:
    try:
        rate = fx_rate(ctx, "USD", currency)
    except KeyError as exc:
        raise InvalidValue(param, f"unsupported currency {currency!r}") from exc
    return round(daily_usd * days * travellers * rate, 2), rate


@tool(
    domain="Travel",
    category="source",
    group="trip_budget",
    description="Cost-of-living snapshot of a city: typical daily spend and sample prices.",
    params={"city": s.string("city", CITY, min_len=2)},
    returns=s.obj(
        {
            "city": s.string("", CITY),
            "daily_cost_usd": s.number("typical daily spend, lodging excluded", DAILY_COST),
            "meal_inexpensive_usd": s.number("", USD),
            "transit_ticket_usd": s.number("", USD),
        }
    ),
)
def get_cost_of_living(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    daily = _daily_usd(ctx, "city", args["city"])
    return {
        "city": args["city"],
        "daily_cost_usd": daily,
        "meal_inexpensive_usd": round(daily * 0.16, 2),
        "transit_ticket_usd": round(daily * 0.025, 2),
    }


@tool(
    domain="Travel",
    category="processor",
    group="trip_budget",
    description="Turn a daily USD spend into a trip budget in any currency.",
    params={
        "daily_cost_usd": s.number("daily spend per traveller", DAILY_COST, exclusive_minimum=0),
        "days": s.integer("trip length", TRIP_DAYS, minimum=1, maximum=365),
        "currency": s.string("budget currency", CURRENCY, pattern="^[A-Z]{3}$"),
        "travellers": s.integer("", COUNT, minimum=1, maximum=12),
    },
    required=["daily_cost_usd", "days", "currency"],
    returns=s.obj(
        {
            "total": s.number("trip budget", MONEY),
            "currency": s.string("", CURRENCY),
            "usd_rate": s.number("units of currency per USD", FX_RATE),
        }
    ),
)
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


@tool(
    domain="Travel",
    category="processor",
    group="trip_budget",
    description="Estimate spending money for a trip to a city, in the traveller's home currency.",
    params={
        "destination": s.string("city", CITY, min_len=2),
        "trip_days": s.integer("days at the destination", TRIP_DAYS, minimum=1, maximum=365),
        "home_currency": s.string(
            "currency to express the budget in", CURRENCY, pattern="^[A-Z]{3}$"
        ),
        "travellers": s.integer("", COUNT, minimum=1, maximum=12),
    },
    required=["destination", "trip_days", "home_currency"],
    returns=s.obj(
        {
            "destination": s.string("", CITY),
            "estimate": s.obj({"amount": s.number("", MONEY), "currency": s.string("", CURRENCY)}),
            "daily_cost_usd": s.number("", DAILY_COST),
        }
    ),
)
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


alternatives(
    "trip_budget",
    "1-N",
    ["estimate_trip_budget"],
    ["get_cost_of_living", "price_trip_budget"],
    description="one-shot budget estimate, or cost of living then pricing",
    output_kind=MONEY,
)


@initial_state
def _travel_state(seed: int) -> dict[str, dict[str, dict[str, Any]]]:
    # quotes and bookings only come from tools; one expired quote of each kind exists so that a
    # literal, stale id fails its precondition the way a real API would
    return {
        "flight_quotes": {
            "FQ-EXPIRED1": {
                "flight_id": "FL-LISKIX-20261203-1",
                "total_usd": 999.0,
                "status": "expired",
            }
        },
        "hotel_quotes": {
            "HQ-EXPIRED1": {
                "hotel_id": "HTL-LIS-1",
                "check_in": "2026-12-03",
                "check_out": "2026-12-05",
                "total_usd": 310.0,
                "status": "expired",
            }
        },
    }


__all__ = ["AIRPORT", "DATE", "EMAIL", "FLIGHT_ID"]
