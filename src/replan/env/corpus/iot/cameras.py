"""IoT tools: cameras."""

from __future__ import annotations

import datetime as dt
from typing import Any

from replan.core import linre
from replan.env.corpus import timezones
from replan.env.corpus.iot import facts
from replan.env.corpus.registry import implementation
from replan.env.world import InvalidValue, ToolContext

_LABELS = facts.SEEDS.table("labels", list[str])


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
    return facts.HOMES[d["home_id"]]["timezone"]


@implementation
def cloud_camera_events(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    facts.device(ctx, "camera_id", args["camera_id"], "camera")
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
    facts.device(ctx, "camera", args["camera"], "camera")
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


_EVENT_RE = linre.compile(r"^evt-(cam-[a-z0-9-]+)-(\d{4})(\d{2})(\d{2})-(\d+)$")


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
