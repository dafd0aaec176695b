"""N-N group, Office: someone's first free half hour on a day."""

from __future__ import annotations

from typing import Any

from replan.env.corpus.groups import facts
from replan.env.corpus.registry import implementation
from replan.env.world import ToolContext


def _free_slot(ctx: ToolContext, email: str, date: str) -> str:
    busy = [ctx.number(f"busy:{email.lower()}:{date}:{h}", 0, 1) < 0.55 for h in range(18)]
    for i, b in enumerate(busy):  # half-hour slots from 08:00
        if not b:
            return f"{8 + i // 2:02d}:{30 * (i % 2):02d}"
    return "17:00"


@implementation
def graph_get_user(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    upn = args["userPrincipalName"].lower()
    return {"id": "gu:" + upn, "displayName": upn.split("@")[0].replace(".", " ").title()}


@implementation
def graph_find_meeting_times(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    day = facts.day("day", args["day"])
    slot = _free_slot(ctx, args["user_id"][3:], day)
    return {"meetingTimeSuggestions": [{"start": slot}], "emptySuggestionsReason": ""}


@implementation
def gcal_freebusy_query(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    date = facts.day("date", args["date"])
    return {"kind": "calendar#freeBusy", "query_token": f"fb|{args['calendar_id'].lower()}|{date}"}


@implementation
def gcal_first_gap(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _, email, date = args["token"].split("|", 2)
    facts.day("token", date)
    slot = _free_slot(ctx, email, date)
    h, m = map(int, slot.split(":"))
    return {"first_free": slot, "busy_blocks": (h - 8) * 2 + m // 30}
