"""General: weather, geocoding, routing, time zones, units, news, web, language, maths,
recipes and nutrition, reminders and timers.

Facts come from fixed tables in this module (cities, time-zone rules, unit factors, recipes,
nutrients) or from ``ctx.number`` / ``ctx.pick`` keyed by the fact itself (a place's
coordinates, a day's forecast, a query's results), never by the tool, so every provider of the
same fact agrees. The world clock is fixed at ``_NOW`` (news ages, current weather, timers).
"""

from __future__ import annotations

import ast
import datetime as dt
import math
import operator
import re
import unicodedata
from typing import Any

from replan.core.tools import Effect, Precondition
from replan.env.corpus.kinds import (
    ADDRESS,
    CITY,
    CORPUS_NOW,
    COUNT,
    COUNTRY,
    DISTANCE_KM,
    DURATION,
    LANGUAGE,
    LATITUDE,
    LONGITUDE,
    MONEY,
    PERCENT,
    PERSON,
    TEMPERATURE,
    TEXT,
    TIME,
    TIMEZONE,
    TRAVEL_MODE,
    URL,
    kind,
)
from replan.env.corpus.registry import alternatives, initial_state, s, tool
from replan.env.world import InvalidValue, ToolContext, WorldState

# -- kinds --------------------------------------------------------------------------------------
UTC_TS = kind(
    "utc_timestamp",
    "an instant in UTC, ISO 8601 with a Z suffix",
    ["2026-12-03T09:00:00Z", "2027-01-14T17:30:00Z", "2027-03-19T23:15:00Z"],
)
PLACE_ID = kind(
    "geo_place_id",
    "a geocoded place id (Google-style); saved places can be named",
    ["ChIJ-home-lisbon", "ChIJ-office-denver"],
)
WIKIDATA_ID = kind("wikidata_id", "a Wikidata entity id", ["Q597", "Q35765", "Q16554", "Q3870"])
UNIT = kind(
    "measurement_unit",
    "a unit symbol known to the unit converter",
    # lengths only, so that any two examples make a valid conversion
    ["km", "mi", "m", "ft", "yd"],
)
QUANTITY = kind("measurement_value", "a numeric quantity in some unit", [5.0, 42.0, 180.0, 1000.0])
FACTOR = kind("conversion_factor", "the multiplier of a linear unit conversion")
OFFSET = kind("conversion_offset", "the additive term of a linear unit conversion")
QUERY = kind(
    "web_query",
    "a web or news search query",
    ["electric vehicles", "Lisbon tram 28", "heat pumps", "Osaka street food", "solar panels"],
)
WORD = kind(
    "dictionary_word",
    "a headword in the dictionary",
    ["serendipity", "ephemeral", "saudade", "Fernweh", "sobremesa"],
)
EXPRESSION = kind(
    "math_expression",
    "an arithmetic expression",
    ["(12.5 + 7) * 3", "2^10 / 8", "sqrt(144) + 3.5", "round(1499 * 0.85, 2)"],
)
NUMBER = kind("numeric_result", "the numeric result of a calculation")
RECIPE_QUERY = kind(
    "recipe_query", "a recipe search phrase", ["pasta", "curry", "salad", "soup", "ramen", "tacos"]
)
RECIPE_ID = kind(
    "recipe_id", "a recipe id in the recipe database", [716429, 715497, 782585, 649495]
)
INGREDIENTS = kind(
    "ingredient_lines",
    "ingredient lines with a metric quantity, e.g. '200 g spaghetti'",
    [
        ["200 g spaghetti", "100 g pancetta"],
        ["300 g red lentils", "150 g carrot", "1 l vegetable stock"],
    ],
)
KCAL = kind("kcal", "an energy amount in kilocalories")
MEAL_SLOT = kind("meal_slot", "a meal of the day", ["breakfast", "lunch", "dinner"])
MEAL_ENTRY_ID = kind("meal_plan_entry_id", "an entry in the meal planner")
REMINDER_ID = kind("assistant_reminder_id", "a reminder set with the assistant", ["rem-DENTIST1"])
TIMER_ID = kind("assistant_timer_id", "a running countdown timer")
TEMP_LOW = kind("temperature_low_c", "a daily minimum temperature in degrees Celsius")
SUNSET = kind("sunset_time", "a local sunset time, HH:MM")
TIP = kind("tip_amount", "a tip added to a bill")
TIPPED_TOTAL = kind("tipped_bill_total", "a bill total including the tip")
KCAL_SERVING = kind("kcal_per_serving", "kilocalories in one serving")

_NOW = CORPUS_NOW


# -- places -------------------------------------------------------------------------------------
# name: (lat, lon, country, tz, population, wikidata, geonames id, mean daily high C, amplitude C)
_CITIES: dict[str, tuple[float, float, str, str, int, str, int, float, float]] = {
    "Lisbon": (38.7223, -9.1393, "PT", "Europe/Lisbon", 545_923, "Q597", 2267057, 22.0, 6.5),
    "Osaka": (34.6937, 135.5023, "JP", "Asia/Tokyo", 2_752_412, "Q35765", 1853909, 20.5, 11.0),
    "Denver": (39.7392, -104.9903, "US", "America/Denver", 715_522, "Q16554", 5419384, 18.5, 12.5),
    "Nairobi": (-1.2921, 36.8219, "KE", "Africa/Nairobi", 4_397_073, "Q3870", 184745, 24.5, 2.0),
    "Montreal": (
        45.5019,
        -73.5674,
        "CA",
        "America/Toronto",
        1_762_949,
        "Q340",
        6077243,
        11.5,
        15.5,
    ),
    "Krakow": (50.0647, 19.9450, "PL", "Europe/Warsaw", 804_237, "Q31487", 3094802, 13.5, 11.0),
    "Auckland": (
        -36.8485,
        174.7633,
        "NZ",
        "Pacific/Auckland",
        1_693_000,
        "Q37100",
        2193733,
        19.0,
        4.0,
    ),
    "Valparaiso": (
        -33.0472,
        -71.6127,
        "CL",
        "America/Santiago",
        296_655,
        "Q33986",
        3868626,
        18.0,
        3.5,
    ),
    "Tallinn": (59.4370, 24.7536, "EE", "Europe/Tallinn", 454_532, "Q1770", 588409, 9.5, 11.0),
    "Hanoi": (21.0278, 105.8342, "VN", "Asia/Ho_Chi_Minh", 8_053_663, "Q1858", 1581130, 28.0, 5.5),
    "Porto": (41.1579, -8.6291, "PT", "Europe/Lisbon", 231_962, "Q36433", 2735943, 19.5, 5.0),
    "Austin": (30.2672, -97.7431, "US", "America/Chicago", 961_855, "Q16559", 4671654, 27.0, 8.5),
    "Tokyo": (35.6762, 139.6503, "JP", "Asia/Tokyo", 13_960_000, "Q1490", 1850147, 20.0, 9.5),
    "Paris": (48.8566, 2.3522, "FR", "Europe/Paris", 2_102_650, "Q90", 2988507, 16.0, 9.0),
    "London": (51.5072, -0.1276, "GB", "Europe/London", 8_866_180, "Q84", 2643743, 15.0, 7.5),
    "New York": (
        40.7128,
        -74.0060,
        "US",
        "America/New_York",
        8_336_817,
        "Q60",
        5128581,
        17.0,
        11.5,
    ),
    "Berlin": (52.5200, 13.4050, "DE", "Europe/Berlin", 3_755_251, "Q64", 2950159, 14.0, 10.0),
    "Madrid": (40.4168, -3.7038, "ES", "Europe/Madrid", 3_332_035, "Q2807", 3117735, 20.0, 10.5),
    "Toronto": (43.6532, -79.3832, "CA", "America/Toronto", 2_794_356, "Q172", 6167865, 13.0, 14.0),
    "Sydney": (
        -33.8688,
        151.2093,
        "AU",
        "Australia/Sydney",
        5_450_496,
        "Q3130",
        2147714,
        22.5,
        4.5,
    ),
    "San Francisco": (
        37.7749,
        -122.4194,
        "US",
        "America/Los_Angeles",
        808_437,
        "Q62",
        5391959,
        18.5,
        3.0,
    ),
    "Chicago": (
        41.8781,
        -87.6298,
        "US",
        "America/Chicago",
        2_664_452,
        "Q1297",
        4887398,
        15.0,
        14.0,
    ),
    "Seattle": (
        47.6062,
        -122.3321,
        "US",
        "America/Los_Angeles",
        755_078,
        "Q5083",
        5809844,
        15.5,
        9.5,
    ),
    "Amsterdam": (52.3676, 4.9041, "NL", "Europe/Amsterdam", 931_298, "Q727", 2759794, 14.0, 8.0),
    "Warsaw": (52.2297, 21.0122, "PL", "Europe/Warsaw", 1_861_975, "Q270", 756135, 13.5, 11.0),
    "Mombasa": (-4.0435, 39.6682, "KE", "Africa/Nairobi", 1_208_333, "Q134771", 186301, 30.5, 2.0),
    "Wellington": (
        -41.2865,
        174.7762,
        "NZ",
        "Pacific/Auckland",
        215_400,
        "Q23661",
        2179537,
        15.5,
        3.5,
    ),
    "Ho Chi Minh City": (
        10.8231,
        106.6297,
        "VN",
        "Asia/Ho_Chi_Minh",
        8_993_082,
        "Q1854",
        1566083,
        33.0,
        1.5,
    ),
    "Singapore": (1.3521, 103.8198, "SG", "Asia/Singapore", 5_917_600, "Q334", 1880252, 31.0, 1.0),
    "Mexico City": (
        19.4326,
        -99.1332,
        "MX",
        "America/Mexico_City",
        9_209_944,
        "Q1489",
        3530597,
        24.0,
        3.0,
    ),
}
_COUNTRY_NAMES = {
    "PT": "Portugal",
    "JP": "Japan",
    "US": "United States",
    "KE": "Kenya",
    "CA": "Canada",
    "PL": "Poland",
    "NZ": "New Zealand",
    "CL": "Chile",
    "EE": "Estonia",
    "VN": "Vietnam",
    "FR": "France",
    "GB": "United Kingdom",
    "DE": "Germany",
    "ES": "Spain",
    "AU": "Australia",
    "NL": "Netherlands",
    "SG": "Singapore",
    "MX": "Mexico",
}
_ALIASES = {
    "saigon": "Ho Chi Minh City",
    "ho chi minh": "Ho Chi Minh City",
    "nyc": "New York",
    "new york city": "New York",
    "sf": "San Francisco",
    "cracow": "Krakow",
    "lisboa": "Lisbon",
    "valparaiso de chile": "Valparaiso",
    "mexico df": "Mexico City",
    "ciudad de mexico": "Mexico City",
}


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


