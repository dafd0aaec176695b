"""IoT tools: homes and devices."""

from __future__ import annotations

from typing import Any

from replan.env.corpus.iot import facts
from replan.env.corpus.registry import implementation
from replan.env.world import ToolContext


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
        out["battery_pct"] = facts.battery(ctx, args["device_id"])
    return out
