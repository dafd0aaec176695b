"""Shopping: the seed tables and fact helpers that several sections read (one source per fact)."""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

from replan.core import linre
from replan.env.corpus.data import SeedTables
from replan.env.world import InvalidValue, ToolContext

SEEDS = SeedTables.load(__package__)  # seeds.json beside this module


CATALOG = SEEDS.table("catalog", dict[str, dict[str, int | str | tuple[int, int]]])
SEARCH_INDEX = SEEDS.table("search_index", dict[str, set[str] | None])
WAREHOUSES = ["WH-LIS", "WH-DEN", "WH-OSA"]
COUPONS = SEEDS.table("coupons", dict[str, float])
_EXPIRED_COUPONS = {"SUMMER25": "2026-09-01", "BLACKFRI30": "2026-11-30"}
_ZONES = SEEDS.table("zones", dict[str, int])
SERVICE_MULT = {"standard": 1.0, "express": 1.75, "overnight": 3.2}
SERVICE_CARRIER = {"standard": "USPS", "express": "UPS", "overnight": "FedEx"}
_AUTHORS = SEEDS.table("authors", list[str])
_REVIEW_TITLES = SEEDS.table("review_titles", dict[int, list[str]])


def money(x: float) -> float:
    return round(x + 1e-9, 2)


def product(sku: str, param: str = "sku") -> dict[str, Any]:
    p = CATALOG.get(sku)
    if p is None:
        raise InvalidValue(param, f"no product with SKU {sku!r} in the catalog")
    return p


def price(ctx: ToolContext, sku: str) -> float:
    lo, hi = CATALOG[sku]["price"]
    return money(math.floor(ctx.number(f"shop:price:{sku}", lo, hi)) + 0.99)


def list_price(ctx: ToolContext, sku: str) -> float:
    markup = ctx.number(f"shop:msrp:{sku}", 1.0, 1.3)
    return money(max(price(ctx, sku), math.ceil(price(ctx, sku) * markup) - 0.01))


def stock(ctx: ToolContext, sku: str) -> dict[str, int]:
    return {wh: int(ctx.number(f"shop:stock:{sku}:{wh}", 2, 30, 0)) for wh in WAREHOUSES}


def reviews(ctx: ToolContext, sku: str) -> list[dict[str, Any]]:
    n = int(ctx.number(f"shop:nrev:{sku}", 5, 9, 0))
    out = []
    for i in range(n):
        key = f"shop:rev:{sku}:{i}"
        rating = ctx.pick(key + ":r", [5, 5, 4, 4, 4, 3, 5, 2, 4, 1])
        out.append(
            {
                "review_id": f"RV-{sku[4:]}-{i + 1:02d}",
                "rating": rating,
                "title": ctx.pick(key + ":t", _REVIEW_TITLES[rating]),
                "author": ctx.pick(key + ":a", _AUTHORS),
                "verified_purchase": ctx.pick(key + ":v", [True, True, True, False]),
                "helpful_votes": int(ctx.number(key + ":h", 0, 60, 0)),
            }
        )
    return out


def average(ratings: list[int]) -> float:
    return round(sum(ratings) / len(ratings), 2)


def _tokens(text: str) -> list[str]:
    return [
        t[:-1] if len(t) > 3 and t.endswith("s") else t
        for t in linre.findall(r"[a-z0-9]+", text.lower())
    ]


def search(query: str, categories: set[str] | None = None) -> list[str]:
    """SKUs matching every query token, best first (title hits weigh double)."""
    q = _tokens(query)
    if not q:
        return []
    scored = []
    for sku, p in CATALOG.items():
        if categories is not None and p["category"] not in categories:
            continue
        title = set(_tokens(p["title"]))
        other = set(_tokens(f"{p['brand']} {p['category']} {p['tags']}"))
        if all(t in title or t in other for t in q):
            scored.append((-sum(2 if t in title else 1 for t in q), sku))
    return [sku for _, sku in sorted(scored)]


def coupon(code: str, param: str) -> float:
    if code in _EXPIRED_COUPONS:
        raise InvalidValue(param, f"coupon {code} expired on {_EXPIRED_COUPONS[code]}")
    if code not in COUPONS:
        raise InvalidValue(param, f"unknown coupon code {code!r}")
    return COUPONS[code]


def discounted(amount: float, percent: float) -> float:
    return money(amount * (100.0 - percent) / 100.0)


def parcel_weight(sku: str, quantity: int) -> int:
    return CATALOG[sku]["weight_g"] * quantity + 180  # box and padding


def shipping_zone(country: str) -> int:
    return _ZONES.get(country, 5)


def ship_cost(weight_g: float, country: str, service: str) -> float:
    zone = shipping_zone(country)
    half_kilos = max(1, math.ceil(weight_g / 500))
    return money((4.5 + 2.25 * zone + 0.85 * zone * half_kilos) * SERVICE_MULT[service])


def transit_days(country: str, service: str) -> int:
    zone = shipping_zone(country)
    return {"standard": 2 + 2 * zone, "express": 1 + zone, "overnight": 1 if zone <= 2 else 2}[
        service
    ]


def delivery_date(sku: str, country: str, order_date: str, service: str) -> tuple[str, int]:
    """Handling (1 business day, 2 for bulky items) plus transit, skipping weekends."""
    handling = 2 if CATALOG[sku]["weight_g"] > 5000 else 1
    days = handling + transit_days(country, service)
    d = dt.date.fromisoformat(order_date)
    left = days
    while left:
        d += dt.timedelta(days=1)
        if d.weekday() < 5:
            left -= 1
    return d.isoformat(), days


def stock_check(ctx: ToolContext, sku: str, quantity: int) -> None:
    available = sum(stock(ctx, sku).values())
    if quantity > available:
        raise InvalidValue(
            "quantity", f"only {available} units of {sku} in stock, {quantity} requested"
        )
