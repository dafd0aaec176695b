"""Shopping tools: pricing, coupons, budget."""

from __future__ import annotations

from typing import Any

from replan.env.corpus.registry import implementation
from replan.env.corpus.shopping import facts
from replan.env.world import InvalidValue, ToolContext


@implementation
def validate_coupon(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    pct = facts.coupon(args["code"], "code")
    return {
        "code": args["code"],
        "valid": True,
        "percent_off": pct,
        "description": f"{pct:g}% off the order subtotal",
    }


@implementation
def price_line_item(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    facts.product(args["sku"])
    unit = facts.price(ctx, args["sku"])
    return {
        "sku": args["sku"],
        "quantity": args["quantity"],
        "unit_price_usd": unit,
        "line_total_usd": facts.money(unit * args["quantity"]),
    }


@implementation
def apply_coupon_code(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    pct = facts.coupon(args["coupon_code"], "coupon_code")
    total = facts.discounted(args["amount_usd"], pct)
    return {
        "original_usd": args["amount_usd"],
        "discount_usd": facts.money(args["amount_usd"] - total),
        "discounted_total_usd": total,
    }


@implementation
def quote_discounted_price(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    facts.product(args["sku"])
    unit = facts.price(ctx, args["sku"])
    line = facts.money(unit * args["quantity"])
    total = facts.discounted(line, args["percent_off"])
    return {
        "discounted_total_usd": total,
        "savings_usd": facts.money(line - total),
        "unit_price_usd": unit,
    }


@implementation
def check_purchase_budget(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    facts.product(args["sku"])
    unit = facts.price(ctx, args["sku"])
    total = facts.money(unit * args["quantity"])
    most = min(int(args["budget_usd"] // unit), sum(facts.stock(ctx, args["sku"]).values()))
    return {
        "affordable": total <= args["budget_usd"],
        "total_usd": total,
        "remaining_usd": facts.money(args["budget_usd"] - total),
        "max_affordable_quantity": most,
    }


@implementation
def compare_products(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    skus = args["skus"]
    if len(set(skus)) != len(skus):
        raise InvalidValue("skus", "the same SKU is listed twice")
    rows = []
    for sku in skus:
        facts.product(sku, "skus")
        price = facts.price(ctx, sku)
        rating = facts.average([r["rating"] for r in facts.reviews(ctx, sku)])
        rows.append(
            {
                "sku": sku,
                "price_usd": price,
                "rating": rating,
                "score": round(100 * rating / price, 3),
            }
        )
    crit = args.get("criterion", "value")
    if crit == "price":
        rows.sort(key=lambda r: (r["price_usd"], r["sku"]))
    elif crit == "rating":
        rows.sort(key=lambda r: (-r["rating"], r["price_usd"], r["sku"]))
    else:
        rows.sort(key=lambda r: (-r["score"], r["sku"]))
    return {"ranking": rows, "winner_sku": rows[0]["sku"]}
