"""General tools: weather."""

from __future__ import annotations

from typing import Any

from replan.env.corpus import timezones
from replan.env.corpus.general import facts
from replan.env.corpus.registry import implementation
from replan.env.world import ToolContext


@implementation
def owm_daily_forecast(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    name, rec = facts.city("city", args["city"])
    day = facts.daily(ctx, rec[0], rec[1], args["date"])
    return {
        "city": {"name": name, "country": rec[2]},
        "date": args["date"],
        "temp": {"max": day["high"], "min": day["low"]},
        "weather": {"main": facts.WMO_MAIN[day["code"]], "description": facts.WMO[day["code"]]},
        "pop": day["pop"],
        "rain_mm": day["precip_mm"],
    }


@implementation
def open_meteo_geocode(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    name, rec = facts.city("name", args["name"])
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
    day = facts.daily(ctx, lat, lon, args["start_date"])
    return {
        "latitude": lat,
        "longitude": lon,
        "timezone": facts.tz_at(lat, lon),
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
    name, rec = facts.city("q", args["q"])
    now = facts.current(ctx, rec[0], rec[1])
    return {
        "name": name,
        "coord": {"lat": rec[0], "lon": rec[1]},
        "weather": [
            {
                "id": {0: 800, 1: 801, 2: 802, 3: 804, 61: 500, 63: 501, 71: 600, 73: 601}[
                    now["code"]
                ],
                "main": facts.WMO_MAIN[now["code"]],
                "description": facts.WMO[now["code"]],
            }
        ],
        "main": {"temp": now["temp"], "humidity": now["humidity"], "pressure": now["pressure_hpa"]},
        "wind": {"speed": round(now["wind_kph"] / 3.6, 1)},
        "dt": int(facts.NOW.timestamp()),
    }


@implementation
def weatherapi_current(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    name, rec = facts.city("location", args["location"])
    now = facts.current(ctx, rec[0], rec[1])
    local, _ = timezones.utc_to_local(facts.NOW, rec[3])
    return {
        "location": {
            "name": name,
            "country": facts.COUNTRY_NAMES.get(rec[2], rec[2]),
            "tz_id": rec[3],
            "localtime": local.strftime("%Y-%m-%d %H:%M"),
        },
        "current": {
            "temp_c": now["temp"],
            "temp_f": round(now["temp"] * 9 / 5 + 32, 1),
            "condition": {"text": facts.WMO[now["code"]].capitalize()},
            "humidity": now["humidity"],
            "wind_kph": now["wind_kph"],
            "pressure_mb": float(now["pressure_hpa"]),
        },
    }
