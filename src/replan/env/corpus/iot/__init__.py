"""IoT: a two-home smart-home world (lights, thermostats, locks, sensors, energy meters,
cameras, appliances, scenes and automations) behind several vendor-style APIs.

Devices live in the ``iot_devices`` collection, so commands are checked against real state
(a device must exist and be online) and change it. Readings are keyed by the device id (and
day), never by the tool, so every API that reports the same sensor, meter or lock agrees.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from typing import Any

from replan.env.corpus import timezones
from replan.env.corpus.data import SeedTables
from replan.env.corpus.kinds import CORPUS_NOW
from replan.env.corpus.registry import implementation, initial_state
from replan.env.world import InvalidValue, ToolContext

_SEEDS = SeedTables.load(__package__)  # seeds.json beside this module


# -- the homes ----------------------------------------------------------------------------------
_HOMES = _SEEDS.table("homes", dict[str, dict[str, str]])
_L, _D = "home-lisbon", "home-denver"
_DEVICES: dict[str, dict[str, Any]] = {
    "light-kitchen-1": {
        "home_id": _L,
        "type": "light",
        "label": "Kitchen ceiling",
        "room": "Kitchen",
        "model": "LCA001",
        "on": True,
        "bri": 203,
        "xy": [0.4573, 0.41],
    },
    "light-living-2": {
        "home_id": _L,
        "type": "light",
        "label": "Floor lamp",
        "room": "Living room",
        "model": "LCA006",
        "on": False,
        "bri": 127,
        "xy": [0.3227, 0.329],
    },
    "light-bedroom-3": {
        "home_id": _D,
        "type": "light",
        "label": "Bedside",
        "room": "Bedroom",
        "model": "LCA001",
        "on": False,
        "bri": 60,
        "xy": [0.5019, 0.4152],
    },
    "light-porch-4": {
        "home_id": _D,
        "type": "light",
        "label": "Porch",
        "room": "Porch",
        "model": "LCA008",
        "on": False,
        "bri": 254,
        "xy": [0.3227, 0.329],
    },
    "light-garden-5": {
        "home_id": _D,
        "type": "light",
        "label": "Garden spot",
        "room": "Garden",
        "model": "LCA008",
        "on": False,
        "bri": 254,
        "xy": [0.3227, 0.329],
        "online": False,
    },
    "thermostat-hallway": {
        "home_id": _L,
        "type": "thermostat",
        "label": "Hallway",
        "room": "Hallway",
        "model": "Nest Thermostat",
        "mode": "HEAT",
        "setpoint_c": 20.0,
    },
    "thermostat-upstairs": {
        "home_id": _D,
        "type": "thermostat",
        "label": "Upstairs",
        "room": "Landing",
        "model": "Nest Learning Thermostat",
        "mode": "HEAT",
        "setpoint_c": 19.5,
    },
    "lock-front-door": {
        "home_id": _L,
        "type": "lock",
        "label": "Front door",
        "room": "Hallway",
        "model": "August Wi-Fi Smart Lock",
        "lock_state": "locked",
        "battery": True,
    },
    "lock-garage": {
        "home_id": _D,
        "type": "lock",
        "label": "Garage side door",
        "room": "Garage",
        "model": "Yale Assure Lock 2",
        "lock_state": "unlocked",
        "battery": True,
    },
    "lock-shed": {
        "home_id": _D,
        "type": "lock",
        "label": "Shed",
        "room": "Garden",
        "model": "Yale Assure Lock 2",
        "lock_state": "locked",
        "battery": True,
        "online": False,
    },
    "sensor-living-climate": {
        "home_id": _L,
        "type": "sensor",
        "capability": "climate",
        "label": "Living room climate",
        "room": "Living room",
        "model": "Aqara WSDCGQ11LM",
        "battery": True,
    },
    "sensor-bedroom-climate": {
        "home_id": _D,
        "type": "sensor",
        "capability": "climate",
        "label": "Bedroom climate",
        "room": "Bedroom",
        "model": "Aqara WSDCGQ11LM",
        "battery": True,
    },
    "sensor-office-air": {
        "home_id": _D,
        "type": "sensor",
        "capability": "air",
        "label": "Office air",
        "room": "Office",
        "model": "Awair Element",
    },
    "sensor-kitchen-air": {
        "home_id": _L,
        "type": "sensor",
        "capability": "air",
        "label": "Kitchen air",
        "room": "Kitchen",
        "model": "Awair Element",
    },
    "meter-lisbon-main": {
        "home_id": _L,
        "type": "meter",
        "label": "Main panel",
        "room": "Utility",
        "model": "Shelly Pro 3EM",
        "tariff_code": "EDP-SIMPLE-PT",
    },
    "meter-denver-main": {
        "home_id": _D,
        "type": "meter",
        "label": "Main panel",
        "room": "Basement",
        "model": "Emporia Vue 2",
        "tariff_code": "XCEL-RES-CO",
    },
    "cam-entrance": {
        "home_id": _L,
        "type": "camera",
        "label": "Entrance",
        "room": "Hallway",
        "model": "Ring Stick Up Cam",
    },
    "cam-driveway": {
        "home_id": _D,
        "type": "camera",
        "label": "Driveway",
        "room": "Outside",
        "model": "Ring Spotlight Cam",
    },
    "cam-backyard": {
        "home_id": _D,
        "type": "camera",
        "label": "Backyard",
        "room": "Outside",
        "model": "Reolink Argus 3",
        "battery": True,
    },
    "washer-laundry": {
        "home_id": _L,
        "type": "appliance",
        "appliance_type": "washer",
        "label": "Washing machine",
        "room": "Laundry",
        "model": "Bosch WAV28K",
    },
    "dishwasher-kitchen": {
        "home_id": _L,
        "type": "appliance",
        "appliance_type": "dishwasher",
        "label": "Dishwasher",
        "room": "Kitchen",
        "model": "Bosch SMV6ZCX",
    },
    "oven-kitchen": {
        "home_id": _D,
        "type": "appliance",
        "appliance_type": "oven",
        "label": "Oven",
        "room": "Kitchen",
        "model": "Siemens HB978GUB1",
    },
    "robovac-upstairs": {
        "home_id": _D,
        "type": "appliance",
        "appliance_type": "robot_vacuum",
        "label": "Roxxter",
        "room": "Landing",
        "model": "Bosch Roxxter",
        "battery": True,
    },
}


def _device(
    ctx: ToolContext, param: str, dev_id: str, type_: str, capability: str | None = None
) -> dict[str, Any]:
    rec = ctx.state.get("iot_devices", dev_id)
    assert rec is not None  # guaranteed by an exists precondition
    if rec["type"] != type_ or (capability and rec.get("capability") != capability):
        what = f"{capability} {type_}" if capability else type_
        raise InvalidValue(param, f"{dev_id} is a {rec['type']}, not a {what}")
    return dict(rec)


def _battery(ctx: ToolContext, dev_id: str) -> int:
    return int(ctx.number(f"iot:batt:{dev_id}", 31, 100, 0))


# ==============================================================================================
# homes and devices
# ==============================================================================================
@implementation
def get_home_profile(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    home = ctx.state.get("iot_homes", args["home_id"])
    assert home is not None
    count = sum(
        1 for d in ctx.state.records("iot_devices").values() if d["home_id"] == args["home_id"]
    )
    return {
        "home_id": args["home_id"],
        **{k: home[k] for k in ("name", "city", "timezone", "tariff_code", "meter_id")},
        "device_count": count,
    }


@implementation
def list_smart_devices(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    items = []
    for dev_id, d in sorted(ctx.state.records("iot_devices").items()):
        if d["home_id"] != args["home_id"]:
            continue
        if args.get("device_type", d["type"]) != d["type"]:
            continue
        if "room" in args and args["room"].lower() != d["room"].lower():
            continue
        items.append(
            {
                "deviceId": dev_id,
                "label": d["label"],
                "type": d["type"],
                "roomName": d["room"],
                "online": d["online"],
            }
        )
    return {"items": items, "count": len(items)}


@implementation
def get_device_health(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    d = ctx.state.get("iot_devices", args["device_id"])
    assert d is not None
    key = f"iot:fw:{args['device_id']}"
    out = {
        "device_id": args["device_id"],
        "online": d["online"],
        "power_source": "battery" if d.get("battery") else "mains",
        "rssi_dbm": int(ctx.number(key + ":rssi", -88, -42, 0)),
        "firmware": ctx.pick(key, ["1.104.2", "1.108.7", "2.3.0", "67.116.3"]),
        "model": d["model"],
    }
    if d.get("battery"):
        out["battery_pct"] = _battery(ctx, args["device_id"])
    return out


# ==============================================================================================
# lights (Philips Hue style)
# ==============================================================================================
_GAMUTS = _SEEDS.table(
    "gamuts", dict[str, tuple[tuple[float, float], tuple[float, float], tuple[float, float]]]
)


def _closest_on_segment(
    p: tuple[float, float], a: tuple[float, float], b: tuple[float, float]
) -> tuple[float, float]:
    ax, ay = p[0] - a[0], p[1] - a[1]
    bx, by = b[0] - a[0], b[1] - a[1]
    t = max(0.0, min(1.0, (ax * bx + ay * by) / (bx * bx + by * by)))
    return a[0] + bx * t, a[1] + by * t


def _hex_to_xy(hex_color: str, gamut: str = "C") -> list[float]:
    """sRGB -> CIE xy with the Wide RGB D65 matrix, clipped into the lamp's gamut (Hue docs)."""
    rgb = [int(hex_color[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = (((c + 0.055) / 1.055) ** 2.4 if c > 0.04045 else c / 12.92 for c in rgb)
    x_ = r * 0.664511 + g * 0.154324 + b * 0.162028
    y_ = r * 0.283881 + g * 0.668433 + b * 0.047685
    z_ = r * 0.000088 + g * 0.072310 + b * 0.986039
    total = x_ + y_ + z_
    if total == 0:
        raise InvalidValue("hex_color", "black has no chromaticity; switch the light off instead")
    p = (x_ / total, y_ / total)
    red, green, blue = _GAMUTS[gamut]

    def side(a: tuple[float, float], b: tuple[float, float]) -> float:
        return (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])

    signs = [side(red, green), side(green, blue), side(blue, red)]
    if not (all(v >= 0 for v in signs) or all(v <= 0 for v in signs)):
        cands = [
            _closest_on_segment(p, u, v) for u, v in ((red, green), (green, blue), (blue, red))
        ]
        p = min(cands, key=lambda q: (q[0] - p[0]) ** 2 + (q[1] - p[1]) ** 2)
    return [round(p[0], 4), round(p[1], 4)]


@implementation
def hue_get_light(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    d = _device(ctx, "light_id", args["light_id"], "light")
    return {
        "name": d["label"],
        "modelid": d["model"],
        "room": d["room"],
        "type": "Extended color light",
        "state": {
            "on": d["on"],
            "bri": d["bri"],
            "xy": list(d["xy"]),
            "colormode": "xy",
            "reachable": d["online"],
        },
    }


@implementation
def hex_to_cie_xy(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    gamut = args.get("gamut", "C")
    return {
        "xy": _hex_to_xy(args["hex_color"], gamut),
        "gamut": gamut,
        "hex_color": args["hex_color"].upper(),
    }


@implementation
def hue_set_light_state(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    d = _device(ctx, "light_id", args["light_id"], "light")
    styled = "xy" in args or "bri" in args
    on = args.get("on", True if styled else d["on"])
    if not on and styled:
        raise InvalidValue("on", "parameter not modifiable: the light is being switched off")
    return {
        "light_id": args["light_id"],
        "success": {
            "on": on,
            "bri": args.get("bri", d["bri"]),
            "xy": [round(v, 4) for v in args.get("xy", d["xy"])],
        },
    }


@implementation
def set_light_color(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    d = _device(ctx, "light_id", args["light_id"], "light")
    bri = (
        max(1, round(args["brightness_pct"] * 254 / 100)) if "brightness_pct" in args else d["bri"]
    )
    return {
        "light_id": args["light_id"],
        "applied": {
            "on": True,
            "bri": bri,
            "xy": _hex_to_xy(args["hex_color"], "C"),
            "hex_color": args["hex_color"].upper(),
        },
    }


@implementation
def hue_search_new_lights(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    found = [
        {"uniqueid": uid, "modelid": r["model"], "productname": r["product"]}
        for uid, r in sorted(ctx.state.records("iot_unpaired").items())
        if r["home_id"] == args["home_id"] and r["status"] == "discovered"
    ]
    return {"lastscan": CORPUS_NOW.strftime("%Y-%m-%dT%H:%M:%S"), "new_lights": found}


@implementation
def hue_pair_light(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    rec = ctx.state.get("iot_unpaired", args["uniqueid"])
    assert rec is not None
    for d in ctx.state.records("iot_devices").values():
        if d["home_id"] == rec["home_id"] and d["label"].lower() == args["name"].lower():
            raise InvalidValue("name", f"a device named {args['name']!r} already exists")
    return {
        "light_id": ctx.new_id("light").lower(),
        "home_id": rec["home_id"],
        "name": args["name"],
        "room": args.get("room", "Unassigned"),
        "modelid": rec["model"],
    }


# -- scenes and automations ---------------------------------------------------------------------


@implementation
def hue_create_scene(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    homes, seen = set(), set()
    for st in args["lightstates"]:
        lid = st["light_id"]
        d = ctx.state.get("iot_devices", lid)
        if d is None or d["type"] != "light":
            raise InvalidValue("lightstates", f"{lid} is not a registered light")
        if lid in seen:
            raise InvalidValue("lightstates", f"{lid} appears twice")
        seen.add(lid)
        homes.add(d["home_id"])
    if len(homes) > 1:
        raise InvalidValue("lightstates", "a scene cannot span lights in different homes")
    return {
        "scene_id": ctx.new_id("scene").lower(),
        "home_id": homes.pop(),
        "name": args["name"],
        "lights": len(seen),
    }


@implementation
def hue_recall_scene(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    sc = ctx.state.get("iot_scenes", args["scene_id"])
    assert sc is not None
    down = []
    for st in sc["lightstates"]:
        d = ctx.state.get("iot_devices", st["light_id"])
        if d is None or not d["online"]:
            down.append(st["light_id"])
    return {
        "scene_id": args["scene_id"],
        "status": "recalled",
        "lights_updated": len(sc["lightstates"]) - len(down),
        "lights_unreachable": down,
    }


_DAYS = _SEEDS.table("days", list[str])


@implementation
def create_home_automation(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    days = args.get("days", _DAYS)
    if len(set(days)) != len(days):
        raise InvalidValue("days", "days repeat")
    for rec in ctx.state.records("iot_automations").values():
        if rec["name"].lower() == args["name"].lower():
            raise InvalidValue("name", f"an automation named {args['name']!r} already exists")
    return {
        "automation_id": ctx.new_id("auto"),
        "name": args["name"],
        "status": "disabled",
        "trigger": {
            "type": "time",
            "at": args["trigger_time"],
            "days": sorted(days, key=_DAYS.index),
        },
        "action": {"scene_id": args["scene_id"]},
    }


@implementation
def enable_home_automation(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    rec = ctx.state.get("iot_automations", args["automation_id"])
    assert rec is not None
    if ctx.state.get("iot_scenes", rec["scene_id"]) is None:
        raise InvalidValue("automation_id", "its scene has been deleted")
    return {
        "automation_id": args["automation_id"],
        "status": "enabled",
        "next_trigger_time": rec["trigger_time"],
    }


# ==============================================================================================
# climate
# ==============================================================================================
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
    d = _device(ctx, "thermostat_id", args["thermostat_id"], "thermostat")
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
    d = _device(ctx, "thermostat_id", args["thermostat_id"], "thermostat")
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
    _device(ctx, "sensor_id", args["sensor_id"], "sensor", "climate")
    t, rh = _climate_reading(ctx, args["sensor_id"])
    return {
        "temperature": t,
        "humidity": rh,
        "pressure": ctx.number(f"iot:clim-p:{args['sensor_id']}", 995, 1030, 1),
        "battery": _battery(ctx, args["sensor_id"]),
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
    d = _device(ctx, "sensor_id", args["sensor_id"], "sensor", "climate")
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
_PM25_BREAKPOINTS = _SEEDS.table("pm25_breakpoints", list[tuple[float, float, int, int, str]])


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
    _device(ctx, "sensor_id", args["sensor_id"], "sensor", "air")
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
    _device(ctx, "sensor_id", args["sensor_id"], "sensor", "air")
    pm = _pm25(ctx, args["sensor_id"])
    aqi, cat, _ = _aqi(pm)
    return {
        "sensor_id": args["sensor_id"],
        "aqi": aqi,
        "category": cat,
        "dominant_pollutant": "pm25",
        "pm25_ugm3": pm,
    }


# ==============================================================================================
# energy
# ==============================================================================================
_TARIFFS = _SEEDS.table("tariffs", dict[str, tuple[str, float]])
_HOUR_SHAPE = _SEEDS.table("hour_shape", list[float])
_METER_INSTALLED = dt.date(2025, 1, 1)
_METER_LOAD = {"meter-lisbon-main": (6.0, 14.0), "meter-denver-main": (16.0, 38.0)}


def _tariff(param: str, code: str) -> tuple[str, float]:
    try:
        return _TARIFFS[code]
    except KeyError:
        raise InvalidValue(param, f"unknown tariff {code!r}") from None


def _day_centikwh(ctx: ToolContext, meter: str, day: dt.date) -> int:
    lo, hi = _METER_LOAD.get(meter, (5.0, 20.0))
    if day.month in (12, 1, 2):
        lo, hi = lo * 1.3, hi * 1.3
    return round(ctx.number(f"iot:kwh:{meter}:{day.isoformat()}", lo, hi, 2) * 100)


def _period(args: dict[str, Any]) -> tuple[dt.date, dt.date]:
    start = dt.date.fromisoformat(args["start_date"])
    end = dt.date.fromisoformat(args["end_date"])
    if end < start:
        raise InvalidValue("end_date", "end_date is before start_date")
    if start < _METER_INSTALLED:
        raise InvalidValue(
            "start_date", f"no data before the meter was installed ({_METER_INSTALLED.isoformat()})"
        )
    if (end - start).days > 365:
        raise InvalidValue("end_date", "a request may span at most 366 days")
    return start, end


def _days(start: dt.date, end: dt.date) -> list[dt.date]:
    return [start + dt.timedelta(days=i) for i in range((end - start).days + 1)]


def _energy_cost(kwh: float, rate: float) -> float:
    return round(kwh * rate, 2)


@implementation
def get_meter_usage(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    d = _device(ctx, "meter_id", args["meter_id"], "meter")
    start, end = _period(args)
    days = [(x, _day_centikwh(ctx, args["meter_id"], x)) for x in _days(start, end)]
    return {
        "meter_id": args["meter_id"],
        "unit": "kWh",
        "daily": [{"date": x.isoformat(), "kwh": c / 100} for x, c in days],
        "total_kwh": round(sum(c for _, c in days) / 100, 2),
        "tariff_code": d["tariff_code"],
    }


@implementation
def price_energy(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    supplier, rate = _tariff("tariff_code", args["tariff_code"])
    return {
        "tariff_code": args["tariff_code"],
        "supplier": supplier,
        "rate_usd_per_kwh": rate,
        "cost_usd": _energy_cost(args["kwh"], rate),
    }


@implementation
def get_meter_register_reads(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    d = _device(ctx, "meter_id", args["meter_id"], "meter")
    start, end = _period(args)
    base = int(ctx.number(f"iot:reg0:{args['meter_id']}", 1000, 40000, 0)) * 100
    before = (
        sum(
            _day_centikwh(ctx, args["meter_id"], x)
            for x in _days(_METER_INSTALLED, start - dt.timedelta(days=1))
        )
        if start > _METER_INSTALLED
        else 0
    )
    during = sum(_day_centikwh(ctx, args["meter_id"], x) for x in _days(start, end))
    opening, closing = (base + before) / 100, (base + before + during) / 100
    return {
        "meter_id": args["meter_id"],
        "reads": [
            {
                "read_type": "opening",
                "read_at": f"{start.isoformat()}T00:00:00",
                "register_kwh": opening,
            },
            {
                "read_type": "closing",
                "read_at": f"{(end + dt.timedelta(days=1)).isoformat()}T00:00:00",
                "register_kwh": closing,
            },
        ],
        "opening_kwh": opening,
        "closing_kwh": closing,
        "tariff_code": d["tariff_code"],
    }


@implementation
def bill_register_reads(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    if args["closing_kwh"] < args["opening_kwh"]:
        raise InvalidValue("closing_kwh", "closing read is below the opening read")
    _, rate = _tariff("tariff_code", args["tariff_code"])
    kwh = round(args["closing_kwh"] - args["opening_kwh"], 2)
    return {
        "consumption_kwh": kwh,
        "rate_usd_per_kwh": rate,
        "amount_due_usd": _energy_cost(kwh, rate),
    }


def _hourly(ctx: ToolContext, tariff: str, day: str) -> list[dict[str, Any]]:
    _, rate = _tariff("tariff_code", tariff)
    return [
        {
            "hour": f"{h:02d}:00",
            "usd_per_kwh": round(
                rate
                * _HOUR_SHAPE[h]
                * (1 + ctx.number(f"iot:px:{tariff}:{day}:{h}", -0.12, 0.12, 3)),
                4,
            ),
        }
        for h in range(24)
    ]


def _cheapest(prices: list[dict[str, Any]], minutes: int) -> dict[str, Any]:
    hours = math.ceil(minutes / 60)
    if hours > len(prices):
        raise InvalidValue(
            "duration_min", f"a {hours} h window does not fit in {len(prices)} hourly prices"
        )
    best = min(
        range(len(prices) - hours + 1),
        key=lambda i: (round(sum(p["usd_per_kwh"] for p in prices[i : i + hours]), 6), i),
    )
    start = prices[best]["hour"]
    end_h = (int(start[:2]) + hours) % 24
    avg = round(sum(p["usd_per_kwh"] for p in prices[best : best + hours]) / hours, 4)
    return {"start": start, "end": f"{end_h:02d}:00", "avg": avg, "hours": hours}


@implementation
def get_energy_price_forecast(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    prices = _hourly(ctx, args["tariff_code"], args["date"])
    return {
        "tariff_code": args["tariff_code"],
        "date": args["date"],
        "prices": prices,
        "average_usd_per_kwh": round(sum(p["usd_per_kwh"] for p in prices) / 24, 4),
    }


@implementation
def pick_cheapest_window(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    w = _cheapest(args["prices"], args["duration_min"])
    return {
        "start_time": w["start"],
        "end_time": w["end"],
        "average_usd_per_kwh": w["avg"],
        "hours": w["hours"],
    }


@implementation
def plan_cheapest_run(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    prices = _hourly(ctx, args["tariff_code"], args["date"])
    w = _cheapest(prices, args["duration_min"])
    worst = max(
        _cheapest(
            [{"hour": p["hour"], "usd_per_kwh": -p["usd_per_kwh"]} for p in prices],
            args["duration_min"],
        )["avg"]
        * -1,
        w["avg"],
    )
    return {
        "recommended_start": w["start"],
        "window_end": w["end"],
        "avg_rate_usd_per_kwh": w["avg"],
        "saving_vs_peak_pct": round(100 * (1 - w["avg"] / worst), 1) if worst > 0 else 0.0,
    }


# ==============================================================================================
# cameras
# ==============================================================================================
_LABELS = _SEEDS.table("labels", list[str])


def _events(ctx: ToolContext, cam: str, day: str) -> list[dict[str, Any]]:
    """A camera's motion events for a day, newest first; ids number them in time order."""
    n = 1 + int(ctx.number(f"iot:evn:{cam}:{day}", 0, 4, 0))
    mins = sorted(int(ctx.number(f"iot:ev:{cam}:{day}:{i}", 0, 1439, 0)) for i in range(n))
    out = []
    for i, m in enumerate(mins):
        key = f"iot:ev:{cam}:{day}:{i}"
        out.append(
            {
                "event_id": f"evt-{cam}-{day.replace('-', '')}-{i + 1}",
                "local_time": f"{day}T{m // 60:02d}:{m % 60:02d}:00",
                "label": ctx.pick(key + ":l", _LABELS),
                "score": ctx.number(key + ":s", 0.61, 0.97, 2),
                "duration_s": int(ctx.number(key + ":d", 6, 95, 0)),
            }
        )
    return out[::-1]


def _home_tz(ctx: ToolContext, dev_id: str) -> str:
    d = ctx.state.get("iot_devices", dev_id)
    assert d is not None
    return _HOMES[d["home_id"]]["timezone"]


@implementation
def cloud_camera_events(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _device(ctx, "camera_id", args["camera_id"], "camera")
    evs = _events(ctx, args["camera_id"], args["date"])
    return {
        "camera_id": args["camera_id"],
        "date": args["date"],
        "events": [
            {
                "event_id": e["event_id"],
                "kind": "motion",
                "detection": e["label"],
                "created_at": e["local_time"],
            }
            for e in evs
        ],
    }


@implementation
def nvr_search_events(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _device(ctx, "camera", args["camera"], "camera")
    tz = _home_tz(ctx, args["camera"])
    out = []
    for e in _events(ctx, args["camera"], args["day"]):
        start = timezones.local_to_utc(args["day"], e["local_time"][11:16], tz).timestamp()
        out.append(
            {
                "id": e["event_id"],
                "label": e["label"],
                "start_time": start,
                "end_time": start + e["duration_s"],
                "top_score": e["score"],
                "has_clip": True,
            }
        )
    return {"events": out, "count": len(out)}


_EVENT_RE = re.compile(r"^evt-(cam-[a-z0-9-]+)-(\d{4})(\d{2})(\d{2})-(\d+)$")


@implementation
def create_clip_share_link(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    m = _EVENT_RE.match(args["event_id"])
    if not m:
        raise InvalidValue("event_id", f"malformed event id {args['event_id']!r}")
    cam, day, n = m.group(1), f"{m.group(2)}-{m.group(3)}-{m.group(4)}", int(m.group(5))
    dev = ctx.state.get("iot_devices", cam)
    try:
        ids = {e["event_id"] for e in _events(ctx, cam, dt.date.fromisoformat(day).isoformat())}
    except ValueError:
        ids = set()
    if dev is None or dev["type"] != "camera" or args["event_id"] not in ids or n < 1:
        raise InvalidValue("event_id", f"no recording for event {args['event_id']!r}")
    link = ctx.new_id("share").lower()
    out = {
        "link_id": link,
        "share_url": f"https://share.ring.example/clips/{link}",
        "expires_in_hours": args.get("expires_in_hours", 24),
    }
    if "notify_email" in args:
        out["emailed_to"] = args["notify_email"]
    return out


# ==============================================================================================
# locks
# ==============================================================================================
def _lock_view(ctx: ToolContext, param: str, lock_id: str) -> tuple[dict[str, Any], str]:
    d = _device(ctx, param, lock_id, "lock")
    return d, d["lock_state"] if d["online"] else "unknown"


@implementation
def august_get_lock(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    d, state = _lock_view(ctx, "lock_id", args["lock_id"])
    return {
        "LockID": args["lock_id"],
        "LockName": d["label"],
        "status": state,
        "doorState": "unknown" if state == "unknown" else "closed",
        "battery": round(_battery(ctx, args["lock_id"]) / 100, 2),
    }


@implementation
def smartthings_lock_status(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _, state = _lock_view(ctx, "deviceId", args["deviceId"])
    return {
        "components": {
            "main": {
                "lock": {"lock": {"value": state}},
                "battery": {"battery": {"value": _battery(ctx, args["deviceId"]), "unit": "%"}},
            }
        }
    }


@implementation
def august_lock_operation(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    d = _device(ctx, "lock_id", args["lock_id"], "lock")
    new = "locked" if args["operation"] == "lock" else "unlocked"
    return {
        "LockID": args["lock_id"],
        "status": new,
        "info": {"action": args["operation"], "changed": d["lock_state"] != new},
    }


@implementation
def seam_create_access_code(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _device(ctx, "device_id", args["device_id"], "lock")
    if len(set(args["code"])) == 1:
        raise InvalidValue("code", "codes made of one repeated digit are not allowed")
    for rec in ctx.state.records("iot_access_codes").values():
        if (
            rec["device_id"] == args["device_id"]
            and rec["code"] == args["code"]
            and rec["status"] == "set"
        ):
            raise InvalidValue("code", "this code is already in use on the lock")
    if ("starts_at" in args) != ("ends_at" in args):
        raise InvalidValue("ends_at", "starts_at and ends_at must be given together")
    out: dict[str, Any] = {
        "access_code_id": ctx.new_id("ac"),
        "device_id": args["device_id"],
        "name": args["name"],
        "code": args["code"],
        "type": "ongoing",
        "status": "setting",
    }
    if "starts_at" in args:
        a = dt.datetime.fromisoformat(args["starts_at"].replace("Z", "+00:00"))
        b = dt.datetime.fromisoformat(args["ends_at"].replace("Z", "+00:00"))
        if (a.tzinfo is None) != (b.tzinfo is None) or b <= a:
            raise InvalidValue("ends_at", "ends_at must be after starts_at")
        out.update(type="time_bound", starts_at=args["starts_at"], ends_at=args["ends_at"])
    return {"access_code": out}


@implementation
def seam_delete_access_code(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return {
        "action_attempt": {
            "action_attempt_id": ctx.new_id("aa").lower(),
            "action_type": "DELETE_ACCESS_CODE",
            "status": "success",
        }
    }


# ==============================================================================================
# appliances (Home Connect style)
# ==============================================================================================
# appliance type: program key -> (minutes, kWh)
_PROGRAMS = _SEEDS.table("programs", dict[str, dict[str, tuple[int, float]]])
_DEFAULT_PROGRAM = {t: next(iter(p)) for t, p in _PROGRAMS.items()}


def _active_run(ctx: ToolContext, appliance_id: str) -> tuple[str, dict[str, Any]] | None:
    for rid, run in sorted(ctx.state.records("iot_appliance_runs").items()):
        if run["appliance_id"] == appliance_id and run["status"] == "running":
            return rid, dict(run)
    return None


@implementation
def home_connect_get_status(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    d = _device(ctx, "haId", args["haId"], "appliance")
    run = _active_run(ctx, args["haId"])
    state = "Offline" if not d["online"] else "Run" if run else "Ready"
    out = {
        "haId": args["haId"],
        "type": d["appliance_type"],
        "operationState": state,
        "remoteStartAllowed": state == "Ready",
        "availablePrograms": list(_PROGRAMS[d["appliance_type"]]),
    }
    if run:
        minutes = _PROGRAMS[d["appliance_type"]][run[1]["program_key"]][0]
        out["activeProgram"] = {
            "key": run[1]["program_key"],
            "run_id": run[0],
            "remaining_min": int(ctx.number(f"iot:rem:{run[0]}", 1, minutes, 0)),
        }
    return out


@implementation
def home_connect_start_program(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    d = _device(ctx, "haId", args["haId"], "appliance")
    kind_ = d["appliance_type"]
    key = args.get("program_key", _DEFAULT_PROGRAM[kind_])
    if key not in _PROGRAMS[kind_]:
        raise InvalidValue("program_key", f"{key} is not available on this {kind_}")
    opts = args.get("options", {})
    if "temperature_c" in opts and kind_ != "oven":
        raise InvalidValue("options", "temperature_c only applies to ovens")
    if "spin_rpm" in opts and kind_ != "washer":
        raise InvalidValue("options", "spin_rpm only applies to washers")
    if _active_run(ctx, args["haId"]):
        raise InvalidValue("haId", "the appliance is already running a program")
    minutes, kwh = _PROGRAMS[kind_][key]
    if kind_ == "washer" and opts.get("spin_rpm", 800) > 1200:
        kwh = round(kwh * 1.08, 2)
    out = {
        "run_id": ctx.new_id("run"),
        "haId": args["haId"],
        "program_key": key,
        "estimated_duration_min": minutes,
        "estimated_energy_kwh": kwh,
    }
    if "start_time" in args:
        out["start_time"] = args["start_time"]
    return out


@implementation
def home_connect_stop_program(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    run = ctx.state.get("iot_appliance_runs", args["run_id"])
    assert run is not None
    return {"run_id": args["run_id"], "status": "stopped", "haId": run["appliance_id"]}


@initial_state
def _iot_state(seed: int) -> dict[str, dict[str, dict[str, Any]]]:
    devices = {i: {"online": True, **d} for i, d in _DEVICES.items()}
    return {
        "iot_homes": {h: dict(r) for h, r in _HOMES.items()},
        "iot_devices": devices,
        "iot_unpaired": {
            "00:17:88:01:0c:4a:91:2f-0b": {
                "home_id": _L,
                "model": "LCA006",
                "product": "Hue color lamp",
                "status": "discovered",
            },
            "00:17:88:01:0d:7e:33:a5-0b": {
                "home_id": _D,
                "model": "LTA009",
                "product": "Hue white ambiance",
                "status": "discovered",
            },
        },
        "iot_scenes": {
            "scene-good-morning": {
                "name": "Good morning",
                "home_id": _L,
                "active": False,
                "lightstates": [{"light_id": "light-kitchen-1", "on": True, "bri": 254}],
            },
            "scene-movie-night": {
                "name": "Movie night",
                "home_id": _D,
                "active": False,
                "lightstates": [
                    {"light_id": "light-bedroom-3", "on": True, "bri": 30},
                    {"light_id": "light-porch-4", "on": False},
                ],
            },
        },
        "iot_automations": {
            "auto-VACATION1": {
                "name": "Vacation lights",
                "scene_id": "scene-movie-night",
                "trigger_time": "19:45",
                "status": "disabled",
            },
        },
        "iot_access_codes": {
            "ac-CLEANER01": {
                "device_id": "lock-front-door",
                "name": "Marta Nowak",
                "code": "1357",
                "status": "set",
            },
        },
        "iot_appliance_runs": {
            "run-DISH0001": {
                "appliance_id": "dishwasher-kitchen",
                "program_key": "Dishcare.Dishwasher.Program.Eco50",
                "status": "running",
            },
        },
        "iot_clip_links": {},
    }
