"""Travel tools: trains."""

from __future__ import annotations

import datetime as _dt
from typing import Any

from replan.env.corpus.financial import fx_rate
from replan.env.corpus.registry import implementation
from replan.env.corpus.travel import facts
from replan.env.world import InvalidValue, ToolContext

#: national rail operator per country (cross-border runs go to either side's operator)
_RAIL_OPERATOR = facts.SEEDS.table("rail_operator", dict[str, str])
_RAIL = facts.SEEDS.table("rail", dict[str, tuple[str, int, list[str]]])


def _station(param: str, locode: str) -> str:
    try:
        return facts.BY_LOCODE[locode]
    except KeyError as exc:
        raise InvalidValue(param, f"no rail station at {locode!r}") from exc


def _operator(ctx: ToolContext, key: str, c1: str, c2: str, operators: list[str]) -> str:
    if c1 == c2 == "JP":
        return ctx.pick(key + ":op", operators)
    if c1 != c2 and "GB" in (c1, c2):
        return "Eurostar"
    return ctx.pick(key + ":op", sorted({_RAIL_OPERATOR[c1], _RAIL_OPERATOR[c2]}))


def _trains(
    ctx: ToolContext, o: str, d: str, date: str, params: tuple[str, str] = ("origin", "destination")
) -> list[dict[str, Any]]:
    """Rail departures between two stations on a day (same network only), cheapest fare per run."""
    a, b = facts.CITIES[_station(params[0], o)], facts.CITIES[_station(params[1], d)]
    if o == d:
        raise InvalidValue(params[1], "origin and destination are the same station")
    if a[7] != b[7]:
        raise InvalidValue(params[1], f"no rail connection between {o} and {d}")
    ccy, speed, operators = _RAIL[a[7]]
    km = facts.km(a[2], a[3], b[2], b[3]) * 1.2
    mins = int(km / speed * 60) + 20
    rate = fx_rate(ctx, "USD", ccy)
    out = []
    for i, hour in enumerate((6, 9, 13, 18)):
        key = f"trn:{o}{d}:{date}:{i}"
        dep = _dt.datetime.fromisoformat(f"{date}T{hour:02d}:00") + _dt.timedelta(
            minutes=int(ctx.number(key + ":m", 0, 55, 0))
        )
        dur = mins + int(ctx.number(key + ":x", 0, 40, 0))
        usd = ctx.number(key + ":p", 8 + km * 0.06, 20 + km * 0.18)
        price = round(usd * rate) * 1.0 if ccy in ("JPY", "VND", "CLP") else round(usd * rate, 2)
        out.append(
            {
                "train_id": f"TRN-{o}{d}-{facts.ymd(date)}-{i + 1}",
                "operator": _operator(ctx, key, a[0], b[0], operators),
                "departs": dep.isoformat(timespec="minutes"),
                "arrives": (dep + _dt.timedelta(minutes=dur)).isoformat(timespec="minutes"),
                "duration_min": dur,
                "price": price,
                "currency": ccy,
            }
        )
    return out


def _train_by_id(ctx: ToolContext, train_id: str) -> dict[str, Any]:
    try:
        _, pair, day, slot = train_id.split("-")
        date = facts.iso(day)
        _dt.date.fromisoformat(date)
        return _trains(ctx, pair[:5], pair[5:], date)[int(slot) - 1]
    except (ValueError, IndexError, InvalidValue) as exc:
        raise InvalidValue("train_id", f"unknown train {train_id!r}") from exc


@implementation
def search_trains(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    js = _trains(
        ctx,
        args["from_station"],
        args["to_station"],
        args["departure_date"],
        ("from_station", "to_station"),
    )
    return {
        "journeys": js,
        "cheapest_train_id": min(js, key=lambda j: (j["price"], j["train_id"]))["train_id"],
    }


@implementation
def query_rail_timetable(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    js = _trains(ctx, args["origin"], args["destination"], args["date"])
    conns = [
        {
            "id": j["train_id"],
            "dep": j["departs"][11:],
            "arr": j["arrives"][11:],
            "changes": 0 if j["duration_min"] < 240 else 1,
            "fare": j["price"],
        }
        for j in js
    ]
    best = min(js, key=lambda j: (j["price"], j["train_id"]))
    return {
        "connections": conns,
        "best_price": {"id": best["train_id"], "fare": best["price"], "currency": best["currency"]},
    }


@implementation
def book_train_ticket(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    j = _train_by_id(ctx, args["train_id"])
    first = args.get("fare_class") == "first"
    amount = j["price"] * 1.6 if first else j["price"]
    amount = round(amount) * 1.0 if j["currency"] in ("JPY", "VND", "CLP") else round(amount, 2)
    tid = ctx.new_id("TKT")
    return {
        "ticket_id": tid,
        "coach": 1 + int(ctx.number(tid + ":c", 0, 3 if first else 9, 0)),
        "seat": f"{int(ctx.number(tid + ':s', 1, 80, 0))}{ctx.pick(tid + ':l', 'ABCD')}",
        "amount": amount,
        "currency": j["currency"],
        "departs": j["departs"],
    }
