"""Shopping: catalog search, prices, reviews, stock, carts, orders, coupons, shipping, returns.

Every fact comes from one helper keyed by the product or order it describes (the shared ones
in :mod:`.facts`: product, price, stock, reviews, ...), so two providers asked about the same
SKU agree on its price, stock, weight and reviews. Each section module (discovery, reviews,
stock, pricing, offers, shipping, orders) holds that section's tools.
"""

from __future__ import annotations

# importing the section modules registers their implementations (and the start state)
from replan.env.corpus.shopping import (  # noqa: F401
    discovery,
    offers,
    orders,
    pricing,
    reviews,
    shipping,
    state,
    stock,
)
