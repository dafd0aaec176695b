"""Shopping tools: carts and orders."""

from __future__ import annotations

from typing import Any

from replan.env.corpus.registry import implementation
from replan.env.corpus.shopping import facts
from replan.env.world import InvalidValue, ToolContext


@implementation
def create_cart(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    cid = ctx.new_id("CART")
    return {"cart_id": cid, "checkout_url": f"https://shop.example.com/checkout/{cid.lower()}"}


@implementation
def add_to_cart(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    cart = ctx.state.get("shop_carts", args["cart_id"])
    assert cart is not None
    facts.product(args["sku"])
    lines = [dict(ln) for ln in cart["lines"]]
    line = next((ln for ln in lines if ln["sku"] == args["sku"]), None)
    if line is None:
        line = {
            "line_id": f"{args['cart_id']}-L{len(lines) + 1}",
            "sku": args["sku"],
            "quantity": 0,
            "unit_price_usd": facts.price(ctx, args["sku"]),
        }
        lines.append(line)
    line["quantity"] += args["quantity"]
    facts.stock_check(ctx, args["sku"], line["quantity"])
    subtotal = facts.money(sum(ln["quantity"] * ln["unit_price_usd"] for ln in lines))
    pct = facts.COUPONS.get(cart.get("coupon") or "", 0.0)
    return {
        "cart_id": args["cart_id"],
        "lines": lines,
        "subtotal_usd": subtotal,
        "discount_usd": facts.money(subtotal - facts.discounted(subtotal, pct)),
        "total_quantity": sum(ln["quantity"] for ln in lines),
    }


@implementation
def apply_cart_coupon(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    cart = ctx.state.get("shop_carts", args["cart_id"])
    assert cart is not None
    pct = facts.coupon(args["discount_code"], "discount_code")
    if cart.get("coupon"):
        raise InvalidValue("discount_code", f"cart already uses code {cart['coupon']}")
    total = facts.discounted(cart["subtotal_usd"], pct)
    return {
        "cart_id": args["cart_id"],
        "discount_code": args["discount_code"],
        "discount_usd": facts.money(cart["subtotal_usd"] - total),
        "total_usd": total,
    }


@implementation
def checkout_cart(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    cart = ctx.state.get("shop_carts", args["cart_id"])
    assert cart is not None
    total = facts.money(cart["subtotal_usd"] - cart.get("discount_usd", 0.0))
    return {
        "order_id": ctx.new_id("ORD"),
        "status": "placed",
        "total_usd": total,
        "confirmation_email": cart["email"],
        "line_items": [
            {"sku": ln["sku"], "quantity": ln["quantity"], "unit_price_usd": ln["unit_price_usd"]}
            for ln in cart["lines"]
        ],
    }


@implementation
def buy_now(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    facts.product(args["sku"])
    facts.stock_check(ctx, args["sku"], args["quantity"])
    unit = facts.price(ctx, args["sku"])
    return {
        "order_id": ctx.new_id("ORD"),
        "status": "placed",
        "total_usd": facts.money(unit * args["quantity"]),
        "confirmation_email": args["buyer_email"],
        "line_items": [{"sku": args["sku"], "quantity": args["quantity"], "unit_price_usd": unit}],
    }


@implementation
def get_order_status(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    oid = args["order_id"]
    order = ctx.state.get("shop_orders", oid)
    assert order is not None
    carrier = ctx.pick(f"shop:carrier:{oid}", ["UPS", "USPS", "DHL", "FedEx"])
    digits = int(ctx.number(f"shop:otrk:{oid}", 1e9, 1e10 - 1, 0))
    shipment, money = {
        "placed": ("label_created", "paid"),
        "cancelled": ("voided", "refunded"),
        "return_requested": ("return_in_transit", "refund_pending"),
    }[order["status"]]
    return {
        "order_id": oid,
        "status": order["status"],
        "financial_status": money,
        "total_usd": order["total_usd"],
        "fulfillment": {
            "carrier": carrier,
            "tracking_number": f"{carrier[:2].upper()}{digits}",
            "shipment_status": shipment,
        },
    }


@implementation
def cancel_order(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    order = ctx.state.get("shop_orders", args["order_id"])
    assert order is not None
    return {"order_id": args["order_id"], "status": "cancelled", "refund_usd": order["total_usd"]}


@implementation
def request_return(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    order = ctx.state.get("shop_orders", args["order_id"])
    assert order is not None
    fee = facts.money(order["total_usd"] * 0.15) if args["reason"] == "no_longer_needed" else 0.0
    rma = ctx.new_id("RMA")
    return {
        "return_id": rma,
        "status": "authorized",
        "label_url": f"https://returns.example.com/labels/{rma.lower()}.pdf",
        "refund_estimate_usd": facts.money(order["total_usd"] - fee),
        "restocking_fee_usd": fee,
    }


@implementation
def create_price_alert(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    facts.product(args["sku"])
    now = facts.price(ctx, args["sku"])
    return {
        "alert_id": ctx.new_id("ALRT"),
        "current_price_usd": now,
        "target_price_usd": args["target_price_usd"],
        "triggered": now <= args["target_price_usd"],
    }
