"""Office: the seed tables and fact helpers that several sections read (one source per fact)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from replan.core import linre
from replan.env.corpus.data import SeedTables
from replan.env.world import ToolContext

SEEDS = SeedTables.load(__package__)  # seeds.json beside this module


OWNER = "alex.morgan@example.com"  # the account the office tools act for


#: resource name, name, e-mail, phone, title, department, city, chat user id, handle
CONTACTS = SEEDS.table("contacts", list[tuple[str, ...]])
CONTACT_TZ = SEEDS.table("contact_tz", dict[str, str])
CHAT_USERS = {c[2]: {"id": c[7], "name": c[8], "real_name": c[1], "city": c[6]} for c in CONTACTS}
CHAT_USER_BY_ID = {u["id"]: u for u in CHAT_USERS.values()}
BOT_USER = "U0REPLANBOT"

INBOX = SEEDS.table("inbox", dict[str, dict[str, list[str] | str]])

DOCS = SEEDS.table("docs", dict[str, tuple[str, str]])

SHEETS = SEEDS.table("sheets", dict[str, dict[str, Any]])

ROOMS = SEEDS.table("rooms", dict[str, dict[str, int | list[str] | str]])

DAY_START, DAY_END = 9 * 60, 17 * 60  # working hours of the calendar owner


def minutes(hhmm: str) -> int:
    h, m = hhmm[:5].split(":")
    return int(h) * 60 + int(m)


def hhmm(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def words(text: str) -> int:
    return len(linre.findall(r"\S+", text))


def state_or_404(ctx: ToolContext, collection: str, key: str) -> Mapping[str, Any]:
    rec = ctx.state.get(collection, key)
    assert rec is not None, f"{collection} {key} (guaranteed by the precondition)"
    return rec
