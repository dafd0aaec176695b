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

from replan.core.tools import Effect, Precondition
from replan.env.corpus.general import TIMEZONE, UTC_TS, _local_to_utc
from replan.env.corpus.kinds import (
    CITY,
    CORPUS_NOW,
    DURATION,
    EMAIL,
    PERCENT,
    PERSON,
    TEMPERATURE,
    TIME,
    URL,
    USD,
    kind,
)
from replan.env.corpus.registry import alternatives, initial_state, s, tool
from replan.env.world import InvalidValue, ToolContext

# -- kinds --------------------------------------------------------------------------------------
HOME_ID = kind("iot_home_id", "a smart-home location", ["home-lisbon", "home-denver"])
DEVICE_ID = kind(
    "iot_device_id",
    "any registered smart-home device",
    [
        "light-kitchen-1",
        "thermostat-hallway",
        "lock-front-door",
        "sensor-living-climate",
        "cam-driveway",
        "washer-laundry",
        "meter-denver-main",
    ],
)
LIGHT_ID = kind(
    "light_id",
    "a smart light",
    ["light-kitchen-1", "light-living-2", "light-bedroom-3", "light-porch-4"],
)
THERMOSTAT_ID = kind(
    "thermostat_id", "a smart thermostat", ["thermostat-hallway", "thermostat-upstairs"]
)
LOCK_ID = kind("smart_lock_id", "a smart door lock", ["lock-front-door", "lock-garage"])
CLIMATE_SENSOR_ID = kind(
    "climate_sensor_id",
    "a temperature/humidity sensor",
    ["sensor-living-climate", "sensor-bedroom-climate"],
)
AIR_SENSOR_ID = kind(
    "air_sensor_id", "an indoor air-quality monitor", ["sensor-office-air", "sensor-kitchen-air"]
)
METER_ID = kind(
    "energy_meter_id", "a whole-home electricity meter", ["meter-lisbon-main", "meter-denver-main"]
)
CAMERA_ID = kind("camera_id", "a security camera", ["cam-entrance", "cam-driveway", "cam-backyard"])
APPLIANCE_ID = kind(
    "appliance_id",
    "a connected home appliance",
    ["washer-laundry", "oven-kitchen", "robovac-upstairs"],
)
ZIGBEE_UID = kind(
    "zigbee_unique_id",
    "the unique id of a discovered, unpaired Zigbee light",
    ["00:17:88:01:0c:4a:91:2f-0b", "00:17:88:01:0d:7e:33:a5-0b"],
)
HEX_COLOR = kind(
    "hex_color", "an sRGB colour, #RRGGBB", ["#FF8800", "#3366FF", "#FFFFFF", "#E6194B"]
)
CIE_XY = kind("cie_xy", "a CIE 1931 chromaticity pair [x, y]")
POWER = kind("power_on", "whether a device should be switched on", [True, False])
HUMIDITY = kind("relative_humidity", "relative humidity in percent", [35.0, 48.0, 62.0])
DEW_POINT = kind("dew_point_c", "a dew point in degrees Celsius")
PM25 = kind("pm25_ugm3", "a PM2.5 concentration in micrograms per cubic metre", [4.2, 12.0, 38.5])
AQI = kind("aqi_value", "a US EPA air quality index value")
ENERGY_KWH = kind("energy_kwh", "an amount of electrical energy in kWh", [12.5, 86.4, 310.0])
OPENING_READ = kind("meter_opening_read_kwh", "a meter's register reading (kWh) at a period start")
CLOSING_READ = kind("meter_closing_read_kwh", "a meter's register reading (kWh) at a period end")
TARIFF = kind(
    "tariff_code", "an electricity tariff code", ["EDP-SIMPLE-PT", "XCEL-RES-CO", "AGILE-OCT-UK"]
)
USD_PER_KWH = kind("usd_per_kwh", "an electricity price in USD per kWh")
PRICE_LIST = kind("hourly_price_list", "a day's hourly electricity prices")
EVENT_ID = kind("camera_event_id", "a motion event recorded by a camera")
LOCK_STATE = kind("lock_state", "whether a lock is locked or unlocked")
LOCK_OP = kind("lock_operation", "a lock command", ["lock", "unlock"])
PIN = kind("lock_pin_code", "a 4-8 digit keypad code", ["2580", "739164", "48213"])
ACCESS_CODE_ID = kind(
    "lock_access_code_id", "a keypad access code programmed on a lock", ["ac-CLEANER01"]
)
SCENE_ID = kind(
    "light_scene_id", "a stored lighting scene", ["scene-good-morning", "scene-movie-night"]
)
SCENE_NAME = kind(
    "scene_name", "a lighting scene name", ["Evening reading", "Dinner party", "Wind down"]
)
SCENE_LIGHTS = kind(
    "scene_light_states",
    "the per-light states of a scene (all lights in one home)",
    [
        [
            {"light_id": "light-kitchen-1", "on": True, "bri": 180},
            {"light_id": "light-living-2", "on": True, "bri": 90},
        ],
        [
            {"light_id": "light-bedroom-3", "on": True, "bri": 40},
            {"light_id": "light-porch-4", "on": False},
        ],
    ],
)
AUTOMATION_ID = kind("home_automation_id", "a time-triggered home automation", ["auto-VACATION1"])
AUTOMATION_NAME = kind(
    "automation_name",
    "a home automation name",
    ["Porch lights at dusk", "Wake-up lights", "Evening wind-down"],
)
DEVICE_LABEL = kind("device_label", "a display name for a device", ["Desk lamp", "Hall pendant"])
ROOM = kind("room_name", "a room in a home", ["Kitchen", "Living room", "Bedroom", "Office"])
PROGRAM_KEY = kind(
    "appliance_program_key",
    "a Home Connect program key",
    [
        "LaundryCare.Washer.Program.Cotton",
        "Cooking.Oven.Program.HeatingMode.HotAir",
        "ConsumerProducts.CleaningRobot.Program.Cleaning.CleanAll",
    ],
)
RUN_ID = kind("appliance_run_id", "a running appliance program", ["run-DISH0001"])
SHARE_LINK_ID = kind("clip_share_link_id", "a shared camera clip link")
SETPOINT = kind("thermostat_setpoint_c", "a thermostat's heating target in degrees Celsius")
WINDOW_END = kind("time_window_end", "the local end time (HH:MM) of a time window")

# -- the homes ----------------------------------------------------------------------------------
_HOMES = {
    "home-lisbon": {
        "name": "Lisbon flat",
        "city": "Lisbon",
        "timezone": "Europe/Lisbon",
        "tariff_code": "EDP-SIMPLE-PT",
        "meter_id": "meter-lisbon-main",
    },
    "home-denver": {
        "name": "Denver house",
        "city": "Denver",
        "timezone": "America/Denver",
        "tariff_code": "XCEL-RES-CO",
        "meter_id": "meter-denver-main",
    },
}
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


