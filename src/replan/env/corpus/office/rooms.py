"""Office tools: meeting rooms."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from replan.env.corpus.office import facts
from replan.env.corpus.registry import implementation
from replan.env.world import InvalidValue, ToolContext


def _room_busy(ctx: ToolContext, room_id: str, date: str) -> list[tuple[int, int]]:
    return [
        (facts.minutes(b["start_time"]), facts.minutes(b["end_time"]))
        for b in ctx.state.records("office_room_bookings").values()
        if b["room_id"] == room_id and b["date"] == date and b["status"] == "confirmed"
    ]


def _free_rooms(
    ctx: ToolContext, city: str, date: str, span: tuple[int, int], seats: int, need: set[str]
) -> list[tuple[str, Mapping[str, Any]]]:
    """Rooms of a city free during ``span`` with enough seats and equipment, by room id."""
    return [
        (rid, room)
        for rid, room in sorted(ctx.state.records("office_rooms").items())
        if room["city"] == city
        and room["capacity"] >= seats
        and need <= set(room["amenities"])
        and not any(facts.overlaps(span, b) for b in _room_busy(ctx, rid, date))
    ]


def _span(start_time: str, duration: int) -> tuple[int, int]:
    start = facts.minutes(start_time)
    if start < 7 * 60 or start + duration > 22 * 60:
        raise InvalidValue("start_time", "rooms can be booked between 07:00 and 22:00")
    return start, start + duration


@implementation
def find_meeting_rooms(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    span = _span(args["start_time"], args["duration_min"])
    rooms = [
        {
            "room_id": rid,
            "name": room["name"],
            "capacity": room["capacity"],
            "floor": room["floor"],
            "amenities": list(room["amenities"]),
        }
        for rid, room in _free_rooms(
            ctx,
            args["city"],
            args["date"],
            span,
            args.get("min_capacity", 1),
            set(args.get("amenities", [])),
        )
    ]
    return {"rooms": rooms}


@implementation
def search_room_spaces(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    span = _span(args["start_time"], args["duration_min"])
    free = _free_rooms(
        ctx, args["location"], args["date"], span, args.get("capacity_min", 1), set()
    )
    return {
        "data": [
            {"id": rid, "name": room["name"], "capacity": room["capacity"], "is_available": True}
            for rid, room in free
        ],
        "paging": {"page": 1, "per_page": 50},
    }


@implementation
def book_meeting_room(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    span = _span(args["start_time"], args["duration_min"])
    for b in _room_busy(ctx, args["room_id"], args["date"]):
        if facts.overlaps(span, b):
            raise InvalidValue(
                "start_time",
                f"{args['room_id']} is already booked "
                f"{facts.hhmm(b[0])}-{facts.hhmm(b[1])} on {args['date']}",
            )
    return {
        "booking_id": ctx.new_id("RB"),
        "room_id": args["room_id"],
        "date": args["date"],
        "start_time": facts.hhmm(span[0]),
        "end_time": facts.hhmm(span[1]),
        "status": "confirmed",
    }


@implementation
def cancel_room_booking(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    b = facts.state_or_404(ctx, "office_room_bookings", args["booking_id"])
    return {"booking_id": args["booking_id"], "status": "cancelled", "room_id": b["room_id"]}
