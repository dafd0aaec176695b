"""N-N group, General: the next business day in a country."""

from __future__ import annotations

import datetime as _dt
from typing import Any

from replan.env.corpus.groups import facts
from replan.env.corpus.registry import implementation
from replan.env.world import InvalidValue, ToolContext


def _holiday(ctx: ToolContext, country: str, d: _dt.date) -> bool:
    return ctx.number(f"holiday:{country}:{d.isoformat()}", 0, 1, 4) < 0.06


def _next_business_day(ctx: ToolContext, country: str, date: str) -> str:
    d = _dt.date.fromisoformat(date) + _dt.timedelta(1)
    while d.weekday() >= 5 or _holiday(ctx, country, d):
        d += _dt.timedelta(1)
    return d.isoformat()


@implementation
def holiday_calendar_for_country(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return {"calendar_id": f"{args['countryCode'].lower()}.public#holiday", "global_only": True}


@implementation
def calendar_next_business_day(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    country = args["calendar_id"][:2].upper()
    nxt = _next_business_day(ctx, country, facts.day("after", args["after"]))
    gap = (_dt.date.fromisoformat(nxt) - _dt.date.fromisoformat(args["after"])).days - 1
    return {"next_business_day": nxt, "skipped": gap}


@implementation
def workdays_region(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    if not args["country"].isalpha():
        raise InvalidValue("country", "expected two letters")
    return {"region": "WD-" + args["country"].upper(), "week": "Mon-Fri"}


@implementation
def workdays_add(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    nxt = _next_business_day(ctx, args["region"][3:], facts.day("start_date", args["start_date"]))
    return {"result_date": nxt, "region": args["region"]}
