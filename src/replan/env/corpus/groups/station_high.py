"""N-N group, IoT: the day's high at a home weather station."""

from __future__ import annotations

from typing import Any

from replan.env.corpus.groups import facts
from replan.env.corpus.groups.facts import STATION
from replan.env.corpus.kinds import KINDS
from replan.env.corpus.registry import implementation
from replan.env.world import InvalidValue, ToolContext


def _station(param: str, name: str) -> str:
    for st in KINDS[STATION].examples:
        if st.lower() == name.strip().lower():
            return st
    raise InvalidValue(param, f"no station named {name!r}")


def _high(ctx: ToolContext, station: str, date: str) -> float:
    return ctx.number(f"wx:{station}:{date}:high", 17.0, 23.0, 1)


@implementation
def netatmo_get_stations(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    st = _station("station_name", args["station_name"])
    mac = "02:00:00:" + ":".join(f"{ord(c) % 100:02d}" for c in st[:3])
    return {"devices": [{"module_id": mac, "name": st}]}


@implementation
def netatmo_get_measure(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    st = next(
        (
            x
            for x in KINDS[STATION].examples
            if "02:00:00:" + ":".join(f"{ord(c) % 100:02d}" for c in x[:3]) == args["module_id"]
        ),
        None,
    )
    if st is None:
        raise InvalidValue("module_id", f"no module {args['module_id']}")
    return {
        "max_temp": _high(ctx, st, facts.day("date_begin", args["date_begin"])),
        "scale": "1day",
    }


@implementation
def weatherlink_stations(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    st = _station("station_label", args["station_label"])
    return {"stations": [{"station_id": 71000 + list(KINDS[STATION].examples).index(st)}]}


@implementation
def weatherlink_daily_summary(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    names = list(KINDS[STATION].examples)
    i = args["station_id"] - 71000
    if not 0 <= i < len(names):
        raise InvalidValue("station_id", f"no station {args['station_id']}")
    hi = _high(ctx, names[i], facts.day("day", args["day"]))
    if args.get("units", "metric") == "imperial":
        return {"temp_out_hi": round(hi * 9 / 5 + 32, 1), "units": "F"}
    return {"temp_out_hi": hi, "units": "C"}
