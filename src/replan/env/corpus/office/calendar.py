"""Office tools: calendar: free/busy, slots, events."""

from __future__ import annotations

import math
from typing import Any

from replan.env.corpus.office import facts
from replan.env.corpus.registry import implementation
from replan.env.world import InvalidValue, ToolContext


def _busy_hours(ctx: ToolContext, date: str) -> list[int]:
    """The owner's pre-existing busy hours on a day (one or two whole hours)."""
    return sorted({ctx.pick(f"office:busy:{date}:{k}", list(range(9, 17))) for k in "ab"})


def _booked(ctx: ToolContext, date: str) -> list[tuple[int, int]]:
    out = []
    for ev in ctx.state.records("office_events").values():
        if ev.get("status") == "confirmed" and ev["start"][:10] == date:
            out.append((facts.minutes(ev["start"][11:]), facts.minutes(ev["end"][11:])))
    return out


def _free_slots(
    ctx: ToolContext,
    date: str,
    duration: int,
    not_before: int = facts.DAY_START,
    param: str = "date",
) -> list[dict[str, Any]]:
    """The first three free slots of ``duration`` minutes on ``date`` (every half hour)."""
    taken = [(h * 60, h * 60 + 60) for h in _busy_hours(ctx, date)] + _booked(ctx, date)
    out = []
    start = max(facts.DAY_START, math.ceil(not_before / 30) * 30)
    while start + duration <= facts.DAY_END and len(out) < 3:
        span = (start, start + duration)
        if not any(facts.overlaps(span, t) for t in taken):
            out.append(
                {
                    "slot_id": f"SLOT-{date.replace('-', '')}-{facts.hhmm(start).replace(':', '')}"
                    f"-{duration}",
                    "start": f"{date}T{facts.hhmm(start)}",
                    "end": f"{date}T{facts.hhmm(start + duration)}",
                }
            )
        start += 30
    if len(out) < 3:
        raise InvalidValue(param, f"fewer than three free {duration}-minute slots left on {date}")
    return out


@implementation
def find_free_slots(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    date = args["date"]
    earliest = facts.minutes(args["not_before"]) if "not_before" in args else facts.DAY_START
    slots = _free_slots(
        ctx, date, args["duration_min"], earliest, "not_before" if "not_before" in args else "date"
    )
    busy = [
        {"start": f"{date}T{h:02d}:00", "end": f"{date}T{h + 1:02d}:00"}
        for h in _busy_hours(ctx, date)
    ]
    return {"calendar_id": "primary", "slots": slots, "busy": busy}


@implementation
def suggest_meeting_times(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    slots = _free_slots(ctx, args["date"], args["meetingDurationMinutes"])
    people = args.get("attendees", [])
    out = []
    for rank, sl in enumerate(slots):
        # confidence drops for later slots and when invitees outside the directory are asked
        unknown = sum(1 for p in people if p not in facts.CHAT_USERS)
        out.append(
            {
                "slotId": sl["slot_id"],
                "confidence": max(0.0, 100.0 - 15 * rank - 10 * unknown),
                "meetingTimeSlot": {
                    "start": {"dateTime": sl["start"]},
                    "end": {"dateTime": sl["end"]},
                },
            }
        )
    return {"meetingTimeSuggestions": out, "emptySuggestionsReason": ""}


@implementation
def schedule_meeting(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    slot = facts.state_or_404(ctx, "office_calendar_slots", args["slot_id"])
    date = slot["start"][:10]
    span = (facts.minutes(slot["start"][11:]), facts.minutes(slot["end"][11:]))
    if any(facts.overlaps(span, b) for b in _booked(ctx, date)):
        raise InvalidValue("slot_id", f"slot {args['slot_id']} now overlaps another event")
    eid = ctx.new_id("evt").lower().replace("-", "")
    return {
        "id": eid,
        "status": "confirmed",
        "html_link": f"https://calendar.example.com/event?eid={eid}",
        "summary": args["summary"],
        "date": date,
        "start_time": slot["start"][11:16],
        "start": {"dateTime": slot["start"]},
        "end": {"dateTime": slot["end"]},
        "attendees": [
            {"email": a, "responseStatus": "needsAction"} for a in args.get("attendees", [])
        ],
    }


@implementation
def list_calendar_events(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    date = args["date"]
    items = sorted(
        (
            {"id": eid, "summary": ev["summary"], "start": ev["start"], "end": ev["end"]}
            for eid, ev in ctx.state.records("office_events").items()
            if ev.get("status") == "confirmed" and ev["start"][:10] == date
        ),
        key=lambda e: (e["start"], e["id"]),
    )
    busy = [
        {"start": f"{date}T{h:02d}:00", "end": f"{date}T{h + 1:02d}:00", "visibility": "private"}
        for h in _busy_hours(ctx, date)
    ]
    return {"items": items, "busy_blocks": busy if args.get("show_private", True) else []}


@implementation
def cancel_calendar_event(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    ev = facts.state_or_404(ctx, "office_events", args["event_id"])
    who = args.get("send_updates", "all")
    guests = list(ev.get("attendees") or [])
    notified = (
        0 if who == "none" else sum(1 for g in guests if who == "all" or g not in facts.CHAT_USERS)
    )
    return {"id": args["event_id"], "status": "cancelled", "notified": notified}
