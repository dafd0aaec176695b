"""IoT tools: climate."""

from __future__ import annotations

import math
from typing import Any

from replan.env.corpus.iot import facts
from replan.env.corpus.kinds import CORPUS_NOW
from replan.env.corpus.registry import implementation
from replan.env.world import InvalidValue, ToolContext


def _ambient(ctx: ToolContext, thermostat_id: str) -> tuple[float, int]:
    return (
        ctx.number(f"iot:ambient:{thermostat_id}", 16.5, 23.5, 1),
        int(ctx.number(f"iot:ambient-rh:{thermostat_id}", 30, 60, 0)),
    )


def _thermostats(ctx: ToolContext, home_id: str) -> list[str]:
    return sorted(
        i
        for i, d in ctx.state.records("iot_devices").items()
        if d["home_id"] == home_id and d["type"] == "thermostat"
    )


@implementation
def get_home_climate(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    ids = _thermostats(ctx, args["home_id"])
    if not ids:
        raise InvalidValue("home_id", "this home has no thermostat")
    d = ctx.state.get("iot_devices", ids[0])
    assert d is not None
    temp, rh = _ambient(ctx, ids[0])
    return {
        "home_id": args["home_id"],
        "indoor": {"temperature_c": temp, "humidity_pct": rh},
        "setpoint_c": d["setpoint_c"],
        "hvac_mode": d["mode"].lower(),
        "thermostat_id": ids[0],
    }


@implementation
def nest_list_thermostats(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    out = []
    for i in _thermostats(ctx, args["home_id"]):
        d = ctx.state.get("iot_devices", i)
        assert d is not None
        out.append(
            {
                "thermostat_id": i,
                "displayName": d["label"],
                "room": d["room"],
                "connectivity": "ONLINE" if d["online"] else "OFFLINE",
            }
        )
    return {"devices": out}


@implementation
def nest_get_thermostat(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    d = facts.device(ctx, "thermostat_id", args["thermostat_id"], "thermostat")
    temp, rh = _ambient(ctx, args["thermostat_id"])
    return {
        "name": f"enterprises/replan-home/devices/{args['thermostat_id']}",
        "type": "sdm.devices.types.THERMOSTAT",
        "traits": {
            "Info": {"customName": d["label"]},
            "Temperature": {"ambientTemperatureCelsius": temp},
            "Humidity": {"ambientHumidityPercent": rh},
            "ThermostatMode": {
                "mode": d["mode"],
                "availableModes": ["HEAT", "COOL", "HEATCOOL", "OFF"],
            },
            "ThermostatTemperatureSetpoint": {"heatCelsius": d["setpoint_c"]},
            "Connectivity": {"status": "ONLINE" if d["online"] else "OFFLINE"},
        },
    }


@implementation
def nest_set_heat_setpoint(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    d = facts.device(ctx, "thermostat_id", args["thermostat_id"], "thermostat")
    if d["mode"] not in ("HEAT", "HEATCOOL"):
        raise InvalidValue("thermostat_id", f"SetHeat needs HEAT or HEATCOOL mode, is {d['mode']}")
    target = round(args["heat_celsius"] * 2) / 2  # Nest accepts half degrees
    ambient, _ = _ambient(ctx, args["thermostat_id"])
    return {
        "thermostat_id": args["thermostat_id"],
        "heatCelsius": target,
        "ambientTemperatureCelsius": ambient,
        "estimated_minutes_to_target": max(0, round((target - ambient) * 18)),
    }


def _climate_reading(ctx: ToolContext, sensor_id: str) -> tuple[float, float]:
    return (
        ctx.number(f"iot:clim-t:{sensor_id}", 17.5, 25.5, 1),
        ctx.number(f"iot:clim-rh:{sensor_id}", 32.0, 71.0, 1),
    )


def _dew_point(temp: float, rh: float) -> float:
    b, c = 17.62, 243.12  # Magnus coefficients (Sonntag 1990)
    gamma = math.log(rh / 100) + b * temp / (c + temp)
    return round(c * gamma / (b - gamma), 1)


@implementation
def read_climate_sensor(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    facts.device(ctx, "sensor_id", args["sensor_id"], "sensor", "climate")
    t, rh = _climate_reading(ctx, args["sensor_id"])
    return {
        "temperature": t,
        "humidity": rh,
        "pressure": ctx.number(f"iot:clim-p:{args['sensor_id']}", 995, 1030, 1),
        "battery": facts.battery(ctx, args["sensor_id"]),
        "linkquality": int(ctx.number(f"iot:lq:{args['sensor_id']}", 40, 255, 0)),
    }


@implementation
def compute_dew_point(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return {
        "dew_point_c": _dew_point(args["temperature_c"], args["relative_humidity"]),
        "method": "Magnus (b=17.62, c=243.12 C)",
    }


@implementation
def get_room_comfort(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    d = facts.device(ctx, "sensor_id", args["sensor_id"], "sensor", "climate")
    t, rh = _climate_reading(ctx, args["sensor_id"])
    dp = _dew_point(t, rh)
    comfort = "dry" if dp < 5 else "comfortable" if dp < 13 else "humid" if dp < 18 else "muggy"
    return {
        "sensor_id": args["sensor_id"],
        "room": d["room"],
        "temperature_c": t,
        "relative_humidity": rh,
        "dew_point_c": dp,
        "comfort": comfort,
    }


# -- air quality --------------------------------------------------------------------------------
_PM25_BREAKPOINTS = facts.SEEDS.table("pm25_breakpoints", list[tuple[float, float, int, int, str]])


def _aqi(pm25: float) -> tuple[int, str, tuple[float, float, int, int]]:
    c = math.floor(pm25 * 10 + 1e-9) / 10
    for lo, hi, ilo, ihi, cat in _PM25_BREAKPOINTS:
        if c <= hi:
            c = max(c, lo)
            return round((ihi - ilo) / (hi - lo) * (c - lo) + ilo), cat, (lo, hi, ilo, ihi)
    return 500, "Hazardous", (225.5, 325.4, 301, 500)


def _pm25(ctx: ToolContext, sensor_id: str) -> float:
    return ctx.number(f"iot:pm25:{sensor_id}", 2.0, 48.0, 1)


@implementation
def awair_latest_air_data(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    facts.device(ctx, "sensor_id", args["sensor_id"], "sensor", "air")
    pm = _pm25(ctx, args["sensor_id"])
    co2 = int(ctx.number(f"iot:co2:{args['sensor_id']}", 420, 1600, 0))
    voc = int(ctx.number(f"iot:voc:{args['sensor_id']}", 60, 900, 0))
    score = max(0, min(100, round(100 - pm * 0.9 - max(0, co2 - 600) / 25 - voc / 60)))
    return {
        "timestamp": CORPUS_NOW.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
        "score": score,
        "pm25": pm,
        "pm10": round(pm * 1.4, 1),
        "co2": co2,
        "voc": voc,
    }


@implementation
def pm25_to_aqi(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    aqi, cat, (clo, chi, ilo, ihi) = _aqi(args["pm25"])
    return {
        "aqi": aqi,
        "category": cat,
        "breakpoint": {"c_low": clo, "c_high": chi, "i_low": ilo, "i_high": ihi},
    }


@implementation
def get_air_quality_index(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    facts.device(ctx, "sensor_id", args["sensor_id"], "sensor", "air")
    pm = _pm25(ctx, args["sensor_id"])
    aqi, cat, _ = _aqi(pm)
    return {
        "sensor_id": args["sensor_id"],
        "aqi": aqi,
        "category": cat,
        "dominant_pollutant": "pm25",
        "pm25_ugm3": pm,
    }
