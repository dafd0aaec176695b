"""IoT tools: locks."""

from __future__ import annotations

import datetime as dt
from typing import Any

from replan.env.corpus.iot import facts
from replan.env.corpus.registry import implementation
from replan.env.world import InvalidValue, ToolContext


def _lock_view(ctx: ToolContext, param: str, lock_id: str) -> tuple[dict[str, Any], str]:
    d = facts.device(ctx, param, lock_id, "lock")
    return d, d["lock_state"] if d["online"] else "unknown"


@implementation
def august_get_lock(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    d, state = _lock_view(ctx, "lock_id", args["lock_id"])
    return {
        "LockID": args["lock_id"],
        "LockName": d["label"],
        "status": state,
        "doorState": "unknown" if state == "unknown" else "closed",
        "battery": round(facts.battery(ctx, args["lock_id"]) / 100, 2),
    }


@implementation
def smartthings_lock_status(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _, state = _lock_view(ctx, "deviceId", args["deviceId"])
    return {
        "components": {
            "main": {
                "lock": {"lock": {"value": state}},
                "battery": {
                    "battery": {"value": facts.battery(ctx, args["deviceId"]), "unit": "%"}
                },
            }
        }
    }


@implementation
def august_lock_operation(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    d = facts.device(ctx, "lock_id", args["lock_id"], "lock")
    new = "locked" if args["operation"] == "lock" else "unlocked"
    return {
        "LockID": args["lock_id"],
        "status": new,
        "info": {"action": args["operation"], "changed": d["lock_state"] != new},
    }


@implementation
def seam_create_access_code(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    facts.device(ctx, "device_id", args["device_id"], "lock")
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
