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

from replan.env.corpus.data import SeedTables
from replan.env.corpus.registry import implementation, initial_state
from replan.env.world import InvalidValue, ToolContext

_SEEDS = SeedTables.load(__package__)  # seeds.json beside this module


OWNER = "alex.morgan@example.com"  # the account the office tools act for

# -- fixed tables -------------------------------------------------------------------------------
#: resource name, name, e-mail, phone, title, department, city, chat user id, handle
_CONTACTS = _SEEDS.table("contacts", list[tuple[str, ...]])
_CONTACT_TZ = _SEEDS.table("contact_tz", dict[str, str])
_CHAT_USERS = {c[2]: {"id": c[7], "name": c[8], "real_name": c[1], "city": c[6]} for c in _CONTACTS}
_CHAT_USER_BY_ID = {u["id"]: u for u in _CHAT_USERS.values()}
BOT_USER = "U0REPLANBOT"

_INBOX = _SEEDS.table("inbox", dict[str, dict[str, list[str] | str]])

_DOCS = _SEEDS.table("docs", dict[str, tuple[str, str]])

_SHEETS = _SEEDS.table("sheets", dict[str, dict[str, Any]])

_ROOMS = _SEEDS.table("rooms", dict[str, dict[str, int | list[str] | str]])

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


@implementation
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


@implementation
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


@implementation
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
    ev = _state_or_404(ctx, "office_events", args["event_id"])
    who = args.get("send_updates", "all")
    guests = list(ev.get("attendees") or [])
    notified = (
        0 if who == "none" else sum(1 for g in guests if who == "all" or g not in _CHAT_USERS)
    )
    return {"id": args["event_id"], "status": "cancelled", "notified": notified}


# -- e-mail --------------------------------------------------------------------------------------
@implementation
def send_email(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    mid = ctx.new_id("msg").lower()
    return {"message_id": mid, "to": args["to"], "error_code": 0, "message": "OK"}


@implementation
def create_email_draft(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return {
        "draft_id": ctx.new_id("r").replace("-", "").lower(),
        "message": {"to": args["recipient"], "subject": args["subject"]},
    }


@implementation
def send_email_draft(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    mid = ctx.new_id("msg").lower()
    return {"id": mid, "thread_id": mid.replace("msg-", "thr-"), "label_ids": ["SENT"]}


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


@implementation
def search_mailbox(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    hits = _search_inbox(ctx, args["q"], args.get("label_ids", []))
    return {
        "messages": [{"id": mid, "thread_id": mid} for mid in hits[: args.get("max_results", 20)]],
        "result_size_estimate": len(hits),
    }


@implementation
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


@implementation
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


@implementation
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


@implementation
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
_WEEKDAYS = _SEEDS.table("weekdays", list[str])


@implementation
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


@implementation
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


@implementation
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


@implementation
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


# -- documents -------------------------------------------------------------------------------------


@implementation
def create_document(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    did = ctx.new_id("DOC")
    return {
        "document_id": did,
        "title": args["title"],
        "revision_id": "rev-1",
        "url": f"https://docs.example.com/d/{did}/edit",
    }


@implementation
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


@implementation
def get_document(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    doc = _state_or_404(ctx, "office_documents", args["document_id"])
    return {
        "document_id": args["document_id"],
        "title": doc["title"],
        "revision_id": doc.get("revision_id", "rev-1"),
        "body": {"content": doc["content"]},
    }


@implementation
def count_text_words(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    text = args["text"]
    return {
        "words": _words(text),
        "characters": len(text),
        "sentences": len(re.findall(r"[.!?。]+(\s|$)", text)),
    }


@implementation
def get_document_stats(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    text = _state_or_404(ctx, "office_documents", args["document_id"])["content"]
    return {
        "document_id": args["document_id"],
        "word_count": _words(text),
        "character_count": len(text),
        "paragraph_count": len([p for p in text.split("\n") if p.strip()]),
    }


@implementation
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


_EXPORT_TYPES = _SEEDS.table("export_types", dict[str, tuple[str, float]])


@implementation
def export_document(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    doc = _state_or_404(ctx, "office_documents", args["file_id"])
    ext, factor = _EXPORT_TYPES[args["mime_type"]]
    size = int(len(doc["content"].encode()) * factor) + {"pdf": 9000, "txt": 0, "docx": 4200}[ext]
    return {
        "export_link": f"https://docs.example.com/export/{args['file_id']}.{ext}",
        "size_bytes": max(1, size),
        "mime_type": args["mime_type"],
    }


@implementation
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


@implementation
def read_sheet_range(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    a1, values = _range_values(ctx, args["spreadsheet_id"], args["range"])
    if args.get("value_render_option", "FORMATTED_VALUE") == "FORMATTED_VALUE":
        values = [[_formatted(c) for c in row] for row in values]
    return {"range": a1, "major_dimension": "ROWS", "values": values}


@implementation
def sum_cell_values(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    total, good, bad = _sum(args["values"])
    return {"sum": total, "numeric_cells": good, "skipped_cells": bad}


@implementation
def workbook_sum(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _, values = _range_values(ctx, args["spreadsheet_id"], args["range"])
    total, good, _ = _sum(values)
    return {"value": total, "error": "", "cells_counted": good}


@implementation
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
@implementation
def create_todoist_task(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    tid = ctx.new_id("TSK")
    return {
        "id": tid,
        "content": args["content"],
        "due": {"date": args["due_date"], "is_recurring": False},
        "priority": args.get("priority", 1),
        "url": f"https://todo.example.com/task/{tid}",
    }


@implementation
def add_microsoft_todo(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return {
        "id": ctx.new_id("TSK"),
        "title": args["title"],
        "status": "notStarted",
        "importance": args.get("importance", "normal"),
        "dueDateTime": {"dateTime": f"{args['due_on']}T00:00:00", "timeZone": "UTC"},
    }


@implementation
def complete_task(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    left = sum(
        1
        for k, t in ctx.state.records("office_tasks").items()
        if t["status"] == "open" and k != args["task_id"]
    )
    return {"id": args["task_id"], "is_completed": True, "open_tasks_left": left}


@implementation
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


@implementation
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


@implementation
def open_slack_conversation(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    if args["users"] not in _CHAT_USER_BY_ID:
        raise InvalidValue("users", f"user_not_found: {args['users']}")
    cid = _dm_channel(args["users"])
    return {
        "ok": True,
        "already_open": ctx.state.get("office_chat_channels", cid) is not None,
        "channel": {"id": cid, "is_im": True},
    }


@implementation
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


@implementation
def send_slack_dm(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    u = _chat_user(args["email"])
    return {"ok": True, "channel": _dm_channel(u["id"]), "ts": _ts(ctx)}


@implementation
def add_slack_reaction(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    msg = _state_or_404(ctx, "office_chat_messages", args["timestamp"])
    if args.get("channel", msg["channel"]) != msg["channel"]:
        raise InvalidValue("channel", "message_not_found in this channel")
    have = list(msg.get("reactions") or [])
    if args["name"] in have:
        raise InvalidValue("name", "already_reacted")
    return {"ok": True, "channel": msg["channel"], "reactions": [*have, args["name"]]}


@implementation
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


@implementation
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
