"""General tools: reminders and timers (stateful)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from replan.env.corpus import timezones
from replan.env.corpus.general import facts
from replan.env.corpus.registry import implementation
from replan.env.world import ToolContext


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
    fires = facts.NOW + dt.timedelta(minutes=args["duration_min"])
    return {
        "timer_id": ctx.new_id("tmr"),
        "label": args.get("label", "Timer"),
        "fires_at": fires.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "status": "running",
    }


@implementation
def timer_cancel(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return {"timer_id": args["timer_id"], "status": "cancelled"}
