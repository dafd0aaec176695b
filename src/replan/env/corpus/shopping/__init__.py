"""Shopping: catalog search, prices, reviews, stock, carts, orders, coupons, shipping, returns.

Every fact comes from one private helper keyed by the product or order it describes, so two
providers asked about the same SKU agree on its price, stock, weight and reviews.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from typing import Any

from replan.env.corpus.data import SeedTables
from replan.env.corpus.registry import implementation, initial_state
from replan.env.world import InvalidValue, ToolContext, WorldState

_SEEDS = SeedTables.load(__package__)  # seeds.json beside this module


# -- the catalog and other fixed tables -------------------------------------------------------
_CATALOG = _SEEDS.table("catalog", dict[str, dict[str, int | str | tuple[int, int]]])
_SEARCH_INDEX = _SEEDS.table("search_index", dict[str, set[str] | None])
_WAREHOUSES = ["WH-LIS", "WH-DEN", "WH-OSA"]
_COUPONS = _SEEDS.table("coupons", dict[str, float])
_EXPIRED_COUPONS = {"SUMMER25": "2026-09-01", "BLACKFRI30": "2026-11-30"}
_ZONES = _SEEDS.table("zones", dict[str, int])
_SERVICE_MULT = {"standard": 1.0, "express": 1.75, "overnight": 3.2}
_SERVICE_CARRIER = {"standard": "USPS", "express": "UPS", "overnight": "FedEx"}
_AUTHORS = _SEEDS.table("authors", list[str])
_REVIEW_TITLES = _SEEDS.table("review_titles", dict[int, list[str]])


# -- fact helpers: the single source of every number ------------------------------------------
def _money(x: float) -> float:
    return round(x + 1e-9, 2)


def _product(sku: str, param: str = "sku") -> dict[str, Any]:
    p = _CATALOG.get(sku)
    if p is None:
        raise InvalidValue(param, f"no product with SKU {sku!r} in the catalog")
    return p


def _price(ctx: ToolContext, sku: str) -> float:
    lo, hi = _CATALOG[sku]["price"]
    return _money(math.floor(ctx.number(f"shop:price:{sku}", lo, hi)) + 0.99)


def _list_price(ctx: ToolContext, sku: str) -> float:
    markup = ctx.number(f"shop:msrp:{sku}", 1.0, 1.3)
    return _money(max(_price(ctx, sku), math.ceil(_price(ctx, sku) * markup) - 0.01))


def _stock(ctx: ToolContext, sku: str) -> dict[str, int]:
    return {wh: int(ctx.number(f"shop:stock:{sku}:{wh}", 2, 30, 0)) for wh in _WAREHOUSES}


def _reviews(ctx: ToolContext, sku: str) -> list[dict[str, Any]]:
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


def _average(ratings: list[int]) -> float:
    return round(sum(ratings) / len(ratings), 2)


def _tokens(text: str) -> list[str]:
    return [
        t[:-1] if len(t) > 3 and t.endswith("s") else t
        for t in re.findall(r"[a-z0-9]+", text.lower())
    ]


def _search(query: str, categories: set[str] | None = None) -> list[str]:
    """SKUs matching every query token, best first (title hits weigh double)."""
    q = _tokens(query)
    if not q:
        return []
    scored = []
    for sku, p in _CATALOG.items():
        if categories is not None and p["category"] not in categories:
            continue
        title = set(_tokens(p["title"]))
        other = set(_tokens(f"{p['brand']} {p['category']} {p['tags']}"))
        if all(t in title or t in other for t in q):
            scored.append((-sum(2 if t in title else 1 for t in q), sku))
    return [sku for _, sku in sorted(scored)]


def _coupon(code: str, param: str) -> float:
    if code in _EXPIRED_COUPONS:
        raise InvalidValue(param, f"coupon {code} expired on {_EXPIRED_COUPONS[code]}")
    if code not in _COUPONS:
        raise InvalidValue(param, f"unknown coupon code {code!r}")
    return _COUPONS[code]


def _discounted(amount: float, percent: float) -> float:
    return _money(amount * (100.0 - percent) / 100.0)


def _parcel_weight(sku: str, quantity: int) -> int:
    return _CATALOG[sku]["weight_g"] * quantity + 180  # box and padding


def _zone(country: str) -> int:
    return _ZONES.get(country, 5)


def _ship_cost(weight_g: float, country: str, service: str) -> float:
    zone = _zone(country)
    half_kilos = max(1, math.ceil(weight_g / 500))
    return _money((4.5 + 2.25 * zone + 0.85 * zone * half_kilos) * _SERVICE_MULT[service])


def _transit_days(country: str, service: str) -> int:
    zone = _zone(country)
    return {"standard": 2 + 2 * zone, "express": 1 + zone, "overnight": 1 if zone <= 2 else 2}[
        service
    ]


def _delivery_date(sku: str, country: str, order_date: str, service: str) -> tuple[str, int]:
    """Handling (1 business day, 2 for bulky items) plus transit, skipping weekends."""
    handling = 2 if _CATALOG[sku]["weight_g"] > 5000 else 1
    days = handling + _transit_days(country, service)
    d = dt.date.fromisoformat(order_date)
    left = days
    while left:
        d += dt.timedelta(days=1)
        if d.weekday() < 5:
            left -= 1
    return d.isoformat(), days


def _stock_check(ctx: ToolContext, sku: str, quantity: int) -> None:
    available = sum(_stock(ctx, sku).values())
    if quantity > available:
        raise InvalidValue(
            "quantity", f"only {available} units of {sku} in stock, {quantity} requested"
        )


# -- product discovery --------------------------------------------------------------------------
@implementation
def search_products(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    cats = {args["product_type"]} if "product_type" in args else None
    skus = _search(args["query"], cats)
    if "max_price" in args:
        skus = [k for k in skus if _price(ctx, k) <= args["max_price"]]
    ranked = list(skus)
    if args.get("sort_key") == "PRICE":
        ranked.sort(key=lambda k: (_price(ctx, k), k))
    if args.get("reverse"):
        ranked.reverse()
    products = [
        {
            "sku": k,
            "title": _CATALOG[k]["title"],
            "vendor": _CATALOG[k]["brand"],
            "product_type": _CATALOG[k]["category"],
            "price_usd": _price(ctx, k),
            "available_for_sale": sum(_stock(ctx, k).values()) > 0,
        }
        for k in ranked[: args.get("first", 10)]
    ]
    out: dict[str, Any] = {"products": products, "total_count": len(skus)}
    if skus:
        out["top_sku"] = skus[0]
    return out


@implementation
def catalog_search(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    skus = _search(args["keywords"], _SEARCH_INDEX[args.get("search_index", "All")])
    if "min_reviews_rating" in args:
        skus = [
            k
            for k in skus
            if _average([r["rating"] for r in _reviews(ctx, k)]) >= args["min_reviews_rating"]
        ]
    items = [
        {
            "item_id": k,
            "detail_page_url": f"https://shop.example.com/dp/{k}",
            "item_info": {"title": _CATALOG[k]["title"], "brand": _CATALOG[k]["brand"]},
            "offers": {"amount": _price(ctx, k), "currency": "USD"},
        }
        for k in skus[: args.get("item_count", 10)]
    ]
    out: dict[str, Any] = {"search_result": {"total_result_count": len(skus), "items": items}}
    if skus:
        out["best_match_id"] = skus[0]
    return out


@implementation
def get_product_details(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    p = _product(args["sku"])
    sku = args["sku"]
    return {
        "sku": sku,
        "title": p["title"],
        "brand": p["brand"],
        "category": p["category"],
        "weight_g": p["weight_g"],
        "price": {"amount": _price(ctx, sku), "currency_code": "USD"},
        "images": [f"https://cdn.example.com/img/{sku.lower()}-{i}.jpg" for i in (1, 2)],
    }


@implementation
def get_product_price(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _product(args["sku"])
    price, listed = _price(ctx, args["sku"]), _list_price(ctx, args["sku"])
    return {
        "sku": args["sku"],
        "unit_price_usd": price,
        "list_price_usd": listed,
        "on_sale": price < listed,
    }


@implementation
def track_product_price(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    sku = args["product_id"]
    _product(sku, "product_id")
    now = _price(ctx, sku)
    history = [{"days_ago": 0, "price_usd": now}]
    for d in range(7, args.get("days", 30) + 1, 7):
        history.append(
            {
                "days_ago": d,
                "price_usd": _money(ctx.number(f"shop:hist:{sku}:{d}", 0.85, 1.15) * now),
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


# -- reviews --------------------------------------------------------------------------------------
@implementation
def get_product_reviews(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _product(args["sku"])
    reviews = _reviews(ctx, args["sku"])
    ordered = list(reviews)
    if args.get("sort") == "most_helpful":
        ordered.sort(key=lambda r: (-r["helpful_votes"], r["review_id"]))
    elif args.get("sort") == "lowest_rating":
        ordered.sort(key=lambda r: (r["rating"], r["review_id"]))
    return {
        "reviews": ordered[: args.get("limit", 5)],
        "ratings": [r["rating"] for r in reviews],
        "total_reviews": len(reviews),
    }


@implementation
def get_rating_summary(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _product(args["product_id"], "product_id")
    ratings = [r["rating"] for r in _reviews(ctx, args["product_id"])]
    return {
        "product_id": args["product_id"],
        "average_overall_rating": _average(ratings),
        "total_review_count": len(ratings),
        "rating_distribution": [
            {"rating_value": v, "count": ratings.count(v)} for v in (5, 4, 3, 2, 1)
        ],
        "recommended_percent": round(100 * sum(r >= 4 for r in ratings) / len(ratings), 1),
    }


@implementation
def aggregate_review_scores(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    ratings = args["ratings"]
    return {
        "average_rating": _average(ratings),
        "count": len(ratings),
        "stars": {str(v): ratings.count(v) for v in (1, 2, 3, 4, 5)},
    }


# -- stock ------------------------------------------------------------------------------------
@implementation
def check_stock_levels(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _product(args["sku"])
    stock = _stock(ctx, args["sku"])
    locs = args.get("location_ids", _WAREHOUSES)
    for loc in locs:
        if loc not in stock:
            raise InvalidValue("location_ids", f"unknown fulfilment location {loc!r}")
    levels = [{"location_id": loc, "available": stock[loc]} for loc in locs]
    return {"inventory_levels": levels, "total_available": sum(lv["available"] for lv in levels)}


@implementation
def get_product_availability(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    sku = args["product_id"]
    _product(sku, "product_id")
    total = sum(_stock(ctx, sku).values())
    return {
        "product_id": sku,
        "online_availability": total > 0,
        "quantity_available": total,
        "ships_in_days": 2 if _CATALOG[sku]["weight_g"] > 5000 else 1,
    }


@implementation
def find_store_stock(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _product(args["sku"])
    city = args["city"]
    stores = []
    for k, (label, street) in enumerate(
        [("Downtown", "Market Street"), ("Riverside", "Quay Road")]
    ):
        qty = int(ctx.number(f"shop:store:{city}:{k}:{args['sku']}", 0, 8, 0))
        stores.append(
            {
                "store_id": f"ST-{re.sub('[^A-Z]', '', city.upper())[:3]}-{k + 1}",
                "name": f"{city} {label}",
                "address": f"{12 + 37 * k} {street}, {city}",
                "quantity": qty,
                "pickup_today": qty > 0,
            }
        )
    if args.get("radius_km", 25) < 10:
        stores = stores[:1]
    return {"stores": stores}


# -- pricing, coupons, budget ---------------------------------------------------------------------
@implementation
def validate_coupon(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    pct = _coupon(args["code"], "code")
    return {
        "code": args["code"],
        "valid": True,
        "percent_off": pct,
        "description": f"{pct:g}% off the order subtotal",
    }


@implementation
def price_line_item(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _product(args["sku"])
    unit = _price(ctx, args["sku"])
    return {
        "sku": args["sku"],
        "quantity": args["quantity"],
        "unit_price_usd": unit,
        "line_total_usd": _money(unit * args["quantity"]),
    }


@implementation
def apply_coupon_code(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    pct = _coupon(args["coupon_code"], "coupon_code")
    total = _discounted(args["amount_usd"], pct)
    return {
        "original_usd": args["amount_usd"],
        "discount_usd": _money(args["amount_usd"] - total),
        "discounted_total_usd": total,
    }


@implementation
def quote_discounted_price(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _product(args["sku"])
    unit = _price(ctx, args["sku"])
    line = _money(unit * args["quantity"])
    total = _discounted(line, args["percent_off"])
    return {
        "discounted_total_usd": total,
        "savings_usd": _money(line - total),
        "unit_price_usd": unit,
    }


@implementation
def check_purchase_budget(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _product(args["sku"])
    unit = _price(ctx, args["sku"])
    total = _money(unit * args["quantity"])
    most = min(int(args["budget_usd"] // unit), sum(_stock(ctx, args["sku"]).values()))
    return {
        "affordable": total <= args["budget_usd"],
        "total_usd": total,
        "remaining_usd": _money(args["budget_usd"] - total),
        "max_affordable_quantity": most,
    }


@implementation
def compare_products(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    skus = args["skus"]
    if len(set(skus)) != len(skus):
        raise InvalidValue("skus", "the same SKU is listed twice")
    rows = []
    for sku in skus:
        _product(sku, "skus")
        price = _price(ctx, sku)
        rating = _average([r["rating"] for r in _reviews(ctx, sku)])
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


# -- marketplace offers -------------------------------------------------------------------------
_SELLERS = _SEEDS.table("sellers", list[str])
_CONDITIONS = _SEEDS.table("conditions", dict[str, set[str]])


def _offers(ctx: ToolContext, sku: str) -> list[dict[str, Any]]:
    """Third-party seller offers on a SKU; the first is always new, the second always used."""
    base = _price(ctx, sku)
    out = []
    for i in range(4):
        key = f"shop:offer:{sku}:{i}"
        cond = (
            "new"
            if i == 0
            else ctx.pick(key + ":c", ["used_like_new", "refurbished"] + (["new"] if i > 1 else []))
        )
        factor = ctx.number(key + ":p", 0.86, 1.08) * (1.0 if cond == "new" else 0.8)
        price = _money(math.floor(base * factor) + 0.49)
        ship = ctx.pick(key + ":s", [0.0, 4.99, 7.5])
        out.append(
            {
                "offer_id": f"OF-{sku[4:]}-{i + 1}",
                "seller": ctx.pick(key + ":n", _SELLERS),
                "condition": cond,
                "price_usd": price,
                "shipping_usd": ship,
                "landed_price_usd": _money(price + ship),
            }
        )
    return out


def _cheapest(offers: list[dict[str, Any]]) -> dict[str, Any]:
    return min(offers, key=lambda o: (o["landed_price_usd"], o["offer_id"]))


@implementation
def find_best_offer(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _product(args["sku"])
    ok = _CONDITIONS[args.get("condition", "any")]
    offers = [o for o in _offers(ctx, args["sku"]) if o["condition"] in ok]
    return {"best_offer": _cheapest(offers), "offer_count": len(offers)}


@implementation
def list_marketplace_offers(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _product(args["sku"])
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
        "runner_up_gap_usd": _money(gap),
    }


# -- shipping ---------------------------------------------------------------------------------


@implementation
def get_package_weight(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _product(args["sku"])
    weight = _parcel_weight(args["sku"], args["quantity"])
    return {
        "sku": args["sku"],
        "shipping_weight_g": weight,
        "boxes": max(1, math.ceil(weight / 20000)),
    }


@implementation
def rate_parcel(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    svc = args["service_level"]
    return {
        "amount_usd": _ship_cost(args["weight_g"], args["to_country"], svc),
        "zone": _zone(args["to_country"]),
        "carrier": _SERVICE_CARRIER[svc],
    }


@implementation
def estimate_shipping(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _product(args["sku"])
    weight = _parcel_weight(args["sku"], args["quantity"])
    svc = args["service"]
    return {
        "cost_usd": _ship_cost(weight, args["destination_country"], svc),
        "transit_days": _transit_days(args["destination_country"], svc),
        "carrier": _SERVICE_CARRIER[svc],
    }


@implementation
def estimate_delivery_date(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _product(args["sku"])
    day, n = _delivery_date(
        args["sku"],
        args["destination_country"],
        args["order_date"],
        args.get("service", "standard"),
    )
    return {"estimated_delivery": day, "business_days": n}


@implementation
def get_delivery_promise(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    sku = args["product_id"]
    _product(sku, "product_id")
    speed = args.get("shipping_speed", "standard")
    day, _ = _delivery_date(sku, args["country_code"], args["purchase_date"], speed)
    dispatch, _ = _delivery_date(sku, "US", args["purchase_date"], "overnight")
    return {
        "promise": {"deliver_by": day, "dispatch_by": min(dispatch, day)},
        "shipping_speed": speed,
    }


@implementation
def list_shipping_rates(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    p, country = args["parcel"], args["address_to"]["country"]
    dim_weight = p["length_cm"] * p["width_cm"] * p["height_cm"] / 5  # 5000 cm3 per kg
    billable = int(max(p["weight_g"], math.ceil(dim_weight)))
    base = ctx.new_id("RATE")
    rates = [
        {
            "rate_id": f"{base}-{i + 1}",
            "provider": _SERVICE_CARRIER[svc],
            "servicelevel": svc,
            "amount_usd": _ship_cost(billable, country, svc),
            "estimated_days": _transit_days(country, svc),
        }
        for i, svc in enumerate(_SERVICE_MULT)
    ]
    return {
        "shipment_id": base.replace("RATE", "SHP"),
        "billable_weight_g": billable,
        "rates": rates,
    }


@implementation
def purchase_shipping_label(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    rate = ctx.state.get("shop_shipping_rates", args["rate_id"])
    assert rate is not None
    txn = ctx.new_id("TXN")
    fmt = args.get("label_file_type", "PDF").lower()
    prefix = {"USPS": "9400", "UPS": "1Z", "FedEx": "7712"}[rate["provider"]]
    digits = int(ctx.number(f"shop:trk:{args['rate_id']}", 1e9, 1e10 - 1, 0))
    return {
        "transaction_id": txn,
        "status": "SUCCESS",
        "tracking_number": f"{prefix}{digits}",
        "label_url": f"https://labels.example-ship.com/{txn.lower()}.{fmt}",
        "amount_usd": rate["amount_usd"],
    }


# -- carts and orders ---------------------------------------------------------------------------
@implementation
def create_cart(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    cid = ctx.new_id("CART")
    return {"cart_id": cid, "checkout_url": f"https://shop.example.com/checkout/{cid.lower()}"}


@implementation
def add_to_cart(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    cart = ctx.state.get("shop_carts", args["cart_id"])
    assert cart is not None
    _product(args["sku"])
    lines = [dict(ln) for ln in cart["lines"]]
    line = next((ln for ln in lines if ln["sku"] == args["sku"]), None)
    if line is None:
        line = {
            "line_id": f"{args['cart_id']}-L{len(lines) + 1}",
            "sku": args["sku"],
            "quantity": 0,
            "unit_price_usd": _price(ctx, args["sku"]),
        }
        lines.append(line)
    line["quantity"] += args["quantity"]
    _stock_check(ctx, args["sku"], line["quantity"])
    subtotal = _money(sum(ln["quantity"] * ln["unit_price_usd"] for ln in lines))
    pct = _COUPONS.get(cart.get("coupon") or "", 0.0)
    return {
        "cart_id": args["cart_id"],
        "lines": lines,
        "subtotal_usd": subtotal,
        "discount_usd": _money(subtotal - _discounted(subtotal, pct)),
        "total_quantity": sum(ln["quantity"] for ln in lines),
    }


@implementation
def apply_cart_coupon(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    cart = ctx.state.get("shop_carts", args["cart_id"])
    assert cart is not None
    pct = _coupon(args["discount_code"], "discount_code")
    if cart.get("coupon"):
        raise InvalidValue("discount_code", f"cart already uses code {cart['coupon']}")
    total = _discounted(cart["subtotal_usd"], pct)
    return {
        "cart_id": args["cart_id"],
        "discount_code": args["discount_code"],
        "discount_usd": _money(cart["subtotal_usd"] - total),
        "total_usd": total,
    }


@implementation
def checkout_cart(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    cart = ctx.state.get("shop_carts", args["cart_id"])
    assert cart is not None
    total = _money(cart["subtotal_usd"] - cart.get("discount_usd", 0.0))
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
    _product(args["sku"])
    _stock_check(ctx, args["sku"], args["quantity"])
    unit = _price(ctx, args["sku"])
    return {
        "order_id": ctx.new_id("ORD"),
        "status": "placed",
        "total_usd": _money(unit * args["quantity"]),
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
    fee = _money(order["total_usd"] * 0.15) if args["reason"] == "no_longer_needed" else 0.0
    rma = ctx.new_id("RMA")
    return {
        "return_id": rma,
        "status": "authorized",
        "label_url": f"https://returns.example.com/labels/{rma.lower()}.pdf",
        "refund_estimate_usd": _money(order["total_usd"] - fee),
        "restocking_fee_usd": fee,
    }


@implementation
def create_price_alert(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _product(args["sku"])
    now = _price(ctx, args["sku"])
    return {
        "alert_id": ctx.new_id("ALRT"),
        "current_price_usd": now,
        "target_price_usd": args["target_price_usd"],
        "triggered": now <= args["target_price_usd"],
    }


# -- initial state ----------------------------------------------------------------------------
@initial_state
def _shopping_state(seed: int) -> dict[str, dict[str, dict[str, Any]]]:
    # two open orders users may name (ORD-100245, ORD-100311) and one already cancelled one,
    # priced with the same helper the tools use so totals agree with the catalog
    ctx = ToolContext("shopping:init", {}, WorldState(), seed)

    def order(sku: str, qty: int, email: str, address: str, status: str) -> dict[str, Any]:
        unit = _price(ctx, sku)
        return {
            "status": status,
            "returnable": status == "placed",
            "total_usd": _money(unit * qty),
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