def _check_coords(lat: float, lon: float) -> None:
    if not -90 <= lat <= 90:
        raise InvalidValue("latitude", f"latitude {lat} is outside -90..90")
    if not -180 <= lon <= 180:
        raise InvalidValue("longitude", f"longitude {lon} is outside -180..180")


# -- time zones ---------------------------------------------------------------------------------
# standard offset in minutes and daylight-saving rule (switches applied at date granularity)
_TZ: dict[str, tuple[int, str | None]] = {
    "UTC": (0, None),
    "Etc/UTC": (0, None),
    "Etc/GMT": (0, None),
    "Europe/Lisbon": (0, "EU"),
    "Europe/London": (0, "EU"),
    "Europe/Paris": (60, "EU"),
    "Europe/Berlin": (60, "EU"),
    "Europe/Madrid": (60, "EU"),
    "Europe/Amsterdam": (60, "EU"),
    "Europe/Warsaw": (60, "EU"),
    "Europe/Tallinn": (120, "EU"),
    "Africa/Nairobi": (180, None),
    "Asia/Ho_Chi_Minh": (420, None),
    "Asia/Singapore": (480, None),
    "Asia/Tokyo": (540, None),
    "Australia/Sydney": (600, "AU"),
    "Pacific/Auckland": (720, "NZ"),
    "America/Santiago": (-240, "CL"),
    "America/New_York": (-300, "US"),
    "America/Toronto": (-300, "US"),
    "America/Chicago": (-360, "US"),
    "America/Mexico_City": (-360, None),
    "America/Denver": (-420, "US"),
    "America/Los_Angeles": (-480, "US"),
}
for _h in range(1, 13):  # nautical zones; note the POSIX sign: Etc/GMT-9 is UTC+9
    _TZ[f"Etc/GMT-{_h}"] = (60 * _h, None)
    _TZ[f"Etc/GMT+{_h}"] = (-60 * _h, None)
_TZ_NAMES = {
    "Europe/Lisbon": "Western European Time",
    "Europe/London": "Greenwich Mean Time",
    "Europe/Paris": "Central European Time",
    "Europe/Berlin": "Central European Time",
    "Europe/Madrid": "Central European Time",
    "Europe/Amsterdam": "Central European Time",
    "Europe/Warsaw": "Central European Time",
    "Europe/Tallinn": "Eastern European Time",
    "Africa/Nairobi": "East Africa Time",
    "Asia/Ho_Chi_Minh": "Indochina Time",
    "Asia/Singapore": "Singapore Standard Time",
    "Asia/Tokyo": "Japan Standard Time",
    "Australia/Sydney": "Australian Eastern Time",
    "Pacific/Auckland": "New Zealand Time",
    "America/Santiago": "Chile Time",
    "America/New_York": "Eastern Time",
    "America/Toronto": "Eastern Time",
    "America/Chicago": "Central Time",
    "America/Mexico_City": "Central Standard Time",
    "America/Denver": "Mountain Time",
    "America/Los_Angeles": "Pacific Time",
    "UTC": "Coordinated Universal Time",
}


