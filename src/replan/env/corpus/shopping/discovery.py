"""Shopping tools: product discovery."""

from __future__ import annotations

from typing import Any

from replan.env.corpus.registry import implementation
from replan.env.corpus.shopping import facts
from replan.env.world import ToolContext


@implementation
def search_products(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    cats = {args["product_type"]} if "product_type" in args else None
    skus = facts.search(args["query"], cats)
    if "max_price" in args:
        skus = [k for k in skus if facts.price(ctx, k) <= args["max_price"]]
    ranked = list(skus)
    if args.get("sort_key") == "PRICE":
        ranked.sort(key=lambda k: (facts.price(ctx, k), k))
    if args.get("reverse"):
        ranked.reverse()
    products = [
        {
            "sku": k,
            "title": facts.CATALOG[k]["title"],
            "vendor": facts.CATALOG[k]["brand"],
            "product_type": facts.CATALOG[k]["category"],
            "price_usd": facts.price(ctx, k),
            "available_for_sale": sum(facts.stock(ctx, k).values()) > 0,
        }
        for k in ranked[: args.get("first", 10)]
    ]
    out: dict[str, Any] = {"products": products, "total_count": len(skus)}
    if skus:
        out["top_sku"] = skus[0]
    return out


@implementation
def catalog_search(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    skus = facts.search(args["keywords"], facts.SEARCH_INDEX[args.get("search_index", "All")])
    if "min_reviews_rating" in args:
        skus = [
            k
            for k in skus
            if facts.average([r["rating"] for r in facts.reviews(ctx, k)])
            >= args["min_reviews_rating"]
        ]
    items = [
        {
            "item_id": k,
            "detail_page_url": f"https://shop.example.com/dp/{k}",
            "item_info": {"title": facts.CATALOG[k]["title"], "brand": facts.CATALOG[k]["brand"]},
            "offers": {"amount": facts.price(ctx, k), "currency": "USD"},
        }
        for k in skus[: args.get("item_count", 10)]
    ]
    out: dict[str, Any] = {"search_result": {"total_result_count": len(skus), "items": items}}
    if skus:
        out["best_match_id"] = skus[0]
    return out


@implementation
def get_product_details(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    p = facts.product(args["sku"])
    sku = args["sku"]
    return {
        "sku": sku,
        "title": p["title"],
        "brand": p["brand"],
        "category": p["category"],
        "weight_g": p["weight_g"],
        "price": {"amount": facts.price(ctx, sku), "currency_code": "USD"},
        "images": [f"https://cdn.example.com/img/{sku.lower()}-{i}.jpg" for i in (1, 2)],
    }


@implementation
def get_product_price(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    facts.product(args["sku"])
    price, listed = facts.price(ctx, args["sku"]), facts.list_price(ctx, args["sku"])
    return {
        "sku": args["sku"],
        "unit_price_usd": price,
        "list_price_usd": listed,
        "on_sale": price < listed,
    }


@implementation
def track_product_price(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    sku = args["product_id"]
    facts.product(sku, "product_id")
    now = facts.price(ctx, sku)
    history = [{"days_ago": 0, "price_usd": now}]
    for d in range(7, args.get("days", 30) + 1, 7):
        history.append(
            {
                "days_ago": d,
                "price_usd": facts.money(ctx.number(f"shop:hist:{sku}:{d}", 0.85, 1.15) * now),
            }
        )
    prices = [h["price_usd"] for h in history]
    return {
        "product_id": sku,
        "current_price_usd": now,
        "lowest_usd": min(prices),
        "highest_usd": max(prices),
        "history": history,
    }
