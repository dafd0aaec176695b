"""N-N groups: the helpers that several groups share."""

from __future__ import annotations

import datetime as _dt

from replan.core import linre
from replan.env.corpus.data import SeedTables
from replan.env.world import InvalidValue, ToolContext

SEEDS = SeedTables.load(__package__)  # seeds.json beside this module


VENDOR = "pth_vendor_name"
STATION = "pth_weather_station"


def slug(text: str) -> str:
    return linre.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def digits(ctx: ToolContext, key: str, n: int) -> str:
    return str(int(ctx.number(key, 10 ** (n - 1), 10**n - 1, 0)))


def day(param: str, date: str) -> str:
    try:
        _dt.date.fromisoformat(date)
    except ValueError as exc:
        raise InvalidValue(param, f"not a date: {date!r}") from exc
    return date
