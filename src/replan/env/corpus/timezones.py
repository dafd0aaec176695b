"""Time zones shared by the domains: standard offsets, daylight-saving rules, local <-> UTC.

General's clocks and converters and IoT's schedules both need the same zone rules, so they live
here (one place) instead of in one domain that the other reaches into. The table of zones is
``timezones.json``; DST switches apply at date granularity.
"""

from __future__ import annotations

import datetime as dt

from replan.env.corpus.data import SeedTables
from replan.env.world import InvalidValue

_SEEDS = SeedTables.load(__package__, "timezones.json")

# standard offset in minutes and daylight-saving rule (switches applied at date granularity)
TZ = _SEEDS.table("tz", dict[str, tuple[int, str | None]])
for _h in range(1, 13):  # nautical zones; note the POSIX sign: Etc/GMT-9 is UTC+9
    TZ[f"Etc/GMT-{_h}"] = (60 * _h, None)
    TZ[f"Etc/GMT+{_h}"] = (-60 * _h, None)


def sunday(year: int, month: int, n: int) -> dt.date:
    """The n-th Sunday of a month (n = -1: the last one)."""
    if n > 0:
        first = dt.date(year, month, 1)
        return first + dt.timedelta(days=(6 - first.weekday()) % 7 + 7 * (n - 1))
    nxt = dt.date(year + month // 12, month % 12 + 1, 1)
    last = nxt - dt.timedelta(days=1)
    return last - dt.timedelta(days=(last.weekday() + 1) % 7)


def in_dst(rule: str | None, d: dt.date) -> bool:
    y = d.year
    if rule == "EU":
        return sunday(y, 3, -1) <= d < sunday(y, 10, -1)
    if rule == "US":
        return sunday(y, 3, 2) <= d < sunday(y, 11, 1)
    if rule == "NZ":
        return not sunday(y, 4, 1) <= d < sunday(y, 9, -1)
    if rule == "AU":
        return not sunday(y, 4, 1) <= d < sunday(y, 10, 1)
    if rule == "CL":
        return not sunday(y, 4, 1) <= d < sunday(y, 9, 1)
    return False


def zone(param: str, name: str) -> tuple[int, str | None]:
    try:
        return TZ[name]
    except KeyError:
        raise InvalidValue(param, f"unknown time zone {name!r} (use an IANA id)") from None


def offset_min(tz: str, local_day: dt.date) -> tuple[int, int]:
    """(total offset, DST part) in minutes for ``tz`` on a local date."""
    std, rule = TZ[tz]
    dst = 60 if in_dst(rule, local_day) else 0
    return std + dst, dst


def fmt_offset(minutes: int) -> str:
    sign = "+" if minutes >= 0 else "-"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def local_to_utc(day: str, time: str, tz: str) -> dt.datetime:
    local = dt.datetime.fromisoformat(f"{day}T{time}")
    off, _ = offset_min(tz, local.date())
    return (local - dt.timedelta(minutes=off)).replace(tzinfo=dt.UTC)


def utc_to_local(instant: dt.datetime, tz: str) -> tuple[dt.datetime, int]:
    std, _ = TZ[tz]
    guess = instant + dt.timedelta(minutes=std)
    off, _ = offset_min(tz, guess.date())
    return (instant + dt.timedelta(minutes=off)).replace(tzinfo=None), off
