"""Financial tools: FX."""

from __future__ import annotations

import math
from typing import Any

from replan.env.corpus.financial import facts
from replan.env.corpus.financial.facts import fx_rate
from replan.env.corpus.registry import implementation
from replan.env.world import ToolContext


@implementation
def get_fx_rate(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    facts.check_ccy("base", args["base"])
    facts.check_ccy("quote", args["quote"])
    rate = fx_rate(ctx, args["base"], args["quote"])
    inverse = fx_rate(ctx, args["quote"], args["base"])
    return {"base": args["base"], "quote": args["quote"], "rate": rate, "inverse": inverse}


@implementation
def apply_fx_rate(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return {
        "converted_amount": round(args["amount"] * args["rate"], 2),
        "rate_applied": args["rate"],
    }


@implementation
def convert_currency(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    facts.check_ccy("from", args["from"])
    facts.check_ccy("to", args["to"])
    rate = fx_rate(ctx, args["from"], args["to"])
    return {
        "query": {"from": args["from"], "to": args["to"]},
        "info": {"rate": rate},
        "result": round(args["amount"] * rate, 2),
    }


@implementation
def get_fx_timeseries(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    facts.check_ccy("base", args["base"])
    facts.check_ccy("symbol", args["symbol"])
    days = facts.sessions(args.get("days", 30))
    rates = [{"date": d, "rate": fx_rate(ctx, args["base"], args["symbol"], d)} for d in days]
    avg = facts.sig(math.fsum(r["rate"] for r in rates) / len(rates))
    return {"base": args["base"], "symbol": args["symbol"], "rates": rates, "average_rate": avg}
