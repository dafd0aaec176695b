"""Shopping tools: marketplace offers."""

from __future__ import annotations

import math
from typing import Any

from replan.env.corpus.registry import implementation
from replan.env.corpus.shopping import facts
from replan.env.world import ToolContext

_SELLERS = facts.SEEDS.table("sellers", list[str])
_CONDITIONS = facts.SEEDS.table("conditions", dict[str, set[str]])


def _offers(ctx: ToolContext, sku: str) -> list[dict[str, Any]]:
    """Third-party seller offers on a SKU; the first is always new, the second always used."""
    base = facts.price(ctx, sku)
    out = []
    for i in range(4):
        key = f"shop:offer:{sku}:{i}"
        cond = (
            "new"
            if i == 0
            else ctx.pick(key + ":c", ["used_like_new", "refurbished"] + (["new"] if i > 1 else []))
        )
        factor = ctx.number(key + ":p", 0.86, 1.08) * (1.0 if cond == "new" else 0.8)
        price = facts.money(math.floor(base * factor) + 0.49)
        ship = ctx.pick(key + ":s", [0.0, 4.99, 7.5])
        out.append(
            {
                "offer_id": f"OF-{sku[4:]}-{i + 1}",
                "seller": ctx.pick(key + ":n", _SELLERS),
                "condition": cond,
                "price_usd": price,
                "shipping_usd": ship,
                "landed_price_usd": facts.money(price + ship),
            }
        )
    return out


def _cheapest(offers: list[dict[str, Any]]) -> dict[str, Any]:
    return min(offers, key=lambda o: (o["landed_price_usd"], o["offer_id"]))


@implementation
def find_best_offer(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    facts.product(args["sku"])
    ok = _CONDITIONS[args.get("condition", "any")]
    offers = [o for o in _offers(ctx, args["sku"]) if o["condition"] in ok]
    return {"best_offer": _cheapest(offers), "offer_count": len(offers)}


@implementation
def list_marketplace_offers(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    facts.product(args["sku"])
    ok = _CONDITIONS[args.get("condition", "any")]
    return {
        "sku": args["sku"],
        "offers": [o for o in _offers(ctx, args["sku"]) if o["condition"] in ok],
    }


@implementation
def pick_cheapest_offer(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    ranked = sorted(args["offers"], key=lambda o: (o["landed_price_usd"], o["offer_id"]))
    gap = ranked[1]["landed_price_usd"] - ranked[0]["landed_price_usd"] if len(ranked) > 1 else 0.0
    return {
        "offer_id": ranked[0]["offer_id"],
        "landed_price_usd": ranked[0]["landed_price_usd"],
        "runner_up_gap_usd": facts.money(gap),
    }
