"""IoT tools: energy."""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

from replan.env.corpus.iot import facts
from replan.env.corpus.registry import implementation
from replan.env.world import InvalidValue, ToolContext

_TARIFFS = facts.SEEDS.table("tariffs", dict[str, tuple[str, float]])
_HOUR_SHAPE = facts.SEEDS.table("hour_shape", list[float])
_METER_INSTALLED = dt.date(2025, 1, 1)
_METER_LOAD = {"meter-lisbon-main": (6.0, 14.0), "meter-denver-main": (16.0, 38.0)}


def _tariff(param: str, code: str) -> tuple[str, float]:
    try:
        return _TARIFFS[code]
    except KeyError:
        raise InvalidValue(param, f"unknown tariff {code!r}") from None


def _day_centikwh(ctx: ToolContext, meter: str, day: dt.date) -> int:
    lo, hi = _METER_LOAD.get(meter, (5.0, 20.0))
    if day.month in (12, 1, 2):
        lo, hi = lo * 1.3, hi * 1.3
    return round(ctx.number(f"iot:kwh:{meter}:{day.isoformat()}", lo, hi, 2) * 100)


def _period(args: dict[str, Any]) -> tuple[dt.date, dt.date]:
    start = dt.date.fromisoformat(args["start_date"])
    end = dt.date.fromisoformat(args["end_date"])
    if end < start:
        raise InvalidValue("end_date", "end_date is before start_date")
    if start < _METER_INSTALLED:
        raise InvalidValue(
            "start_date", f"no data before the meter was installed ({_METER_INSTALLED.isoformat()})"
        )
    if (end - start).days > 365:
        raise InvalidValue("end_date", "a request may span at most 366 days")
    return start, end


def _days(start: dt.date, end: dt.date) -> list[dt.date]:
    return [start + dt.timedelta(days=i) for i in range((end - start).days + 1)]


def _energy_cost(kwh: float, rate: float) -> float:
    return round(kwh * rate, 2)


@implementation
def get_meter_usage(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    d = facts.device(ctx, "meter_id", args["meter_id"], "meter")
    start, end = _period(args)
    days = [(x, _day_centikwh(ctx, args["meter_id"], x)) for x in _days(start, end)]
    return {
        "meter_id": args["meter_id"],
        "unit": "kWh",
        "daily": [{"date": x.isoformat(), "kwh": c / 100} for x, c in days],
        "total_kwh": round(sum(c for _, c in days) / 100, 2),
        "tariff_code": d["tariff_code"],
    }


@implementation
def price_energy(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    supplier, rate = _tariff("tariff_code", args["tariff_code"])
    return {
        "tariff_code": args["tariff_code"],
        "supplier": supplier,
        "rate_usd_per_kwh": rate,
        "cost_usd": _energy_cost(args["kwh"], rate),
    }


@implementation
def get_meter_register_reads(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    d = facts.device(ctx, "meter_id", args["meter_id"], "meter")
    start, end = _period(args)
    base = int(ctx.number(f"iot:reg0:{args['meter_id']}", 1000, 40000, 0)) * 100
    before = (
        sum(
            _day_centikwh(ctx, args["meter_id"], x)
            for x in _days(_METER_INSTALLED, start - dt.timedelta(days=1))
        )
        if start > _METER_INSTALLED
        else 0
    )
    during = sum(_day_centikwh(ctx, args["meter_id"], x) for x in _days(start, end))
    opening, closing = (base + before) / 100, (base + before + during) / 100
    return {
        "meter_id": args["meter_id"],
        "reads": [
            {
                "read_type": "opening",
                "read_at": f"{start.isoformat()}T00:00:00",
                "register_kwh": opening,
            },
            {
                "read_type": "closing",
                "read_at": f"{(end + dt.timedelta(days=1)).isoformat()}T00:00:00",
                "register_kwh": closing,
            },
        ],
        "opening_kwh": opening,
        "closing_kwh": closing,
        "tariff_code": d["tariff_code"],
    }


@implementation
def bill_register_reads(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    if args["closing_kwh"] < args["opening_kwh"]:
        raise InvalidValue("closing_kwh", "closing read is below the opening read")
    _, rate = _tariff("tariff_code", args["tariff_code"])
    kwh = round(args["closing_kwh"] - args["opening_kwh"], 2)
    return {
        "consumption_kwh": kwh,
        "rate_usd_per_kwh": rate,
        "amount_due_usd": _energy_cost(kwh, rate),
    }


def _hourly(ctx: ToolContext, tariff: str, day: str) -> list[dict[str, Any]]:
    _, rate = _tariff("tariff_code", tariff)
    return [
        {
            "hour": f"{h:02d}:00",
            "usd_per_kwh": round(
                rate
                * _HOUR_SHAPE[h]
                * (1 + ctx.number(f"iot:px:{tariff}:{day}:{h}", -0.12, 0.12, 3)),
                4,
            ),
        }
        for h in range(24)
    ]


def _cheapest(prices: list[dict[str, Any]], minutes: int) -> dict[str, Any]:
    hours = math.ceil(minutes / 60)
    if hours > len(prices):
        raise InvalidValue(
            "duration_min", f"a {hours} h window does not fit in {len(prices)} hourly prices"
        )
    best = min(
        range(len(prices) - hours + 1),
        key=lambda i: (round(sum(p["usd_per_kwh"] for p in prices[i : i + hours]), 6), i),
    )
    start = prices[best]["hour"]
    end_h = (int(start[:2]) + hours) % 24
    avg = round(sum(p["usd_per_kwh"] for p in prices[best : best + hours]) / hours, 4)
    return {"start": start, "end": f"{end_h:02d}:00", "avg": avg, "hours": hours}


@implementation
def get_energy_price_forecast(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    prices = _hourly(ctx, args["tariff_code"], args["date"])
    return {
        "tariff_code": args["tariff_code"],
        "date": args["date"],
        "prices": prices,
        "average_usd_per_kwh": round(sum(p["usd_per_kwh"] for p in prices) / 24, 4),
    }


@implementation
def pick_cheapest_window(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    w = _cheapest(args["prices"], args["duration_min"])
    return {
        "start_time": w["start"],
        "end_time": w["end"],
        "average_usd_per_kwh": w["avg"],
        "hours": w["hours"],
    }


@implementation
def plan_cheapest_run(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    prices = _hourly(ctx, args["tariff_code"], args["date"])
    w = _cheapest(prices, args["duration_min"])
    worst = max(
        _cheapest(
            [{"hour": p["hour"], "usd_per_kwh": -p["usd_per_kwh"]} for p in prices],
            args["duration_min"],
        )["avg"]
        * -1,
        w["avg"],
    )
    return {
        "recommended_start": w["start"],
        "window_end": w["end"],
        "avg_rate_usd_per_kwh": w["avg"],
        "saving_vs_peak_pct": round(100 * (1 - w["avg"] / worst), 1) if worst > 0 else 0.0,
    }
