"""General: weather, geocoding, routing, time zones, units, news, web, language, maths,
recipes and nutrition, reminders and timers.

Facts come from seed tables (``seeds.json``: cities, unit factors, recipes, nutrients; the
time-zone rules are shared, in :mod:`replan.env.corpus.timezones`) or from ``ctx.number`` /
``ctx.pick`` keyed by the fact itself (a place's coordinates, a day's forecast, a query's
results), never by the tool, so every provider of the same fact agrees. The world clock is fixed at ``_NOW`` (news ages, current weather, timers).
"""

from __future__ import annotations

import ast
import datetime as dt
import math
import operator
import re
import unicodedata
from typing import Any

from replan.env.corpus import timezones
from replan.env.corpus.data import SeedTables
from replan.env.corpus.kinds import CORPUS_NOW
from replan.env.corpus.registry import implementation, initial_state
from replan.env.world import InvalidValue, ToolContext, WorldState

_SEEDS = SeedTables.load(__package__)  # seeds.json beside this module


_NOW = CORPUS_NOW


# -- places -------------------------------------------------------------------------------------
# name: (lat, lon, country, tz, population, wikidata, geonames id, mean daily high C, amplitude C)
_CITIES = _SEEDS.table(
    "cities", dict[str, tuple[float, float, str, str, int, str, int, float, float]]
)
_COUNTRY_NAMES = _SEEDS.table("country_names", dict[str, str])
_ALIASES = _SEEDS.table("aliases", dict[str, str])


def _fold(text: str) -> str:
    """Lower-case, accent-free, single-spaced text (Kraków -> krakow)."""
    t = unicodedata.normalize("NFKD", text)
    t = "".join(c for c in t if not unicodedata.combining(c))
    return " ".join(t.lower().split())


_CITY_INDEX = {_fold(n): n for n in _CITIES} | _ALIASES
_WIKIDATA_INDEX = {rec[5]: name for name, rec in _CITIES.items()}


def _find_city(text: str) -> str | None:
    return _CITY_INDEX.get(_fold(text).strip(" ."))


def _city(
    param: str, text: str
) -> tuple[str, tuple[float, float, str, str, int, str, int, float, float]]:
    """Resolve ``"Lisbon"`` or ``"Lisbon, PT"`` to a known city; InvalidValue when unknown."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    name = _find_city(parts[0]) if parts else None
    if name is None:
        raise InvalidValue(param, f"no place found for {text!r}")
    rec = _CITIES[name]
    if len(parts) > 1 and re.fullmatch(r"[A-Za-z]{2}", parts[-1]) and parts[-1].upper() != rec[2]:
        raise InvalidValue(param, f"{name} is not in country {parts[-1].upper()!r}")
    return name, rec


def _haversine(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 6371.0088 * 2 * math.asin(min(1.0, math.sqrt(a)))


def _nearest(lat: float, lon: float) -> tuple[str, float]:
    best = min(_CITIES, key=lambda n: _haversine(lat, lon, _CITIES[n][0], _CITIES[n][1]))
    return best, _haversine(lat, lon, _CITIES[best][0], _CITIES[best][1])


# -- time zones ---------------------------------------------------------------------------------
_TZ_NAMES = _SEEDS.table("tz_names", dict[str, str])


def _tz_at(lat: float, lon: float) -> str:
    """The zone of a point: the nearest known city within 300 km, else the nautical zone."""
    name, km = _nearest(lat, lon)
    if km <= 300:
        return _CITIES[name][3]
    hours = round(lon / 15)
    if hours == 0:
        return "UTC"
    return f"Etc/GMT{'-' if hours > 0 else '+'}{min(abs(hours), 12)}"


def _parse_utc(param: str, text: str) -> dt.datetime:
    try:
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(dt.UTC)
    except ValueError:
        raise InvalidValue(param, f"{text!r} is not an ISO 8601 UTC timestamp") from None


# -- sun ----------------------------------------------------------------------------------------
def _sun(lat: float, lon: float, day: str) -> dict[str, Any]:
    """Sunrise/sunset in the point's own zone (NOAA sunrise equation, -0.833 deg horizon)."""
    d = dt.date.fromisoformat(day)
    n = (d - dt.date(2000, 1, 1)).days + 0.0008
    j_star = n - lon / 360.0
    m = (357.5291 + 0.98560028 * j_star) % 360
    mr = math.radians(m)
    c = 1.9148 * math.sin(mr) + 0.02 * math.sin(2 * mr) + 0.0003 * math.sin(3 * mr)
    lam = math.radians((m + c + 180 + 102.9372) % 360)
    j_transit = 2451545.0 + j_star + 0.0053 * math.sin(mr) - 0.0069 * math.sin(2 * lam)
    sin_d = math.sin(lam) * math.sin(math.radians(23.4397))
    cos_d = math.cos(math.asin(sin_d))
    phi = math.radians(lat)
    cos_w = (math.sin(math.radians(-0.833)) - math.sin(phi) * sin_d) / (math.cos(phi) * cos_d)
    if not -1 <= cos_w <= 1:
        raise InvalidValue(
            "date", "the sun does not rise or set there on that date (polar day or night)"
        )
    w = math.degrees(math.acos(cos_w))
    tz = _tz_at(lat, lon)

    def local(jd: float) -> dt.datetime:
        instant = dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(
            seconds=round((jd - 2440587.5) * 86400)
        )
        return timezones.utc_to_local(instant, tz)[0]

    rise, noon, sett = local(j_transit - w / 360), local(j_transit), local(j_transit + w / 360)
    return {
        "sunrise": rise.strftime("%H:%M"),
        "sunset": sett.strftime("%H:%M"),
        "solar_noon": noon.strftime("%H:%M"),
        "day_length_min": round(2 * w / 360 * 1440),
        "timezone": tz,
        "offset_min": timezones.offset_min(tz, d)[0],
    }


# -- weather ------------------------------------------------------------------------------------
_WMO = _SEEDS.table("wmo", dict[int, str])
_WMO_MAIN = _SEEDS.table("wmo_main", dict[int, str])


