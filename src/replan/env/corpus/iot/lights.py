"""IoT tools: lights (Philips Hue style)."""

from __future__ import annotations

from typing import Any

from replan.env.corpus.iot import facts
from replan.env.corpus.kinds import CORPUS_NOW
from replan.env.corpus.registry import implementation
from replan.env.world import InvalidValue, ToolContext

_GAMUTS = facts.SEEDS.table(
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
    d = facts.device(ctx, "light_id", args["light_id"], "light")
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
    d = facts.device(ctx, "light_id", args["light_id"], "light")
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
    d = facts.device(ctx, "light_id", args["light_id"], "light")
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


_DAYS = facts.SEEDS.table("days", list[str])


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
