"""Financial tools: transfers."""

from __future__ import annotations

import datetime as _dt
from typing import Any

from replan.env.corpus.financial import facts
from replan.env.corpus.financial.facts import fx_rate
from replan.env.corpus.registry import implementation
from replan.env.world import InvalidValue, ToolContext


def _iban_ok(iban: str) -> bool:
    moved = iban[4:] + iban[:4]
    digits = "".join(str(int(ch, 36)) for ch in moved)
    return int(digits) % 97 == 1


@implementation
def quote_transfer(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    facts.check_ccy("target_currency", args["target_currency"])
    acc = ctx.state.get("fin_accounts", args["account_id"]) or {}
    src = acc["currency"]
    amt = args["source_amount"]
    fee = 0.0 if src == args["target_currency"] else round(amt * 0.0045 + 0.5, 2)
    if fee >= amt:
        raise InvalidValue("source_amount", "amount does not cover the transfer fee")
    rate = fx_rate(ctx, src, args["target_currency"])
    return {
        "quote_id": ctx.new_id("TQ"),
        "source_currency": src,
        "target_currency": args["target_currency"],
        "rate": rate,
        "fee": fee,
        "target_amount": round((amt - fee) * rate, 2),
    }


@implementation
def create_transfer(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    if not _iban_ok(args["recipient_iban"]):
        raise InvalidValue("recipient_iban", "IBAN checksum is wrong")
    q = ctx.state.get("fin_transfer_quotes", args["quote_id"]) or {}
    if facts.balance(ctx, q["account_id"]) < q["source_amount"]:
        raise InvalidValue("quote_id", "insufficient funds in the source account")
    delivery = _dt.date.fromisoformat(facts.MARKET_DAY) + _dt.timedelta(
        int(ctx.number(f"tr:{args['quote_id']}:eta", 0, 2, 0))
    )
    return {
        "transfer_id": ctx.new_id("TR"),
        "status": "processing",
        "source_account_id": q["account_id"],
        "source_amount": q["source_amount"],
        "target_amount": q["target_amount"],
        "estimated_delivery": delivery.isoformat(),
    }


@implementation
def get_transfer_status(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    t = ctx.state.get("fin_transfers", args["transfer_id"]) or {}
    status = ctx.pick(f"trs:{args['transfer_id']}", ["processing", "outgoing_payment_sent"])
    return {
        "transfer_id": args["transfer_id"],
        "status": status,
        "recipient_iban": t["recipient_iban"],
        "target_amount": t["target_amount"],
        "estimated_delivery": t["estimated_delivery"],
    }
