"""Office: the start state of the domain's collections."""

from __future__ import annotations

from typing import Any

from replan.env.corpus.office import facts
from replan.env.corpus.office.facts import OWNER
from replan.env.corpus.registry import initial_state


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
            for c in facts.CONTACTS
        },
        "office_inbox": {mid: {**m, "labels": list(m["labels"])} for mid, m in facts.INBOX.items()},
        "office_documents": {
            did: {"title": t, "content": c, "status": "active", "owner": OWNER}
            for did, (t, c) in facts.DOCS.items()
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
            rid: {**r, "amenities": list(r["amenities"])} for rid, r in facts.ROOMS.items()
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
