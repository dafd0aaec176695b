"""Office: calendar, e-mail, contacts, documents, spreadsheets, tasks, chat and meeting rooms.

Translation and time-zone conversion live in the General domain; Office tools chain into them
through the shared ``text``, ``language`` and ``iana_timezone`` kinds (a mail body or a document
goes to a translator, a chat member's zone to a time converter).

Busy hours, mailbox search, sheet contents and room bookings each come from one helper, so two
providers (a free/busy search and a meeting-time suggester, messages and threads, a workbook SUM
and reading the range then adding it up, a room finder and a space search) report the same fact.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from replan.core.tools import Effect, Precondition
from replan.env.corpus.kinds import (
    CITY,
    DURATION,
    EMAIL,
    PERSON,
    PHONE,
    TEXT,
    TIME,
    URL,
    kind,
)
from replan.env.corpus.registry import alternatives, initial_state, s, tool
from replan.env.world import InvalidValue, ToolContext

# -- kinds ----------------------------------------------------------------------------------
SLOT = kind("calendar_slot_id", "a free calendar slot offered by a free/busy search")
EVENT = kind("calendar_event_id", "a calendar event")
MEETING_TITLE = kind(
    "meeting_title",
    "the title of a meeting",
    ["Q3 budget review", "Design sync", "Offsite planning", "1:1 check-in"],
)
EMAIL_LIST = kind(
    "email_list",
    "several e-mail addresses",
    [
        ["ana.silva@example.org", "kenji.mori@example.jp"],
        ["dana.reyes@example.com"],
        ["luc.tremblay@example.ca", "marta.nowak@example.pl"],
    ],
)
#: declared by the General domain (time-zone tools); chat profiles report a member's zone
TIMEZONE = "iana_timezone"
SUBJECT = kind(
    "email_subject",
    "an e-mail subject line",
    ["Q3 budget review", "Offsite logistics", "Invoice 4471", "Welcome aboard"],
)
DRAFT = kind("email_draft_id", "an unsent e-mail draft")
SENT = kind("sent_email_id", "the id of an e-mail that was sent")
INBOX_MSG = kind("inbox_message_id", "a received e-mail in the mailbox")
MAIL_THREAD = kind("mail_thread_id", "a conversation thread in the mailbox")
MAIL_QUERY = kind(
    "mail_query",
    "a mailbox search query (Gmail search operators)",
    ["from:ana.silva@example.org", "invoice", "offsite", "is:unread", "subject:onboarding"],
)
CONTACT = kind("contact_resource_name", "a contact in the address book")
DOC = kind(
    "document_id", "a document in the shared drive", ["DOC-Q3PLAN", "DOC-ONBOARD", "DOC-OFFSITE"]
)
DOC_TITLE = kind(
    "document_title",
    "the title of a document",
    ["Team offsite agenda", "Vendor comparison", "Release notes 4.2"],
)
DRIVE_QUERY = kind(
    "drive_query", "keywords to find a file in the drive", ["Q3 plan", "onboarding", "offsite"]
)
SHARE_ROLE = kind(
    "sharing_role", "an access level on a shared file", ["reader", "commenter", "writer"]
)
PERMISSION = kind("drive_permission_id", "a sharing permission on a drive file")
EXPORT_FORMAT = kind(
    "export_mime_type",
    "a file format to export a document to",
    [
        "application/pdf",
        "text/plain",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ],
)
WORDS = kind("text_word_count", "the number of words in a text")
SHEET = kind("spreadsheet_id", "a spreadsheet", ["SHEET-BUDGET26", "SHEET-SALESQ3"])
SHEET_RANGE = kind(
    "sheet_range", "a cell range in A1 notation", ["C2:C13", "D2:D9", "A1:D5", "B2:D4"]
)
CELLS = kind("cell_values", "a 2-D block of spreadsheet cell values, row by row")
RANGE_SUM = kind("range_sum", "the sum of the numeric cells of a spreadsheet range")
SHEET_ROW = kind(
    "sheet_row",
    "one row of cell values to append",
    [["2027-01", "Design", 4200, 5], ["West", "R. Okafor", 3, 18500]],
)
TASK_TITLE = kind(
    "task_title",
    "what a to-do item says",
    [
        "Send Q3 budget summary",
        "Book offsite venue",
        "Review vendor contract",
        "Prepare release notes",
    ],
)
TASK = kind("todo_task_id", "a to-do task", ["TSK-4101", "TSK-4102"])
CHANNEL = kind(
    "chat_channel_id",
    "a chat channel or direct-message conversation",
    ["C04GENERAL", "C05RELEASE", "C06DESIGN0"],
)
CHAT_USER = kind("chat_user_id", "a chat workspace member id")
CHAT_TS = kind("chat_message_ts", "the timestamp id of a chat message")
EMOJI = kind(
    "emoji_name", "a reaction emoji name", ["thumbsup", "white_check_mark", "eyes", "tada"]
)
ROOM = kind(
    "meeting_room_id",
    "a bookable meeting room",
    ["RM-LIS-4A", "RM-LIS-2B", "RM-DEN-BRD", "RM-OSA-7F", "RM-KRK-1C", "RM-AUS-3A"],
)
ROOM_BOOKING = kind("room_booking_id", "a meeting-room reservation")

OWNER = "alex.morgan@example.com"  # the account the office tools act for

# -- fixed tables -------------------------------------------------------------------------------
#: resource name, name, e-mail, phone, title, department, city, chat user id, handle
_CONTACTS = [
    (
        "people/c1001",
        "Ana Silva",
        "ana.silva@example.org",
        "+351211234567",
        "Finance Lead",
        "Finance",
        "Lisbon",
        "U0ANASILVA",
        "ana",
    ),
    (
        "people/c1002",
        "Kenji Mori",
        "kenji.mori@example.jp",
        "+81661234567",
        "Engineering Manager",
        "Platform",
        "Osaka",
        "U0KENJIMORI",
        "kenji",
    ),
    (
        "people/c1003",
        "Dana Reyes",
        "dana.reyes@example.com",
        "+13035550123",
        "Product Designer",
        "Design",
        "Denver",
        "U0DANAREYES",
        "dana.r",
    ),
    (
        "people/c1004",
        "Wanjiru Kamau",
        "wanjiru.k@example.co.ke",
        "+254201234567",
        "Sales Director",
        "Sales",
        "Nairobi",
        "U0WANJIRUK",
        "wanjiru",
    ),
    (
        "people/c1005",
        "Luc Tremblay",
        "luc.tremblay@example.ca",
        "+15145550188",
        "People Partner",
        "People",
        "Montreal",
        "U0LUCTREMB",
        "luc",
    ),
    (
        "people/c1006",
        "Marta Nowak",
        "marta.nowak@example.pl",
        "+48121234567",
        "QA Lead",
        "Platform",
        "Krakow",
        "U0MNOWAK00",
        "marta",
    ),
]
_CONTACT_TZ = {
    "Lisbon": "Europe/Lisbon",
    "Osaka": "Asia/Tokyo",
    "Denver": "America/Denver",
    "Nairobi": "Africa/Nairobi",
    "Montreal": "America/Toronto",
    "Krakow": "Europe/Warsaw",
}
_CHAT_USERS = {c[2]: {"id": c[7], "name": c[8], "real_name": c[1], "city": c[6]} for c in _CONTACTS}
_CHAT_USER_BY_ID = {u["id"]: u for u in _CHAT_USERS.values()}
BOT_USER = "U0REPLANBOT"

_INBOX = {
    "18c4f0a9e2b71d01": {
        "from": "ana.silva@example.org",
        "subject": "Q3 budget review",
        "body": "Hi Alex, the Q3 figures are in the budget sheet. Quarterly numbers look good. "
        "Can we review them on Thursday?",
        "date": "2026-11-30T08:12:00Z",
        "labels": ["INBOX", "IMPORTANT", "UNREAD"],
    },
    "18c4f1b2c3d40a02": {
        "from": "kenji.mori@example.jp",
        "subject": "Osaka offsite logistics",
        "body": "The hotel block for the offsite is confirmed for twelve people. "
        "Please confirm by Friday.",
        "date": "2026-11-28T23:40:00Z",
        "labels": ["INBOX"],
    },
    "18c4f2c7d9e51b03": {
        "from": "billing@northwind-supplies.example.com",
        "subject": "Invoice 4471 for November",
        "body": "Invoice 4471 for 1,250.00 USD is attached and due on 2026-12-15.",
        "date": "2026-11-27T10:05:00Z",
        "labels": ["INBOX", "UNREAD"],
    },
    "18c4f3d1a8f62c04": {
        "from": "dana.reyes@example.com",
        "subject": "Running late",
        "body": "Running ten minutes late.",
        "date": "2026-11-26T14:58:00Z",
        "labels": ["INBOX"],
    },
    "18c4f4e6b0a73d05": {
        "from": "luc.tremblay@example.ca",
        "subject": "Onboarding doc feedback",
        "body": "I left comments on the onboarding checklist, mostly small wording fixes. "
        "The laptop section needs an owner.",
        "date": "2026-11-25T09:30:00Z",
        "labels": ["INBOX", "STARRED"],
    },
}

_DOCS = {
    "DOC-Q3PLAN": (
        "Q3 plan",
        "Goals for the third quarter. Ship release 4.2 by September. "
        "Hire two platform engineers. Cut cloud spend by ten percent.\n"
        "Owners: Kenji for the release, Ana for the budget.",
    ),
    "DOC-ONBOARD": (
        "Onboarding checklist",
        "Day one: laptop, badge and accounts. "
        "Week one: meet the team, read the architecture notes, ship a small fix.\n"
        "Month one: own a feature end to end.",
    ),
    "DOC-OFFSITE": (
        "Offsite agenda Osaka",
        "Day one: strategy and roadmap review. "
        "Day two: team workshops and a dinner in Umeda.\n"
        "Travel: arrive the evening before, hotel near the station.",
    ),
}

_SHEETS: dict[str, dict[str, Any]] = {
    "SHEET-BUDGET26": {
        "title": "Budget 2026",
        "tab": "Budget",
        "rows": [
            ["Month", "Team", "Spend USD", "Headcount"],
            ["2026-07", "Design", 3800, 4],
            ["2026-07", "Platform", 9100, 9],
            ["2026-08", "Design", 4050, 4],
            ["2026-08", "Platform", 9420, 9],
            ["2026-09", "Design", 3975.5, 5],
            ["2026-09", "Platform", 9880, 10],
            ["2026-10", "Design", 4410, 5],
            ["2026-10", "Platform", 10150, 10],
            ["2026-11", "Design", 4290, 5],
            ["2026-11", "Platform", 10320.25, 11],
            ["2026-12", "Design", 4600, 5],
            ["2026-12", "Platform", 10980, 11],
        ],
    },
    "SHEET-SALESQ3": {
        "title": "Sales Q3",
        "tab": "Pipeline",
        "rows": [
            ["Region", "Rep", "Deals", "Revenue USD"],
            ["North", "W. Kamau", 7, 48200],
            ["North", "L. Tremblay", 4, 23150],
            ["South", "A. Silva", 6, 39875.5],
            ["South", "M. Nowak", 3, 17400],
            ["East", "K. Mori", 8, 61020],
            ["East", "D. Reyes", 5, 30990],
            ["West", "R. Okafor", 2, 11800],
            ["West", "J. Lindqvist", 6, 42310],
        ],
    },
}

_ROOMS = {
    "RM-LIS-4A": {
        "city": "Lisbon",
        "name": "Alfama",
        "capacity": 8,
        "floor": 4,
        "amenities": ["display", "whiteboard", "video"],
    },
    "RM-LIS-2B": {
        "city": "Lisbon",
        "name": "Belem",
        "capacity": 4,
        "floor": 2,
        "amenities": ["display"],
    },
    "RM-DEN-BRD": {
        "city": "Denver",
        "name": "Boardroom",
        "capacity": 16,
        "floor": 9,
        "amenities": ["display", "video", "phone"],
    },
    "RM-OSA-7F": {
        "city": "Osaka",
        "name": "Umeda",
        "capacity": 6,
        "floor": 7,
        "amenities": ["video", "whiteboard"],
    },
    "RM-KRK-1C": {
        "city": "Krakow",
        "name": "Wawel",
        "capacity": 10,
        "floor": 1,
        "amenities": ["display", "video"],
    },
    "RM-AUS-3A": {
        "city": "Austin",
        "name": "Congress",
        "capacity": 12,
        "floor": 3,
        "amenities": ["display", "video", "whiteboard"],
    },
}

_TIME_PATTERN = "^([01][0-9]|2[0-3]):[0-5][0-9]$"
_DOC_PATTERN = "^DOC-[A-Z0-9]{4,12}$"
_CHANNEL_PATTERN = "^[CD][0-9A-Z]{8,10}$"
_TS_PATTERN = r"^[0-9]{10}\.[0-9]{6}$"
_DAY_START, _DAY_END = 9 * 60, 17 * 60  # working hours of the calendar owner


# -- small helpers ------------------------------------------------------------------------------
def _minutes(hhmm: str) -> int:
    h, m = hhmm[:5].split(":")
    return int(h) * 60 + int(m)


def _hhmm(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def _words(text: str) -> int:
    return len(re.findall(r"\S+", text))


def _state_or_404(ctx: ToolContext, collection: str, key: str) -> Mapping[str, Any]:
    rec = ctx.state.get(collection, key)
    assert rec is not None, f"{collection} {key} (guaranteed by the precondition)"
    return rec


# -- calendar: free/busy, slots, events ------------------------------------------------------------
def _busy_hours(ctx: ToolContext, date: str) -> list[int]:
    """The owner's pre-existing busy hours on a day (one or two whole hours)."""
    return sorted({ctx.pick(f"office:busy:{date}:{k}", list(range(9, 17))) for k in "ab"})