def _pre_exists(arg: str, what: str) -> Precondition:
    return Precondition(
        kind="exists",
        collection="iot_devices",
        arg=arg,
        description=f"the {what} must be a registered device",
    )


def _pre_online(arg: str, what: str) -> Precondition:
    return Precondition(
        kind="field_equals",
        collection="iot_devices",
        arg=arg,
        field="online",
        value=True,
        description=f"the {what} must be registered and online",
    )


_PRE_HOME = Precondition(
    kind="exists", collection="iot_homes", arg="home_id", description="the home must exist"
)


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
@tool(
    domain="IoT",
    category="source",
    description="Profile of a home: city, time zone, tariff and main meter.",
    params={"home_id": s.string("home to describe", HOME_ID, pattern="^home-[a-z0-9-]+$")},
    returns=s.obj(
        {
            "home_id": s.string("", HOME_ID),
            "name": s.string(),
            "city": s.string("", CITY),
            "timezone": s.string("", TIMEZONE),
            "tariff_code": s.string("", TARIFF),
            "meter_id": s.string("", METER_ID),
            "device_count": s.integer(minimum=0),
        }
    ),
    preconditions=[_PRE_HOME],
)
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


@tool(
    domain="IoT",
    category="source",
    description="SmartThings-style device list for a location, filterable by type and room.",
    params={
        "home_id": s.string("location id", HOME_ID, pattern="^home-[a-z0-9-]+$"),
        "device_type": s.enum(
            ["light", "thermostat", "lock", "sensor", "meter", "camera", "appliance"],
            "only this type",
        ),
        "room": s.string("only this room", ROOM),
    },
    required=["home_id"],
    returns=s.obj(
        {
            "items": s.array(
                s.obj(
                    {
                        "deviceId": s.string("", DEVICE_ID),
                        "label": s.string(),
                        "type": s.string(),
                        "roomName": s.string("", ROOM),
                        "online": s.boolean(),
                    }
                )
            ),
            "count": s.integer(minimum=0),
        }
    ),
    preconditions=[_PRE_HOME],
)
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


@tool(
    domain="IoT",
    category="source",
    description="Connectivity and power health of any device (Zigbee/Wi-Fi link, battery).",
    params={"device_id": s.string("device to check", DEVICE_ID, min_len=3)},
    returns=s.obj(
        {
            "device_id": s.string("", DEVICE_ID),
            "online": s.boolean(),
            "power_source": s.enum(["battery", "mains"]),
            "battery_pct": s.integer("only for battery devices", PERCENT, minimum=0, maximum=100),
            "rssi_dbm": s.integer(maximum=0),
            "firmware": s.string(),
            "model": s.string(),
        },
        required=["device_id", "online", "power_source", "rssi_dbm", "firmware", "model"],
    ),
    preconditions=[_pre_exists("device_id", "device")],
)
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
_LIGHT_PAT = "^light-[A-Za-z0-9-]+$"
_XY = s.array(s.number(minimum=0, maximum=1), "CIE x, y", CIE_XY, min_items=2, max_items=2)
_GAMUTS = {
    "A": ((0.704, 0.296), (0.2151, 0.7106), (0.138, 0.08)),
    "B": ((0.675, 0.322), (0.409, 0.518), (0.167, 0.04)),
    "C": ((0.6915, 0.3083), (0.17, 0.7), (0.1532, 0.0475)),
}


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


@tool(
    domain="IoT",
    category="source",
    description="Hue bridge GET /lights/{id}: name, model and current state of a light.",
    params={"light_id": s.string("light to read", LIGHT_ID, pattern=_LIGHT_PAT)},
    returns=s.obj(
        {
            "name": s.string("", DEVICE_LABEL),
            "modelid": s.string(),
            "room": s.string("", ROOM),
            "type": s.enum(["Extended color light"]),
            "state": s.obj(
                {
                    "on": s.boolean("", POWER),
                    "bri": s.integer(minimum=1, maximum=254),
                    "xy": _XY,
                    "colormode": s.enum(["xy"]),
                    "reachable": s.boolean(),
                }
            ),
        }
    ),
    preconditions=[_pre_exists("light_id", "light")],
)
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


