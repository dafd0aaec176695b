"""Financial tools: invoices."""

from __future__ import annotations

import datetime as _dt
from typing import Any

from replan.env.corpus.financial import facts
from replan.env.corpus.registry import implementation
from replan.env.world import InvalidValue, ToolContext


@implementation
def create_invoice_draft(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    facts.check_ccy("currency", args["currency"])
    total = facts.money_sum([li["quantity"] * li["unit_price"] for li in args["line_items"]])
    if total <= 0:
        raise InvalidValue("line_items", "an invoice must bill a positive amount")
    due = (
        args.get("due_date")
        or (_dt.date.fromisoformat(facts.MARKET_DAY) + _dt.timedelta(30)).isoformat()
    )
    return {
        "invoice_id": ctx.new_id("in"),
        "status": "draft",
        "amount_due": total,
        "currency": args["currency"],
        "due_date": due,
    }


@implementation
def send_invoice(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    inv = ctx.state.get("fin_invoices", args["invoice_id"]) or {}
    return {
        "invoice_id": args["invoice_id"],
        "status": "open",
        "hosted_invoice_url": f"https://pay.example.com/i/{args['invoice_id']}",
        "sent_to": [inv["customer_email"], *args.get("cc", [])],
    }


@implementation
def mark_invoice_paid(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    inv = ctx.state.get("fin_invoices", args["invoice_id"]) or {}
    late = (_dt.date.fromisoformat(args["paid_on"]) - _dt.date.fromisoformat(inv["due_date"])).days
    return {
        "invoice_id": args["invoice_id"],
        "status": "paid",
        "amount_paid": inv["amount_due"],
        "days_late": max(0, late),
    }