def _booked(ctx: ToolContext, date: str) -> list[tuple[int, int]]:
    out = []
    for ev in ctx.state.records("office_events").values():
        if ev.get("status") == "confirmed" and ev["start"][:10] == date:
            out.append((_minutes(ev["start"][11:]), _minutes(ev["end"][11:])))
    return out


def _free_slots(
    ctx: ToolContext, date: str, duration: int, not_before: int = _DAY_START, param: str = "date"
) -> list[dict[str, Any]]:
    """The first three free slots of ``duration`` minutes on ``date`` (every half hour)."""
    taken = [(h * 60, h * 60 + 60) for h in _busy_hours(ctx, date)] + _booked(ctx, date)
    out = []
    start = max(_DAY_START, math.ceil(not_before / 30) * 30)
    while start + duration <= _DAY_END and len(out) < 3:
        span = (start, start + duration)
        if not any(_overlaps(span, t) for t in taken):
            out.append(
                {
                    "slot_id": f"SLOT-{date.replace('-', '')}-{_hhmm(start).replace(':', '')}"
                    f"-{duration}",
                    "start": f"{date}T{_hhmm(start)}",
                    "end": f"{date}T{_hhmm(start + duration)}",
                }
            )
        start += 30
    if len(out) < 3:
        raise InvalidValue(param, f"fewer than three free {duration}-minute slots left on {date}")
    return out


def _slot_effects() -> list[Effect]:
    return [
        Effect(
            op="create",
            collection="office_calendar_slots",
            key=f"slots.{i}.slot_id",
            fields={
                "start": f"$output.slots.{i}.start",
                "end": f"$output.slots.{i}.end",
                "status": "free",
            },
        )
        for i in range(3)
    ]


_DURATION_PARAM = s.integer("meeting length in minutes", DURATION, minimum=15, maximum=120)
_DURATION_PARAM["multipleOf"] = 15