def _sunday(year: int, month: int, n: int) -> dt.date:
    """The n-th Sunday of a month (n = -1: the last one)."""
    if n > 0:
        first = dt.date(year, month, 1)
        return first + dt.timedelta(days=(6 - first.weekday()) % 7 + 7 * (n - 1))
    nxt = dt.date(year + month // 12, month % 12 + 1, 1)
    last = nxt - dt.timedelta(days=1)
    return last - dt.timedelta(days=(last.weekday() + 1) % 7)


def _in_dst(rule: str | None, d: dt.date) -> bool:
    y = d.year
    if rule == "EU":
        return _sunday(y, 3, -1) <= d < _sunday(y, 10, -1)
    if rule == "US":
        return _sunday(y, 3, 2) <= d < _sunday(y, 11, 1)
    if rule == "NZ":
        return not _sunday(y, 4, 1) <= d < _sunday(y, 9, -1)
    if rule == "AU":
        return not _sunday(y, 4, 1) <= d < _sunday(y, 10, 1)
    if rule == "CL":
        return not _sunday(y, 4, 1) <= d < _sunday(y, 9, 1)
    return False


def _tz(param: str, name: str) -> tuple[int, str | None]:
    try:
        return _TZ[name]
    except KeyError:
        raise InvalidValue(param, f"unknown time zone {name!r} (use an IANA id)") from None


def _offset_min(tz: str, local_day: dt.date) -> tuple[int, int]:
    """(total offset, DST part) in minutes for ``tz`` on a local date."""
    std, rule = _TZ[tz]
    dst = 60 if _in_dst(rule, local_day) else 0
    return std + dst, dst


def _fmt_offset(minutes: int) -> str:
    sign = "+" if minutes >= 0 else "-"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def _local_to_utc(day: str, time: str, tz: str) -> dt.datetime:
    local = dt.datetime.fromisoformat(f"{day}T{time}")
    off, _ = _offset_min(tz, local.date())
    return (local - dt.timedelta(minutes=off)).replace(tzinfo=dt.UTC)


def _utc_to_local(instant: dt.datetime, tz: str) -> tuple[dt.datetime, int]:
    std, _ = _TZ[tz]
    guess = instant + dt.timedelta(minutes=std)
    off, _ = _offset_min(tz, guess.date())
    return (instant + dt.timedelta(minutes=off)).replace(tzinfo=None), off


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
        return _utc_to_local(instant, tz)[0]

    rise, noon, sett = local(j_transit - w / 360), local(j_transit), local(j_transit + w / 360)
    return {
        "sunrise": rise.strftime("%H:%M"),
        "sunset": sett.strftime("%H:%M"),
        "solar_noon": noon.strftime("%H:%M"),
        "day_length_min": round(2 * w / 360 * 1440),
        "timezone": tz,
        "offset_min": _offset_min(tz, d)[0],
    }


# -- weather ------------------------------------------------------------------------------------
_WMO = {
    0: "clear sky",
    1: "mainly clear",
    2: "partly cloudy",
    3: "overcast",
    61: "slight rain",
    63: "moderate rain",
    71: "slight snow fall",
    73: "moderate snow fall",
}
_WMO_MAIN = {
    0: "Clear",
    1: "Clear",
    2: "Clouds",
    3: "Clouds",
    61: "Rain",
    63: "Rain",
    71: "Snow",
    73: "Snow",
}


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
@tool(
    domain="General",
    category="source",
    group="gen_city_forecast",
    description="Daily forecast for a city on a date (OpenWeather One Call 'daily' style).",
    params={
        "city": s.string("city name, optionally 'City,CC'", CITY, min_len=2),
        "date": s.date("forecast day"),
        "lang": s.string("language of the description", LANGUAGE, pattern="^[a-z]{2}$"),
    },
    required=["city", "date"],
    returns=s.obj(
        {
            "city": s.obj({"name": s.string("", CITY), "country": s.string("", COUNTRY)}),
            "date": s.date(),
            "temp": s.obj(
                {
                    "max": s.number("daily high, C", TEMPERATURE),
                    "min": s.number("daily low, C", TEMP_LOW),
                }
            ),
            "weather": s.obj({"main": s.string(), "description": s.string()}),
            "pop": s.integer("probability of precipitation, %", minimum=0, maximum=100),
            "rain_mm": s.number(minimum=0),
        }
    ),
)
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


@tool(
    domain="General",
    category="source",
    group="gen_city_forecast",
    description="Open-Meteo geocoding: search a place name, get coordinates and time zone.",
    params={
        "name": s.string("place name to search", CITY, min_len=2),
        "count": s.integer("maximum results", minimum=1, maximum=10),
    },
    required=["name"],
    returns=s.obj(
        {
            "results": s.array(
                s.obj(
                    {
                        "id": s.integer(),
                        "name": s.string("", CITY),
                        "latitude": s.number("", LATITUDE),
                        "longitude": s.number("", LONGITUDE),
                        "country_code": s.string("", COUNTRY),
                        "timezone": s.string("", TIMEZONE),
                        "population": s.integer(minimum=0),
                    }
                )
            ),
            "generationtime_ms": s.number(),
        }
    ),
)
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


@tool(
    domain="General",
    category="source",
    group="gen_city_forecast",
    description="Open-Meteo daily forecast for coordinates; arrays indexed by day.",
    params={
        "latitude": s.number("WGS 84 latitude", LATITUDE, minimum=-90, maximum=90),
        "longitude": s.number("WGS 84 longitude", LONGITUDE, minimum=-180, maximum=180),
        "start_date": s.date("first (and only) forecast day"),
    },
    returns=s.obj(
        {
            "latitude": s.number("", LATITUDE),
            "longitude": s.number("", LONGITUDE),
            "timezone": s.string("", TIMEZONE),
            "daily": s.obj(
                {
                    "time": s.array(s.date()),
                    "temperature_2m_max": s.array(s.number("daily high, C", TEMPERATURE)),
                    "temperature_2m_min": s.array(s.number("daily low, C", TEMP_LOW)),
                    "precipitation_sum": s.array(s.number(minimum=0)),
                    "weathercode": s.array(s.integer()),
                }
            ),
        }
    ),
)
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


alternatives(
    "gen_city_forecast",
    "1-N",
    ["owm_daily_forecast"],
    ["open_meteo_geocode", "open_meteo_forecast"],
    description="a city's daily high: one call by name, or geocode then forecast by coordinates",
    output_kind=TEMPERATURE,
)


@tool(
    domain="General",
    category="source",
    group="gen_current_weather",
    description="Current weather for a city (OpenWeather /weather, metric units).",
    params={"q": s.string("city name, optionally 'City,CC'", CITY, min_len=2)},
    returns=s.obj(
        {
            "name": s.string("", CITY),
            "coord": s.obj({"lat": s.number("", LATITUDE), "lon": s.number("", LONGITUDE)}),
            "weather": s.array(
                s.obj({"id": s.integer(), "main": s.string(), "description": s.string()})
            ),
            "main": s.obj(
                {
                    "temp": s.number("air temperature, C", TEMPERATURE),
                    "humidity": s.integer(minimum=0, maximum=100),
                    "pressure": s.integer(),
                }
            ),
            "wind": s.obj({"speed": s.number("m/s", minimum=0)}),
            "dt": s.integer("observation time, unix seconds"),
        }
    ),
)
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


@tool(
    domain="General",
    category="source",
    group="gen_current_weather",
    description="Realtime weather for a location query (WeatherAPI.com current.json).",
    params={
        "location": s.string("city name", CITY, min_len=2),
        "aqi": s.enum(["yes", "no"], "include air quality"),
    },
    required=["location"],
    returns=s.obj(
        {
            "location": s.obj(
                {
                    "name": s.string("", CITY),
                    "country": s.string(),
                    "tz_id": s.string("", TIMEZONE),
                    "localtime": s.string(),
                }
            ),
            "current": s.obj(
                {
                    "temp_c": s.number("air temperature, C", TEMPERATURE),
                    "temp_f": s.number(),
                    "condition": s.obj({"text": s.string()}),
                    "humidity": s.integer(minimum=0, maximum=100),
                    "wind_kph": s.number(minimum=0),
                    "pressure_mb": s.number(),
                }
            ),
        }
    ),
)
def weatherapi_current(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    name, rec = _city("location", args["location"])
    now = _current(ctx, rec[0], rec[1])
    local, _ = _utc_to_local(_NOW, rec[3])
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


alternatives(
    "gen_current_weather",
    "1-1",
    ["owm_current_weather"],
    ["weatherapi_current"],
    description="two current-conditions providers over the same observations",
    output_kind=TEMPERATURE,
)


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


@tool(
    domain="General",
    category="source",
    group="gen_address_geocode",
    description="Geocode a street address to coordinates and a place id (Google Geocoding API).",
    params={
        "address": s.string("street address", ADDRESS, min_len=3),
        "region": s.string("ccTLD region bias", COUNTRY, pattern="^[A-Z]{2}$"),
    },
    required=["address"],
    returns=s.obj(
        {
            "status": s.enum(["OK"]),
            "results": s.array(
                s.obj(
                    {
                        "formatted_address": s.string("", ADDRESS),
                        "place_id": s.string("", PLACE_ID),
                        "geometry": s.obj(
                            {
                                "location": s.obj(
                                    {"lat": s.number("", LATITUDE), "lng": s.number("", LONGITUDE)}
                                ),
                                "location_type": s.enum(["ROOFTOP", "APPROXIMATE"]),
                            }
                        ),
                        "types": s.array(s.string()),
                    }
                )
            ),
        }
    ),
    effects=[
        Effect(
            op="create",
            collection="gen_places",
            key="results.0.place_id",
            fields={
                "address": "$output.results.0.formatted_address",
                "lat": "$output.results.0.geometry.location.lat",
                "lng": "$output.results.0.geometry.location.lng",
            },
        )
    ],
)
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


@tool(
    domain="General",
    category="source",
    group="gen_address_geocode",
    description="Forward geocoding with Mapbox: search text to ranked features ([lon, lat]).",
    params={
        "search_text": s.string("free-form address", ADDRESS, min_len=3),
        "limit": s.integer("maximum features", minimum=1, maximum=10),
        "autocomplete": s.boolean("treat the query as a prefix"),
    },
    required=["search_text"],
    returns=s.obj(
        {
            "type": s.enum(["FeatureCollection"]),
            "query": s.array(s.string()),
            "features": s.array(
                s.obj(
                    {
                        "id": s.string("place id", PLACE_ID),
                        "place_name": s.string("", ADDRESS),
                        "center": s.array(
                            s.number(), "[longitude, latitude]", min_items=2, max_items=2
                        ),
                        "relevance": s.number(minimum=0, maximum=1),
                    }
                )
            ),
        }
    ),
    effects=[
        Effect(
            op="create",
            collection="gen_places",
            key="features.0.id",
            fields={
                "address": "$output.features.0.place_name",
                "lat": "$output.features.0.center.1",
                "lng": "$output.features.0.center.0",
            },
        )
    ],
)
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


alternatives(
    "gen_address_geocode",
    "1-1",
    ["gmaps_geocode"],
    ["mapbox_geocode"],
    description="two address geocoders; both register the same place id",
    output_kind=PLACE_ID,
)


@tool(
    domain="General",
    category="source",
    description="Reverse geocode coordinates to the nearest locality (Google reverse geocoding).",
    params={
        "latitude": s.number("WGS 84 latitude", LATITUDE, minimum=-90, maximum=90),
        "longitude": s.number("WGS 84 longitude", LONGITUDE, minimum=-180, maximum=180),
    },
    returns=s.obj(
        {
            "locality": s.string("", CITY),
            "country": s.string("", COUNTRY),
            "formatted_address": s.string("", ADDRESS),
            "distance_km": s.number("from the locality centre", DISTANCE_KM, minimum=0),
        }
    ),
)
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


_MODES = {  # detour factor over the great circle, average speed km/h, fixed overhead min
    "driving": (1.3, 62.0, 4),
    "walking": (1.2, 4.8, 0),
    "bicycling": (1.25, 15.0, 0),
    "transit": (1.35, 28.0, 8),
}


@tool(
    domain="General",
    category="source",
    description="Directions between two geocoded places (Google Directions API, one route).",
    params={
        "origin_place_id": s.string("place id of the start", PLACE_ID, pattern="^ChIJ"),
        "destination_place_id": s.string("place id of the end", PLACE_ID, pattern="^ChIJ"),
        "mode": s.enum(list(_MODES), "travel mode", TRAVEL_MODE),
        "avoid": s.array(s.enum(["tolls", "highways", "ferries"]), "features to avoid"),
    },
    required=["origin_place_id", "destination_place_id"],
    returns=s.obj(
        {
            "status": s.enum(["OK"]),
            "routes": s.array(
                s.obj(
                    {
                        "summary": s.string(),
                        "legs": s.array(
                            s.obj(
                                {
                                    "start_address": s.string("", ADDRESS),
                                    "end_address": s.string("", ADDRESS),
                                    "distance": s.obj(
                                        {
                                            "value": s.integer("metres", minimum=0),
                                            "text": s.string(),
                                        }
                                    ),
                                    "duration": s.obj(
                                        {
                                            "value": s.integer("seconds", minimum=0),
                                            "text": s.string(),
                                        }
                                    ),
                                }
                            )
                        ),
                    }
                )
            ),
            "distance_km": s.number("route length", DISTANCE_KM, minimum=0),
            "duration_min": s.integer("travel time", DURATION, minimum=0),
        }
    ),
    preconditions=[
        Precondition(
            kind="exists",
            collection="gen_places",
            arg="origin_place_id",
            description="the origin must be a geocoded or saved place",
        ),
        Precondition(
            kind="exists",
            collection="gen_places",
            arg="destination_place_id",
            description="the destination must be a geocoded or saved place",
        ),
    ],
)
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


@tool(
    domain="General",
    category="processor",
    description="Great-circle (haversine) distance and initial bearing between two points.",
    params={
        "from_latitude": s.number("start latitude", LATITUDE, minimum=-90, maximum=90),
        "from_longitude": s.number("start longitude", LONGITUDE, minimum=-180, maximum=180),
        "to_latitude": s.number("end latitude", LATITUDE, minimum=-90, maximum=90),
        "to_longitude": s.number("end longitude", LONGITUDE, minimum=-180, maximum=180),
    },
    returns=s.obj(
        {
            "distance_km": s.number("", DISTANCE_KM, minimum=0),
            "distance_mi": s.number(minimum=0),
            "initial_bearing_deg": s.number(minimum=0, maximum=360),
        }
    ),
)
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
@tool(
    domain="General",
    category="source",
    group="gen_city_timezone",
    description="OpenWeather Geocoding API: city name to coordinates (direct geocoding).",
    params={
        "q": s.string("'City' or 'City,CC'", CITY, min_len=2),
        "limit": s.integer("maximum matches", minimum=1, maximum=5),
    },
    required=["q"],
    returns=s.obj(
        {
            "matches": s.array(
                s.obj(
                    {
                        "name": s.string("", CITY),
                        "lat": s.number("", LATITUDE),
                        "lon": s.number("", LONGITUDE),
                        "country": s.string("", COUNTRY),
                        "local_names": s.obj({"en": s.string()}, required=[]),
                    }
                )
            )
        }
    ),
)
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


@tool(
    domain="General",
    category="source",
    group="gen_city_timezone",
    description="Time zone at a point on a date (Google Time Zone API; offsets in seconds).",
    params={
        "latitude": s.number("WGS 84 latitude", LATITUDE, minimum=-90, maximum=90),
        "longitude": s.number("WGS 84 longitude", LONGITUDE, minimum=-180, maximum=180),
        "date": s.date("day the offsets apply to (default: today)"),
    },
    required=["latitude", "longitude"],
    returns=s.obj(
        {
            "status": s.enum(["OK"]),
            "timeZoneId": s.string("", TIMEZONE),
            "timeZoneName": s.string(),
            "rawOffset": s.integer("standard offset from UTC, seconds"),
            "dstOffset": s.integer("daylight-saving offset, seconds", minimum=0),
        }
    ),
)
def gmaps_timezone(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    tz = _tz_at(args["latitude"], args["longitude"])
    day = dt.date.fromisoformat(args.get("date", _NOW.date().isoformat()))
    total, dst = _offset_min(tz, day)
    return {
        "status": "OK",
        "timeZoneId": tz,
        "timeZoneName": _TZ_NAMES.get(tz, f"GMT{_fmt_offset(total)}"),
        "rawOffset": (total - dst) * 60,
        "dstOffset": dst * 60,
    }


@tool(
    domain="General",
    category="source",
    group="gen_city_timezone",
    description="Search Wikidata entities by label (wbsearchentities).",
    params={
        "search": s.string("label to search", CITY, min_len=2),
        "language": s.string("label language", LANGUAGE, pattern="^[a-z]{2}$"),
    },
    required=["search"],
    returns=s.obj(
        {
            "searchinfo": s.obj({"search": s.string()}),
            "search": s.array(
                s.obj(
                    {
                        "id": s.string("", WIKIDATA_ID),
                        "label": s.string("", CITY),
                        "description": s.string(),
                        "concepturi": s.string("", URL),
                    }
                )
            ),
        }
    ),
)
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


@tool(
    domain="General",
    category="source",
    group="gen_city_timezone",
    description="Read the 'located in time zone' (P421) claim of a Wikidata entity.",
    params={"entity_id": s.string("Wikidata Q-id", WIKIDATA_ID, pattern="^Q[1-9][0-9]*$")},
    returns=s.obj(
        {
            "entity_id": s.string("", WIKIDATA_ID),
            "label": s.string("", CITY),
            "property": s.enum(["P421"]),
            "time_zone": s.string("", TIMEZONE),
        }
    ),
)
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


alternatives(
    "gen_city_timezone",
    "N-N",
    ["owm_geocode_city", "gmaps_timezone"],
    ["wikidata_search_entity", "wikidata_entity_timezone"],
    description="a city's IANA zone: via coordinates, or via its Wikidata entity",
    output_kind=TIMEZONE,
)


_TIME = s.string("local time, HH:MM", TIME, pattern="^([01][0-9]|2[0-3]):[0-5][0-9]$")


@tool(
    domain="General",
    category="processor",
    group="gen_time_conversion",
    description="Convert a local date and time from one time zone to another.",
    params={
        "date": s.date("local date in the source zone"),
        "time": _TIME,
        "from_timezone": s.string("source IANA zone", TIMEZONE, min_len=3),
        "to_timezone": s.string("target IANA zone", TIMEZONE, min_len=3),
    },
    returns=s.obj(
        {
            "date": s.date("local date in the target zone"),
            "time": s.string("local time in the target zone", TIME),
            "utc_offset": s.string(pattern="^[+-][0-9]{2}:[0-9]{2}$"),
            "day_shift": s.integer("calendar days moved", minimum=-1, maximum=1),
        }
    ),
)
def convert_timezone(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _tz("from_timezone", args["from_timezone"])
    _tz("to_timezone", args["to_timezone"])
    local, off = _utc_to_local(
        _local_to_utc(args["date"], args["time"], args["from_timezone"]), args["to_timezone"]
    )
    shift = (local.date() - dt.date.fromisoformat(args["date"])).days
    return {
        "date": local.date().isoformat(),
        "time": local.strftime("%H:%M"),
        "utc_offset": _fmt_offset(off),
        "day_shift": shift,
    }


@tool(
    domain="General",
    category="processor",
    group="gen_time_conversion",
    description="Turn a wall-clock date and time in a zone into a UTC timestamp.",
    params={
        "local_date": s.date("local date"),
        "local_time": _TIME,
        "timezone": s.string("IANA zone of the wall clock", TIMEZONE, min_len=3),
    },
    returns=s.obj(
        {
            "utc": s.string("", UTC_TS, fmt="date-time"),
            "offset_applied": s.string(pattern="^[+-][0-9]{2}:[0-9]{2}$"),
            "is_dst": s.boolean(),
        }
    ),
)
def local_to_utc(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _tz("timezone", args["timezone"])
    instant = _local_to_utc(args["local_date"], args["local_time"], args["timezone"])
    off, dst = _offset_min(args["timezone"], dt.date.fromisoformat(args["local_date"]))
    return {
        "utc": instant.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "offset_applied": _fmt_offset(off),
        "is_dst": dst > 0,
    }


@tool(
    domain="General",
    category="processor",
    group="gen_time_conversion",
    description="Express a UTC timestamp as wall-clock date and time in a zone.",
    params={
        "utc": s.string(
            "UTC instant",
            UTC_TS,
            fmt="date-time",
            pattern="^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2})?Z$",
        ),
        "timezone": s.string("target IANA zone", TIMEZONE, min_len=3),
    },
    returns=s.obj(
        {
            "date": s.date(),
            "time": s.string("", TIME),
            "utc_offset": s.string(pattern="^[+-][0-9]{2}:[0-9]{2}$"),
            "zone_name": s.string(),
        }
    ),
)
def utc_to_local(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _tz("timezone", args["timezone"])
    local, off = _utc_to_local(_parse_utc("utc", args["utc"]), args["timezone"])
    return {
        "date": local.date().isoformat(),
        "time": local.strftime("%H:%M"),
        "utc_offset": _fmt_offset(off),
        "zone_name": _TZ_NAMES.get(args["timezone"], args["timezone"]),
    }


alternatives(
    "gen_time_conversion",
    "1-N",
    ["convert_timezone"],
    ["local_to_utc", "utc_to_local"],
    description="zone-to-zone conversion directly or through UTC",
    output_kind=TIME,
)


# -- sunrise / sunset ---------------------------------------------------------------------------
@tool(
    domain="General",
    category="source",
    group="gen_sun_times",
    description="GeoNames full-text place search (searchJSON, populated places only).",
    params={
        "q": s.string("place name", CITY, min_len=2),
        "maxRows": s.integer("maximum rows", minimum=1, maximum=50),
        "country": s.string("restrict to a country", COUNTRY, pattern="^[A-Z]{2}$"),
    },
    required=["q"],
    returns=s.obj(
        {
            "totalResultsCount": s.integer(minimum=0),
            "geonames": s.array(
                s.obj(
                    {
                        "geonameId": s.integer(),
                        "name": s.string("", CITY),
                        "lat": s.number("", LATITUDE),
                        "lng": s.number("", LONGITUDE),
                        "countryCode": s.string("", COUNTRY),
                        "countryName": s.string(),
                        "population": s.integer(minimum=0),
                        "fcode": s.string(),
                    }
                )
            ),
        }
    ),
)
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


@tool(
    domain="General",
    category="source",
    group="gen_sun_times",
    description="GeoNames timezoneJSON: zone, offsets, sunrise and sunset at a point on a date.",
    params={
        "lat": s.number("latitude", LATITUDE, minimum=-90, maximum=90),
        "lng": s.number("longitude", LONGITUDE, minimum=-180, maximum=180),
        "date": s.date("day of the sunrise/sunset"),
    },
    returns=s.obj(
        {
            "timezoneId": s.string("", TIMEZONE),
            "gmtOffset": s.number("hours"),
            "dstOffset": s.number("hours incl. DST"),
            "date": s.date(),
            "sunrise": s.string("local sunrise", TIME),
            "sunset": s.string("local sunset", SUNSET),
            "countryCode": s.string("", COUNTRY),
        }
    ),
)
def geonames_timezone(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    sun = _sun(args["lat"], args["lng"], args["date"])
    std = _TZ[sun["timezone"]][0]
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


@tool(
    domain="General",
    category="source",
    group="gen_sun_times",
    description="OpenStreetMap Nominatim search: free-form place query to coordinates.",
    params={
        "q": s.string("free-form query", CITY, min_len=2),
        "limit": s.integer("maximum results", minimum=1, maximum=40),
        "accept_language": s.string("result language", LANGUAGE, pattern="^[a-z]{2}$"),
    },
    required=["q"],
    returns=s.obj(
        {
            "results": s.array(
                s.obj(
                    {
                        "osm_id": s.integer(),
                        "osm_type": s.enum(["relation", "node"]),
                        "display_name": s.string(),
                        "lat": s.number("", LATITUDE),
                        "lon": s.number("", LONGITUDE),
                        "class": s.string(),
                        "type": s.string(),
                        "importance": s.number(minimum=0, maximum=1),
                    }
                )
            )
        }
    ),
)
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


@tool(
    domain="General",
    category="source",
    group="gen_sun_times",
    description="sunrise-sunset.org: sunrise, sunset, solar noon and day length for a point.",
    params={
        "lat": s.number("latitude", LATITUDE, minimum=-90, maximum=90),
        "lng": s.number("longitude", LONGITUDE, minimum=-180, maximum=180),
        "date": s.date("day to compute"),
        "tzid": s.string("report times in this zone (default: the point's own)", TIMEZONE),
    },
    required=["lat", "lng", "date"],
    returns=s.obj(
        {
            "status": s.enum(["OK"]),
            "tzid": s.string("", TIMEZONE),
            "results": s.obj(
                {
                    "sunrise": s.string("", TIME),
                    "sunset": s.string("", SUNSET),
                    "solar_noon": s.string("time of the sun's highest point"),
                    "day_length_min": s.integer(minimum=0, maximum=1440),
                }
            ),
        }
    ),
)
def sunrise_sunset_times(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    sun = _sun(args["lat"], args["lng"], args["date"])
    tzid = args.get("tzid", sun["timezone"])
    _tz("tzid", tzid)
    out = {k: sun[k] for k in ("sunrise", "sunset", "solar_noon")}
    if tzid != sun["timezone"]:
        for k, v in out.items():
            utc = _local_to_utc(args["date"], v, sun["timezone"])
            out[k] = _utc_to_local(utc, tzid)[0].strftime("%H:%M")
    return {
        "status": "OK",
        "tzid": tzid,
        "results": {**out, "day_length_min": sun["day_length_min"]},
    }


alternatives(
    "gen_sun_times",
    "N-N",
    ["geonames_search", "geonames_timezone"],
    ["nominatim_search", "sunrise_sunset_times"],
    description="a city's local sunrise on a date: GeoNames end to end, or Nominatim "
    "then sunrise-sunset.org",
    output_kind=TIME,
)


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
_UNIT_ENUM = list(_UNITS)


def _linear(from_unit: str, to_unit: str) -> tuple[str, float, float]:
    da, fa, oa = _UNITS[from_unit]
    db, fb, ob = _UNITS[to_unit]
    if da != db:
        raise InvalidValue("to_unit", f"cannot convert {da} ({from_unit}) to {db} ({to_unit})")
    return da, fa / fb, (oa - ob) / fb


def _apply(value: float, factor: float, offset: float) -> float:
    return round(value * factor + offset, 6)


@tool(
    domain="General",
    category="processor",
    group="gen_unit_convert",
    description="Convert a quantity between units of the same dimension.",
    params={
        "value": s.number("quantity to convert", QUANTITY),
        "from_unit": s.enum(_UNIT_ENUM, "unit of the value", UNIT),
        "to_unit": s.enum(_UNIT_ENUM, "target unit", UNIT),
    },
    returns=s.obj(
        {
            "value": s.number("converted quantity", QUANTITY),
            "unit": s.string("", UNIT),
            "dimension": s.string(),
        }
    ),
)
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


@tool(
    domain="General",
    category="source",
    group="gen_unit_convert",
    description="Look up the linear factor and offset that convert one unit into another.",
    params={
        "from_unit": s.enum(_UNIT_ENUM, "source unit", UNIT),
        "to_unit": s.enum(_UNIT_ENUM, "target unit", UNIT),
    },
    returns=s.obj(
        {
            "factor": s.number("multiply by", FACTOR),
            "offset": s.number("then add", OFFSET),
            "dimension": s.string(),
            "formula": s.string(),
        }
    ),
)
def get_conversion_factor(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    dim, factor, offset = _linear(args["from_unit"], args["to_unit"])
    return {
        "factor": factor,
        "offset": offset,
        "dimension": dim,
        "formula": f"{args['to_unit']} = {args['from_unit']} * {factor:.6g} + {offset:.6g}",
    }


@tool(
    domain="General",
    category="processor",
    group="gen_unit_convert",
    description="Apply y = value * factor + offset (a linear unit conversion).",
    params={
        "value": s.number("input quantity", QUANTITY),
        "factor": s.number("multiplier", FACTOR, exclusive_minimum=0),
        "offset": s.number("additive term", OFFSET),
    },
    returns=s.obj({"value": s.number("result", QUANTITY)}),
)
def apply_linear_conversion(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return {"value": _apply(args["value"], args["factor"], args["offset"])}


alternatives(
    "gen_unit_convert",
    "1-N",
    ["convert_units"],
    ["get_conversion_factor", "apply_linear_conversion"],
    description="unit conversion in one call, or factor lookup then apply",
    output_kind=QUANTITY,
)


# ==============================================================================================
# news, web search, pages
# ==============================================================================================
_NEWS_SOURCES = [
    ("reuters", "Reuters", "reuters.com"),
    ("associated-press", "Associated Press", "apnews.com"),
    ("bbc-news", "BBC News", "bbc.com"),
    ("the-verge", "The Verge", "theverge.com"),
    ("ars-technica", "Ars Technica", "arstechnica.com"),
    ("dw", "DW", "dw.com"),
    ("publico", "Público", "publico.pt"),
    ("nhk-world", "NHK World", "nhk.or.jp"),
    ("el-pais", "El País", "elpais.com"),
    ("le-monde", "Le Monde", "lemonde.fr"),
]
_HEADLINES = [
    "{q} prices climb for a third straight month",
    "what the new {q} rules mean for residents",
    "{q} five things to watch this winter",
    "experts split over the future of {q}",
    "inside the race to fix {q}",
    "{q} demand surges ahead of the holidays",
    "officials unveil plan to expand {q}",
    "why everyone is talking about {q}",
]
_AUTHORS = ["Ana Silva", "Kenji Mori", "Dana Reyes", "Wanjiru Kamau", "Luc Tremblay", "Marta Nowak"]


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


_NEWS_LANGS = ["ar", "de", "en", "es", "fr", "it", "ja", "nl", "pl", "pt", "ru", "zh"]


@tool(
    domain="General",
    category="source",
    group="gen_news_search",
    description="NewsAPI /v2/everything: articles matching a query, newest first.",
    params={
        "q": s.string("keywords or phrase", QUERY, min_len=2, max_len=500),
        "language": s.enum(_NEWS_LANGS, "article language", LANGUAGE),
        "from": s.date("oldest publication date"),
        "pageSize": s.integer("results per page", minimum=1, maximum=100),
    },
    required=["q"],
    returns=s.obj(
        {
            "status": s.enum(["ok"]),
            "totalResults": s.integer(minimum=0),
            "articles": s.array(
                s.obj(
                    {
                        "source": s.obj({"id": s.string(), "name": s.string()}),
                        "author": s.string("", PERSON),
                        "title": s.string("", TEXT),
                        "description": s.string("", TEXT),
                        "url": s.string("", URL, fmt="uri"),
                        "publishedAt": s.string(fmt="date-time"),
                    }
                )
            ),
        }
    ),
)
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


@tool(
    domain="General",
    category="source",
    group="gen_news_search",
    description="GNews /api/v4/search: news articles for a query, newest first.",
    params={
        "query": s.string("search keywords", QUERY, min_len=2, max_len=200),
        "lang": s.string("two-letter language", LANGUAGE, pattern="^[a-z]{2}$"),
        "max": s.integer("maximum articles", minimum=1, maximum=10),
        "sortby": s.enum(["publishedAt", "relevance"], "ordering"),
    },
    required=["query"],
    returns=s.obj(
        {
            "totalArticles": s.integer(minimum=0),
            "articles": s.array(
                s.obj(
                    {
                        "title": s.string("", TEXT),
                        "description": s.string("", TEXT),
                        "url": s.string("", URL, fmt="uri"),
                        "image": s.string(fmt="uri"),
                        "publishedAt": s.string(fmt="date-time"),
                        "source": s.obj({"name": s.string(), "url": s.string(fmt="uri")}),
                    }
                )
            ),
        }
    ),
)
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


alternatives(
    "gen_news_search",
    "1-1",
    ["newsapi_everything"],
    ["gnews_search"],
    description="two news-search providers over the same article index",
    output_kind=URL,
)


_WEB_SITES = [
    ("en.wikipedia.org", "wiki"),
    ("www.reddit.com", "thread"),
    ("www.nytimes.com", "article"),
    ("www.lonelyplanet.com", "guide"),
    ("www.consumerreports.org", "review"),
    ("www.theguardian.com", "article"),
    ("www.youtube.com", "video"),
    ("www.tripadvisor.com", "guide"),
]


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


@tool(
    domain="General",
    category="source",
    group="gen_web_search",
    description="Google Programmable Search (customsearch/v1): web results for a query.",
    params={
        "q": s.string("query", QUERY, min_len=1, max_len=2048),
        "num": s.integer("results to return", minimum=1, maximum=10),
        "safe": s.enum(["active", "off"], "SafeSearch"),
    },
    required=["q"],
    returns=s.obj(
        {
            "searchInformation": s.obj(
                {"totalResults": s.string(pattern="^[0-9]+$"), "searchTime": s.number()}
            ),
            "items": s.array(
                s.obj(
                    {
                        "title": s.string(),
                        "link": s.string("", URL, fmt="uri"),
                        "displayLink": s.string(),
                        "snippet": s.string(),
                    }
                )
            ),
        }
    ),
)
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


@tool(
    domain="General",
    category="source",
    group="gen_web_search",
    description="Bing Web Search v7: web pages for a query and market.",
    params={
        "query": s.string("query", QUERY, min_len=1),
        "count": s.integer("results to return", minimum=1, maximum=50),
        "mkt": s.string("market", pattern="^[a-z]{2}-[A-Z]{2}$"),
    },
    required=["query"],
    returns=s.obj(
        {
            "webPages": s.obj(
                {
                    "totalEstimatedMatches": s.integer(minimum=0),
                    "value": s.array(
                        s.obj(
                            {
                                "name": s.string(),
                                "url": s.string("", URL, fmt="uri"),
                                "snippet": s.string(),
                                "language": s.string("", LANGUAGE),
                            }
                        )
                    ),
                }
            )
        }
    ),
)
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


alternatives(
    "gen_web_search",
    "1-1",
    ["google_custom_search"],
    ["bing_web_search"],
    description="two web search engines; same top result",
    output_kind=URL,
)


_PAGE_SENTENCES = [
    "{T} has drawn steady attention from readers and analysts alike.",
    "According to figures published this week, interest in {t} rose by {n} percent year on year.",
    "Local officials said further details would be released before the end of the month.",
    "Critics argue that the changes around {t} came too quickly and with too little consultation.",
    "Supporters point to lower costs and better access as the main benefits.",
    "Industry groups expect the trend to continue well into next year.",
    "Residents interviewed for this piece were divided on what it means for them.",
    "A fuller report, including regional data on {t}, is expected in the first quarter.",
]


@tool(
    domain="General",
    category="source",
    description="Fetch a web page and return its title and readable text (reader mode).",
    params={"url": s.string("page address", URL, fmt="uri", pattern="^https?://")},
    returns=s.obj(
        {
            "url": s.string("", URL),
            "status_code": s.integer(),
            "title": s.string("", TEXT),
            "text": s.string("", TEXT),
            "word_count": s.integer(minimum=0),
            "language": s.string("", LANGUAGE),
        }
    ),
)
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


@tool(
    domain="General",
    category="processor",
    description="Extractive summary: keep the highest-scoring sentences (word-frequency rank).",
    params={
        "text": s.string("text to summarise", TEXT, min_len=1, max_len=100_000),
        "max_sentences": s.integer("sentences to keep", COUNT, minimum=1, maximum=10),
    },
    required=["text"],
    returns=s.obj(
        {
            "summary": s.string("", TEXT),
            "sentences_in": s.integer(minimum=0),
            "sentences_out": s.integer(minimum=0),
            "keywords": s.array(s.string()),
        }
    ),
)
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
_PHRASES: list[dict[str, str]] = [
    {
        "en": "Quarterly numbers look good.",
        "pt": "Os números trimestrais estão bons.",
        "ja": "四半期の数字は良好です。",
        "es": "Las cifras trimestrales se ven bien.",
        "fr": "Les chiffres trimestriels sont bons.",
        "de": "Die Quartalszahlen sehen gut aus.",
        "pl": "Wyniki kwartalne wyglądają dobrze.",
    },
    {
        "en": "Please confirm by Friday.",
        "pt": "Por favor, confirme até sexta-feira.",
        "ja": "金曜日までにご確認ください。",
        "es": "Por favor, confirme antes del viernes.",
        "fr": "Merci de confirmer d'ici vendredi.",
        "de": "Bitte bestätigen Sie bis Freitag.",
        "pl": "Proszę potwierdzić do piątku.",
    },
    {
        "en": "Running ten minutes late.",
        "pt": "Estou dez minutos atrasado.",
        "ja": "10分ほど遅れます。",
        "es": "Llego diez minutos tarde.",
        "fr": "J'ai dix minutes de retard.",
        "de": "Ich verspäte mich um zehn Minuten.",
        "pl": "Spóźnię się dziesięć minut.",
    },
    {
        "en": "Where is the train station?",
        "pt": "Onde fica a estação de comboios?",
        "ja": "駅はどこですか？",
        "es": "¿Dónde está la estación de tren?",
        "fr": "Où est la gare ?",
        "de": "Wo ist der Bahnhof?",
        "pl": "Gdzie jest dworzec kolejowy?",
    },
    {
        "en": "Thank you for your help.",
        "pt": "Obrigado pela sua ajuda.",
        "ja": "ご協力ありがとうございます。",
        "es": "Gracias por su ayuda.",
        "fr": "Merci pour votre aide.",
        "de": "Vielen Dank für Ihre Hilfe.",
        "pl": "Dziękuję za pomoc.",
    },
]
_PHRASE_INDEX = {_fold(v): (i, lang) for i, row in enumerate(_PHRASES) for lang, v in row.items()}
_STOPWORDS = {
    "en": {"the", "and", "is", "are", "of", "to", "please", "you", "for", "late", "with"},
    "pt": {"os", "as", "não", "é", "estão", "por", "favor", "até", "estou", "uma", "com", "da"},
    "es": {"el", "los", "las", "por", "antes", "del", "se", "llego", "está", "una", "gracias"},
    "fr": {"les", "est", "sont", "de", "d'ici", "merci", "pour", "une", "j'ai", "où", "le"},
    "de": {"die", "der", "und", "sie", "bis", "bitte", "ist", "ich", "mich", "um", "für"},
    "pl": {"się", "do", "jest", "proszę", "za", "nie", "gdzie", "dziękuję", "wyglądają"},
}


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


_LANG_ENUM = ["en", "pt", "ja", "es", "fr", "de", "pl", "it", "nl"]


@tool(
    domain="General",
    category="processor",
    group="gen_translate",
    description="Google Cloud Translation v2: translate text into a target language.",
    params={
        "q": s.string("text to translate", TEXT, min_len=1, max_len=30_000),
        "target": s.enum(_LANG_ENUM, "target language", LANGUAGE),
        "source": s.enum(_LANG_ENUM, "source language (auto-detected if absent)", LANGUAGE),
        "format": s.enum(["text", "html"], "input format"),
    },
    required=["q", "target"],
    returns=s.obj(
        {
            "data": s.obj(
                {
                    "translations": s.array(
                        s.obj(
                            {
                                "translatedText": s.string("", TEXT),
                                "detectedSourceLanguage": s.string("", LANGUAGE),
                            }
                        )
                    )
                }
            )
        }
    ),
)
def google_translate(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    out, src = _translate(args["q"], args["target"], args.get("source"))
    return {"data": {"translations": [{"translatedText": out, "detectedSourceLanguage": src}]}}


@tool(
    domain="General",
    category="processor",
    group="gen_translate",
    description="DeepL /v2/translate with optional formality control.",
    params={
        "text": s.string("text to translate", TEXT, min_len=1, max_len=128_000),
        "target_lang": s.enum(_LANG_ENUM, "target language", LANGUAGE),
        "source_lang": s.enum(_LANG_ENUM, "source language", LANGUAGE),
        "formality": s.enum(
            ["default", "more", "less", "prefer_more", "prefer_less"], "register of the translation"
        ),
    },
    required=["text", "target_lang"],
    returns=s.obj(
        {
            "translations": s.array(
                s.obj(
                    {
                        "detected_source_language": s.string("", LANGUAGE),
                        "text": s.string("", TEXT),
                    }
                )
            )
        }
    ),
)
def deepl_translate(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    if args.get("formality", "default") != "default" and args["target_lang"] in ("en", "ja"):
        raise InvalidValue("formality", f"formality is not supported for {args['target_lang']}")
    out, src = _translate(args["text"], args["target_lang"], args.get("source_lang"))
    return {"translations": [{"detected_source_language": src, "text": out}]}


alternatives(
    "gen_translate",
    "1-1",
    ["google_translate"],
    ["deepl_translate"],
    description="two machine-translation providers; same translation",
    output_kind=TEXT,
)


@tool(
    domain="General",
    category="processor",
    description="Detect the language of a text (Translation API /detect).",
    params={"q": s.string("text to inspect", TEXT, min_len=1)},
    returns=s.obj(
        {
            "language": s.string("", LANGUAGE),
            "confidence": s.number(minimum=0, maximum=1),
            "isReliable": s.boolean(),
        }
    ),
)
def google_detect_language(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    lang, conf = _detect(args["q"])
    return {"language": lang, "confidence": conf, "isReliable": conf >= 0.8}


_DICTIONARY = {
    "serendipity": (
        "en",
        "/ˌsɛɹ.ənˈdɪp.ɪ.ti/",
        "noun",
        "The occurrence of events by chance in a happy or beneficial way.",
        "Meeting her there was pure serendipity.",
    ),
    "ephemeral": (
        "en",
        "/ɪˈfɛm.əɹ.əl/",
        "adjective",
        "Lasting for a very short time.",
        "Fame in the age of social media is ephemeral.",
    ),
    "resilience": (
        "en",
        "/ɹɪˈzɪl.i.əns/",
        "noun",
        "The capacity to recover quickly from difficulties.",
        "The city showed remarkable resilience after the storm.",
    ),
    "saudade": (
        "pt",
        "/sawˈða.ðɨ/",
        "noun",
        "A deep, melancholic longing for someone or something absent.",
        "Fado songs are full of saudade.",
    ),
    "fernweh": (
        "de",
        "/ˈfɛʁnˌveː/",
        "noun",
        "A longing for far-off places; the opposite of homesickness.",
        "Jeden Winter packt mich das Fernweh.",
    ),
    "sobremesa": (
        "es",
        "/so.βɾeˈme.sa/",
        "noun",
        "Time spent lingering at the table after a meal, talking.",
        "La sobremesa duró hasta las seis.",
    ),
    "flaneur": (
        "fr",
        "/fla.nœʁ/",
        "noun",
        "A person who strolls the city streets as a detached observer.",
        "Il passait ses dimanches en flâneur.",
    ),
    "komorebi": (
        "ja",
        "/ko.mo.ɾe.bi/",
        "noun",
        "Sunlight filtering through the leaves of trees.",
        "木漏れ日 (komorebi) fell across the path.",
    ),
}


@tool(
    domain="General",
    category="source",
    description="Free Dictionary API: definitions, phonetics and examples for a word.",
    params={
        "word": s.string("headword", WORD, min_len=1, max_len=60, pattern="^[^\\s]+$"),
        "language": s.enum(["en", "pt", "de", "es", "fr", "ja"], "dictionary language", LANGUAGE),
    },
    required=["word"],
    returns=s.obj(
        {
            "entries": s.array(
                s.obj(
                    {
                        "word": s.string("", WORD),
                        "language": s.string("", LANGUAGE),
                        "phonetic": s.string(),
                        "meanings": s.array(
                            s.obj(
                                {
                                    "partOfSpeech": s.string(),
                                    "definitions": s.array(
                                        s.obj(
                                            {
                                                "definition": s.string("", TEXT),
                                                "example": s.string("", TEXT),
                                            }
                                        )
                                    ),
                                }
                            )
                        ),
                        "sourceUrls": s.array(s.string("", URL)),
                    }
                )
            )
        }
    ),
)
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


@tool(
    domain="General",
    category="processor",
    description="Evaluate an arithmetic expression (+ - * / ^ %, sqrt, log, round, pi, ...).",
    params={
        "expression": s.string(
            "expression; ^ means power",
            EXPRESSION,
            min_len=1,
            max_len=500,
            pattern="^[0-9a-z+\\-*/^%()., \\t]+$",
        ),
        "precision": s.integer("decimal places in the result", minimum=0, maximum=12),
    },
    required=["expression"],
    returns=s.obj({"expression": s.string("", EXPRESSION), "result": s.number("", NUMBER)}),
)
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


@tool(
    domain="General",
    category="processor",
    group="gen_bill_split",
    description="Split a bill with tip evenly between people.",
    params={
        "total": s.number("bill before tip", MONEY, exclusive_minimum=0),
        "tip_percent": s.number("tip rate", PERCENT, minimum=0, maximum=100),
        "people": s.integer("number of people paying", COUNT, minimum=1, maximum=50),
    },
    returns=s.obj(
        {
            "subtotal": s.number("the bill as given"),
            "tip": s.number("", TIP),
            "total_with_tip": s.number("", TIPPED_TOTAL),
            "per_person": s.number("each person's share", MONEY),
        }
    ),
)
def bill_split_calculator(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    tip, total = _tip(args["total"], args["tip_percent"])
    return {
        "subtotal": args["total"],
        "tip": tip,
        "total_with_tip": total,
        "per_person": round(total / args["people"], 2),
    }


@tool(
    domain="General",
    category="processor",
    group="gen_bill_split",
    description="Work out the tip on an amount and the total to pay.",
    params={
        "amount": s.number("pre-tip amount", MONEY, exclusive_minimum=0),
        "tip_percent": s.number("tip rate", PERCENT, minimum=0, maximum=100),
    },
    returns=s.obj({"tip_amount": s.number("", TIP), "total": s.number("amount plus tip", MONEY)}),
)
def tip_calculate(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    tip, total = _tip(args["amount"], args["tip_percent"])
    return {"tip_amount": tip, "total": total}


@tool(
    domain="General",
    category="processor",
    group="gen_bill_split",
    description="Divide an amount into equal shares (rounded to cents).",
    params={
        "amount": s.number("amount to divide", MONEY, minimum=0),
        "parts": s.integer("number of shares", COUNT, minimum=1, maximum=50),
    },
    returns=s.obj(
        {
            "share": s.number("one share", MONEY),
            "rounding_difference": s.number("total minus the sum of shares"),
        }
    ),
)
def divide_evenly(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    share = round(args["amount"] / args["parts"], 2)
    return {"share": share, "rounding_difference": round(args["amount"] - share * args["parts"], 2)}


alternatives(
    "gen_bill_split",
    "1-N",
    ["bill_split_calculator"],
    ["tip_calculate", "divide_evenly"],
    description="each person's share of a tipped bill",
    output_kind=MONEY,
)


# ==============================================================================================
# recipes and nutrition
# ==============================================================================================
# food: kcal, protein g, fat g, carbohydrate g per 100 g
_FOODS: dict[str, tuple[float, float, float, float]] = {
    "spaghetti": (371, 13.0, 1.5, 75.0),
    "pancetta": (393, 14.0, 37.0, 0.0),
    "egg": (143, 12.6, 9.5, 0.7),
    "parmesan": (431, 38.0, 29.0, 4.1),
    "black pepper": (251, 10.4, 3.3, 64.0),
    "chickpeas": (139, 7.0, 2.6, 23.0),
    "coconut milk": (197, 2.0, 21.0, 2.8),
    "onion": (40, 1.1, 0.1, 9.3),
    "tomato": (18, 0.9, 0.2, 3.9),
    "chopped tomatoes": (21, 1.0, 0.2, 3.8),
    "basmati rice": (360, 7.1, 0.6, 79.0),
    "curry powder": (325, 14.0, 14.0, 58.0),
    "cucumber": (15, 0.7, 0.1, 3.6),
    "feta": (264, 14.0, 21.0, 4.1),
    "olive oil": (884, 0.0, 100.0, 0.0),
    "red onion": (40, 1.1, 0.1, 9.3),
    "kalamata olives": (235, 1.6, 24.0, 4.3),
    "red lentils": (358, 24.0, 1.1, 63.0),
    "carrot": (41, 0.9, 0.2, 10.0),
    "vegetable stock": (5, 0.2, 0.1, 0.9),
    "ramen noodles": (280, 9.0, 1.5, 56.0),
    "miso paste": (198, 12.0, 6.0, 26.0),
    "tofu": (144, 17.0, 9.0, 3.0),
    "spring onion": (32, 1.8, 0.2, 7.3),
    "desalted cod": (105, 23.0, 0.8, 0.0),
    "potato": (77, 2.0, 0.1, 17.0),
    "ground beef": (215, 18.6, 15.0, 0.0),
    "corn tortillas": (218, 5.7, 2.9, 45.0),
    "cheddar": (403, 25.0, 33.0, 1.3),
    "lettuce": (15, 1.4, 0.2, 2.9),
    "chicken thigh": (121, 19.7, 4.1, 0.0),
    "soy sauce": (53, 8.1, 0.6, 4.9),
    "honey": (304, 0.3, 0.0, 82.0),
    "garlic": (149, 6.4, 0.5, 33.0),
}
# id: title, minutes, servings, diets, tags, ingredient lines
_RECIPES: dict[int, tuple[str, int, int, tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    716429: (
        "Spaghetti Carbonara",
        25,
        4,
        (),
        ("pasta", "italian", "dinner"),
        ("400 g spaghetti", "150 g pancetta", "200 g egg", "60 g parmesan", "2 g black pepper"),
    ),
    715497: (
        "Chickpea Coconut Curry",
        35,
        4,
        ("vegan", "vegetarian", "gluten free"),
        ("curry", "indian", "dinner"),
        (
            "480 g chickpeas",
            "400 ml coconut milk",
            "150 g onion",
            "400 g chopped tomatoes",
            "300 g basmati rice",
            "10 g curry powder",
        ),
    ),
    782585: (
        "Greek Salad",
        15,
        4,
        ("vegetarian", "gluten free"),
        ("salad", "greek", "lunch"),
        (
            "300 g cucumber",
            "300 g tomato",
            "200 g feta",
            "30 g olive oil",
            "80 g red onion",
            "60 g kalamata olives",
        ),
    ),
    649495: (
        "Red Lentil Soup",
        40,
        6,
        ("vegan", "vegetarian", "gluten free"),
        ("soup", "lunch", "turkish"),
        (
            "300 g red lentils",
            "150 g carrot",
            "150 g onion",
            "20 g olive oil",
            "1200 ml vegetable stock",
        ),
    ),
    652423: (
        "Miso Ramen",
        30,
        2,
        ("vegetarian",),
        ("ramen", "japanese", "soup", "dinner"),
        (
            "300 g ramen noodles",
            "60 g miso paste",
            "1000 ml vegetable stock",
            "200 g tofu",
            "30 g spring onion",
            "100 g egg",
        ),
    ),
    641803: (
        "Bacalhau à Brás",
        45,
        4,
        ("pescetarian",),
        ("portuguese", "fish", "dinner"),
        (
            "400 g desalted cod",
            "400 g potato",
            "300 g egg",
            "150 g onion",
            "40 g olive oil",
            "10 g garlic",
        ),
    ),
    663050: (
        "Beef Tacos",
        20,
        4,
        (),
        ("tacos", "mexican", "dinner"),
        (
            "500 g ground beef",
            "300 g corn tortillas",
            "100 g cheddar",
            "150 g tomato",
            "100 g lettuce",
        ),
    ),
    637876: (
        "Chicken Teriyaki Bowl",
        30,
        4,
        (),
        ("japanese", "rice", "dinner"),
        (
            "600 g chicken thigh",
            "60 ml soy sauce",
            "300 g basmati rice",
            "30 g honey",
            "10 g garlic",
        ),
    ),
}
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


@tool(
    domain="General",
    category="source",
    description="Spoonacular complexSearch: find recipes by phrase, diet and time limit.",
    params={
        "query": s.string("what to cook", RECIPE_QUERY, min_len=2),
        "diet": s.enum(["vegetarian", "vegan", "gluten free", "pescetarian"], "diet filter"),
        "maxReadyTime": s.integer("minutes, at most", DURATION, minimum=5, maximum=600),
        "number": s.integer("results to return", minimum=1, maximum=20),
    },
    required=["query"],
    returns=s.obj(
        {
            "results": s.array(
                s.obj(
                    {
                        "id": s.integer("", RECIPE_ID),
                        "title": s.string(),
                        "readyInMinutes": s.integer("", DURATION),
                        "servings": s.integer(minimum=1),
                        "image": s.string("", URL),
                    }
                )
            ),
            "totalResults": s.integer(minimum=0),
        }
    ),
)
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


@tool(
    domain="General",
    category="source",
    group="gen_recipe_calories",
    description="Spoonacular recipe information: ingredients, servings, time, diets.",
    params={
        "id": s.integer("recipe id", RECIPE_ID, minimum=1),
        "includeNutrition": s.boolean("ignored; use the nutrition endpoint"),
    },
    required=["id"],
    returns=s.obj(
        {
            "id": s.integer("", RECIPE_ID),
            "title": s.string(),
            "servings": s.integer(minimum=1),
            "readyInMinutes": s.integer("", DURATION),
            "diets": s.array(s.string()),
            "extendedIngredients": s.array(
                s.obj({"name": s.string(), "amount": s.number(), "unit": s.string()})
            ),
            "ingredientLines": s.array(s.string(), "one line per ingredient", INGREDIENTS),
        }
    ),
)
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


@tool(
    domain="General",
    category="processor",
    group="gen_recipe_calories",
    description="Edamam nutrition analysis of ingredient lines (total calories and macros).",
    params={
        "ingr": s.array(
            s.string(min_len=3),
            "ingredient lines, metric quantities",
            INGREDIENTS,
            min_items=1,
            max_items=60,
        )
    },
    returns=s.obj(
        {
            "calories": s.number("total energy", KCAL, minimum=0),
            "totalWeight": s.number("grams", minimum=0),
            "totalNutrients": s.obj(
                {
                    k: s.obj({"label": s.string(), "quantity": s.number(), "unit": s.string()})
                    for k in ("PROCNT", "FAT", "CHOCDF")
                }
            ),
            "ingredients": s.array(
                s.obj(
                    {
                        "text": s.string(),
                        "food": s.string(),
                        "weight_g": s.number(),
                        "kcal": s.number("per line"),
                    }
                )
            ),
        }
    ),
)
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


@tool(
    domain="General",
    category="source",
    group="gen_recipe_calories",
    description="Spoonacular nutrition widget for a recipe: whole-recipe and per-serving macros.",
    params={"recipe_id": s.integer("recipe id", RECIPE_ID, minimum=1)},
    returns=s.obj(
        {
            "recipe_id": s.integer("", RECIPE_ID),
            "calories_total": s.number("whole recipe", KCAL, minimum=0),
            "calories_per_serving": s.number("", KCAL_SERVING, minimum=0),
            "servings": s.integer(minimum=1),
            "macros_g": s.obj({"protein": s.number(), "fat": s.number(), "carbs": s.number()}),
        }
    ),
)
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


alternatives(
    "gen_recipe_calories",
    "1-N",
    ["get_recipe_nutrition"],
    ["get_recipe_information", "analyze_ingredients"],
    description="a recipe's total calories: nutrition endpoint, or its ingredient lines "
    "through a nutrition analyser",
    output_kind=KCAL,
)


@tool(
    domain="General",
    category="action",
    description="Add a recipe to the meal planner on a day and meal (Spoonacular meal plan).",
    params={
        "recipe_id": s.integer("recipe to plan", RECIPE_ID, minimum=1),
        "date": s.date("day of the meal"),
        "slot": s.enum(["breakfast", "lunch", "dinner"], "which meal", MEAL_SLOT),
        "servings": s.integer("portions", COUNT, minimum=1, maximum=24),
    },
    required=["recipe_id", "date", "slot"],
    returns=s.obj(
        {
            "status": s.enum(["success"]),
            "entry_id": s.string("", MEAL_ENTRY_ID),
            "date": s.date(),
            "slot": s.string("", MEAL_SLOT),
            "title": s.string(),
        }
    ),
    effects=[
        Effect(
            op="create",
            collection="gen_meal_plan",
            key="entry_id",
            fields={"recipe_id": "$arg.recipe_id", "date": "$arg.date", "slot": "$arg.slot"},
        )
    ],
)
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
_REMINDER = s.obj(
    {
        "reminder_id": s.string("", REMINDER_ID),
        "title": s.string("", TEXT),
        "due_date": s.date(),
        "due_time": s.string("", TIME),
        "timezone": s.string("", TIMEZONE),
        "status": s.enum(["scheduled", "cancelled"]),
    }
)


@tool(
    domain="General",
    category="action",
    description="Create a reminder at a local date and time.",
    params={
        "title": s.string("what to be reminded of", TEXT, min_len=1, max_len=200),
        "due_date": s.date("day of the reminder"),
        "due_time": _TIME,
        "timezone": s.string("zone of the due time (default UTC)", TIMEZONE, min_len=3),
        "repeat": s.enum(["none", "daily", "weekly", "monthly"], "recurrence"),
    },
    required=["title", "due_date", "due_time"],
    returns=_REMINDER,
    effects=[
        Effect(
            op="create",
            collection="gen_reminders",
            key="reminder_id",
            fields={
                "title": "$arg.title",
                "due_date": "$arg.due_date",
                "due_time": "$arg.due_time",
                "timezone": "$output.timezone",
                "status": "scheduled",
            },
        )
    ],
)
def reminders_create(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    tz = args.get("timezone", "UTC")
    _tz("timezone", tz)
    return {
        "reminder_id": ctx.new_id("rem"),
        "title": args["title"],
        "due_date": args["due_date"],
        "due_time": args["due_time"],
        "timezone": tz,
        "status": "scheduled",
    }


@tool(
    domain="General",
    category="action",
    description="Push a scheduled reminder later by some minutes.",
    params={
        "reminder_id": s.string("reminder to snooze", REMINDER_ID, pattern="^rem-"),
        "minutes": s.integer("delay", DURATION, minimum=5, maximum=10_080),
    },
    returns=_REMINDER,
    preconditions=[
        Precondition(
            kind="field_equals",
            collection="gen_reminders",
            arg="reminder_id",
            field="status",
            value="scheduled",
            description="the reminder must exist and still be scheduled",
        )
    ],
    effects=[
        Effect(
            op="update",
            collection="gen_reminders",
            key="reminder_id",
            fields={"due_date": "$output.due_date", "due_time": "$output.due_time"},
        )
    ],
)
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


@tool(
    domain="General",
    category="action",
    description="Cancel a scheduled reminder.",
    params={"reminder_id": s.string("reminder to cancel", REMINDER_ID, pattern="^rem-")},
    returns=s.obj({"reminder_id": s.string("", REMINDER_ID), "status": s.enum(["cancelled"])}),
    preconditions=[
        Precondition(
            kind="field_equals",
            collection="gen_reminders",
            arg="reminder_id",
            field="status",
            value="scheduled",
            description="the reminder must exist and still be scheduled",
        )
    ],
    effects=[
        Effect(
            op="update",
            collection="gen_reminders",
            key="reminder_id",
            fields={"status": "cancelled"},
        )
    ],
)
def reminders_cancel(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return {"reminder_id": args["reminder_id"], "status": "cancelled"}


@tool(
    domain="General",
    category="source",
    description="List reminders, optionally by status and day.",
    params={
        "status": s.enum(["scheduled", "cancelled"], "filter by status"),
        "due_date": s.date("only this day"),
    },
    required=[],
    returns=s.obj({"reminders": s.array(_REMINDER), "count": s.integer(minimum=0)}),
)
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


@tool(
    domain="General",
    category="action",
    description="Start a countdown timer.",
    params={
        "duration_min": s.integer("length of the timer", DURATION, minimum=1, maximum=1440),
        "label": s.string("what the timer is for", TEXT, max_len=500),
    },
    required=["duration_min"],
    returns=s.obj(
        {
            "timer_id": s.string("", TIMER_ID),
            "label": s.string(),
            "fires_at": s.string("UTC", UTC_TS, fmt="date-time"),
            "status": s.enum(["running"]),
        }
    ),
    effects=[
        Effect(
            op="create",
            collection="gen_timers",
            key="timer_id",
            fields={"fires_at": "$output.fires_at", "status": "running"},
        )
    ],
)
def timer_start(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    fires = _NOW + dt.timedelta(minutes=args["duration_min"])
    return {
        "timer_id": ctx.new_id("tmr"),
        "label": args.get("label", "Timer"),
        "fires_at": fires.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "status": "running",
    }


@tool(
    domain="General",
    category="action",
    description="Cancel a running timer.",
    params={"timer_id": s.string("timer to cancel", TIMER_ID, pattern="^tmr-")},
    returns=s.obj({"timer_id": s.string("", TIMER_ID), "status": s.enum(["cancelled"])}),
    preconditions=[
        Precondition(
            kind="field_equals",
            collection="gen_timers",
            arg="timer_id",
            field="status",
            value="running",
            description="the timer must exist and still be running",
        )
    ],
    effects=[
        Effect(op="update", collection="gen_timers", key="timer_id", fields={"status": "cancelled"})
    ],
)
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


__all__ = ["LATITUDE", "LONGITUDE", "PLACE_ID", "TIMEZONE", "UTC_TS"]