def _daily(ctx: ToolContext, lat: float, lon: float, day: str) -> dict[str, Any]:
    """One day's weather at a point: seasonal climate plus seeded noise, keyed by the point."""
    d = dt.date.fromisoformat(day)
    name, km = _nearest(lat, lon)
    if km <= 300:
        mean, amp = _CITIES[name][7], _CITIES[name][8]
    else:
        mean, amp = 30 - 0.45 * abs(lat), min(15.0, 0.3 * abs(lat))
    peak = 200 if lat >= 0 else 17
    climate = mean + amp * math.cos(2 * math.pi * (d.timetuple().tm_yday - peak) / 365.25)
    key = f"gen:wx:{lat:.2f},{lon:.2f}:{day}"
    high = round(climate + ctx.number(key + ":hi", -3.0, 3.0, 1), 1)
    low = round(high - ctx.number(key + ":spread", 4.5, 10.0, 1), 1)
    wet = ctx.pick(key + ":wet", [0, 0, 0, 1, 1, 2])
    if wet == 0:
        precip, code = 0.0, ctx.pick(key + ":sky", [0, 1, 2, 3])
    else:
        precip = (
            ctx.number(key + ":mm", 0.2, 4.0, 1)
            if wet == 1
            else ctx.number(key + ":mm", 4.0, 22.0, 1)
        )
        code = (71 if wet == 1 else 73) if high < 2 else (61 if wet == 1 else 63)
    return {
        "high": high,
        "low": low,
        "precip_mm": precip,
        "code": code,
        "pop": 0 if wet == 0 else ctx.pick(key + ":pop", [40, 60, 80, 90]),
    }


def _current(ctx: ToolContext, lat: float, lon: float) -> dict[str, Any]:
    today = _daily(ctx, lat, lon, _NOW.date().isoformat())
    key = f"gen:wxnow:{lat:.2f},{lon:.2f}"
    return {
        "temp": round(today["low"] + 0.7 * (today["high"] - today["low"]), 1),
        "humidity": int(ctx.number(key + ":rh", 35, 92, 0)),
        "wind_kph": ctx.number(key + ":wind", 2.0, 38.0, 1),
        "pressure_hpa": int(ctx.number(key + ":p", 996, 1032, 0)),
        "code": today["code"],
    }