@tool(
    domain="Office",
    category="source",
    group="free_slot",
    description="Free/busy search on the primary calendar: the first three open slots of a day.",
    params={
        "date": s.date("day to search"),
        "duration_min": _DURATION_PARAM,
        "not_before": s.string("earliest start, HH:MM", TIME, pattern=_TIME_PATTERN),
        "calendar_id": s.enum(["primary"], "calendar to search"),
    },
    required=["date", "duration_min"],
    returns=s.obj(
        {
            "calendar_id": s.string(),
            "slots": s.array(
                s.obj({"slot_id": s.string("", SLOT), "start": s.string(), "end": s.string()}),
                min_items=3,
                max_items=3,
            ),
            "busy": s.array(s.obj({"start": s.string(), "end": s.string()})),
        }
    ),
    effects=_slot_effects(),
)
def find_free_slots(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    date = args["date"]
    earliest = _minutes(args["not_before"]) if "not_before" in args else _DAY_START
    slots = _free_slots(
        ctx, date, args["duration_min"], earliest, "not_before" if "not_before" in args else "date"
    )
    busy = [
        {"start": f"{date}T{h:02d}:00", "end": f"{date}T{h + 1:02d}:00"}
        for h in _busy_hours(ctx, date)
    ]
    return {"calendar_id": "primary", "slots": slots, "busy": busy}


@tool(
    domain="Office",
    category="processor",
    group="free_slot",
    description="Suggest meeting times for a day, best first (Microsoft Graph findMeetingTimes).",
    params={
        "date": s.date("day of the meeting"),
        "meetingDurationMinutes": _DURATION_PARAM,
        "attendees": s.array(s.email(""), "invitees", EMAIL_LIST, min_items=1, max_items=20),
    },
    required=["date", "meetingDurationMinutes"],
    returns=s.obj(
        {
            "meetingTimeSuggestions": s.array(
                s.obj(
                    {
                        "slotId": s.string("", SLOT),
                        "confidence": s.number(minimum=0, maximum=100),
                        "meetingTimeSlot": s.obj(
                            {
                                "start": s.obj({"dateTime": s.string()}),
                                "end": s.obj({"dateTime": s.string()}),
                            }
                        ),
                    }
                ),
                min_items=3,
                max_items=3,
            ),
            "emptySuggestionsReason": s.string(),
        }
    ),
    effects=[
        Effect(
            op="create",
            collection="office_calendar_slots",
            key=f"meetingTimeSuggestions.{i}.slotId",
            fields={
                "start": f"$output.meetingTimeSuggestions.{i}.meetingTimeSlot.start.dateTime",
                "end": f"$output.meetingTimeSuggestions.{i}.meetingTimeSlot.end.dateTime",
                "status": "free",
            },
        )
        for i in range(3)
    ],
)
def suggest_meeting_times(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    slots = _free_slots(ctx, args["date"], args["meetingDurationMinutes"])
    people = args.get("attendees", [])
    out = []
    for rank, sl in enumerate(slots):
        # confidence drops for later slots and when invitees outside the directory are asked
        unknown = sum(1 for p in people if p not in _CHAT_USERS)
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


alternatives(
    "free_slot",
    "1-1",
    ["find_free_slots"],
    ["suggest_meeting_times"],
    description="free/busy search vs a meeting-time suggester over the same calendar",
    output_kind=SLOT,
)


@tool(
    domain="Office",
    category="action",
    description="Create a calendar event in a free slot and invite attendees (Google Calendar).",
    params={
        "slot_id": s.string("slot from a free/busy search", SLOT, pattern="^SLOT-"),
        "summary": s.string("event title", MEETING_TITLE, min_len=1, max_len=200),
        "attendees": s.array(s.email(""), "invitees", EMAIL_LIST, max_items=50),
        "description": s.string("agenda", TEXT, max_len=4000),
        "location": s.string("where", max_len=200),
    },
    required=["slot_id", "summary"],
    returns=s.obj(
        {
            "id": s.string("", EVENT),
            "status": s.enum(["confirmed"]),
            "html_link": s.string("", URL),
            "summary": s.string("", MEETING_TITLE),
            "date": s.date("day of the event"),
            "start_time": s.string("", TIME),
            "start": s.obj({"dateTime": s.string()}),
            "end": s.obj({"dateTime": s.string()}),
            "attendees": s.array(
                s.obj({"email": s.string("", EMAIL), "responseStatus": s.string()})
            ),
        }
    ),
    preconditions=[
        Precondition(
            kind="field_equals",
            collection="office_calendar_slots",
            arg="slot_id",
            field="status",
            value="free",
            description="the slot must have been offered and still be free",
        )
    ],
    effects=[
        Effect(
            op="update",
            collection="office_calendar_slots",
            key="slot_id",
            fields={"status": "booked", "event_id": "$output.id"},
        ),
        Effect(
            op="create",
            collection="office_events",
            key="id",
            fields={
                "summary": "$arg.summary",
                "start": "$output.start.dateTime",
                "end": "$output.end.dateTime",
                "status": "confirmed",
                "slot_id": "$arg.slot_id",
                "attendees": "$arg.attendees",
            },
        ),
    ],
)
def schedule_meeting(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    slot = _state_or_404(ctx, "office_calendar_slots", args["slot_id"])
    date = slot["start"][:10]
    span = (_minutes(slot["start"][11:]), _minutes(slot["end"][11:]))
    if any(_overlaps(span, b) for b in _booked(ctx, date)):
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


@tool(
    domain="Office",
    category="source",
    description="List the events of a day on the primary calendar, with private busy blocks.",
    params={
        "date": s.date("day to list"),
        "show_private": s.boolean("include private busy blocks"),
    },
    required=["date"],
    returns=s.obj(
        {
            "items": s.array(
                s.obj(
                    {
                        "id": s.string("", EVENT),
                        "summary": s.string("", MEETING_TITLE),
                        "start": s.string(),
                        "end": s.string(),
                    }
                )
            ),
            "busy_blocks": s.array(
                s.obj({"start": s.string(), "end": s.string(), "visibility": s.enum(["private"])})
            ),
        }
    ),
)
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


@tool(
    domain="Office",
    category="action",
    description="Cancel a calendar event and optionally notify its guests.",
    params={
        "event_id": s.string("event to cancel", EVENT, pattern="^[a-z0-9]{6,40}$"),
        "send_updates": s.enum(["all", "externalOnly", "none"], "who gets a cancellation"),
    },
    required=["event_id"],
    returns=s.obj(
        {
            "id": s.string("", EVENT),
            "status": s.enum(["cancelled"]),
            "notified": s.integer(minimum=0),
        }
    ),
    preconditions=[
        Precondition(
            kind="field_equals",
            collection="office_events",
            arg="event_id",
            field="status",
            value="confirmed",
            description="the event must exist and not be cancelled",
        )
    ],
    effects=[
        Effect(
            op="update", collection="office_events", key="event_id", fields={"status": "cancelled"}
        )
    ],
)
def cancel_calendar_event(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    ev = _state_or_404(ctx, "office_events", args["event_id"])
    who = args.get("send_updates", "all")
    guests = list(ev.get("attendees") or [])
    notified = (
        0 if who == "none" else sum(1 for g in guests if who == "all" or g not in _CHAT_USERS)
    )
    return {"id": args["event_id"], "status": "cancelled", "notified": notified}


# -- e-mail --------------------------------------------------------------------------------------
@tool(
    domain="Office",
    category="action",
    group="send_email",
    description="Send a transactional e-mail (Postmark style).",
    params={
        "to": s.email("recipient"),
        "subject": s.string("subject line", SUBJECT, min_len=1, max_len=200),
        "text_body": s.string("plain-text body", TEXT, min_len=1, max_len=20000),
        "cc": s.array(s.email(""), "copy to", EMAIL_LIST, max_items=50),
        "tag": s.string("message tag for analytics", max_len=100),
    },
    required=["to", "subject", "text_body"],
    returns=s.obj(
        {
            "message_id": s.string("", SENT),
            "to": s.string("", EMAIL),
            "error_code": s.integer(),
            "message": s.string(),
        }
    ),
    effects=[
        Effect(
            op="create",
            collection="office_sent_mail",
            key="message_id",
            fields={
                "to": "$arg.to",
                "subject": "$arg.subject",
                "body": "$arg.text_body",
                "via": "api",
            },
        )
    ],
)
def send_email(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    mid = ctx.new_id("msg").lower()
    return {"message_id": mid, "to": args["to"], "error_code": 0, "message": "OK"}


@tool(
    domain="Office",
    category="action",
    group="send_email",
    description="Save an e-mail draft in the mailbox (Gmail drafts.create).",
    params={
        "recipient": s.email("who the draft is addressed to"),
        "subject": s.string("subject line", SUBJECT, min_len=1, max_len=200),
        "body": s.string("message body", TEXT, min_len=1, max_len=20000),
    },
    returns=s.obj(
        {
            "draft_id": s.string("", DRAFT),
            "message": s.obj({"to": s.string("", EMAIL), "subject": s.string("", SUBJECT)}),
        }
    ),
    effects=[
        Effect(
            op="create",
            collection="office_drafts",
            key="draft_id",
            fields={
                "to": "$arg.recipient",
                "subject": "$arg.subject",
                "body": "$arg.body",
                "status": "draft",
            },
        )
    ],
)
def create_email_draft(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return {
        "draft_id": ctx.new_id("r").replace("-", "").lower(),
        "message": {"to": args["recipient"], "subject": args["subject"]},
    }


@tool(
    domain="Office",
    category="action",
    group="send_email",
    description="Send a saved draft (Gmail drafts.send); the draft is consumed.",
    params={"draft_id": s.string("draft to send", DRAFT, pattern="^r[0-9a-f]{8}$")},
    returns=s.obj(
        {"id": s.string("", SENT), "thread_id": s.string(), "label_ids": s.array(s.string())}
    ),
    preconditions=[
        Precondition(
            kind="field_equals",
            collection="office_drafts",
            arg="draft_id",
            field="status",
            value="draft",
            description="the draft must exist and not be sent yet",
        )
    ],
    effects=[
        Effect(
            op="update",
            collection="office_drafts",
            key="draft_id",
            fields={"status": "sent", "message_id": "$output.id"},
        ),
        Effect(
            op="create",
            collection="office_sent_mail",
            key="id",
            fields={"draft_id": "$arg.draft_id", "via": "draft"},
        ),
    ],
)
def send_email_draft(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    mid = ctx.new_id("msg").lower()
    return {"id": mid, "thread_id": mid.replace("msg-", "thr-"), "label_ids": ["SENT"]}


alternatives(
    "send_email",
    "1-N",
    ["send_email"],
    ["create_email_draft", "send_email_draft"],
    description="send directly, or save a draft then send it",
    output_kind=SENT,
)


def _mail_matches(msg: Mapping[str, Any], token: str) -> bool:
    low = token.lower()
    if ":" in low:
        op, val = low.split(":", 1)
        if op == "from":
            return val in msg["from"].lower()
        if op == "subject":
            return val in msg["subject"].lower()
        if op == "is":
            return {"unread": "UNREAD", "starred": "STARRED", "important": "IMPORTANT"}.get(
                val, "?"
            ) in msg["labels"]
        if op == "label":
            return val.upper() in msg["labels"]
    return low in f"{msg['from']} {msg['subject']} {msg['body']}".lower()


def _search_inbox(ctx: ToolContext, q: str, labels: list[str]) -> list[str]:
    """Ids of inbox messages matching every query token and label, newest first."""
    tokens = q.split()
    hits = [
        (msg["date"], mid)
        for mid, msg in ctx.state.records("office_inbox").items()
        if all(_mail_matches(msg, tk) for tk in tokens)
        and all(lb in msg["labels"] for lb in labels)
    ]
    return [mid for _, mid in sorted(hits, reverse=True)]


_LABEL_FILTER = s.array(
    s.enum(["INBOX", "IMPORTANT", "STARRED", "UNREAD"]), "only messages with all these labels"
)


@tool(
    domain="Office",
    category="source",
    group="mail_sender",
    description="Search the mailbox with Gmail operators (from:, subject:, is:unread, label:).",
    params={
        "q": s.string("search query", MAIL_QUERY, min_len=1, max_len=500),
        "label_ids": _LABEL_FILTER,
        "max_results": s.integer("page size", minimum=1, maximum=100),
    },
    required=["q"],
    returns=s.obj(
        {
            "messages": s.array(
                s.obj({"id": s.string("", INBOX_MSG), "thread_id": s.string("", MAIL_THREAD)})
            ),
            "result_size_estimate": s.integer(minimum=0),
        }
    ),
)
def search_mailbox(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    hits = _search_inbox(ctx, args["q"], args.get("label_ids", []))
    return {
        "messages": [{"id": mid, "thread_id": mid} for mid in hits[: args.get("max_results", 20)]],
        "result_size_estimate": len(hits),
    }


@tool(
    domain="Office",
    category="source",
    group="mail_sender",
    description="List conversation threads matching a query, newest first (Gmail threads.list).",
    params={
        "query": s.string("search query", MAIL_QUERY, min_len=1, max_len=500),
        "maxResults": s.integer("page size", minimum=1, maximum=500),
        "includeSpamTrash": s.boolean("also search spam and trash"),
    },
    required=["query"],
    returns=s.obj(
        {
            "threads": s.array(s.obj({"id": s.string("", MAIL_THREAD), "snippet": s.string()})),
            "resultSizeEstimate": s.integer(minimum=0),
        }
    ),
)
def list_mail_threads(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    hits = _search_inbox(ctx, args["query"], [])
    inbox = ctx.state.records("office_inbox")
    return {
        "threads": [
            {"id": mid, "snippet": inbox[mid]["body"][:80]}
            for mid in hits[: args.get("maxResults", 100)]
        ],
        "resultSizeEstimate": len(hits),
    }


@tool(
    domain="Office",
    category="source",
    group="mail_sender",
    description="Fetch a thread with its messages, oldest first (Gmail threads.get).",
    params={"thread_id": s.string("thread id", MAIL_THREAD, pattern="^[0-9a-f]{16}$")},
    returns=s.obj(
        {
            "id": s.string("", MAIL_THREAD),
            "messages": s.array(
                s.obj(
                    {
                        "id": s.string(),
                        "sender": s.string("", EMAIL),
                        "subject": s.string("", SUBJECT),
                        "snippet": s.string(),
                    }
                ),
                min_items=1,
            ),
        }
    ),
    preconditions=[
        Precondition(
            kind="exists", collection="office_inbox", arg="thread_id", description="no such thread"
        )
    ],
)
def get_mail_thread(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    tid = args["thread_id"]
    first = _state_or_404(ctx, "office_inbox", tid)
    msgs = [
        {
            "id": tid,
            "sender": first["from"],
            "subject": first["subject"],
            "snippet": first["body"][:80],
        }
    ]
    for mid, sent in sorted(ctx.state.records("office_sent_mail").items()):
        if sent.get("in_reply_to") == tid:
            msgs.append(
                {
                    "id": mid,
                    "sender": OWNER,
                    "subject": sent["subject"],
                    "snippet": sent["body"][:80],
                }
            )
    return {"id": tid, "messages": msgs}


_INBOX_EXISTS = Precondition(
    kind="exists",
    collection="office_inbox",
    arg="message_id",
    description="no such message in the mailbox",
)


@tool(
    domain="Office",
    category="source",
    group="mail_sender",
    description="Fetch one e-mail with headers and body (Gmail messages.get).",
    params={
        "message_id": s.string("message id", INBOX_MSG, pattern="^[0-9a-f]{16}$"),
        "format": s.enum(["full", "metadata", "minimal"], "how much to return"),
    },
    required=["message_id"],
    returns=s.obj(
        {
            "id": s.string("", INBOX_MSG),
            "thread_id": s.string("", MAIL_THREAD),
            "label_ids": s.array(s.string()),
            "snippet": s.string(),
            "payload": s.obj(
                {
                    "from": s.string("", EMAIL),
                    "subject": s.string("", SUBJECT),
                    "date": s.string(),
                    "body": s.string("", TEXT),
                },
                required=["from", "subject", "date"],
            ),
        }
    ),
    preconditions=[_INBOX_EXISTS],
)
def get_email_message(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    msg = _state_or_404(ctx, "office_inbox", args["message_id"])
    fmt = args.get("format", "full")
    payload: dict[str, Any] = {"from": msg["from"], "subject": msg["subject"], "date": msg["date"]}
    if fmt == "full":
        payload["body"] = msg["body"]
    return {
        "id": args["message_id"],
        "thread_id": args["message_id"],
        "label_ids": list(msg["labels"]),
        "snippet": "" if fmt == "minimal" else msg["body"][:80],
        "payload": payload,
    }


alternatives(
    "mail_sender",
    "N-N",
    ["search_mailbox", "get_email_message"],
    ["list_mail_threads", "get_mail_thread"],
    description="who sent the newest matching mail: via messages or via threads",
    output_kind=EMAIL,
)


@tool(
    domain="Office",
    category="action",
    description="Reply to a received e-mail in its thread.",
    params={
        "message_id": s.string("message to answer", INBOX_MSG, pattern="^[0-9a-f]{16}$"),
        "body": s.string("reply text", TEXT, min_len=1, max_len=20000),
        "reply_all": s.boolean("also answer the other recipients"),
    },
    required=["message_id", "body"],
    returns=s.obj(
        {
            "id": s.string("", SENT),
            "thread_id": s.string("", MAIL_THREAD),
            "to": s.string("", EMAIL),
            "subject": s.string("", SUBJECT),
        }
    ),
    preconditions=[_INBOX_EXISTS],
    effects=[
        Effect(
            op="create",
            collection="office_sent_mail",
            key="id",
            fields={
                "to": "$output.to",
                "subject": "$output.subject",
                "body": "$arg.body",
                "in_reply_to": "$arg.message_id",
                "via": "reply",
            },
        )
    ],
)
def reply_to_email(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    msg = _state_or_404(ctx, "office_inbox", args["message_id"])
    subject = msg["subject"] if msg["subject"].startswith("Re: ") else f"Re: {msg['subject']}"
    return {
        "id": ctx.new_id("msg").lower(),
        "thread_id": args["message_id"],
        "to": msg["from"],
        "subject": subject,
    }


_ACTION_CUES = re.compile(
    r"\b(please|can we|could you|needs?|confirm|review|send|book|"
    r"prepare|due|follow up|let me know)\b",
    re.IGNORECASE,
)
_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]


@tool(
    domain="Office",
    category="processor",
    description="Extract action items (with due hints) from an e-mail or message text.",
    params={"text": s.string("message text", TEXT, min_len=1, max_len=20000)},
    returns=s.obj(
        {
            "items": s.array(
                s.obj(
                    {
                        "task": s.string("imperative to-do text", TASK_TITLE),
                        "due_date": s.date("explicit due date, if the text names one"),
                        "due_weekday": s.string(),
                    },
                    required=["task"],
                )
            ),
            "count": s.integer(minimum=0),
        }
    ),
)
def extract_action_items(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    items = []
    for sentence in re.split(r"(?<=[.!?])\s+", args["text"].strip()):
        if not _ACTION_CUES.search(sentence):
            continue
        task = re.sub(
            r"^(please|hi \w+,|can we|could you)\s+", "", sentence.strip(), flags=re.IGNORECASE
        ).rstrip(".!? ")
        if not task:
            continue
        item: dict[str, Any] = {"task": (task[0].upper() + task[1:])[:120]}
        date = re.search(r"\b(20[0-9]{2}-[01][0-9]-[0-3][0-9])\b", sentence)
        if date:
            item["due_date"] = date.group(1)
        day = next((d for d in _WEEKDAYS if d in sentence.lower()), None)
        if day:
            item["due_weekday"] = day
        items.append(item)
    return {"items": items, "count": len(items)}


# -- contacts --------------------------------------------------------------------------------------
def _contact_by_name(ctx: ToolContext, name: str) -> Mapping[str, Any] | None:
    want = " ".join(name.lower().split())
    for rec in ctx.state.records("office_contacts").values():
        if rec["name"].lower() == want:
            return rec
    return None


@tool(
    domain="Office",
    category="source",
    group="contact_email",
    description="Find a colleague's e-mail address from their full name (directory lookup).",
    params={"full_name": s.string("first and last name", PERSON, min_len=3, max_len=100)},
    returns=s.obj(
        {
            "full_name": s.string("", PERSON),
            "email": s.string("", EMAIL),
            "confidence": s.integer(minimum=0, maximum=100),
            "department": s.string(),
        }
    ),
)
def find_email_address(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    rec = _contact_by_name(ctx, args["full_name"])
    if rec is None:
        raise InvalidValue("full_name", f"nobody named {args['full_name']!r} in the directory")
    return {
        "full_name": rec["name"],
        "email": rec["email"],
        "confidence": 99,
        "department": rec["department"],
    }


@tool(
    domain="Office",
    category="source",
    group="contact_email",
    description="Search the address book by name or e-mail (Google People searchContacts).",
    params={
        "query": s.string("name or e-mail prefix", PERSON, min_len=2, max_len=100),
        "page_size": s.integer("results per page", minimum=1, maximum=30),
    },
    required=["query"],
    returns=s.obj(
        {
            "results": s.array(
                s.obj(
                    {
                        "person": s.obj(
                            {
                                "resource_name": s.string("", CONTACT),
                                "display_name": s.string("", PERSON),
                            }
                        )
                    }
                )
            )
        }
    ),
)
def search_contacts(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    q = " ".join(args["query"].lower().split())
    hits = sorted(
        (rn, rec)
        for rn, rec in ctx.state.records("office_contacts").items()
        if q in rec["name"].lower() or rec["email"].startswith(q)
    )
    # exact name matches first, as the People API ranks them
    hits.sort(key=lambda h: h[1]["name"].lower() != q)
    return {
        "results": [
            {"person": {"resource_name": rn, "display_name": rec["name"]}}
            for rn, rec in hits[: args.get("page_size", 10)]
        ]
    }


@tool(
    domain="Office",
    category="source",
    group="contact_email",
    description="Read one contact: names, e-mail addresses, phones, organisation.",
    params={
        "resource_name": s.string("contact resource", CONTACT, pattern="^people/c[0-9]+$"),
        "person_fields": s.array(
            s.enum(["names", "emailAddresses", "phoneNumbers", "organizations"]),
            "fields to return (all by default)",
        ),
    },
    required=["resource_name"],
    returns=s.obj(
        {
            "resource_name": s.string("", CONTACT),
            "names": s.array(s.obj({"display_name": s.string("", PERSON)})),
            "email_addresses": s.array(s.obj({"value": s.string("", EMAIL), "type": s.string()})),
            "phone_numbers": s.array(s.obj({"value": s.string("", PHONE)})),
            "organizations": s.array(s.obj({"title": s.string(), "department": s.string()})),
            "city": s.string("", CITY),
        }
    ),
    preconditions=[
        Precondition(
            kind="exists",
            collection="office_contacts",
            arg="resource_name",
            description="no such contact",
        )
    ],
)
def get_contact(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    rec = _state_or_404(ctx, "office_contacts", args["resource_name"])
    fields = set(
        args.get("person_fields") or ["names", "emailAddresses", "phoneNumbers", "organizations"]
    )
    return {
        "resource_name": args["resource_name"],
        "names": [{"display_name": rec["name"]}] if "names" in fields else [],
        "email_addresses": (
            [{"value": rec["email"], "type": "work"}] if "emailAddresses" in fields else []
        ),
        "phone_numbers": [{"value": rec["phone"]}] if "phoneNumbers" in fields else [],
        "organizations": (
            [{"title": rec["title"], "department": rec["department"]}]
            if "organizations" in fields
            else []
        ),
        "city": rec["city"],
    }


alternatives(
    "contact_email",
    "1-N",
    ["find_email_address"],
    ["search_contacts", "get_contact"],
    description="directory e-mail finder vs searching the address book then reading the contact",
    output_kind=EMAIL,
)


# -- documents -------------------------------------------------------------------------------------
_DOC_ACTIVE = Precondition(
    kind="field_equals",
    collection="office_documents",
    arg="file_id",
    field="status",
    value="active",
    description="the document must exist and not be in the trash",
)


@tool(
    domain="Office",
    category="action",
    description="Create a document in the shared drive with initial text.",
    params={
        "title": s.string("document title", DOC_TITLE, min_len=1, max_len=200),
        "content": s.string("initial body text", TEXT, max_len=100000),
        "folder": s.enum(["My Drive", "Team Shared", "Archive"], "where to create it"),
    },
    required=["title", "content"],
    returns=s.obj(
        {
            "document_id": s.string("", DOC),
            "title": s.string("", DOC_TITLE),
            "revision_id": s.string(),
            "url": s.string("", URL),
        }
    ),
    effects=[
        Effect(
            op="create",
            collection="office_documents",
            key="document_id",
            fields={
                "title": "$arg.title",
                "content": "$arg.content",
                "status": "active",
                "owner": OWNER,
                "folder": "$arg.folder",
            },
        )
    ],
)
def create_document(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    did = ctx.new_id("DOC")
    return {
        "document_id": did,
        "title": args["title"],
        "revision_id": "rev-1",
        "url": f"https://docs.example.com/d/{did}/edit",
    }


@tool(
    domain="Office",
    category="action",
    description="Share a drive file with a person (Drive permissions.create).",
    params={
        "file_id": s.string("document to share", DOC, pattern=_DOC_PATTERN),
        "email_address": s.email("who gets access"),
        "role": s.enum(["reader", "commenter", "writer"], "access level", SHARE_ROLE),
        "send_notification_email": s.boolean("e-mail the person a link"),
        "email_message": s.string("note in the notification", TEXT, max_len=2000),
    },
    required=["file_id", "email_address", "role"],
    returns=s.obj(
        {
            "permission_id": s.string("", PERMISSION),
            "type": s.enum(["user"]),
            "role": s.string("", SHARE_ROLE),
            "email_address": s.string("", EMAIL),
        }
    ),
    preconditions=[_DOC_ACTIVE],
    effects=[
        Effect(
            op="create",
            collection="office_doc_permissions",
            key="permission_id",
            fields={"file_id": "$arg.file_id", "email": "$arg.email_address", "role": "$arg.role"},
        )
    ],
)
def share_document(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    doc = _state_or_404(ctx, "office_documents", args["file_id"])
    if args["email_address"] == doc.get("owner"):
        raise InvalidValue("email_address", "the owner already has full access")
    return {
        "permission_id": ctx.new_id("perm").lower(),
        "type": "user",
        "role": args["role"],
        "email_address": args["email_address"],
    }


_DOC_EXISTS = Precondition(
    kind="exists", collection="office_documents", arg="document_id", description="no such document"
)


@tool(
    domain="Office",
    category="source",
    group="doc_word_count",
    description="Read a document's title and body text (Docs documents.get).",
    params={"document_id": s.string("document", DOC, pattern=_DOC_PATTERN)},
    returns=s.obj(
        {
            "document_id": s.string("", DOC),
            "title": s.string("", DOC_TITLE),
            "revision_id": s.string(),
            "body": s.obj({"content": s.string("", TEXT)}),
        }
    ),
    preconditions=[_DOC_EXISTS],
)
def get_document(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    doc = _state_or_404(ctx, "office_documents", args["document_id"])
    return {
        "document_id": args["document_id"],
        "title": doc["title"],
        "revision_id": doc.get("revision_id", "rev-1"),
        "body": {"content": doc["content"]},
    }


@tool(
    domain="Office",
    category="processor",
    group="doc_word_count",
    description="Count words, characters and sentences of a text.",
    params={"text": s.string("text to measure", TEXT, min_len=1)},
    returns=s.obj(
        {
            "words": s.integer("", WORDS, minimum=0),
            "characters": s.integer(minimum=0),
            "sentences": s.integer(minimum=0),
        }
    ),
)
def count_text_words(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    text = args["text"]
    return {
        "words": _words(text),
        "characters": len(text),
        "sentences": len(re.findall(r"[.!?。]+(\s|$)", text)),
    }


@tool(
    domain="Office",
    category="source",
    group="doc_word_count",
    description="Statistics of a document: word, character and paragraph counts.",
    params={"document_id": s.string("document", DOC, pattern=_DOC_PATTERN)},
    returns=s.obj(
        {
            "document_id": s.string("", DOC),
            "word_count": s.integer("", WORDS, minimum=0),
            "character_count": s.integer(minimum=0),
            "paragraph_count": s.integer(minimum=0),
        }
    ),
    preconditions=[_DOC_EXISTS],
)
def get_document_stats(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    text = _state_or_404(ctx, "office_documents", args["document_id"])["content"]
    return {
        "document_id": args["document_id"],
        "word_count": _words(text),
        "character_count": len(text),
        "paragraph_count": len([p for p in text.split("\n") if p.strip()]),
    }


alternatives(
    "doc_word_count",
    "1-N",
    ["get_document_stats"],
    ["get_document", "count_text_words"],
    description="document statistics vs reading the text and counting its words",
    output_kind=WORDS,
)


@tool(
    domain="Office",
    category="source",
    description="Find drive files whose title or text contains all the keywords (Drive files.list).",
    params={
        "q": s.string("keywords", DRIVE_QUERY, min_len=1, max_len=200),
        "include_trashed": s.boolean("also search the trash"),
        "page_size": s.integer("results per page", minimum=1, maximum=100),
    },
    required=["q"],
    returns=s.obj(
        {
            "files": s.array(
                s.obj(
                    {
                        "id": s.string("", DOC),
                        "name": s.string("", DOC_TITLE),
                        "trashed": s.boolean(),
                    }
                )
            )
        }
    ),
)
def search_drive_files(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    words = args["q"].lower().split()
    files = []
    for did, doc in sorted(ctx.state.records("office_documents").items()):
        trashed = doc["status"] != "active"
        if trashed and not args.get("include_trashed", False):
            continue
        hay = f"{doc['title']} {doc['content']}".lower()
        if all(w in hay for w in words):
            # title hits rank first
            files.append((not all(w in doc["title"].lower() for w in words), did, doc, trashed))
    files.sort(key=lambda f: (f[0], f[1]))
    return {
        "files": [
            {"id": did, "name": doc["title"], "trashed": tr}
            for _, did, doc, tr in files[: args.get("page_size", 20)]
        ]
    }


_EXPORT_TYPES = {
    "application/pdf": ("pdf", 1.9),
    "text/plain": ("txt", 1.0),
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": ("docx", 3.4),
}


@tool(
    domain="Office",
    category="processor",
    description="Export a document to PDF, plain text or Word and get a download link.",
    params={
        "file_id": s.string("document", DOC, pattern=_DOC_PATTERN),
        "mime_type": s.enum(list(_EXPORT_TYPES), "export format", EXPORT_FORMAT),
    },
    returns=s.obj(
        {
            "export_link": s.string("", URL),
            "size_bytes": s.integer(minimum=1),
            "mime_type": s.string("", EXPORT_FORMAT),
        }
    ),
    preconditions=[_DOC_ACTIVE],
)
def export_document(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    doc = _state_or_404(ctx, "office_documents", args["file_id"])
    ext, factor = _EXPORT_TYPES[args["mime_type"]]
    size = int(len(doc["content"].encode()) * factor) + {"pdf": 9000, "txt": 0, "docx": 4200}[ext]
    return {
        "export_link": f"https://docs.example.com/export/{args['file_id']}.{ext}",
        "size_bytes": max(1, size),
        "mime_type": args["mime_type"],
    }


@tool(
    domain="Office",
    category="action",
    description="Move a document to the trash.",
    params={"file_id": s.string("document", DOC, pattern=_DOC_PATTERN)},
    returns=s.obj({"id": s.string("", DOC), "trashed": s.boolean()}),
    preconditions=[_DOC_ACTIVE],
    effects=[
        Effect(
            op="update", collection="office_documents", key="file_id", fields={"status": "trashed"}
        )
    ],
)
def trash_document(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return {"id": args["file_id"], "trashed": True}


# -- spreadsheets --------------------------------------------------------------------------------
def _col(letters: str) -> int:
    n = 0
    for ch in letters:
        n = n * 26 + ord(ch) - 64
    return n - 1


def _col_letters(i: int) -> str:
    out = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        out = chr(65 + r) + out
    return out


def _sheet(sid: str) -> dict[str, Any]:
    if sid not in _SHEETS:
        raise InvalidValue("spreadsheet_id", f"spreadsheet {sid!r} not found")
    return _SHEETS[sid]


def _sheet_rows(ctx: ToolContext, sid: str) -> list[list[Any]]:
    rows = [list(r) for r in _sheet(sid)["rows"]]
    # appended rows are keyed by their A1 range ("Budget!A14:D14"): the row number is in it
    appended = sorted(
        (int(key.split("!A", 1)[1].split(":", 1)[0]), rec["values"])
        for key, rec in ctx.state.records("office_sheet_rows").items()
        if rec["spreadsheet_id"] == sid
    )
    for row_no, values in appended:
        while len(rows) < row_no - 1:
            rows.append([])
        rows.append(list(values))
    return rows


def _parse_range(sid: str, rng: str) -> tuple[str, int, int, int, int]:
    tab = _sheet(sid)["tab"]
    if "!" in rng:
        name, rng = rng.split("!", 1)
        if name.strip("'") != tab:
            raise InvalidValue("range", f"spreadsheet {sid} has no tab {name!r} (it has {tab!r})")
    parts = rng.split(":")

    def cell(a1: str) -> tuple[int, int]:
        letters = a1.rstrip("0123456789")
        return _col(letters), int(a1[len(letters) :]) - 1

    (c0, r0), (c1, r1) = cell(parts[0]), cell(parts[-1])
    if c1 < c0 or r1 < r0:
        raise InvalidValue("range", f"range {rng!r} ends before it starts")
    return tab, r0, r1, c0, c1


def _range_values(ctx: ToolContext, sid: str, rng: str) -> tuple[str, list[list[Any]]]:
    tab, r0, r1, c0, c1 = _parse_range(sid, rng)
    rows = _sheet_rows(ctx, sid)
    values = [list(row[c0 : c1 + 1]) for row in rows[r0 : r1 + 1]]
    while values and not values[-1]:
        values.pop()  # the API omits trailing empty rows
    a1 = f"{tab}!{_col_letters(c0)}{r0 + 1}:{_col_letters(c1)}{r1 + 1}"
    return a1, values


def _numeric(cell: Any) -> float | None:
    if isinstance(cell, bool):
        return None
    if isinstance(cell, int | float):
        return float(cell)
    if isinstance(cell, str):
        txt = cell.strip().replace(",", "").lstrip("$")
        if re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", txt):
            return float(txt)
    return None


def _sum(values: list[list[Any]]) -> tuple[float, int, int]:
    nums = [_numeric(c) for row in values for c in row]
    good = [n for n in nums if n is not None]
    return round(math.fsum(good), 2), len(good), len(nums) - len(good)


def _formatted(cell: Any) -> Any:
    if isinstance(cell, int) and not isinstance(cell, bool):
        return f"{cell:,}"
    if isinstance(cell, float):
        return f"{cell:,.2f}"
    return cell


_CELL = {"type": ["string", "number"]}
_SHEET_PARAM = s.string("spreadsheet", SHEET, pattern="^SHEET-[A-Z0-9]{4,16}$")
_RANGE_PARAM = s.string(
    "A1 range, optionally prefixed by the tab name",
    SHEET_RANGE,
    pattern=r"^([A-Za-z0-9' ]+!)?[A-Z]{1,2}[1-9][0-9]{0,3}(:[A-Z]{1,2}[1-9][0-9]{0,3})?$",
)


@tool(
    domain="Office",
    category="source",
    group="range_sum",
    description="Read the cell values of a range (Sheets spreadsheets.values.get).",
    params={
        "spreadsheet_id": _SHEET_PARAM,
        "range": _RANGE_PARAM,
        "value_render_option": s.enum(["FORMATTED_VALUE", "UNFORMATTED_VALUE"], "number format"),
    },
    required=["spreadsheet_id", "range"],
    returns=s.obj(
        {
            "range": s.string("", SHEET_RANGE),
            "major_dimension": s.enum(["ROWS"]),
            "values": s.array(s.array(_CELL), "cell values by row", CELLS),
        }
    ),
)
def read_sheet_range(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    a1, values = _range_values(ctx, args["spreadsheet_id"], args["range"])
    if args.get("value_render_option", "FORMATTED_VALUE") == "FORMATTED_VALUE":
        values = [[_formatted(c) for c in row] for row in values]
    return {"range": a1, "major_dimension": "ROWS", "values": values}


@tool(
    domain="Office",
    category="processor",
    group="range_sum",
    description="Add up the numeric cells of a block of values; text cells are skipped.",
    params={"values": s.array(s.array(_CELL), "rows of cell values", CELLS)},
    returns=s.obj(
        {
            "sum": s.number("", RANGE_SUM),
            "numeric_cells": s.integer(minimum=0),
            "skipped_cells": s.integer(minimum=0),
        }
    ),
)
def sum_cell_values(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    total, good, bad = _sum(args["values"])
    return {"sum": total, "numeric_cells": good, "skipped_cells": bad}


@tool(
    domain="Office",
    category="processor",
    group="range_sum",
    description="Evaluate SUM over a range in the workbook (Graph workbook functions/sum).",
    params={"spreadsheet_id": _SHEET_PARAM, "range": _RANGE_PARAM},
    returns=s.obj(
        {
            "value": s.number("", RANGE_SUM),
            "error": s.string(),
            "cells_counted": s.integer(minimum=0),
        }
    ),
)
def workbook_sum(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _, values = _range_values(ctx, args["spreadsheet_id"], args["range"])
    total, good, _ = _sum(values)
    return {"value": total, "error": "", "cells_counted": good}


alternatives(
    "range_sum",
    "1-N",
    ["workbook_sum"],
    ["read_sheet_range", "sum_cell_values"],
    description="a SUM formula vs reading the range and adding the numbers up",
    output_kind=RANGE_SUM,
)


@tool(
    domain="Office",
    category="action",
    description="Append a row after the last row of a sheet (Sheets values.append).",
    params={
        "spreadsheet_id": _SHEET_PARAM,
        "values": s.array(_CELL, "cells of the new row", SHEET_ROW, min_items=1, max_items=26),
        "value_input_option": s.enum(["RAW", "USER_ENTERED"], "parse input like typed text"),
    },
    required=["spreadsheet_id", "values"],
    returns=s.obj(
        {
            "spreadsheet_id": s.string("", SHEET),
            "table_range": s.string("", SHEET_RANGE),
            "updates": s.obj(
                {
                    "updated_range": s.string("", SHEET_RANGE),
                    "updated_rows": s.integer(minimum=1),
                    "updated_cells": s.integer(minimum=1),
                    "updated_data": s.obj({"values": s.array(s.array(_CELL))}),
                }
            ),
        }
    ),
    effects=[
        Effect(
            op="create",
            collection="office_sheet_rows",
            key="updates.updated_range",
            fields={
                "spreadsheet_id": "$arg.spreadsheet_id",
                "values": "$output.updates.updated_data.values.0",
            },
        )
    ],
)
def append_sheet_row(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    sid = args["spreadsheet_id"]
    sheet = _sheet(sid)
    width = len(sheet["rows"][0])
    if len(args["values"]) > width:
        raise InvalidValue("values", f"the table has {width} columns, got {len(args['values'])}")
    row = list(args["values"])
    if args.get("value_input_option", "USER_ENTERED") == "USER_ENTERED":
        parsed = [_numeric(c) if isinstance(c, str) else None for c in row]
        row = [
            (int(p) if p is not None and p.is_integer() else p) if p is not None else c
            for c, p in zip(row, parsed, strict=True)
        ]
    row_no = len(_sheet_rows(ctx, sid)) + 1
    last = _col_letters(width - 1)
    rng = f"{sheet['tab']}!A{row_no}:{_col_letters(len(row) - 1)}{row_no}"
    return {
        "spreadsheet_id": sid,
        "table_range": f"{sheet['tab']}!A1:{last}{row_no - 1}",
        "updates": {
            "updated_range": rng,
            "updated_rows": 1,
            "updated_cells": len(row),
            "updated_data": {"values": [row]},
        },
    }


# -- tasks ------------------------------------------------------------------------------------
@tool(
    domain="Office",
    category="action",
    group="create_task",
    description="Create a task with a due date (Todoist REST API).",
    params={
        "content": s.string("task text", TASK_TITLE, min_len=1, max_len=500),
        "due_date": s.date("due day"),
        "priority": s.integer("1 (normal) to 4 (urgent)", minimum=1, maximum=4),
        "labels": s.array(s.string(pattern="^[a-z0-9_-]{1,30}$"), "labels", max_items=10),
    },
    required=["content", "due_date"],
    returns=s.obj(
        {
            "id": s.string("", TASK),
            "content": s.string("", TASK_TITLE),
            "due": s.obj({"date": s.date("due day"), "is_recurring": s.boolean()}),
            "priority": s.integer(minimum=1, maximum=4),
            "url": s.string("", URL),
        }
    ),
    effects=[
        Effect(
            op="create",
            collection="office_tasks",
            key="id",
            fields={
                "title": "$arg.content",
                "due_date": "$arg.due_date",
                "status": "open",
                "app": "todoist",
            },
        )
    ],
)
def create_todoist_task(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    tid = ctx.new_id("TSK")
    return {
        "id": tid,
        "content": args["content"],
        "due": {"date": args["due_date"], "is_recurring": False},
        "priority": args.get("priority", 1),
        "url": f"https://todo.example.com/task/{tid}",
    }


@tool(
    domain="Office",
    category="action",
    group="create_task",
    description="Add a to-do to a task list (Microsoft To Do style).",
    params={
        "title": s.string("to-do text", TASK_TITLE, min_len=1, max_len=255),
        "due_on": s.date("due day"),
        "importance": s.enum(["low", "normal", "high"], "importance"),
        "list_name": s.enum(["Tasks", "Work", "Errands"], "task list"),
    },
    required=["title", "due_on"],
    returns=s.obj(
        {
            "id": s.string("", TASK),
            "title": s.string("", TASK_TITLE),
            "status": s.enum(["notStarted"]),
            "importance": s.string(),
            "dueDateTime": s.obj({"dateTime": s.string(), "timeZone": s.string()}),
        }
    ),
    effects=[
        Effect(
            op="create",
            collection="office_tasks",
            key="id",
            fields={
                "title": "$arg.title",
                "due_date": "$arg.due_on",
                "status": "open",
                "app": "todo",
            },
        )
    ],
)
def add_microsoft_todo(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return {
        "id": ctx.new_id("TSK"),
        "title": args["title"],
        "status": "notStarted",
        "importance": args.get("importance", "normal"),
        "dueDateTime": {"dateTime": f"{args['due_on']}T00:00:00", "timeZone": "UTC"},
    }


alternatives(
    "create_task",
    "1-1",
    ["create_todoist_task"],
    ["add_microsoft_todo"],
    description="two to-do apps writing to the same task list",
    output_kind=TASK,
)


@tool(
    domain="Office",
    category="action",
    description="Mark an open task as done.",
    params={"task_id": s.string("task", TASK, pattern="^TSK-[0-9A-F]{4,8}$")},
    returns=s.obj(
        {
            "id": s.string("", TASK),
            "is_completed": s.boolean(),
            "open_tasks_left": s.integer("", minimum=0),
        }
    ),
    preconditions=[
        Precondition(
            kind="field_equals",
            collection="office_tasks",
            arg="task_id",
            field="status",
            value="open",
            description="the task must exist and still be open",
        )
    ],
    effects=[
        Effect(op="update", collection="office_tasks", key="task_id", fields={"status": "done"})
    ],
)
def complete_task(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    left = sum(
        1
        for k, t in ctx.state.records("office_tasks").items()
        if t["status"] == "open" and k != args["task_id"]
    )
    return {"id": args["task_id"], "is_completed": True, "open_tasks_left": left}


@tool(
    domain="Office",
    category="source",
    description="List tasks by status, optionally only those due before a day.",
    params={
        "status": s.enum(["open", "done", "all"], "which tasks"),
        "due_before": s.date("only tasks due strictly before this day"),
    },
    required=[],
    returns=s.obj(
        {
            "tasks": s.array(
                s.obj(
                    {
                        "id": s.string("", TASK),
                        "title": s.string("", TASK_TITLE),
                        "due_date": s.date("due day"),
                        "status": s.enum(["open", "done"]),
                    }
                )
            ),
            "count": s.integer(minimum=0),
        }
    ),
)
def list_tasks(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    want = args.get("status", "open")
    tasks = [
        {"id": k, "title": t["title"], "due_date": t["due_date"], "status": t["status"]}
        for k, t in ctx.state.records("office_tasks").items()
        if (want == "all" or t["status"] == want)
        and ("due_before" not in args or t["due_date"] < args["due_before"])
    ]
    tasks.sort(key=lambda t: (t["due_date"], t["id"]))
    return {"tasks": tasks, "count": len(tasks)}


# -- chat (Slack-like) -------------------------------------------------------------------------------
def _chat_user(email: str) -> dict[str, Any]:
    if email not in _CHAT_USERS:
        raise InvalidValue("email", f"users_not_found: no workspace member with e-mail {email}")
    return _CHAT_USERS[email]


def _ts(ctx: ToolContext) -> str:
    n = int(ctx.new_id("T")[2:], 16)
    return f"{1764600000 + n % 9000000}.{n % 1000000:06d}"


def _dm_channel(user_id: str) -> str:
    return "D" + user_id[1:]


@tool(
    domain="Office",
    category="source",
    group="direct_message",
    description="Find a chat workspace member by e-mail (Slack users.lookupByEmail).",
    params={"email": s.email("member's e-mail")},
    returns=s.obj(
        {
            "ok": s.boolean(),
            "user": s.obj(
                {
                    "id": s.string("", CHAT_USER),
                    "name": s.string(),
                    "real_name": s.string("", PERSON),
                    "tz": s.string("", TIMEZONE),
                }
            ),
        }
    ),
)
def lookup_slack_user(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    u = _chat_user(args["email"])
    return {
        "ok": True,
        "user": {
            "id": u["id"],
            "name": u["name"],
            "real_name": u["real_name"],
            "tz": _CONTACT_TZ[u["city"]],
        },
    }


@tool(
    domain="Office",
    category="action",
    group="direct_message",
    description="Open (or resume) a direct-message conversation with a member.",
    params={"users": s.string("member id", CHAT_USER, pattern="^U[0-9A-Z]{8,10}$")},
    returns=s.obj(
        {
            "ok": s.boolean(),
            "already_open": s.boolean(),
            "channel": s.obj({"id": s.string("", CHANNEL), "is_im": s.boolean()}),
        }
    ),
    effects=[
        Effect(
            op="create",
            collection="office_chat_channels",
            key="channel.id",
            fields={"name": "$arg.users", "is_im": True},
        )
    ],
)
def open_slack_conversation(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    if args["users"] not in _CHAT_USER_BY_ID:
        raise InvalidValue("users", f"user_not_found: {args['users']}")
    cid = _dm_channel(args["users"])
    return {
        "ok": True,
        "already_open": ctx.state.get("office_chat_channels", cid) is not None,
        "channel": {"id": cid, "is_im": True},
    }


@tool(
    domain="Office",
    category="action",
    group="direct_message",
    description="Post a message to a channel or DM, optionally in a thread (chat.postMessage).",
    params={
        "channel": s.string("channel or DM id", CHANNEL, pattern=_CHANNEL_PATTERN),
        "text": s.string("message text", TEXT, min_len=1, max_len=4000),
        "thread_ts": s.string("reply in this thread", CHAT_TS, pattern=_TS_PATTERN),
        "unfurl_links": s.boolean("expand link previews"),
    },
    required=["channel", "text"],
    returns=s.obj(
        {
            "ok": s.boolean(),
            "channel": s.string("", CHANNEL),
            "ts": s.string("", CHAT_TS),
            "message": s.obj({"text": s.string("", TEXT), "user": s.string("", CHAT_USER)}),
        }
    ),
    preconditions=[
        Precondition(
            kind="exists",
            collection="office_chat_channels",
            arg="channel",
            description="channel_not_found (open the DM first)",
        )
    ],
    effects=[
        Effect(
            op="create",
            collection="office_chat_messages",
            key="ts",
            fields={
                "channel": "$arg.channel",
                "text": "$arg.text",
                "user": BOT_USER,
                "thread_ts": "$arg.thread_ts",
                "reactions": [],
            },
        )
    ],
)
def post_slack_message(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    if "thread_ts" in args:
        parent = ctx.state.get("office_chat_messages", args["thread_ts"])
        if parent is None or parent["channel"] != args["channel"]:
            raise InvalidValue("thread_ts", "thread_not_found in this channel")
    return {
        "ok": True,
        "channel": args["channel"],
        "ts": _ts(ctx),
        "message": {"text": args["text"], "user": BOT_USER},
    }


@tool(
    domain="Office",
    category="action",
    group="direct_message",
    description="Send a direct message to a colleague by e-mail address (workflow step).",
    params={
        "email": s.email("recipient's e-mail"),
        "text": s.string("message text", TEXT, min_len=1, max_len=4000),
    },
    returns=s.obj(
        {"ok": s.boolean(), "channel": s.string("", CHANNEL), "ts": s.string("", CHAT_TS)}
    ),
    effects=[
        Effect(
            op="create",
            collection="office_chat_channels",
            key="channel",
            fields={"name": "$arg.email", "is_im": True},
        ),
        Effect(
            op="create",
            collection="office_chat_messages",
            key="ts",
            fields={
                "channel": "$output.channel",
                "text": "$arg.text",
                "user": BOT_USER,
                "reactions": [],
            },
        ),
    ],
)
def send_slack_dm(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    u = _chat_user(args["email"])
    return {"ok": True, "channel": _dm_channel(u["id"]), "ts": _ts(ctx)}


alternatives(
    "direct_message",
    "1-N",
    ["send_slack_dm"],
    ["lookup_slack_user", "open_slack_conversation", "post_slack_message"],
    description="one DM call vs user lookup, opening the DM and posting to it",
    output_kind=CHAT_TS,
)


@tool(
    domain="Office",
    category="action",
    description="Add an emoji reaction to a chat message (reactions.add).",
    params={
        "timestamp": s.string("message ts", CHAT_TS, pattern=_TS_PATTERN),
        "name": s.string("emoji name without colons", EMOJI, pattern="^[a-z0-9_+-]{1,40}$"),
        "channel": s.string(
            "channel of the message (checked if given)", CHANNEL, pattern=_CHANNEL_PATTERN
        ),
    },
    required=["timestamp", "name"],
    returns=s.obj(
        {
            "ok": s.boolean(),
            "channel": s.string("", CHANNEL),
            "reactions": s.array(s.string("", EMOJI)),
        }
    ),
    preconditions=[
        Precondition(
            kind="exists",
            collection="office_chat_messages",
            arg="timestamp",
            description="message_not_found",
        )
    ],
    effects=[
        Effect(
            op="update",
            collection="office_chat_messages",
            key="timestamp",
            fields={"reactions": "$output.reactions"},
        )
    ],
)
def add_slack_reaction(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    msg = _state_or_404(ctx, "office_chat_messages", args["timestamp"])
    if args.get("channel", msg["channel"]) != msg["channel"]:
        raise InvalidValue("channel", "message_not_found in this channel")
    have = list(msg.get("reactions") or [])
    if args["name"] in have:
        raise InvalidValue("name", "already_reacted")
    return {"ok": True, "channel": msg["channel"], "reactions": [*have, args["name"]]}


@tool(
    domain="Office",
    category="source",
    description="Read the latest messages of a channel, newest first (conversations.history).",
    params={
        "channel": s.string("channel id", CHANNEL, pattern=_CHANNEL_PATTERN),
        "limit": s.integer("messages to return", minimum=1, maximum=200),
    },
    required=["channel"],
    returns=s.obj(
        {
            "ok": s.boolean(),
            "channel": s.string("", CHANNEL),
            "messages": s.array(
                s.obj(
                    {
                        "ts": s.string("", CHAT_TS),
                        "user": s.string("", CHAT_USER),
                        "text": s.string("", TEXT),
                    }
                )
            ),
            "has_more": s.boolean(),
        }
    ),
    preconditions=[
        Precondition(
            kind="exists",
            collection="office_chat_channels",
            arg="channel",
            description="channel_not_found",
        )
    ],
)
def get_slack_channel_history(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    msgs = sorted(
        (
            (ts, m)
            for ts, m in ctx.state.records("office_chat_messages").items()
            if m["channel"] == args["channel"]
        ),
        key=lambda x: float(x[0]),
        reverse=True,
    )
    limit = args.get("limit", 20)
    return {
        "ok": True,
        "channel": args["channel"],
        "has_more": len(msgs) > limit,
        "messages": [{"ts": ts, "user": m["user"], "text": m["text"]} for ts, m in msgs[:limit]],
    }


# -- meeting rooms ---------------------------------------------------------------------------------
def _room_busy(ctx: ToolContext, room_id: str, date: str) -> list[tuple[int, int]]:
    return [
        (_minutes(b["start_time"]), _minutes(b["end_time"]))
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
        and not any(_overlaps(span, b) for b in _room_busy(ctx, rid, date))
    ]


def _span(start_time: str, duration: int) -> tuple[int, int]:
    start = _minutes(start_time)
    if start < 7 * 60 or start + duration > 22 * 60:
        raise InvalidValue("start_time", "rooms can be booked between 07:00 and 22:00")
    return start, start + duration


@tool(
    domain="Office",
    category="source",
    group="free_room",
    description="Find meeting rooms in an office that are free for a time window.",
    params={
        "city": s.string("office city", CITY, min_len=2),
        "date": s.date("day"),
        "start_time": s.string("start, HH:MM", TIME, pattern=_TIME_PATTERN),
        "duration_min": s.integer("length in minutes", DURATION, minimum=15, maximum=480),
        "min_capacity": s.integer("seats needed", minimum=1, maximum=50),
        "amenities": s.array(
            s.enum(["display", "whiteboard", "video", "phone"]), "required equipment"
        ),
    },
    required=["city", "date", "start_time", "duration_min"],
    returns=s.obj(
        {
            "rooms": s.array(
                s.obj(
                    {
                        "room_id": s.string("", ROOM),
                        "name": s.string(),
                        "capacity": s.integer(minimum=1),
                        "floor": s.integer(),
                        "amenities": s.array(s.string()),
                    }
                )
            )
        }
    ),
)
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


@tool(
    domain="Office",
    category="source",
    group="free_room",
    description="Search bookable spaces available at a time (Robin workplace API style).",
    params={
        "location": s.string("office city", CITY, min_len=2),
        "date": s.date("day"),
        "start_time": s.string("start, HH:MM", TIME, pattern=_TIME_PATTERN),
        "duration_min": s.integer("length in minutes", DURATION, minimum=15, maximum=480),
        "capacity_min": s.integer("seats needed", minimum=1, maximum=50),
    },
    required=["location", "date", "start_time", "duration_min"],
    returns=s.obj(
        {
            "data": s.array(
                s.obj(
                    {
                        "id": s.string("", ROOM),
                        "name": s.string(),
                        "capacity": s.integer(minimum=1),
                        "is_available": s.boolean(),
                    }
                )
            ),
            "paging": s.obj({"page": s.integer(minimum=1), "per_page": s.integer(minimum=1)}),
        }
    ),
)
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


alternatives(
    "free_room",
    "1-1",
    ["find_meeting_rooms"],
    ["search_room_spaces"],
    description="room finder vs workplace space search over the same bookings",
    output_kind=ROOM,
)


@tool(
    domain="Office",
    category="action",
    description="Reserve a meeting room for a time window.",
    params={
        "room_id": s.string("room", ROOM, pattern="^RM-[A-Z]{3}-[A-Z0-9]{1,4}$"),
        "date": s.date("day"),
        "start_time": s.string("start, HH:MM", TIME, pattern=_TIME_PATTERN),
        "duration_min": s.integer("length in minutes", DURATION, minimum=15, maximum=480),
        "organizer": s.email("who books the room"),
        "title": s.string("what the room is for", MEETING_TITLE, max_len=200),
    },
    required=["room_id", "date", "start_time", "duration_min", "organizer"],
    returns=s.obj(
        {
            "booking_id": s.string("", ROOM_BOOKING),
            "room_id": s.string("", ROOM),
            "date": s.date("day"),
            "start_time": s.string("", TIME),
            "end_time": s.string("", TIME),
            "status": s.enum(["confirmed"]),
        }
    ),
    preconditions=[
        Precondition(
            kind="exists",
            collection="office_rooms",
            arg="room_id",
            description="no such meeting room",
        )
    ],
    effects=[
        Effect(
            op="create",
            collection="office_room_bookings",
            key="booking_id",
            fields={
                "room_id": "$arg.room_id",
                "date": "$arg.date",
                "start_time": "$output.start_time",
                "end_time": "$output.end_time",
                "organizer": "$arg.organizer",
                "status": "confirmed",
            },
        )
    ],
)
def book_meeting_room(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    span = _span(args["start_time"], args["duration_min"])
    for b in _room_busy(ctx, args["room_id"], args["date"]):
        if _overlaps(span, b):
            raise InvalidValue(
                "start_time",
                f"{args['room_id']} is already booked "
                f"{_hhmm(b[0])}-{_hhmm(b[1])} on {args['date']}",
            )
    return {
        "booking_id": ctx.new_id("RB"),
        "room_id": args["room_id"],
        "date": args["date"],
        "start_time": _hhmm(span[0]),
        "end_time": _hhmm(span[1]),
        "status": "confirmed",
    }


@tool(
    domain="Office",
    category="action",
    description="Cancel a meeting-room reservation and release the room.",
    params={"booking_id": s.string("reservation", ROOM_BOOKING, pattern="^RB-[0-9A-F]{4,8}$")},
    returns=s.obj(
        {
            "booking_id": s.string("", ROOM_BOOKING),
            "status": s.enum(["cancelled"]),
            "room_id": s.string("", ROOM),
        }
    ),
    preconditions=[
        Precondition(
            kind="field_equals",
            collection="office_room_bookings",
            arg="booking_id",
            field="status",
            value="confirmed",
            description="the booking must exist and be confirmed",
        )
    ],
    effects=[
        Effect(
            op="update",
            collection="office_room_bookings",
            key="booking_id",
            fields={"status": "cancelled"},
        )
    ],
)
def cancel_room_booking(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    b = _state_or_404(ctx, "office_room_bookings", args["booking_id"])
    return {"booking_id": args["booking_id"], "status": "cancelled", "room_id": b["room_id"]}


# -- initial state ----------------------------------------------------------------------------
@initial_state
def _office_state(seed: int) -> dict[str, dict[str, dict[str, Any]]]:
    # contacts, mailbox, drive, tasks, chat and rooms exist from the start; slots, events,
    # drafts, sent mail and bookings only come from tools. One booking sits on a day that no
    # date example names, so it only matters for tasks that look for it.
    return {
        "office_contacts": {
            c[0]: {
                "name": c[1],
                "email": c[2],
                "phone": c[3],
                "title": c[4],
                "department": c[5],
                "city": c[6],
            }
            for c in _CONTACTS
        },
        "office_inbox": {mid: {**m, "labels": list(m["labels"])} for mid, m in _INBOX.items()},
        "office_documents": {
            did: {"title": t, "content": c, "status": "active", "owner": OWNER}
            for did, (t, c) in _DOCS.items()
        },
        "office_tasks": {
            "TSK-4101": {
                "title": "Send Q3 budget summary",
                "due_date": "2026-12-03",
                "status": "open",
                "app": "todoist",
            },
            "TSK-4102": {
                "title": "Book offsite venue",
                "due_date": "2026-12-10",
                "status": "open",
                "app": "todoist",
            },
            "TSK-4103": {
                "title": "Renew software licences",
                "due_date": "2026-11-20",
                "status": "done",
                "app": "todo",
            },
        },
        "office_chat_channels": {
            "C04GENERAL": {"name": "general", "is_im": False},
            "C05RELEASE": {"name": "eng-release", "is_im": False},
            "C06DESIGN0": {"name": "design", "is_im": False},
        },
        "office_chat_messages": {
            "1764500000.000100": {
                "channel": "C04GENERAL",
                "user": "U0ANASILVA",
                "text": "Quarterly numbers look good.",
                "reactions": [],
            },
            "1764500600.000200": {
                "channel": "C05RELEASE",
                "user": "U0KENJIMORI",
                "text": "Release 4.2 is tagged; please verify staging.",
                "reactions": [],
            },
            "1764501200.000300": {
                "channel": "C04GENERAL",
                "user": "U0DANAREYES",
                "text": "Running ten minutes late.",
                "reactions": [],
            },
        },
        "office_rooms": {
            rid: {**r, "amenities": list(r["amenities"])} for rid, r in _ROOMS.items()
        },
        "office_room_bookings": {
            "RB-0001": {
                "room_id": "RM-LIS-4A",
                "date": "2026-12-04",
                "start_time": "08:00",
                "end_time": "09:00",
                "organizer": "ana.silva@example.org",
                "status": "confirmed",
            },
        },
    }


__all__ = ["DOC", "SLOT", "TASK"]