@tool(
    domain="IoT",
    category="processor",
    group="iot_light_color",
    description="Convert an sRGB hex colour to Hue CIE xy, clipped to a lamp colour gamut.",
    params={
        "hex_color": s.string("colour, #RRGGBB", HEX_COLOR, pattern="^#[0-9A-Fa-f]{6}$"),
        "gamut": s.enum(["A", "B", "C"], "lamp gamut (C for current Hue colour bulbs)"),
    },
    required=["hex_color"],
    returns=s.obj(
        {"xy": _XY, "gamut": s.enum(["A", "B", "C"]), "hex_color": s.string("", HEX_COLOR)}
    ),
)
def hex_to_cie_xy(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    gamut = args.get("gamut", "C")
    return {
        "xy": _hex_to_xy(args["hex_color"], gamut),
        "gamut": gamut,
        "hex_color": args["hex_color"].upper(),
    }


@tool(
    domain="IoT",
    category="action",
    group="iot_light_color",
    description="Hue bridge PUT /lights/{id}/state: switch, dim or colour (xy) a light; "
    "'on' defaults to true when bri or xy is given.",
    params={
        "light_id": s.string("light to change", LIGHT_ID, pattern=_LIGHT_PAT),
        "on": s.boolean("power state", POWER),
        "bri": s.integer("brightness 1-254", minimum=1, maximum=254),
        "xy": _XY,
        "transitiontime": s.integer("fade, in 100 ms steps", minimum=0, maximum=65535),
    },
    required=["light_id"],
    returns=s.obj(
        {
            "light_id": s.string("", LIGHT_ID),
            "success": s.obj(
                {"on": s.boolean("", POWER), "bri": s.integer(minimum=1, maximum=254), "xy": _XY}
            ),
        }
    ),
    preconditions=[_pre_online("light_id", "light")],
    effects=[
        Effect(
            op="update",
            collection="iot_devices",
            key="light_id",
            fields={
                "on": "$output.success.on",
                "bri": "$output.success.bri",
                "xy": "$output.success.xy",
            },
        )
    ],
)
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


@tool(
    domain="IoT",
    category="action",
    group="iot_light_color",
    description="Turn a light on in a hex colour (Google Home ColorSetting-style command).",
    params={
        "light_id": s.string("light to colour", LIGHT_ID, pattern=_LIGHT_PAT),
        "hex_color": s.string("colour, #RRGGBB", HEX_COLOR, pattern="^#[0-9A-Fa-f]{6}$"),
        "brightness_pct": s.number("brightness in percent", PERCENT, minimum=1, maximum=100),
    },
    required=["light_id", "hex_color"],
    returns=s.obj(
        {
            "light_id": s.string("", LIGHT_ID),
            "applied": s.obj(
                {
                    "on": s.boolean("", POWER),
                    "bri": s.integer(minimum=1, maximum=254),
                    "xy": _XY,
                    "hex_color": s.string("", HEX_COLOR),
                }
            ),
        }
    ),
    preconditions=[_pre_online("light_id", "light")],
    effects=[
        Effect(
            op="update",
            collection="iot_devices",
            key="light_id",
            fields={"on": True, "bri": "$output.applied.bri", "xy": "$output.applied.xy"},
        )
    ],
)
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


alternatives(
    "iot_light_color",
    "1-N",
    ["set_light_color"],
    ["hex_to_cie_xy", "hue_set_light_state"],
    description="colour a light: one colour command, or convert to xy then set state",
    output_kind=CIE_XY,
)


@tool(
    domain="IoT",
    category="source",
    description="Hue bridge search for new lights in a home: unpaired bulbs in range.",
    params={
        "home_id": s.string("home whose bridge searches", HOME_ID, pattern="^home-[a-z0-9-]+$")
    },
    returns=s.obj(
        {
            "lastscan": s.string(),
            "new_lights": s.array(
                s.obj(
                    {
                        "uniqueid": s.string("", ZIGBEE_UID),
                        "modelid": s.string(),
                        "productname": s.string(),
                    }
                )
            ),
        }
    ),
    preconditions=[_PRE_HOME],
)
def hue_search_new_lights(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    found = [
        {"uniqueid": uid, "modelid": r["model"], "productname": r["product"]}
        for uid, r in sorted(ctx.state.records("iot_unpaired").items())
        if r["home_id"] == args["home_id"] and r["status"] == "discovered"
    ]
    return {"lastscan": CORPUS_NOW.strftime("%Y-%m-%dT%H:%M:%S"), "new_lights": found}


@tool(
    domain="IoT",
    category="action",
    description="Pair a discovered Zigbee light with the home's Hue bridge; returns its id.",
    params={
        "uniqueid": s.string(
            "unique id from the search",
            ZIGBEE_UID,
            pattern="^([0-9a-f]{2}:){7}[0-9a-f]{2}-[0-9a-f]{2}$",
        ),
        "name": s.string("display name", DEVICE_LABEL, min_len=1, max_len=32),
        "room": s.string("room to put it in", ROOM, min_len=1),
    },
    required=["uniqueid", "name"],
    returns=s.obj(
        {
            "light_id": s.string("", LIGHT_ID),
            "home_id": s.string("", HOME_ID),
            "name": s.string("", DEVICE_LABEL),
            "room": s.string("", ROOM),
            "modelid": s.string(),
        }
    ),
    preconditions=[
        Precondition(
            kind="field_equals",
            collection="iot_unpaired",
            arg="uniqueid",
            field="status",
            value="discovered",
            description="the light must be discovered and not yet paired",
        )
    ],
    effects=[
        Effect(op="update", collection="iot_unpaired", key="uniqueid", fields={"status": "paired"}),
        Effect(
            op="create",
            collection="iot_devices",
            key="light_id",
            fields={
                "home_id": "$output.home_id",
                "type": "light",
                "label": "$arg.name",
                "room": "$output.room",
                "model": "$output.modelid",
                "online": True,
                "on": False,
                "bri": 254,
                "xy": [0.3227, 0.329],
            },
        ),
    ],
)
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
_LIGHTSTATE = s.obj(
    {
        "light_id": s.string("", LIGHT_ID, pattern=_LIGHT_PAT),
        "on": s.boolean("", POWER),
        "bri": s.integer(minimum=1, maximum=254),
    },
    required=["light_id", "on"],
)


@tool(
    domain="IoT",
    category="action",
    description="Store a Hue scene: named light states for lights in one home.",
    params={
        "name": s.string("scene name", SCENE_NAME, min_len=1, max_len=32),
        "lightstates": s.array(
            _LIGHTSTATE, "state per light", SCENE_LIGHTS, min_items=1, max_items=50
        ),
    },
    returns=s.obj(
        {
            "scene_id": s.string("", SCENE_ID),
            "home_id": s.string("", HOME_ID),
            "name": s.string("", SCENE_NAME),
            "lights": s.integer(minimum=1),
        }
    ),
    effects=[
        Effect(
            op="create",
            collection="iot_scenes",
            key="scene_id",
            fields={
                "name": "$arg.name",
                "home_id": "$output.home_id",
                "lightstates": "$arg.lightstates",
                "active": False,
            },
        )
    ],
)
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


@tool(
    domain="IoT",
    category="action",
    description="Recall (activate) a stored scene on its lights.",
    params={
        "scene_id": s.string("scene to recall", SCENE_ID, pattern="^scene-"),
        "transition_ms": s.integer("fade time", minimum=0, maximum=60_000),
    },
    required=["scene_id"],
    returns=s.obj(
        {
            "scene_id": s.string("", SCENE_ID),
            "status": s.enum(["recalled"]),
            "lights_updated": s.integer(minimum=0),
            "lights_unreachable": s.array(s.string("", LIGHT_ID)),
        }
    ),
    preconditions=[
        Precondition(
            kind="exists",
            collection="iot_scenes",
            arg="scene_id",
            description="the scene must exist",
        )
    ],
    effects=[Effect(op="update", collection="iot_scenes", key="scene_id", fields={"active": True})],
)
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


_DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]


@tool(
    domain="IoT",
    category="action",
    description="Create a time-triggered automation that recalls a scene; created disabled.",
    params={
        "name": s.string("automation name", AUTOMATION_NAME, min_len=1, max_len=64),
        "scene_id": s.string("scene to recall", SCENE_ID, pattern="^scene-"),
        "trigger_time": s.string(
            "local time, HH:MM", TIME, pattern="^([01][0-9]|2[0-3]):[0-5][0-9]$"
        ),
        "days": s.array(
            s.enum(_DAYS), "days of the week (default: every day)", min_items=1, max_items=7
        ),
    },
    required=["name", "scene_id", "trigger_time"],
    returns=s.obj(
        {
            "automation_id": s.string("", AUTOMATION_ID),
            "name": s.string("", AUTOMATION_NAME),
            "status": s.enum(["disabled"]),
            "trigger": s.obj(
                {"type": s.enum(["time"]), "at": s.string("", TIME), "days": s.array(s.enum(_DAYS))}
            ),
            "action": s.obj({"scene_id": s.string("", SCENE_ID)}),
        }
    ),
    preconditions=[
        Precondition(
            kind="exists",
            collection="iot_scenes",
            arg="scene_id",
            description="the scene to recall must exist",
        )
    ],
    effects=[
        Effect(
            op="create",
            collection="iot_automations",
            key="automation_id",
            fields={
                "name": "$arg.name",
                "scene_id": "$arg.scene_id",
                "trigger_time": "$arg.trigger_time",
                "status": "disabled",
            },
        )
    ],
)
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


@tool(
    domain="IoT",
    category="action",
    description="Enable (arm) a disabled automation.",
    params={"automation_id": s.string("automation to enable", AUTOMATION_ID, pattern="^auto-")},
    returns=s.obj(
        {
            "automation_id": s.string("", AUTOMATION_ID),
            "status": s.enum(["enabled"]),
            "next_trigger_time": s.string("", TIME),
        }
    ),
    preconditions=[
        Precondition(
            kind="field_equals",
            collection="iot_automations",
            arg="automation_id",
            field="status",
            value="disabled",
            description="the automation must exist and be disabled",
        )
    ],
    effects=[
        Effect(
            op="update",
            collection="iot_automations",
            key="automation_id",
            fields={"status": "enabled"},
        )
    ],
)
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


@tool(
    domain="IoT",
    category="source",
    group="iot_home_temperature",
    description="Indoor climate summary of a home (thermostat reading, setpoint, HVAC mode).",
    params={"home_id": s.string("home", HOME_ID, pattern="^home-[a-z0-9-]+$")},
    returns=s.obj(
        {
            "home_id": s.string("", HOME_ID),
            "indoor": s.obj(
                {
                    "temperature_c": s.number("", TEMPERATURE),
                    "humidity_pct": s.integer("", PERCENT, minimum=0, maximum=100),
                }
            ),
            "setpoint_c": s.number("", SETPOINT),
            "hvac_mode": s.string(),
            "thermostat_id": s.string("", THERMOSTAT_ID),
        }
    ),
    preconditions=[_PRE_HOME],
)
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


@tool(
    domain="IoT",
    category="source",
    group="iot_home_temperature",
    description="Nest SDM devices.list filtered to thermostats of a home.",
    params={"home_id": s.string("structure (home)", HOME_ID, pattern="^home-[a-z0-9-]+$")},
    returns=s.obj(
        {
            "devices": s.array(
                s.obj(
                    {
                        "thermostat_id": s.string("", THERMOSTAT_ID),
                        "displayName": s.string(),
                        "room": s.string("", ROOM),
                        "connectivity": s.enum(["ONLINE", "OFFLINE"]),
                    }
                )
            )
        }
    ),
    preconditions=[_PRE_HOME],
)
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


@tool(
    domain="IoT",
    category="source",
    group="iot_home_temperature",
    description="Nest SDM devices.get for a thermostat: temperature, humidity, mode, setpoint.",
    params={"thermostat_id": s.string("thermostat", THERMOSTAT_ID, pattern="^thermostat-")},
    returns=s.obj(
        {
            "name": s.string(),
            "type": s.enum(["sdm.devices.types.THERMOSTAT"]),
            "traits": s.obj(
                {
                    "Info": s.obj({"customName": s.string()}),
                    "Temperature": s.obj({"ambientTemperatureCelsius": s.number("", TEMPERATURE)}),
                    "Humidity": s.obj({"ambientHumidityPercent": s.integer("", PERCENT)}),
                    "ThermostatMode": s.obj(
                        {
                            "mode": s.enum(["HEAT", "COOL", "HEATCOOL", "OFF"]),
                            "availableModes": s.array(s.string()),
                        }
                    ),
                    "ThermostatTemperatureSetpoint": s.obj({"heatCelsius": s.number("", SETPOINT)}),
                    "Connectivity": s.obj({"status": s.enum(["ONLINE", "OFFLINE"])}),
                }
            ),
        }
    ),
    preconditions=[_pre_exists("thermostat_id", "thermostat")],
)
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


alternatives(
    "iot_home_temperature",
    "1-N",
    ["get_home_climate"],
    ["nest_list_thermostats", "nest_get_thermostat"],
    description="a home's indoor temperature: home summary, or find its thermostat and read it",
    output_kind=TEMPERATURE,
)


@tool(
    domain="IoT",
    category="action",
    description="Nest SDM ThermostatTemperatureSetpoint.SetHeat: set the heating target.",
    params={
        "thermostat_id": s.string("thermostat", THERMOSTAT_ID, pattern="^thermostat-"),
        "heat_celsius": s.number("target temperature", TEMPERATURE, minimum=9, maximum=32),
    },
    returns=s.obj(
        {
            "thermostat_id": s.string("", THERMOSTAT_ID),
            "heatCelsius": s.number("", SETPOINT),
            "ambientTemperatureCelsius": s.number("", TEMPERATURE),
            "estimated_minutes_to_target": s.integer("", DURATION, minimum=0),
        }
    ),
    preconditions=[_pre_online("thermostat_id", "thermostat")],
    effects=[
        Effect(
            op="update",
            collection="iot_devices",
            key="thermostat_id",
            fields={"setpoint_c": "$output.heatCelsius"},
        )
    ],
)
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


@tool(
    domain="IoT",
    category="source",
    group="iot_dew_point",
    description="Zigbee2MQTT state of a climate sensor: temperature, humidity, pressure.",
    params={"sensor_id": s.string("climate sensor", CLIMATE_SENSOR_ID, pattern="^sensor-")},
    returns=s.obj(
        {
            "temperature": s.number("", TEMPERATURE),
            "humidity": s.number("", HUMIDITY, minimum=0, maximum=100),
            "pressure": s.number("hPa"),
            "battery": s.integer("", PERCENT),
            "linkquality": s.integer(minimum=0, maximum=255),
        }
    ),
    preconditions=[_pre_exists("sensor_id", "sensor")],
)
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


@tool(
    domain="IoT",
    category="processor",
    group="iot_dew_point",
    description="Dew point from air temperature and relative humidity (Magnus formula).",
    params={
        "temperature_c": s.number("air temperature", TEMPERATURE, minimum=-45, maximum=60),
        "relative_humidity": s.number(
            "relative humidity, %", HUMIDITY, exclusive_minimum=0, maximum=100
        ),
    },
    returns=s.obj({"dew_point_c": s.number("", DEW_POINT), "method": s.string()}),
)
def compute_dew_point(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return {
        "dew_point_c": _dew_point(args["temperature_c"], args["relative_humidity"]),
        "method": "Magnus (b=17.62, c=243.12 C)",
    }


@tool(
    domain="IoT",
    category="source",
    group="iot_dew_point",
    description="Room comfort report from a climate sensor: dew point and comfort band.",
    params={"sensor_id": s.string("climate sensor", CLIMATE_SENSOR_ID, pattern="^sensor-")},
    returns=s.obj(
        {
            "sensor_id": s.string("", CLIMATE_SENSOR_ID),
            "room": s.string("", ROOM),
            "temperature_c": s.number("", TEMPERATURE),
            "relative_humidity": s.number("", HUMIDITY),
            "dew_point_c": s.number("", DEW_POINT),
            "comfort": s.enum(["dry", "comfortable", "humid", "muggy"]),
        }
    ),
    preconditions=[_pre_exists("sensor_id", "sensor")],
)
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


alternatives(
    "iot_dew_point",
    "1-N",
    ["get_room_comfort"],
    ["read_climate_sensor", "compute_dew_point"],
    description="a room's dew point: comfort report, or raw reading then Magnus",
    output_kind=DEW_POINT,
)


# -- air quality --------------------------------------------------------------------------------
_PM25_BREAKPOINTS = [  # US EPA, 2024 revision: (C low, C high, I low, I high, category)
    (0.0, 9.0, 0, 50, "Good"),
    (9.1, 35.4, 51, 100, "Moderate"),
    (35.5, 55.4, 101, 150, "Unhealthy for Sensitive Groups"),
    (55.5, 125.4, 151, 200, "Unhealthy"),
    (125.5, 225.4, 201, 300, "Very Unhealthy"),
    (225.5, 325.4, 301, 500, "Hazardous"),
]


def _aqi(pm25: float) -> tuple[int, str, tuple[float, float, int, int]]:
    c = math.floor(pm25 * 10 + 1e-9) / 10
    for lo, hi, ilo, ihi, cat in _PM25_BREAKPOINTS:
        if c <= hi:
            c = max(c, lo)
            return round((ihi - ilo) / (hi - lo) * (c - lo) + ilo), cat, (lo, hi, ilo, ihi)
    return 500, "Hazardous", (225.5, 325.4, 301, 500)


def _pm25(ctx: ToolContext, sensor_id: str) -> float:
    return ctx.number(f"iot:pm25:{sensor_id}", 2.0, 48.0, 1)


@tool(
    domain="IoT",
    category="source",
    group="iot_air_quality",
    description="Awair latest air data: PM2.5, PM10, CO2, VOC and the Awair score.",
    params={
        "sensor_id": s.string("air monitor", AIR_SENSOR_ID, pattern="^sensor-"),
        "fahrenheit": s.boolean("report temperature in F (not used for air data)"),
    },
    required=["sensor_id"],
    returns=s.obj(
        {
            "timestamp": s.string(),
            "score": s.integer(minimum=0, maximum=100),
            "pm25": s.number("", PM25, minimum=0),
            "pm10": s.number(minimum=0),
            "co2": s.integer("ppm", minimum=0),
            "voc": s.integer("ppb", minimum=0),
        }
    ),
    preconditions=[_pre_exists("sensor_id", "air monitor")],
)
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


@tool(
    domain="IoT",
    category="processor",
    group="iot_air_quality",
    description="US EPA AQI from a PM2.5 concentration (2024 breakpoints).",
    params={"pm25": s.number("PM2.5, ug/m3", PM25, minimum=0, maximum=1000)},
    returns=s.obj(
        {
            "aqi": s.integer("", AQI, minimum=0, maximum=500),
            "category": s.string(),
            "breakpoint": s.obj(
                {
                    "c_low": s.number(),
                    "c_high": s.number(),
                    "i_low": s.integer(),
                    "i_high": s.integer(),
                }
            ),
        }
    ),
)
def pm25_to_aqi(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    aqi, cat, (clo, chi, ilo, ihi) = _aqi(args["pm25"])
    return {
        "aqi": aqi,
        "category": cat,
        "breakpoint": {"c_low": clo, "c_high": chi, "i_low": ilo, "i_high": ihi},
    }


@tool(
    domain="IoT",
    category="source",
    group="iot_air_quality",
    description="Indoor air quality index of a monitor, with the dominant pollutant.",
    params={"sensor_id": s.string("air monitor", AIR_SENSOR_ID, pattern="^sensor-")},
    returns=s.obj(
        {
            "sensor_id": s.string("", AIR_SENSOR_ID),
            "aqi": s.integer("", AQI, minimum=0, maximum=500),
            "category": s.string(),
            "dominant_pollutant": s.enum(["pm25"]),
            "pm25_ugm3": s.number("", PM25),
        }
    ),
    preconditions=[_pre_exists("sensor_id", "air monitor")],
)
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


alternatives(
    "iot_air_quality",
    "1-N",
    ["get_air_quality_index"],
    ["awair_latest_air_data", "pm25_to_aqi"],
    description="a monitor's AQI: ready-made, or raw PM2.5 then the EPA formula",
    output_kind=AQI,
)


# ==============================================================================================
# energy
# ==============================================================================================
_TARIFFS = {  # supplier, average energy rate USD/kWh
    "EDP-SIMPLE-PT": ("EDP Comercial", 0.2145),
    "XCEL-RES-CO": ("Xcel Energy", 0.1432),
    "AGILE-OCT-UK": ("Octopus Energy", 0.256),
}
_HOUR_SHAPE = [
    0.62,
    0.58,
    0.55,
    0.55,
    0.57,
    0.65,
    0.85,
    1.05,
    1.1,
    0.95,
    0.9,
    0.88,
    0.86,
    0.85,
    0.88,
    0.98,
    1.25,
    1.55,
    1.6,
    1.45,
    1.2,
    0.98,
    0.82,
    0.7,
]
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


_PERIOD = {
    "start_date": s.date("first day, inclusive"),
    "end_date": s.date("last day, inclusive"),
}


@tool(
    domain="IoT",
    category="source",
    group="iot_energy_cost",
    description="Emporia-style daily consumption of a meter over a date range.",
    params={"meter_id": s.string("meter", METER_ID, pattern="^meter-"), **_PERIOD},
    returns=s.obj(
        {
            "meter_id": s.string("", METER_ID),
            "unit": s.enum(["kWh"]),
            "daily": s.array(s.obj({"date": s.date(), "kwh": s.number("", ENERGY_KWH)})),
            "total_kwh": s.number("consumption over the range", ENERGY_KWH, minimum=0),
            "tariff_code": s.string("the meter's tariff", TARIFF),
        }
    ),
    preconditions=[_pre_exists("meter_id", "meter")],
)
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


@tool(
    domain="IoT",
    category="processor",
    group="iot_energy_cost",
    description="Price an amount of electricity on a tariff (energy charge only).",
    params={
        "kwh": s.number("energy used", ENERGY_KWH, minimum=0, maximum=1_000_000),
        "tariff_code": s.string("tariff", TARIFF, pattern="^[A-Z0-9-]+$"),
    },
    returns=s.obj(
        {
            "tariff_code": s.string("", TARIFF),
            "supplier": s.string(),
            "rate_usd_per_kwh": s.number("", USD_PER_KWH),
            "cost_usd": s.number("energy charge", USD, minimum=0),
        }
    ),
)
def price_energy(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    supplier, rate = _tariff("tariff_code", args["tariff_code"])
    return {
        "tariff_code": args["tariff_code"],
        "supplier": supplier,
        "rate_usd_per_kwh": rate,
        "cost_usd": _energy_cost(args["kwh"], rate),
    }


@tool(
    domain="IoT",
    category="source",
    group="iot_energy_cost",
    description="Green Button-style register reads: meter index at the start and end of a range.",
    params={"meter_id": s.string("meter", METER_ID, pattern="^meter-"), **_PERIOD},
    returns=s.obj(
        {
            "meter_id": s.string("", METER_ID),
            "reads": s.array(
                s.obj(
                    {
                        "read_type": s.enum(["opening", "closing"]),
                        "read_at": s.string(),
                        "register_kwh": s.number("cumulative kWh"),
                    }
                )
            ),
            "opening_kwh": s.number("register at the start of start_date", OPENING_READ),
            "closing_kwh": s.number("register at the end of end_date", CLOSING_READ),
            "tariff_code": s.string("the meter's tariff", TARIFF),
        }
    ),
    preconditions=[_pre_exists("meter_id", "meter")],
)
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


@tool(
    domain="IoT",
    category="processor",
    group="iot_energy_cost",
    description="Bill the consumption between two register reads on a tariff.",
    params={
        "opening_kwh": s.number("earlier register read", OPENING_READ, minimum=0),
        "closing_kwh": s.number("later register read", CLOSING_READ, minimum=0),
        "tariff_code": s.string("tariff", TARIFF, pattern="^[A-Z0-9-]+$"),
    },
    returns=s.obj(
        {
            "consumption_kwh": s.number("", ENERGY_KWH, minimum=0),
            "rate_usd_per_kwh": s.number("", USD_PER_KWH),
            "amount_due_usd": s.number("energy charge", USD, minimum=0),
        }
    ),
)
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


alternatives(
    "iot_energy_cost",
    "N-N",
    ["get_meter_usage", "price_energy"],
    ["get_meter_register_reads", "bill_register_reads"],
    description="electricity cost of a meter over a range: sum daily usage and price "
    "it, or difference two register reads and bill it",
    output_kind=USD,
)


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


_PRICE_ITEM = s.obj(
    {
        "hour": s.string("start of the hour", TIME, pattern="^[0-2][0-9]:00$"),
        "usd_per_kwh": s.number("", USD_PER_KWH, minimum=-1, maximum=10),
    }
)


@tool(
    domain="IoT",
    category="source",
    group="iot_cheapest_window",
    description="Octopus Agile-style hourly unit rates of a tariff for one day.",
    params={
        "tariff_code": s.string("tariff", TARIFF, pattern="^[A-Z0-9-]+$"),
        "date": s.date("day of the rates"),
    },
    returns=s.obj(
        {
            "tariff_code": s.string("", TARIFF),
            "date": s.date(),
            "prices": s.array(_PRICE_ITEM, "24 hourly rates", PRICE_LIST),
            "average_usd_per_kwh": s.number("", USD_PER_KWH),
        }
    ),
)
def get_energy_price_forecast(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    prices = _hourly(ctx, args["tariff_code"], args["date"])
    return {
        "tariff_code": args["tariff_code"],
        "date": args["date"],
        "prices": prices,
        "average_usd_per_kwh": round(sum(p["usd_per_kwh"] for p in prices) / 24, 4),
    }


@tool(
    domain="IoT",
    category="processor",
    group="iot_cheapest_window",
    description="Find the cheapest contiguous run of hours for a job of a given length.",
    params={
        "prices": s.array(
            _PRICE_ITEM, "hourly rates in time order", PRICE_LIST, min_items=1, max_items=48
        ),
        "duration_min": s.integer("job length", DURATION, minimum=1, maximum=1440),
    },
    returns=s.obj(
        {
            "start_time": s.string("", TIME),
            "end_time": s.string("", WINDOW_END),
            "average_usd_per_kwh": s.number("", USD_PER_KWH),
            "hours": s.integer(minimum=1),
        }
    ),
)
def pick_cheapest_window(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    w = _cheapest(args["prices"], args["duration_min"])
    return {
        "start_time": w["start"],
        "end_time": w["end"],
        "average_usd_per_kwh": w["avg"],
        "hours": w["hours"],
    }


@tool(
    domain="IoT",
    category="processor",
    group="iot_cheapest_window",
    description="Plan when to run an appliance on a tariff day: the cheapest start time.",
    params={
        "tariff_code": s.string("tariff", TARIFF, pattern="^[A-Z0-9-]+$"),
        "date": s.date("day to run"),
        "duration_min": s.integer("run length", DURATION, minimum=1, maximum=1440),
    },
    returns=s.obj(
        {
            "recommended_start": s.string("", TIME),
            "window_end": s.string("", WINDOW_END),
            "avg_rate_usd_per_kwh": s.number("", USD_PER_KWH),
            "saving_vs_peak_pct": s.number("", PERCENT, minimum=0, maximum=100),
        }
    ),
)
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


alternatives(
    "iot_cheapest_window",
    "1-N",
    ["plan_cheapest_run"],
    ["get_energy_price_forecast", "pick_cheapest_window"],
    description="the cheapest start time on a tariff day: planner, or fetch hourly "
    "rates then pick the window",
    output_kind=TIME,
)


# ==============================================================================================
# cameras
# ==============================================================================================
_LABELS = ["person", "car", "animal", "package"]


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


@tool(
    domain="IoT",
    category="source",
    group="iot_motion_events",
    description="Ring-style event history of a camera for a day, newest first.",
    params={
        "camera_id": s.string("camera", CAMERA_ID, pattern="^cam-"),
        "date": s.date("local day"),
    },
    returns=s.obj(
        {
            "camera_id": s.string("", CAMERA_ID),
            "date": s.date(),
            "events": s.array(
                s.obj(
                    {
                        "event_id": s.string("", EVENT_ID),
                        "kind": s.enum(["motion"]),
                        "detection": s.enum(_LABELS),
                        "created_at": s.string(),
                    }
                )
            ),
        }
    ),
    preconditions=[_pre_exists("camera_id", "camera")],
)
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


@tool(
    domain="IoT",
    category="source",
    group="iot_motion_events",
    description="Frigate NVR /api/events for a camera on a day (unix times, newest first).",
    params={
        "camera": s.string("camera", CAMERA_ID, pattern="^cam-"),
        "day": s.date("local day"),
        "has_clip": s.boolean("only events with a recording"),
    },
    required=["camera", "day"],
    returns=s.obj(
        {
            "events": s.array(
                s.obj(
                    {
                        "id": s.string("", EVENT_ID),
                        "label": s.enum(_LABELS),
                        "start_time": s.number("unix seconds"),
                        "end_time": s.number("unix seconds"),
                        "top_score": s.number(minimum=0, maximum=1),
                        "has_clip": s.boolean(),
                    }
                )
            ),
            "count": s.integer(minimum=0),
        }
    ),
    preconditions=[_pre_exists("camera", "camera")],
)
def nvr_search_events(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _device(ctx, "camera", args["camera"], "camera")
    tz = _home_tz(ctx, args["camera"])
    out = []
    for e in _events(ctx, args["camera"], args["day"]):
        start = _local_to_utc(args["day"], e["local_time"][11:16], tz).timestamp()
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


alternatives(
    "iot_motion_events",
    "1-1",
    ["cloud_camera_events"],
    ["nvr_search_events"],
    description="a camera's motion events from the cloud service or the local NVR",
    output_kind=EVENT_ID,
)


_EVENT_RE = re.compile(r"^evt-(cam-[a-z0-9-]+)-(\d{4})(\d{2})(\d{2})-(\d+)$")


@tool(
    domain="IoT",
    category="action",
    description="Create an expiring share link for a motion event's recording.",
    params={
        "event_id": s.string("event to share", EVENT_ID, pattern="^evt-cam-"),
        "expires_in_hours": s.integer("link lifetime", minimum=1, maximum=168),
        "notify_email": s.email("send the link to this address"),
    },
    required=["event_id"],
    returns=s.obj(
        {
            "link_id": s.string("", SHARE_LINK_ID),
            "share_url": s.string("", URL, fmt="uri"),
            "expires_in_hours": s.integer(minimum=1),
            "emailed_to": s.string("", EMAIL),
        },
        required=["link_id", "share_url", "expires_in_hours"],
    ),
    effects=[
        Effect(
            op="create",
            collection="iot_clip_links",
            key="link_id",
            fields={"event_id": "$arg.event_id", "url": "$output.share_url"},
        )
    ],
)
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


@tool(
    domain="IoT",
    category="source",
    group="iot_lock_state",
    description="August /locks/{id}/status: lock and door state, battery.",
    params={"lock_id": s.string("lock", LOCK_ID, pattern="^lock-")},
    returns=s.obj(
        {
            "LockID": s.string("", LOCK_ID),
            "LockName": s.string(),
            "status": s.enum(["locked", "unlocked", "unknown"], "", LOCK_STATE),
            "doorState": s.enum(["closed", "open", "unknown"]),
            "battery": s.number("0-1", minimum=0, maximum=1),
        }
    ),
    preconditions=[_pre_exists("lock_id", "lock")],
)
def august_get_lock(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    d, state = _lock_view(ctx, "lock_id", args["lock_id"])
    return {
        "LockID": args["lock_id"],
        "LockName": d["label"],
        "status": state,
        "doorState": "unknown" if state == "unknown" else "closed",
        "battery": round(_battery(ctx, args["lock_id"]) / 100, 2),
    }


@tool(
    domain="IoT",
    category="source",
    group="iot_lock_state",
    description="SmartThings device status of a lock: the 'lock' and 'battery' capabilities.",
    params={"deviceId": s.string("lock device", LOCK_ID, pattern="^lock-")},
    returns=s.obj(
        {
            "components": s.obj(
                {
                    "main": s.obj(
                        {
                            "lock": s.obj(
                                {
                                    "lock": s.obj(
                                        {
                                            "value": s.enum(
                                                ["locked", "unlocked", "unknown"], "", LOCK_STATE
                                            )
                                        }
                                    )
                                }
                            ),
                            "battery": s.obj(
                                {
                                    "battery": s.obj(
                                        {"value": s.integer("", PERCENT), "unit": s.string()}
                                    )
                                }
                            ),
                        }
                    )
                }
            )
        }
    ),
    preconditions=[
        Precondition(
            kind="exists",
            collection="iot_devices",
            arg="deviceId",
            description="the lock must be a registered device",
        )
    ],
)
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


alternatives(
    "iot_lock_state",
    "1-1",
    ["august_get_lock"],
    ["smartthings_lock_status"],
    description="a lock's state from the vendor cloud or from SmartThings",
    output_kind=LOCK_STATE,
)


@tool(
    domain="IoT",
    category="action",
    description="August remote operation: lock or unlock a lock.",
    params={
        "lock_id": s.string("lock", LOCK_ID, pattern="^lock-"),
        "operation": s.enum(["lock", "unlock"], "what to do", LOCK_OP),
    },
    returns=s.obj(
        {
            "LockID": s.string("", LOCK_ID),
            "status": s.enum(["locked", "unlocked"], "", LOCK_STATE),
            "info": s.obj({"action": s.string(), "changed": s.boolean()}),
        }
    ),
    preconditions=[_pre_online("lock_id", "lock")],
    effects=[
        Effect(
            op="update",
            collection="iot_devices",
            key="lock_id",
            fields={"lock_state": "$output.status"},
        )
    ],
)
def august_lock_operation(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    d = _device(ctx, "lock_id", args["lock_id"], "lock")
    new = "locked" if args["operation"] == "lock" else "unlocked"
    return {
        "LockID": args["lock_id"],
        "status": new,
        "info": {"action": args["operation"], "changed": d["lock_state"] != new},
    }


@tool(
    domain="IoT",
    category="action",
    description="Seam access_codes.create: program a keypad code on a lock, optionally time-bound.",
    params={
        "device_id": s.string("lock to program", LOCK_ID, pattern="^lock-"),
        "name": s.string("who the code is for", PERSON, min_len=1, max_len=40),
        "code": s.string("4-8 digits", PIN, pattern="^[0-9]{4,8}$"),
        "starts_at": s.string("start, ISO 8601", UTC_TS, fmt="date-time"),
        "ends_at": s.string("end, ISO 8601", UTC_TS, fmt="date-time"),
    },
    required=["device_id", "name", "code"],
    returns=s.obj(
        {
            "access_code": s.obj(
                {
                    "access_code_id": s.string("", ACCESS_CODE_ID),
                    "device_id": s.string("", LOCK_ID),
                    "name": s.string("", PERSON),
                    "code": s.string("", PIN),
                    "type": s.enum(["ongoing", "time_bound"]),
                    "status": s.enum(["setting"]),
                    "starts_at": s.string(),
                    "ends_at": s.string(),
                },
                required=["access_code_id", "device_id", "name", "code", "type", "status"],
            )
        }
    ),
    preconditions=[_pre_online("device_id", "lock")],
    effects=[
        Effect(
            op="create",
            collection="iot_access_codes",
            key="access_code.access_code_id",
            fields={
                "device_id": "$arg.device_id",
                "name": "$arg.name",
                "code": "$arg.code",
                "status": "set",
            },
        )
    ],
)
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


@tool(
    domain="IoT",
    category="action",
    description="Seam access_codes.delete: remove a keypad code from its lock.",
    params={"access_code_id": s.string("code to remove", ACCESS_CODE_ID, pattern="^ac-")},
    returns=s.obj(
        {
            "action_attempt": s.obj(
                {
                    "action_attempt_id": s.string(),
                    "action_type": s.enum(["DELETE_ACCESS_CODE"]),
                    "status": s.enum(["success"]),
                }
            )
        }
    ),
    preconditions=[
        Precondition(
            kind="field_equals",
            collection="iot_access_codes",
            arg="access_code_id",
            field="status",
            value="set",
            description="the access code must exist and still be set",
        )
    ],
    effects=[
        Effect(
            op="update",
            collection="iot_access_codes",
            key="access_code_id",
            fields={"status": "removed"},
        )
    ],
)
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
_PROGRAMS: dict[str, dict[str, tuple[int, float]]] = {
    "washer": {
        "LaundryCare.Washer.Program.Cotton": (160, 1.1),
        "LaundryCare.Washer.Program.EasyCare": (95, 0.65),
        "LaundryCare.Washer.Program.Mix": (60, 0.5),
        "LaundryCare.Washer.Program.Quick15": (15, 0.2),
    },
    "dishwasher": {
        "Dishcare.Dishwasher.Program.Eco50": (195, 0.85),
        "Dishcare.Dishwasher.Program.Auto2": (120, 1.2),
        "Dishcare.Dishwasher.Program.Quick45": (45, 0.8),
    },
    "oven": {
        "Cooking.Oven.Program.HeatingMode.HotAir": (60, 1.5),
        "Cooking.Oven.Program.HeatingMode.PizzaSetting": (25, 0.9),
        "Cooking.Oven.Program.HeatingMode.PreHeating": (10, 0.3),
    },
    "robot_vacuum": {
        "ConsumerProducts.CleaningRobot.Program.Cleaning.CleanAll": (75, 0.05),
        "ConsumerProducts.CleaningRobot.Program.Cleaning.CleanMap": (40, 0.03),
    },
}
_DEFAULT_PROGRAM = {t: next(iter(p)) for t, p in _PROGRAMS.items()}
_APPLIANCE_PAT = "^(washer|dishwasher|oven|robovac)-[a-z0-9-]+$"


def _active_run(ctx: ToolContext, appliance_id: str) -> tuple[str, dict[str, Any]] | None:
    for rid, run in sorted(ctx.state.records("iot_appliance_runs").items()):
        if run["appliance_id"] == appliance_id and run["status"] == "running":
            return rid, dict(run)
    return None


@tool(
    domain="IoT",
    category="source",
    description="Home Connect status of an appliance: operation state and active program.",
    params={"haId": s.string("appliance", APPLIANCE_ID, pattern=_APPLIANCE_PAT)},
    returns=s.obj(
        {
            "haId": s.string("", APPLIANCE_ID),
            "type": s.string(),
            "operationState": s.enum(["Ready", "Run", "Offline"]),
            "remoteStartAllowed": s.boolean(),
            "activeProgram": s.obj(
                {
                    "key": s.string("", PROGRAM_KEY),
                    "run_id": s.string("", RUN_ID),
                    "remaining_min": s.integer("", DURATION, minimum=0),
                }
            ),
            "availablePrograms": s.array(s.string("", PROGRAM_KEY)),
        },
        required=["haId", "type", "operationState", "remoteStartAllowed", "availablePrograms"],
    ),
    preconditions=[
        Precondition(
            kind="exists",
            collection="iot_devices",
            arg="haId",
            description="the appliance must be a registered device",
        )
    ],
)
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


@tool(
    domain="IoT",
    category="action",
    description="Home Connect PUT /programs/active: start a program, now or at a local time.",
    params={
        "haId": s.string("appliance", APPLIANCE_ID, pattern=_APPLIANCE_PAT),
        "program_key": s.string(
            "program (default: the appliance's main one)",
            PROGRAM_KEY,
            pattern="^[A-Za-z]+(\\.[A-Za-z0-9]+)+$",
        ),
        "options": s.obj(
            {
                "temperature_c": s.integer(
                    "oven temperature", TEMPERATURE, minimum=30, maximum=275
                ),
                "spin_rpm": s.enum([400, 800, 1200, 1400], "washer spin speed"),
            },
            "program options",
            required=[],
        ),
        "start_time": s.string(
            "delayed start, local HH:MM", TIME, pattern="^([01][0-9]|2[0-3]):[0-5][0-9]$"
        ),
    },
    required=["haId"],
    returns=s.obj(
        {
            "run_id": s.string("", RUN_ID),
            "haId": s.string("", APPLIANCE_ID),
            "program_key": s.string("", PROGRAM_KEY),
            "estimated_duration_min": s.integer("", DURATION, minimum=1),
            "estimated_energy_kwh": s.number("", ENERGY_KWH, minimum=0),
            "start_time": s.string("", TIME),
        },
        required=[
            "run_id",
            "haId",
            "program_key",
            "estimated_duration_min",
            "estimated_energy_kwh",
        ],
    ),
    preconditions=[_pre_online("haId", "appliance")],
    effects=[
        Effect(
            op="create",
            collection="iot_appliance_runs",
            key="run_id",
            fields={
                "appliance_id": "$arg.haId",
                "program_key": "$output.program_key",
                "status": "running",
            },
        )
    ],
)
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


@tool(
    domain="IoT",
    category="action",
    description="Home Connect DELETE /programs/active: stop a running program.",
    params={"run_id": s.string("run to stop", RUN_ID, pattern="^run-")},
    returns=s.obj(
        {
            "run_id": s.string("", RUN_ID),
            "status": s.enum(["stopped"]),
            "haId": s.string("", APPLIANCE_ID),
        }
    ),
    preconditions=[
        Precondition(
            kind="field_equals",
            collection="iot_appliance_runs",
            arg="run_id",
            field="status",
            value="running",
            description="the program run must exist and still be running",
        )
    ],
    effects=[
        Effect(
            op="update", collection="iot_appliance_runs", key="run_id", fields={"status": "stopped"}
        )
    ],
)
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


__all__ = ["DEVICE_ID", "HOME_ID", "LIGHT_ID", "METER_ID", "TARIFF", "THERMOSTAT_ID"]
