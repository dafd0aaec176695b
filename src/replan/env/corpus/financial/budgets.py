"""Financial tools: budgets."""

from __future__ import annotations

from typing import Any

from replan.env.corpus.financial import facts
from replan.env.corpus.registry import implementation
from replan.env.world import ToolContext


@implementation
def create_budget(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    facts.check_ccy("currency", args["currency"])
    return {
        "budget_id": ctx.new_id("BDG"),
        "category": args["category"],
        "monthly_limit": args["monthly_limit"],
        "currency": args["currency"],
    }


@implementation
def check_budget(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    b = ctx.state.get("fin_budgets", args["budget_id"]) or {}
    limit, spent = b["monthly_limit"], args["spent"]
    used = round(spent / limit * 100, 2)
    alert = b.get("alert_at_pct") or 80.0
    status = "over_budget" if spent > limit else "warning" if used >= alert else "on_track"
    return {
        "budget_id": args["budget_id"],
        "remaining": round(limit - spent, 2),
        "used_pct": used,
        "status": status,
    }
