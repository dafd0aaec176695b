"""Shopping: the start state of the domain's collections."""

from __future__ import annotations

from typing import Any

from replan.env.corpus.registry import initial_state
from replan.env.corpus.shopping import facts
from replan.env.world import ToolContext, WorldState


@initial_state
def _shopping_state(seed: int) -> dict[str, dict[str, dict[str, Any]]]:
    # two open orders users may name (ORD-100245, ORD-100311) and one already cancelled one,
    # priced with the same helper the tools use so totals agree with the catalog
    ctx = ToolContext("shopping:init", {}, WorldState(), seed)

    def order(sku: str, qty: int, email: str, address: str, status: str) -> dict[str, Any]:
        unit = facts.price(ctx, sku)
        return {
            "status": status,
            "returnable": status == "placed",
            "total_usd": facts.money(unit * qty),
            "email": email,
            "shipping_address": address,
            "lines": [{"sku": sku, "quantity": qty, "unit_price_usd": unit}],
        }

    return {
        "shop_orders": {
            "ORD-100245": order(
                "SKU-10009", 1, "dana.reyes@example.com", "400 Larimer St, Denver", "placed"
            ),
            "ORD-100311": order(
                "SKU-10001", 2, "kenji.mori@example.jp", "3-1 Umeda, Osaka", "placed"
            ),
            "ORD-099870": order(
                "SKU-10004", 1, "ana.silva@example.org", "12 Rua Augusta, Lisbon", "cancelled"
            ),
        }
    }
