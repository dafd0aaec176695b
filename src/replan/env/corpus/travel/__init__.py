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

from replan.env.corpus.data import SeedTables
from replan.env.corpus.financial import fx_rate
from replan.env.corpus.registry import implementation, initial_state
from replan.env.world import InvalidValue, ToolContext

_SEEDS = SeedTables.load(__package__)  # seeds.json beside this module


# -- reference tables -------------------------------------------------------------------------
#: city -> (country, IATA, lat, lon, IANA zone, currency, UN/LOCODE, rail network)
_CITIES = _SEEDS.table("cities", dict[str, tuple[str, str, float, float, str, str, str, str]])
_AIRPORT_NAMES = _SEEDS.table("airport_names", dict[str, str])
_BY_IATA = {v[1]: k for k, v in _CITIES.items()}
_BY_LOCODE = {v[6]: k for k, v in _CITIES.items()}
#: standard (non-DST) offset in seconds and display name of each zone
_ZONES = _SEEDS.table("zones", dict[str, tuple[int, str]])
_CARRIERS = _SEEDS.table("carriers", list[str])


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


@implementation
def search_flights(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    flights = _flights(ctx, args["origin"], args["destination"], args["date"])
    flights = [f for f in flights if f["stops"] <= args.get("max_stops", 2)]
    cheapest = min(flights, key=lambda f: f["price_usd"])
    return {"flights": flights, "cheapest_flight_id": cheapest["flight_id"]}


@implementation
def find_flight_offers(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    o = _city("from_city", args["from_city"])[1]
    d = _city("to_city", args["to_city"])[1]
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


# == airports and places =========================================================================
@implementation
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


@implementation
def resolve_city_airport(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    info = _city("city", args["city"])
    return {
        "iata": info[1],
        "airport_name": _AIRPORT_NAMES[info[1]],
        "city": args["city"],
        "country": info[0],
    }


@implementation
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


@implementation
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


@implementation
def lookup_locode(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    c = _city("city", args["city"])
    if args.get("country") not in (None, c[0]):
        raise InvalidValue("country", f"{args['city']} is not in {args['country']}")
    return {"locode": c[6], "name": args["city"], "country": c[0]}


def _dms(value: float, pos: str, neg: str, width: int) -> str:
    minutes = round(abs(value) * 60)
    return f"{minutes // 60:0{width}d}{minutes % 60:02d}{pos if value >= 0 else neg}"


@implementation
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


@implementation
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
_HOTEL_A = _SEEDS.table("hotel_a", list[str])
_HOTEL_B = _SEEDS.table("hotel_b", list[str])
_STREETS = _SEEDS.table("streets", list[str])
_STAR_RATE = _SEEDS.table("star_rate", dict[int, tuple[int, int]])
_AMENITIES = _SEEDS.table("amenities", list[str])


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
        "check_out": _plus_days(args["check_in"], args["nights"]),
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


# == trains ======================================================================================
#: national rail operator per country (cross-border runs go to either side's operator)
_RAIL_OPERATOR = _SEEDS.table("rail_operator", dict[str, str])
_RAIL = _SEEDS.table("rail", dict[str, tuple[str, int, list[str]]])


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


@implementation
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


@implementation
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


@implementation
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
_CAR_CLASSES = _SEEDS.table("car_classes", dict[str, tuple[str, tuple[int, int]]])
_SUPPLIERS = _SEEDS.table("suppliers", list[str])


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
        "pickup": {"airport": iata, "date": _iso(day)},
    }


# == visas =======================================================================================
_EU = _SEEDS.table("eu", set[str])
_TRUSTED = _SEEDS.table("trusted", set[str])
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


def _visa(args: dict[str, Any], p_param: str, d_param: str) -> tuple[str, int | None, float]:
    try:
        return _visa_rule(args[p_param], args[d_param])
    except InvalidValue as exc:
        raise InvalidValue(p_param if exc.param == "passport" else d_param, exc.message) from exc


@implementation
def check_visa_requirement(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    vt, stay, fee = _visa(args, "passport_country", "destination_country")
    return {"visa_type": vt, "max_stay_days": stay, "fee_usd": fee}


@implementation
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


@implementation
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


@implementation
def get_evisa_status(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    a = ctx.state.get("visa_applications", args["application_id"]) or {}
    return {
        "application_id": args["application_id"],
        "status": ctx.pick(f"visa:{args['application_id']}", ["approved", "approved", "in_review"]),
        "valid_from": a["arrival_date"],
        "authorisation": a["authorisation"],
    }


# == travel insurance ============================================================================
@implementation
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


@implementation
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
_POI_NAMES = _SEEDS.table("poi_names", dict[str, tuple[str, list[str]]])
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


@implementation
def search_points_of_interest(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    ps = _pois(ctx, "city", args["city"], args["category"])[: args.get("limit", 5)]
    keep = ("poi_id", "name", "rating", "address", "lat", "lng")
    return {"results": [{k: p[k] for k in keep} for p in ps], "count": len(ps)}


@implementation
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


@implementation
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
_DAILY_USD = _SEEDS.table("daily_usd", dict[str, int])


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
