"""Shopping tools: stock."""

from __future__ import annotations

from typing import Any

from replan.core import linre
from replan.env.corpus.registry import implementation
from replan.env.corpus.shopping import facts
from replan.env.world import InvalidValue, ToolContext


@implementation
def check_stock_levels(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    facts.product(args["sku"])
    stock = facts.stock(ctx, args["sku"])
    locs = args.get("location_ids", facts.WAREHOUSES)
    for loc in locs:
        if loc not in stock:
            raise InvalidValue("location_ids", f"unknown fulfilment location {loc!r}")
    levels = [{"location_id": loc, "available": stock[loc]} for loc in locs]
    return {"inventory_levels": levels, "total_available": sum(lv["available"] for lv in levels)}


@implementation
def get_product_availability(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    sku = args["product_id"]
    facts.product(sku, "product_id")
    total = sum(facts.stock(ctx, sku).values())
    return {
        "product_id": sku,
        "online_availability": total > 0,
        "quantity_available": total,
        "ships_in_days": 2 if facts.CATALOG[sku]["weight_g"] > 5000 else 1,
    }


@implementation
def find_store_stock(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    facts.product(args["sku"])
    city = args["city"]
    stores = []
    for k, (label, street) in enumerate(
        [("Downtown", "Market Street"), ("Riverside", "Quay Road")]
    ):
        qty = int(ctx.number(f"shop:store:{city}:{k}:{args['sku']}", 0, 8, 0))
        stores.append(
            {
                "store_id": f"ST-{linre.sub('[^A-Z]', '', city.upper())[:3]}-{k + 1}",
                "name": f"{city} {label}",
                "address": f"{12 + 37 * k} {street}, {city}",
                "quantity": qty,
                "pickup_today": qty > 0,
            }
        )
    if args.get("radius_km", 25) < 10:
        stores = stores[:1]
    return {"stores": stores}