# ==============================================================================================
# weather
# ==============================================================================================
@implementation
def owm_daily_forecast(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    name, rec = _city("city", args["city"])
    day = _daily(ctx, rec[0], rec[1], args["date"])
    return {
        "city": {"name": name, "country": rec[2]},
        "date": args["date"],
        "temp": {"max": day["high"], "min": day["low"]},
        "weather": {"main": _WMO_MAIN[day["code"]], "description": _WMO[day["code"]]},
        "pop": day["pop"],
        "rain_mm": day["precip_mm"],
    }


@implementation
def open_meteo_geocode(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    name, rec = _city("name", args["name"])
    hit = {
        "id": rec[6],
        "name": name,
        "latitude": rec[0],
        "longitude": rec[1],
        "country_code": rec[2],
        "timezone": rec[3],
        "population": rec[4],
    }
    return {"results": [hit], "generationtime_ms": ctx.number("gen:om:gt:" + name, 0.2, 1.5, 3)}


@implementation
def open_meteo_forecast(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    lat, lon = args["latitude"], args["longitude"]
    day = _daily(ctx, lat, lon, args["start_date"])
    return {
        "latitude": lat,
        "longitude": lon,
        "timezone": _tz_at(lat, lon),
        "daily": {
            "time": [args["start_date"]],
            "temperature_2m_max": [day["high"]],
            "temperature_2m_min": [day["low"]],
            "precipitation_sum": [day["precip_mm"]],
            "weathercode": [day["code"]],
        },
    }


@implementation
def owm_current_weather(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    name, rec = _city("q", args["q"])
    now = _current(ctx, rec[0], rec[1])
    return {
        "name": name,
        "coord": {"lat": rec[0], "lon": rec[1]},
        "weather": [
            {
                "id": {0: 800, 1: 801, 2: 802, 3: 804, 61: 500, 63: 501, 71: 600, 73: 601}[
                    now["code"]
                ],
                "main": _WMO_MAIN[now["code"]],
                "description": _WMO[now["code"]],
            }
        ],
        "main": {"temp": now["temp"], "humidity": now["humidity"], "pressure": now["pressure_hpa"]},
        "wind": {"speed": round(now["wind_kph"] / 3.6, 1)},
        "dt": int(_NOW.timestamp()),
    }


@implementation
def weatherapi_current(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    name, rec = _city("location", args["location"])
    now = _current(ctx, rec[0], rec[1])
    local, _ = timezones.utc_to_local(_NOW, rec[3])
    return {
        "location": {
            "name": name,
            "country": _COUNTRY_NAMES.get(rec[2], rec[2]),
            "tz_id": rec[3],
            "localtime": local.strftime("%Y-%m-%d %H:%M"),
        },
        "current": {
            "temp_c": now["temp"],
            "temp_f": round(now["temp"] * 9 / 5 + 32, 1),
            "condition": {"text": _WMO[now["code"]].capitalize()},
            "humidity": now["humidity"],
            "wind_kph": now["wind_kph"],
            "pressure_mb": float(now["pressure_hpa"]),
        },
    }


# ==============================================================================================
# geocoding, places and routing
# ==============================================================================================
def _geocode_address(ctx: ToolContext, param: str, address: str) -> dict[str, Any]:
    """Street-level geocode: a known city in the address, plus a seeded offset per address."""
    parts = [p.strip() for p in address.split(",") if p.strip()]
    city = None
    for part in reversed(parts):
        city = _find_city(part) or _find_city(re.sub(r"[\d-]+", " ", part))
        if city:
            break
    if city is None:
        raise InvalidValue(param, f"ZERO_RESULTS: no match for address {address!r}")
    rec = _CITIES[city]
    norm = _fold(address)
    street = ", ".join(p for p in parts if _find_city(p) != city) or "City centre"
    exact = len(parts) > 1
    lat = round(rec[0] + (ctx.number(f"gen:addr:{norm}:lat", -0.03, 0.03, 4) if exact else 0), 5)
    lon = round(rec[1] + (ctx.number(f"gen:addr:{norm}:lon", -0.03, 0.03, 4) if exact else 0), 5)
    pid = f"ChIJ{int(ctx.number('gen:place:' + norm, 10**11, 10**12 - 1, 0))}"
    return {
        "place_id": pid,
        "lat": lat,
        "lon": lon,
        "city": city,
        "country": rec[2],
        "formatted": f"{street}, {city}, {_COUNTRY_NAMES.get(rec[2], rec[2])}",
        "precision": "ROOFTOP" if exact else "APPROXIMATE",
    }


@implementation
def gmaps_geocode(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    g = _geocode_address(ctx, "address", args["address"])
    return {
        "status": "OK",
        "results": [
            {
                "formatted_address": g["formatted"],
                "place_id": g["place_id"],
                "geometry": {
                    "location": {"lat": g["lat"], "lng": g["lon"]},
                    "location_type": g["precision"],
                },
                "types": ["street_address"]
                if g["precision"] == "ROOFTOP"
                else ["locality", "political"],
            }
        ],
    }


@implementation
def mapbox_geocode(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    g = _geocode_address(ctx, "search_text", args["search_text"])
    return {
        "type": "FeatureCollection",
        "query": _fold(args["search_text"]).split(),
        "features": [
            {
                "id": g["place_id"],
                "place_name": g["formatted"],
                "center": [g["lon"], g["lat"]],
                "relevance": 1.0 if g["precision"] == "ROOFTOP" else 0.8,
            }
        ],
    }


@implementation
def gmaps_reverse_geocode(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    name, km = _nearest(args["latitude"], args["longitude"])
    if km > 150:
        raise InvalidValue("latitude", "ZERO_RESULTS: no locality within 150 km of that point")
    cc = _CITIES[name][2]
    return {
        "locality": name,
        "country": cc,
        "formatted_address": f"{name}, {_COUNTRY_NAMES.get(cc, cc)}",
        "distance_km": round(km, 2),
    }


_MODES = _SEEDS.table("modes", dict[str, tuple[float, float, int]])


@implementation
def gmaps_directions(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    a = ctx.state.get("gen_places", args["origin_place_id"])
    b = ctx.state.get("gen_places", args["destination_place_id"])
    assert a is not None and b is not None
    mode = args.get("mode", "driving")
    detour, speed, overhead = _MODES[mode]
    km = round(_haversine(a["lat"], a["lng"], b["lat"], b["lng"]) * detour, 1)
    if mode in ("walking", "bicycling") and km > 300:
        raise InvalidValue("mode", f"ZERO_RESULTS: no {mode} route over {km} km")
    if mode == "transit" and km > 1500:
        raise InvalidValue("mode", f"ZERO_RESULTS: no transit route over {km} km")
    if "ferries" in args.get("avoid", []) and km > 2500:
        raise InvalidValue("avoid", "ZERO_RESULTS: every route needs a ferry")
    minutes = 0 if km == 0 else round(km / speed * 60) + overhead
    via = ctx.pick(
        f"gen:route:{args['origin_place_id']}:{args['destination_place_id']}",
        ["A1", "N6", "I-25", "Ring Road", "Main St", "Coastal Rd"],
    )
    return {
        "status": "OK",
        "routes": [
            {
                "summary": via,
                "legs": [
                    {
                        "start_address": a["address"],
                        "end_address": b["address"],
                        "distance": {"value": int(km * 1000), "text": f"{km} km"},
                        "duration": {
                            "value": minutes * 60,
                            "text": f"{minutes // 60} h {minutes % 60} min"
                            if minutes >= 60
                            else f"{minutes} mins",
                        },
                    }
                ],
            }
        ],
        "distance_km": km,
        "duration_min": minutes,
    }


@implementation
def haversine_distance(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    la1, lo1, la2, lo2 = (
        args["from_latitude"],
        args["from_longitude"],
        args["to_latitude"],
        args["to_longitude"],
    )
    km = _haversine(la1, lo1, la2, lo2)
    p1, p2, dl = math.radians(la1), math.radians(la2), math.radians(lo2 - lo1)
    y = math.sin(dl) * math.cos(p2)
    x = math.cos(p1) * math.sin(p2) - math.sin(p1) * math.cos(p2) * math.cos(dl)
    bearing = (math.degrees(math.atan2(y, x)) + 360) % 360
    return {
        "distance_km": round(km, 2),
        "distance_mi": round(km / 1.609344, 2),
        "initial_bearing_deg": round(bearing, 1),
    }


# ==============================================================================================
# time zones
# ==============================================================================================
@implementation
def owm_geocode_city(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    name, rec = _city("q", args["q"])
    return {
        "matches": [
            {
                "name": name,
                "lat": rec[0],
                "lon": rec[1],
                "country": rec[2],
                "local_names": {"en": name},
            }
        ]
    }


@implementation
def gmaps_timezone(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    tz = _tz_at(args["latitude"], args["longitude"])
    day = dt.date.fromisoformat(args.get("date", _NOW.date().isoformat()))
    total, dst = timezones.offset_min(tz, day)
    return {
        "status": "OK",
        "timeZoneId": tz,
        "timeZoneName": _TZ_NAMES.get(tz, f"GMT{timezones.fmt_offset(total)}"),
        "rawOffset": (total - dst) * 60,
        "dstOffset": dst * 60,
    }


@implementation
def wikidata_search_entity(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    name, rec = _city("search", args["search"])
    return {
        "searchinfo": {"search": args["search"]},
        "search": [
            {
                "id": rec[5],
                "label": name,
                "description": f"city in {_COUNTRY_NAMES.get(rec[2], rec[2])}",
                "concepturi": f"http://www.wikidata.org/entity/{rec[5]}",
            }
        ],
    }


@implementation
def wikidata_entity_timezone(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    name = _WIKIDATA_INDEX.get(args["entity_id"])
    if name is None:
        raise InvalidValue("entity_id", f"{args['entity_id']} has no P421 (time zone) claim")
    return {
        "entity_id": args["entity_id"],
        "label": name,
        "property": "P421",
        "time_zone": _CITIES[name][3],
    }


@implementation
def convert_timezone(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    timezones.zone("from_timezone", args["from_timezone"])
    timezones.zone("to_timezone", args["to_timezone"])
    local, off = timezones.utc_to_local(
        timezones.local_to_utc(args["date"], args["time"], args["from_timezone"]),
        args["to_timezone"],
    )
    shift = (local.date() - dt.date.fromisoformat(args["date"])).days
    return {
        "date": local.date().isoformat(),
        "time": local.strftime("%H:%M"),
        "utc_offset": timezones.fmt_offset(off),
        "day_shift": shift,
    }


@implementation
def local_to_utc(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    timezones.zone("timezone", args["timezone"])
    instant = timezones.local_to_utc(args["local_date"], args["local_time"], args["timezone"])
    off, dst = timezones.offset_min(args["timezone"], dt.date.fromisoformat(args["local_date"]))
    return {
        "utc": instant.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "offset_applied": timezones.fmt_offset(off),
        "is_dst": dst > 0,
    }


@implementation
def utc_to_local(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    timezones.zone("timezone", args["timezone"])
    local, off = timezones.utc_to_local(_parse_utc("utc", args["utc"]), args["timezone"])
    return {
        "date": local.date().isoformat(),
        "time": local.strftime("%H:%M"),
        "utc_offset": timezones.fmt_offset(off),
        "zone_name": _TZ_NAMES.get(args["timezone"], args["timezone"]),
    }


# -- sunrise / sunset ---------------------------------------------------------------------------
@implementation
def geonames_search(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    name, rec = _city("q", args["q"])
    if "country" in args and args["country"] != rec[2]:
        return {"totalResultsCount": 0, "geonames": []}
    return {
        "totalResultsCount": 1,
        "geonames": [
            {
                "geonameId": rec[6],
                "name": name,
                "lat": rec[0],
                "lng": rec[1],
                "countryCode": rec[2],
                "countryName": _COUNTRY_NAMES.get(rec[2], rec[2]),
                "population": rec[4],
                "fcode": "PPLC" if rec[4] > 3_000_000 else "PPLA",
            }
        ],
    }


@implementation
def geonames_timezone(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    sun = _sun(args["lat"], args["lng"], args["date"])
    std = timezones.TZ[sun["timezone"]][0]
    near, km = _nearest(args["lat"], args["lng"])
    return {
        "timezoneId": sun["timezone"],
        "gmtOffset": std / 60,
        "dstOffset": sun["offset_min"] / 60,
        "date": args["date"],
        "sunrise": sun["sunrise"],
        "sunset": sun["sunset"],
        "countryCode": _CITIES[near][2] if km <= 300 else "XX",
    }


@implementation
def nominatim_search(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    name, rec = _city("q", args["q"])
    return {
        "results": [
            {
                "osm_id": int(ctx.number("gen:osm:" + name, 10_000, 9_999_999, 0)),
                "osm_type": "relation",
                "display_name": f"{name}, {_COUNTRY_NAMES.get(rec[2], rec[2])}",
                "lat": rec[0],
                "lon": rec[1],
                "class": "boundary",
                "type": "administrative",
                "importance": round(min(0.95, 0.5 + math.log10(rec[4]) / 20), 3),
            }
        ]
    }


@implementation
def sunrise_sunset_times(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    sun = _sun(args["lat"], args["lng"], args["date"])
    tzid = args.get("tzid", sun["timezone"])
    timezones.zone("tzid", tzid)
    out = {k: sun[k] for k in ("sunrise", "sunset", "solar_noon")}
    if tzid != sun["timezone"]:
        for k, v in out.items():
            utc = timezones.local_to_utc(args["date"], v, sun["timezone"])
            out[k] = timezones.utc_to_local(utc, tzid)[0].strftime("%H:%M")
    return {
        "status": "OK",
        "tzid": tzid,
        "results": {**out, "day_length_min": sun["day_length_min"]},
    }


# ==============================================================================================
# unit conversion
# ==============================================================================================
# unit: (dimension, factor to the SI base, offset to the SI base)
_UNITS: dict[str, tuple[str, float, float]] = {
    "mm": ("length", 0.001, 0),
    "cm": ("length", 0.01, 0),
    "m": ("length", 1.0, 0),
    "km": ("length", 1000.0, 0),
    "in": ("length", 0.0254, 0),
    "ft": ("length", 0.3048, 0),
    "yd": ("length", 0.9144, 0),
    "mi": ("length", 1609.344, 0),
    "nmi": ("length", 1852.0, 0),
    "mg": ("mass", 1e-6, 0),
    "g": ("mass", 0.001, 0),
    "kg": ("mass", 1.0, 0),
    "t": ("mass", 1000.0, 0),
    "oz": ("mass", 0.028349523125, 0),
    "lb": ("mass", 0.45359237, 0),
    "st": ("mass", 6.35029318, 0),
    "mL": ("volume", 0.001, 0),
    "L": ("volume", 1.0, 0),
    "tsp": ("volume", 0.00492892159375, 0),
    "tbsp": ("volume", 0.01478676478125, 0),
    "fl_oz_us": ("volume", 0.0295735295625, 0),
    "cup_us": ("volume", 0.2365882365, 0),
    "qt_us": ("volume", 0.946352946, 0),
    "gal_us": ("volume", 3.785411784, 0),
    "gal_imp": ("volume", 4.54609, 0),
    "m/s": ("speed", 1.0, 0),
    "km/h": ("speed", 1 / 3.6, 0),
    "mph": ("speed", 0.44704, 0),
    "kn": ("speed", 1852 / 3600, 0),
    "K": ("temperature", 1.0, 0),
    "degC": ("temperature", 1.0, 273.15),
    "degF": ("temperature", 5 / 9, 459.67 * 5 / 9),
    "J": ("energy", 1.0, 0),
    "kJ": ("energy", 1000.0, 0),
    "kWh": ("energy", 3.6e6, 0),
    "kcal": ("energy", 4184.0, 0),
    "BTU": ("energy", 1055.05585262, 0),
    "Pa": ("pressure", 1.0, 0),
    "hPa": ("pressure", 100.0, 0),
    "kPa": ("pressure", 1000.0, 0),
    "bar": ("pressure", 1e5, 0),
    "psi": ("pressure", 6894.757293168, 0),
    "inHg": ("pressure", 3386.389, 0),
    "mmHg": ("pressure", 133.322387415, 0),
}


def _linear(from_unit: str, to_unit: str) -> tuple[str, float, float]:
    da, fa, oa = _UNITS[from_unit]
    db, fb, ob = _UNITS[to_unit]
    if da != db:
        raise InvalidValue("to_unit", f"cannot convert {da} ({from_unit}) to {db} ({to_unit})")
    return da, fa / fb, (oa - ob) / fb


def _apply(value: float, factor: float, offset: float) -> float:
    return round(value * factor + offset, 6)


@implementation
def convert_units(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    dim, factor, offset = _linear(args["from_unit"], args["to_unit"])
    if (
        dim == "temperature"
        and args["value"] * _UNITS[args["from_unit"]][1] + _UNITS[args["from_unit"]][2] < 0
    ):
        raise InvalidValue("value", "temperature below absolute zero")
    return {
        "value": _apply(args["value"], factor, offset),
        "unit": args["to_unit"],
        "dimension": dim,
    }


@implementation
def get_conversion_factor(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    dim, factor, offset = _linear(args["from_unit"], args["to_unit"])
    return {
        "factor": factor,
        "offset": offset,
        "dimension": dim,
        "formula": f"{args['to_unit']} = {args['from_unit']} * {factor:.6g} + {offset:.6g}",
    }


@implementation
def apply_linear_conversion(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return {"value": _apply(args["value"], args["factor"], args["offset"])}


# ==============================================================================================
# news, web search, pages
# ==============================================================================================
_NEWS_SOURCES = _SEEDS.table("news_sources", list[tuple[str, str, str]])
_HEADLINES = _SEEDS.table("headlines", list[str])
_AUTHORS = _SEEDS.table("authors", list[str])


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", _fold(text)).strip("-")


def _title_from_slug(slug: str) -> str:
    words = slug.replace("_", "-").split("-")
    text = " ".join(w for w in words if w)
    return text[:1].upper() + text[1:]


_HEADLINE_RES = [
    re.compile("^" + re.escape(_slug(h.format(q="qqqq"))).replace("qqqq", "(.+)") + "$")
    for h in _HEADLINES
]


def _topic(slug: str) -> str:
    """The subject of a page slug: the query inside a generated headline, else the slug."""
    for rx in _HEADLINE_RES:
        m = rx.match(slug)
        if m:
            return m.group(1).replace("-", " ")
    return slug.replace("-", " ")


def _news(ctx: ToolContext, query: str, lang: str) -> list[dict[str, Any]]:
    q = " ".join(query.split())
    if not _slug(q):
        raise InvalidValue("q", "the query has no searchable words")
    start = ctx.pick(f"gen:news:{_fold(q)}:{lang}", list(range(len(_HEADLINES))))
    out = []
    for i in range(5):
        key = f"gen:news:{_fold(q)}:{lang}:{i}"
        slug = _slug(_HEADLINES[(start + 3 * i) % len(_HEADLINES)].format(q=q))
        src = ctx.pick(key + ":src", _NEWS_SOURCES)
        published = _NOW - dt.timedelta(hours=5 + 17 * i + int(ctx.number(key + ":h", 0, 11, 0)))
        out.append(
            {
                "source_id": src[0],
                "source": src[1],
                "domain": src[2],
                "author": ctx.pick(key + ":a", _AUTHORS),
                "title": _title_from_slug(slug),
                "description": f"{_title_from_slug(_slug(q))}: reporting from {src[1]}.",
                "url": f"https://www.{src[2]}/{published:%Y/%m/%d}/{slug}",
                "published": published.strftime("%Y-%m-%dT%H:%M:%SZ"),
            }
        )
    return out


_NEWS_LANGS = _SEEDS.table("news_langs", list[str])


@implementation
def newsapi_everything(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    arts = _news(ctx, args["q"], args.get("language", "en"))
    if "from" in args:
        arts = [a for a in arts if a["published"][:10] >= args["from"]]
    arts = arts[: args.get("pageSize", 100)]
    return {
        "status": "ok",
        "totalResults": len(arts),
        "articles": [
            {
                "source": {"id": a["source_id"], "name": a["source"]},
                "author": a["author"],
                "title": a["title"],
                "description": a["description"],
                "url": a["url"],
                "publishedAt": a["published"],
            }
            for a in arts
        ],
    }


@implementation
def gnews_search(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    lang = args.get("lang", "en")
    if lang not in _NEWS_LANGS:
        raise InvalidValue("lang", f"language {lang!r} is not supported")
    arts = _news(ctx, args["query"], lang)[: args.get("max", 10)]
    return {
        "totalArticles": len(arts),
        "articles": [
            {
                "title": a["title"],
                "description": a["description"],
                "url": a["url"],
                "image": f"https://cdn.{a['domain']}/img/{a['url'].rsplit('/', 1)[1][:32]}.jpg",
                "publishedAt": a["published"],
                "source": {"name": a["source"], "url": f"https://www.{a['domain']}"},
            }
            for a in arts
        ],
    }


_WEB_SITES = _SEEDS.table("web_sites", list[tuple[str, str]])


def _web_results(ctx: ToolContext, query: str) -> list[dict[str, Any]]:
    q = " ".join(query.split())
    slug = _slug(q)
    if not slug:
        raise InvalidValue("q", "the query has no searchable words")
    topic = q[:1].upper() + q[1:]
    scored = sorted(_WEB_SITES, key=lambda st: -ctx.number(f"gen:web:{_fold(q)}:{st[0]}", 0, 1, 6))
    out = []
    for host, style in scored[:6]:
        if style == "wiki":
            url, title = f"https://{host}/wiki/{topic.replace(' ', '_')}", f"{topic} - Wikipedia"
        elif style == "thread":
            url = f"https://{host}/r/{slug.split('-')[0]}/comments/{slug[:6]}/{slug}"
            title = f"{_title_from_slug(slug)} : r/{slug.split('-')[0]}"
        elif style == "video":
            url, title = f"https://{host}/watch?v={slug[:11]}", f"{topic} explained - YouTube"
        else:
            url, title = f"https://{host}/{style}/{slug}", _title_from_slug(slug)
        out.append(
            {
                "title": title,
                "url": url,
                "host": host,
                "snippet": f"Everything you need to know about {q}, from {host}.",
            }
        )
    return out


@implementation
def google_custom_search(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    res = _web_results(ctx, args["q"])[: args.get("num", 10)]
    total = int(ctx.number("gen:web:total:" + _fold(args["q"]), 1e4, 5e7, 0))
    return {
        "searchInformation": {"totalResults": str(total), "searchTime": 0.31},
        "items": [
            {
                "title": r["title"],
                "link": r["url"],
                "displayLink": r["host"],
                "snippet": r["snippet"],
            }
            for r in res
        ],
    }


@implementation
def bing_web_search(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    res = _web_results(ctx, args["query"])[: args.get("count", 10)]
    total = int(ctx.number("gen:web:total:" + _fold(args["query"]), 1e4, 5e7, 0))
    return {
        "webPages": {
            "totalEstimatedMatches": total,
            "value": [
                {"name": r["title"], "url": r["url"], "snippet": r["snippet"], "language": "en"}
                for r in res
            ],
        }
    }


_PAGE_SENTENCES = _SEEDS.table("page_sentences", list[str])


@implementation
def fetch_webpage(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    url = args["url"]
    m = re.match(r"^https?://([^/?#]+)([^?#]*)", url)
    if not m or "." not in m.group(1):
        raise InvalidValue("url", f"cannot resolve host of {url!r}")
    path = m.group(2).rstrip("/")
    if "/wiki/" in path:
        title = path.rsplit("/wiki/", 1)[1].replace("_", " ")
        topic = title
    else:
        last = _slug(path.rsplit("/", 1)[-1] if path else "")
        title = _title_from_slug(last) if last else m.group(1).removeprefix("www.")
        topic = _topic(last) if last else title
    start = ctx.pick("gen:page:" + url, list(range(len(_PAGE_SENTENCES))))
    n_sent = 4 + int(ctx.number("gen:page:len:" + url, 0, 3, 0))
    sentences = [
        _PAGE_SENTENCES[(start + 3 * i) % len(_PAGE_SENTENCES)].format(
            T=topic[:1].upper() + topic[1:],
            t=topic,
            n=int(ctx.number(f"gen:page:{url}:n", 4, 38, 0)),
        )
        for i in range(n_sent)
    ]
    text = " ".join(sentences)
    return {
        "url": url,
        "status_code": 200,
        "title": title,
        "text": text,
        "word_count": len(text.split()),
        "language": "en",
    }


_STOP = set(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "for",
        "with",
        "by",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "it",
        "its",
        "this",
        "that",
        "as",
        "at",
        "from",
        "has",
        "have",
        "had",
        "will",
        "would",
        "can",
        "could",
        "their",
        "there",
        "which",
        "who",
        "what",
    ]
)


@implementation
def textrank_summarize(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    sents = [x.strip() for x in re.split(r"(?<=[.!?。])\s+", args["text"].strip()) if x.strip()]
    if not sents:
        raise InvalidValue("text", "no sentences to summarise")
    freq: dict[str, int] = {}
    for w in re.findall(r"[\w']+", args["text"].lower()):
        if w not in _STOP and len(w) > 2:
            freq[w] = freq.get(w, 0) + 1

    def score(sent: str) -> float:
        words = [w for w in re.findall(r"[\w']+", sent.lower()) if w in freq]
        return sum(freq[w] for w in words) / (len(words) + 1)

    keep = sorted(
        sorted(range(len(sents)), key=lambda i: (-score(sents[i]), i))[
            : args.get("max_sentences", 2)
        ]
    )
    keywords = sorted(freq, key=lambda w: (-freq[w], w))[:5]
    return {
        "summary": " ".join(sents[i] for i in keep),
        "sentences_in": len(sents),
        "sentences_out": len(keep),
        "keywords": keywords,
    }


# ==============================================================================================
# language
# ==============================================================================================
_PHRASES = _SEEDS.table("phrases", list[dict[str, str]])
_PHRASE_INDEX = {_fold(v): (i, lang) for i, row in enumerate(_PHRASES) for lang, v in row.items()}
_STOPWORDS = _SEEDS.table("stopwords", dict[str, set[str]])


def _detect(text: str) -> tuple[str, float]:
    hit = _PHRASE_INDEX.get(_fold(text))
    if hit is not None:
        return hit[1], 0.99
    if re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", text):
        return "ja", 0.97
    low = text.lower()
    if re.search(r"[ąćęłńśźż]", low):
        return "pl", 0.93
    words = re.findall(r"[\w'’]+", low)
    scores = {lang: sum(w in sw for w in words) for lang, sw in _STOPWORDS.items()}
    for lang, pat in (("pt", r"[ãõç]"), ("de", r"[äöüß]"), ("es", r"[ñ¿¡]"), ("fr", r"[èêœ]")):
        if re.search(pat, low):
            scores[lang] += 2
    best = max(scores, key=lambda k: (scores[k], k == "en"))
    if scores[best] == 0:
        return "en", 0.51
    return best, round(min(0.95, 0.55 + 0.1 * scores[best]), 2)


def _translate(text: str, target: str, source: str | None) -> tuple[str, str]:
    detected = source or _detect(text)[0]
    if detected == target:
        return text, detected
    hit = _PHRASE_INDEX.get(_fold(text))
    if hit is not None and target in _PHRASES[hit[0]]:
        return _PHRASES[hit[0]][target], detected
    return f"[{target}] {text}", detected


@implementation
def google_translate(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    out, src = _translate(args["q"], args["target"], args.get("source"))
    return {"data": {"translations": [{"translatedText": out, "detectedSourceLanguage": src}]}}


@implementation
def deepl_translate(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    if args.get("formality", "default") != "default" and args["target_lang"] in ("en", "ja"):
        raise InvalidValue("formality", f"formality is not supported for {args['target_lang']}")
    out, src = _translate(args["text"], args["target_lang"], args.get("source_lang"))
    return {"translations": [{"detected_source_language": src, "text": out}]}


@implementation
def google_detect_language(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    lang, conf = _detect(args["q"])
    return {"language": lang, "confidence": conf, "isReliable": conf >= 0.8}


_DICTIONARY = _SEEDS.table("dictionary", dict[str, tuple[str, str, str, str, str]])


@implementation
def free_dictionary_lookup(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    entry = _DICTIONARY.get(_fold(args["word"]))
    if entry is None:
        raise InvalidValue("word", f"No Definitions Found for {args['word']!r}")
    lang, phon, pos, definition, example = entry
    if "language" in args and args["language"] != lang:
        raise InvalidValue(
            "language",
            f"{args['word']!r} is not in the {args['language']} dictionary (found in {lang})",
        )
    return {
        "entries": [
            {
                "word": args["word"],
                "language": lang,
                "phonetic": phon,
                "meanings": [
                    {
                        "partOfSpeech": pos,
                        "definitions": [{"definition": definition, "example": example}],
                    }
                ],
                "sourceUrls": [f"https://en.wiktionary.org/wiki/{_fold(args['word'])}"],
            }
        ]
    }


# ==============================================================================================
# calculators
# ==============================================================================================
_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_FUNCS = {
    "sqrt": math.sqrt,
    "abs": abs,
    "round": round,
    "min": min,
    "max": max,
    "log": math.log,
    "log10": math.log10,
    "exp": math.exp,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "floor": math.floor,
    "ceil": math.ceil,
}
_CONSTS = {"pi": math.pi, "e": math.e}


def _eval(node: ast.AST) -> float:
    if isinstance(node, ast.Expression):
        return _eval(node.body)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.Name) and node.id in _CONSTS:
        return _CONSTS[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        v = _eval(node.operand)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        a, b = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow) and (abs(b) > 512 or abs(a) > 1e12):
            raise InvalidValue("expression", "exponent too large")
        return _BINOPS[type(node.op)](a, b)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCS
        and not node.keywords
    ):
        vals = [_eval(a) for a in node.args]
        if node.func.id == "round" and len(vals) == 2:
            vals[1] = int(vals[1])
        return _FUNCS[node.func.id](*vals)
    raise InvalidValue("expression", f"unsupported syntax: {ast.dump(node)[:40]}")


@implementation
def evaluate_expression(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    src = args["expression"].replace("^", "**")
    try:
        tree = ast.parse(src, mode="eval")
    except SyntaxError:
        raise InvalidValue("expression", "malformed expression") from None
    try:
        value = _eval(tree)
    except ZeroDivisionError:
        raise InvalidValue("expression", "division by zero") from None
    except (ValueError, TypeError, OverflowError) as exc:
        raise InvalidValue("expression", f"math error: {exc}") from None
    if isinstance(value, complex) or not math.isfinite(value):
        raise InvalidValue("expression", "result is not a finite real number")
    return {
        "expression": args["expression"],
        "result": round(float(value), args.get("precision", 6)),
    }


def _tip(amount: float, pct: float) -> tuple[float, float]:
    tip = round(amount * pct / 100, 2)
    return tip, round(amount + tip, 2)


@implementation
def bill_split_calculator(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    tip, total = _tip(args["total"], args["tip_percent"])
    return {
        "subtotal": args["total"],
        "tip": tip,
        "total_with_tip": total,
        "per_person": round(total / args["people"], 2),
    }


@implementation
def tip_calculate(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    tip, total = _tip(args["amount"], args["tip_percent"])
    return {"tip_amount": tip, "total": total}


@implementation
def divide_evenly(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    share = round(args["amount"] / args["parts"], 2)
    return {"share": share, "rounding_difference": round(args["amount"] - share * args["parts"], 2)}


# ==============================================================================================
# recipes and nutrition
# ==============================================================================================
# food: kcal, protein g, fat g, carbohydrate g per 100 g
_FOODS = _SEEDS.table("foods", dict[str, tuple[int, float, float, float]])
# id: title, minutes, servings, diets, tags, ingredient lines
_RECIPES = _SEEDS.table(
    "recipes", dict[int, tuple[str, int, int, tuple[str, ...], tuple[str, ...], tuple[str, ...]]]
)
_LINE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(g|kg|ml|l)\s+(.+?)\s*$", re.IGNORECASE)


def _nutrition(lines: list[str], param: str) -> dict[str, Any]:
    rows, totals = [], [0.0, 0.0, 0.0, 0.0]
    for line in lines:
        m = _LINE.match(line)
        if not m:
            raise InvalidValue(
                param, f"cannot parse ingredient line {line!r} (expected '<qty> g|kg|ml|l <food>')"
            )
        qty, unit, food = float(m.group(1)), m.group(2).lower(), _fold(m.group(3))
        grams = qty * (1000 if unit in ("kg", "l") else 1)
        if food not in _FOODS:
            raise InvalidValue(param, f"unknown food {m.group(3)!r}")
        per = _FOODS[food]
        vals = [grams * v / 100 for v in per]
        totals = [t + v for t, v in zip(totals, vals, strict=True)]
        rows.append(
            {"text": line, "food": food, "weight_g": round(grams, 1), "kcal": round(vals[0], 1)}
        )
    return {
        "kcal": round(totals[0], 1),
        "protein": round(totals[1], 1),
        "fat": round(totals[2], 1),
        "carbs": round(totals[3], 1),
        "rows": rows,
        "weight": round(sum(r["weight_g"] for r in rows), 1),
    }


def _recipe(
    param: str, rid: int
) -> tuple[str, int, int, tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    try:
        return _RECIPES[rid]
    except KeyError:
        raise InvalidValue(param, f"recipe {rid} not found") from None


@implementation
def search_recipes(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    words = set(_fold(args["query"]).split())
    hits = []
    for rid, (title, minutes, _servings, diets, tags, _) in _RECIPES.items():
        hay = set(_fold(title).split()) | {_fold(t) for t in tags}
        score = len(words & hay)
        if not score:
            continue
        if (
            "diet" in args
            and args["diet"] not in diets
            and not (args["diet"] == "pescetarian" and "vegetarian" in diets)
        ):
            continue
        if minutes > args.get("maxReadyTime", 600):
            continue
        hits.append((-score, minutes, rid))
    hits.sort()
    res = [
        {
            "id": rid,
            "title": _RECIPES[rid][0],
            "readyInMinutes": _RECIPES[rid][1],
            "servings": _RECIPES[rid][2],
            "image": f"https://img.spoonacular.com/recipes/{rid}-312x231.jpg",
        }
        for _, _, rid in hits[: args.get("number", 10)]
    ]
    return {"results": res, "totalResults": len(hits)}


@implementation
def get_recipe_information(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    title, minutes, servings, diets, _, lines = _recipe("id", args["id"])
    ext = []
    for line in lines:
        m = _LINE.match(line)
        assert m is not None
        ext.append({"name": m.group(3), "amount": float(m.group(1)), "unit": m.group(2)})
    return {
        "id": args["id"],
        "title": title,
        "servings": servings,
        "readyInMinutes": minutes,
        "diets": list(diets),
        "extendedIngredients": ext,
        "ingredientLines": list(lines),
    }


@implementation
def analyze_ingredients(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    n = _nutrition(args["ingr"], "ingr")
    return {
        "calories": n["kcal"],
        "totalWeight": n["weight"],
        "totalNutrients": {
            "PROCNT": {"label": "Protein", "quantity": n["protein"], "unit": "g"},
            "FAT": {"label": "Fat", "quantity": n["fat"], "unit": "g"},
            "CHOCDF": {"label": "Carbs", "quantity": n["carbs"], "unit": "g"},
        },
        "ingredients": n["rows"],
    }


@implementation
def get_recipe_nutrition(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _, _, servings, _, _, lines = _recipe("recipe_id", args["recipe_id"])
    n = _nutrition(list(lines), "recipe_id")
    return {
        "recipe_id": args["recipe_id"],
        "calories_total": n["kcal"],
        "calories_per_serving": round(n["kcal"] / servings, 1),
        "servings": servings,
        "macros_g": {"protein": n["protein"], "fat": n["fat"], "carbs": n["carbs"]},
    }


@implementation
def add_to_meal_plan(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    title = _recipe("recipe_id", args["recipe_id"])[0]
    for rec in ctx.state.records("gen_meal_plan").values():
        if rec.get("date") == args["date"] and rec.get("slot") == args["slot"]:
            raise InvalidValue("slot", f"{args['slot']} on {args['date']} is already planned")
    return {
        "status": "success",
        "entry_id": ctx.new_id("meal"),
        "date": args["date"],
        "slot": args["slot"],
        "title": title,
    }


# ==============================================================================================
# reminders and timers (stateful)
# ==============================================================================================


@implementation
def reminders_create(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    tz = args.get("timezone", "UTC")
    timezones.zone("timezone", tz)
    return {
        "reminder_id": ctx.new_id("rem"),
        "title": args["title"],
        "due_date": args["due_date"],
        "due_time": args["due_time"],
        "timezone": tz,
        "status": "scheduled",
    }


@implementation
def reminders_snooze(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    rec = ctx.state.get("gen_reminders", args["reminder_id"])
    assert rec is not None
    due = dt.datetime.fromisoformat(f"{rec['due_date']}T{rec['due_time']}") + dt.timedelta(
        minutes=args["minutes"]
    )
    return {
        "reminder_id": args["reminder_id"],
        "title": rec["title"],
        "due_date": due.date().isoformat(),
        "due_time": due.strftime("%H:%M"),
        "timezone": rec["timezone"],
        "status": "scheduled",
    }


@implementation
def reminders_cancel(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return {"reminder_id": args["reminder_id"], "status": "cancelled"}


@implementation
def reminders_list(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    out = []
    for rid, rec in sorted(ctx.state.records("gen_reminders").items()):
        if args.get("status", rec["status"]) != rec["status"]:
            continue
        if args.get("due_date", rec["due_date"]) != rec["due_date"]:
            continue
        out.append(
            {
                "reminder_id": rid,
                "title": rec["title"],
                "due_date": rec["due_date"],
                "due_time": rec["due_time"],
                "timezone": rec["timezone"],
                "status": rec["status"],
            }
        )
    return {"reminders": out, "count": len(out)}


@implementation
def timer_start(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    fires = _NOW + dt.timedelta(minutes=args["duration_min"])
    return {
        "timer_id": ctx.new_id("tmr"),
        "label": args.get("label", "Timer"),
        "fires_at": fires.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "status": "running",
    }


@implementation
def timer_cancel(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return {"timer_id": args["timer_id"], "status": "cancelled"}


@initial_state
def _general_state(seed: int) -> dict[str, dict[str, dict[str, Any]]]:
    # saved places sit exactly where the geocoders put their addresses
    ctx = ToolContext("_general_state", {}, WorldState(), seed)
    places = {}
    for pid, address, label in (
        ("ChIJ-home-lisbon", "12 Rua Augusta, Lisbon", "Home"),
        ("ChIJ-office-denver", "400 Larimer St, Denver", "Office"),
    ):
        g = _geocode_address(ctx, "address", address)
        places[pid] = {"address": g["formatted"], "lat": g["lat"], "lng": g["lon"], "label": label}
    return {
        "gen_places": places,
        "gen_reminders": {
            "rem-DENTIST1": {
                "title": "Dentist appointment",
                "due_date": "2026-12-10",
                "due_time": "09:00",
                "timezone": "Europe/Lisbon",
                "status": "scheduled",
            },
            "rem-PASSPRT0": {
                "title": "Renew passport",
                "due_date": "2026-12-03",
                "due_time": "10:30",
                "timezone": "Europe/Lisbon",
                "status": "cancelled",
            },
        },
        "gen_timers": {},
        "gen_meal_plan": {},
    }
