"""General: the seed tables and fact helpers that several sections read (one source per fact)."""

from __future__ import annotations

import datetime as dt
import math
import unicodedata
from typing import Any

from replan.core import linre
from replan.env.corpus import timezones
from replan.env.corpus.data import SeedTables
from replan.env.corpus.kinds import CORPUS_NOW
from replan.env.world import InvalidValue, ToolContext

SEEDS = SeedTables.load(__package__)  # seeds.json beside this module


NOW = CORPUS_NOW


# -- places -------------------------------------------------------------------------------------
# name: (lat, lon, country, tz, population, wikidata, geonames id, mean daily high C, amplitude C)
CITIES = SEEDS.table(
    "cities", dict[str, tuple[float, float, str, str, int, str, int, float, float]]
)
COUNTRY_NAMES = SEEDS.table("country_names", dict[str, str])
_ALIASES = SEEDS.table("aliases", dict[str, str])


def fold(text: str) -> str:
    """Lower-case, accent-free, single-spaced text (Kraków -> krakow)."""
    t = unicodedata.normalize("NFKD", text)
    t = "".join(c for c in t if not unicodedata.combining(c))
    return " ".join(t.lower().split())


_CITY_INDEX = {fold(n): n for n in CITIES} | _ALIASES
WIKIDATA_INDEX = {rec[5]: name for name, rec in CITIES.items()}


def _find_city(text: str) -> str | None:
    return _CITY_INDEX.get(fold(text).strip(" ."))


def city(
    param: str, text: str
) -> tuple[str, tuple[float, float, str, str, int, str, int, float, float]]:
    """Resolve ``"Lisbon"`` or ``"Lisbon, PT"`` to a known city; InvalidValue when unknown."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    name = _find_city(parts[0]) if parts else None
    if name is None:
        raise InvalidValue(param, f"no place found for {text!r}")
    rec = CITIES[name]
    if (
        len(parts) > 1
        and linre.fullmatch(r"[A-Za-z]{2}", parts[-1])
        and parts[-1].upper() != rec[2]
    ):
        raise InvalidValue(param, f"{name} is not in country {parts[-1].upper()!r}")
    return name, rec


def haversine(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 6371.0088 * 2 * math.asin(min(1.0, math.sqrt(a)))


def nearest(lat: float, lon: float) -> tuple[str, float]:
    best = min(CITIES, key=lambda n: haversine(lat, lon, CITIES[n][0], CITIES[n][1]))
    return best, haversine(lat, lon, CITIES[best][0], CITIES[best][1])


# -- time zones ---------------------------------------------------------------------------------
TZ_NAMES = SEEDS.table("tz_names", dict[str, str])


def tz_at(lat: float, lon: float) -> str:
    """The zone of a point: the nearest known city within 300 km, else the nautical zone."""
    name, km = nearest(lat, lon)
    if km <= 300:
        return CITIES[name][3]
    hours = round(lon / 15)
    if hours == 0:
        return "UTC"
    return f"Etc/GMT{'-' if hours > 0 else '+'}{min(abs(hours), 12)}"


def parse_utc(param: str, text: str) -> dt.datetime:
    try:
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(dt.UTC)
    except ValueError:
        raise InvalidValue(param, f"{text!r} is not an ISO 8601 UTC timestamp") from None


# -- sun ----------------------------------------------------------------------------------------
def sun(lat: float, lon: float, day: str) -> dict[str, Any]:
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
    tz = tz_at(lat, lon)

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
WMO = SEEDS.table("wmo", dict[int, str])
WMO_MAIN = SEEDS.table("wmo_main", dict[int, str])


def daily(ctx: ToolContext, lat: float, lon: float, day: str) -> dict[str, Any]:
    """One day's weather at a point: seasonal climate plus seeded noise, keyed by the point."""
    d = dt.date.fromisoformat(day)
    name, km = nearest(lat, lon)
    if km <= 300:
        mean, amp = CITIES[name][7], CITIES[name][8]
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


def current(ctx: ToolContext, lat: float, lon: float) -> dict[str, Any]:
    today = daily(ctx, lat, lon, NOW.date().isoformat())
    key = f"gen:wxnow:{lat:.2f},{lon:.2f}"
    return {
        "temp": round(today["low"] + 0.7 * (today["high"] - today["low"]), 1),
        "humidity": int(ctx.number(key + ":rh", 35, 92, 0)),
        "wind_kph": ctx.number(key + ":wind", 2.0, 38.0, 1),
        "pressure_hpa": int(ctx.number(key + ":p", 996, 1032, 0)),
        "code": today["code"],
    }


def geocode_address(ctx: ToolContext, param: str, address: str) -> dict[str, Any]:
    """Street-level geocode: a known city in the address, plus a seeded offset per address."""
    parts = [p.strip() for p in address.split(",") if p.strip()]
    city = None
    for part in reversed(parts):
        city = _find_city(part) or _find_city(linre.sub(r"[\d-]+", " ", part))
        if city:
            break
    if city is None:
        raise InvalidValue(param, f"ZERO_RESULTS: no match for address {address!r}")
    rec = CITIES[city]
    norm = fold(address)
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
        "formatted": f"{street}, {city}, {COUNTRY_NAMES.get(rec[2], rec[2])}",
        "precision": "ROOFTOP" if exact else "APPROXIMATE",
    }
