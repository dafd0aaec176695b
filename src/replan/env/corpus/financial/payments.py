"""Financial tools: card payments."""

from __future__ import annotations

from typing import Any

from replan.env.corpus.financial import facts
from replan.env.corpus.registry import implementation
from replan.env.world import InvalidValue, ToolContext


@implementation
def create_payment_intent(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    facts.check_ccy("currency", args["currency"])
    return {
        "id": ctx.new_id("pi"),
        "status": "requires_capture",
        "amount_capturable": args["amount"],
        "currency": args["currency"],
    }


@implementation
def capture_payment_intent(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    pi = ctx.state.get("fin_payment_intents", args["payment_intent"]) or {}
    return {
        "payment_intent": args["payment_intent"],
        "status": "succeeded",
        "latest_charge": ctx.new_id("ch"),
        "amount_received": pi["amount"],
        "currency": pi["currency"],
    }


@implementation
def get_default_payment_method(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    cus = ctx.state.get("fin_customers", args["customer_id"]) or {}
    pm = cus["default_payment_method"]
    card = ctx.state.get("fin_payment_methods", pm) or {}
    return {
        "customer_id": args["customer_id"],
        "payment_method_id": pm,
        "card": {"brand": card["brand"], "last4": card["last4"], "exp": card["exp"]},
    }


@implementation
def charge_payment_method(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    facts.check_ccy("currency", args["currency"])
    card = ctx.state.get("fin_payment_methods", args["payment_method_id"]) or {}
    return {
        "charge_id": ctx.new_id("ch"),
        "paid": True,
        "amount": args["amount"],
        "currency": args["currency"],
        "card_last4": card["last4"],
    }


@implementation
def refund_charge(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    ch = ctx.state.get("fin_charges", args["charge"]) or {}
    amount = args.get("amount", ch["amount"])
    if amount > ch["amount"]:
        raise InvalidValue("amount", f"refund {amount} exceeds the charged {ch['amount']}")
    return {
        "refund_id": ctx.new_id("re"),
        "amount": amount,
        "status": "succeeded",
        "charge_status": "refunded" if amount == ch["amount"] else "partially_refunded",
    }
