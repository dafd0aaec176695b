"""Shopping: catalog search, prices, reviews, stock, carts, orders, coupons, shipping, returns.

Every fact comes from one private helper keyed by the product or order it describes, so two
providers asked about the same SKU agree on its price, stock, weight and reviews.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from typing import Any

from replan.core.tools import Effect, Precondition
from replan.env.corpus.kinds import ADDRESS, CITY, COUNT, COUNTRY, DATE, EMAIL, URL, USD, kind
from replan.env.corpus.registry import alternatives, initial_state, s, tool
from replan.env.world import InvalidValue, ToolContext, WorldState

# -- kinds ----------------------------------------------------------------------------------
SKU = kind(
    "product_sku",
    "a store product SKU",
    ["SKU-10001", "SKU-10005", "SKU-10008", "SKU-10010", "SKU-10015", "SKU-10016"],
)
PRODUCT_QUERY = kind(
    "product_query",
    "keywords for a product search",
    [
        "wireless earbuds",
        "running shoes",
        "espresso machine",
        "hiking backpack",
        "air purifier",
        "coffee grinder",
        "4k monitor",
        "cookbook",
    ],
)
CATEGORY = kind(
    "product_category",
    "a store department",
    ["electronics", "kitchen", "outdoor", "apparel", "home", "books"],
)
SKU_LIST = kind(
    "product_sku_list",
    "several product SKUs to compare",
    [
        ["SKU-10010", "SKU-10011"],
        ["SKU-10001", "SKU-10002", "SKU-10003"],
        ["SKU-10005", "SKU-10006"],
    ],
)
WAREHOUSE = kind("warehouse_id", "a fulfilment-centre location id", ["WH-LIS", "WH-DEN", "WH-OSA"])
COUPON = kind(
    "coupon_code", "a store promotion code", ["WELCOME10", "SPRING15", "OUTDOOR20", "BOOKS5"]
)
DISCOUNT = kind("discount_percent", "the percentage a validated promotion takes off a price")
STOCK = kind("stock_units", "units of a product available to sell across fulfilment centres")
RATING = kind("product_rating", "an average star rating between 1 and 5")
STAR_RATINGS = kind("star_ratings", "the individual 1-5 star ratings of a product's reviews")
REVIEW_ID = kind("product_review_id", "a product review identifier")
WEIGHT = kind("parcel_weight_g", "a parcel's shipping weight in grams", [500, 1200, 3400])
SERVICE = kind("shipping_service", "a shipping service level", ["standard", "express", "overnight"])
DESTINATION = kind(
    "shipping_destination",
    "a shipping destination: country code and postal code",
    [
        {"country": "PT", "postal_code": "1100-148"},
        {"country": "US", "postal_code": "80202"},
        {"country": "JP", "postal_code": "530-0001"},
    ],
)
PARCEL = kind(
    "parcel_dimensions",
    "a parcel's weight in grams and box size in centimetres",
    [
        {"weight_g": 1200, "length_cm": 30, "width_cm": 20, "height_cm": 10},
        {"weight_g": 3400, "length_cm": 45, "width_cm": 35, "height_cm": 20},
    ],
)
RATE_ID = kind("shipping_rate_id", "a purchasable carrier rate returned by a shipment quote")
LABEL_ID = kind("shipping_label_id", "a purchased shipping label (transaction) id")
TRACKING = kind("parcel_tracking_number", "a carrier tracking number")
STORE_ID = kind("retail_store_id", "a physical store identifier")
CART = kind("shop_cart_id", "an open shopping cart")
ORDER = kind("shop_order_id", "a store order number", ["ORD-100245", "ORD-100311"])
#: stored cards come from the Financial domain's payment processor (``payment_method_id``)
PAYMENT = "payment_method_id"
RETURN_ID = kind("return_authorization_id", "a return merchandise authorization (RMA) number")
RETURN_REASON = kind(
    "return_reason",
    "why an item is sent back",
    ["damaged", "wrong_item", "no_longer_needed", "not_as_described"],
)
ALERT = kind("price_alert_id", "a price-drop alert subscription")
OFFER_ID = kind("marketplace_offer_id", "one seller's offer for a product on a marketplace")
OFFER_LIST = kind("marketplace_offer_list", "the seller offers listed for a product")

# -- the catalog and other fixed tables -------------------------------------------------------
_CATALOG: dict[str, dict[str, Any]] = {
    "SKU-10001": {
        "title": "Aria Wireless Earbuds",
        "brand": "Sonique",
        "category": "electronics",
        "weight_g": 60,
        "price": (49, 89),
        "tags": "bluetooth audio earphones",
    },
    "SKU-10002": {
        "title": "Aria Pro Noise-Cancelling Headphones",
        "brand": "Sonique",
        "category": "electronics",
        "weight_g": 280,
        "price": (149, 249),
        "tags": "bluetooth audio over-ear wireless",
    },
    "SKU-10003": {
        "title": "Volt 65W USB-C Charger",
        "brand": "Ampere",
        "category": "electronics",
        "weight_g": 120,
        "price": (29, 45),
        "tags": "laptop power adapter gan",
    },
    "SKU-10004": {
        "title": "Lumen 27-inch 4K Monitor",
        "brand": "Pixelon",
        "category": "electronics",
        "weight_g": 5200,
        "price": (299, 429),
        "tags": "display screen uhd",
    },
    "SKU-10005": {
        "title": "Barista One Espresso Machine",
        "brand": "Cremano",
        "category": "kitchen",
        "weight_g": 7800,
        "price": (349, 549),
        "tags": "coffee maker",
    },
    "SKU-10006": {
        "title": "Cremano Burr Coffee Grinder",
        "brand": "Cremano",
        "category": "kitchen",
        "weight_g": 2400,
        "price": (89, 149),
        "tags": "espresso beans",
    },
    "SKU-10007": {
        "title": "Forge Cast Iron Skillet 12in",
        "brand": "Hearthline",
        "category": "kitchen",
        "weight_g": 3400,
        "price": (35, 59),
        "tags": "pan cookware frying",
    },
    "SKU-10008": {
        "title": "Trailblazer 2-Person Tent",
        "brand": "Northpeak",
        "category": "outdoor",
        "weight_g": 2900,
        "price": (159, 239),
        "tags": "camping backpacking shelter",
    },
    "SKU-10009": {
        "title": "Summit 30L Hiking Backpack",
        "brand": "Northpeak",
        "category": "outdoor",
        "weight_g": 1100,
        "price": (79, 129),
        "tags": "daypack trekking bag",
    },
    "SKU-10010": {
        "title": "Stride Trail Running Shoes",
        "brand": "Velo",
        "category": "apparel",
        "weight_g": 620,
        "price": (99, 149),
        "tags": "sneakers footwear",
    },
    "SKU-10011": {
        "title": "Stride Road Running Shoes",
        "brand": "Velo",
        "category": "apparel",
        "weight_g": 580,
        "price": (89, 139),
        "tags": "sneakers footwear",
    },
    "SKU-10012": {
        "title": "Merino Crew Sweater",
        "brand": "Fjordwool",
        "category": "apparel",
        "weight_g": 450,
        "price": (69, 119),
        "tags": "wool knitwear jumper",
    },
    "SKU-10013": {
        "title": "Halo Smart LED Desk Lamp",
        "brand": "Lumina",
        "category": "home",
        "weight_g": 1300,
        "price": (39, 69),
        "tags": "light dimmable office",
    },
    "SKU-10014": {
        "title": "Cloudrest Memory Foam Pillow",
        "brand": "Dormio",
        "category": "home",
        "weight_g": 1200,
        "price": (29, 59),
        "tags": "bedding sleep",
    },
    "SKU-10015": {
        "title": "Aeris HEPA Air Purifier",
        "brand": "Lumina",
        "category": "home",
        "weight_g": 5600,
        "price": (129, 199),
        "tags": "allergy filter clean air",
    },
    "SKU-10016": {
        "title": "The Pragmatic Kitchen Cookbook",
        "brand": "Folio",
        "category": "books",
        "weight_g": 900,
        "price": (19, 35),
        "tags": "recipes hardcover cooking",
    },
    "SKU-10017": {
        "title": "Field Guide to Mountain Birds",
        "brand": "Folio",
        "category": "books",
        "weight_g": 700,
        "price": (15, 29),
        "tags": "nature birding paperback",
    },
    "SKU-10018": {
        "title": "Thermo Steel Water Bottle 750ml",
        "brand": "Northpeak",
        "category": "outdoor",
        "weight_g": 400,
        "price": (19, 35),
        "tags": "insulated flask hydration",
    },
}
_CATEGORIES = ["electronics", "kitchen", "outdoor", "apparel", "home", "books"]
_SEARCH_INDEX = {
    "All": None,
    "Electronics": {"electronics"},
    "HomeAndKitchen": {"home", "kitchen"},
    "SportsAndOutdoors": {"outdoor"},
    "Fashion": {"apparel"},
    "Books": {"books"},
}
_WAREHOUSES = ["WH-LIS", "WH-DEN", "WH-OSA"]
_COUPONS = {"WELCOME10": 10.0, "SPRING15": 15.0, "OUTDOOR20": 20.0, "BOOKS5": 5.0}
_EXPIRED_COUPONS = {"SUMMER25": "2026-09-01", "BLACKFRI30": "2026-11-30"}
_ZONES = {
    "US": 1,
    "CA": 2,
    "DE": 3,
    "FR": 3,
    "PL": 3,
    "PT": 3,
    "EE": 3,
    "JP": 4,
    "VN": 4,
    "NZ": 4,
    "KE": 5,
    "CL": 5,
}
_SERVICE_MULT = {"standard": 1.0, "express": 1.75, "overnight": 3.2}
_SERVICE_CARRIER = {"standard": "USPS", "express": "UPS", "overnight": "FedEx"}
_AUTHORS = ["Priya N.", "Tomasz W.", "Aiko S.", "Joao P.", "Grace O.", "Mateo R.", "Lena K."]
_REVIEW_TITLES = {
    5: ["Exactly what I needed", "Outstanding quality"],
    4: ["Solid buy", "Good value for the money"],
    3: ["Does the job", "Mixed feelings"],
    2: ["Disappointing", "Not as described"],
    1: ["Broke within a week", "Would not buy again"],
}

_SKU_PATTERN = "^SKU-[0-9]{5}$"
_ORDER_PATTERN = "^ORD-[0-9A-F]{6,8}$"
_COUNTRY_PATTERN = "^[A-Z]{2}$"


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
@tool(
    domain="Shopping",
    category="source",
    group="product_search",
    description="Full-text product search over the storefront (Shopify Storefront API style).",
    params={
        "query": s.string("search terms", PRODUCT_QUERY, min_len=2, max_len=120),
        "product_type": s.enum(_CATEGORIES, "restrict to one department", CATEGORY),
        "max_price": s.number("highest unit price in USD", USD, exclusive_minimum=0),
        "sort_key": s.enum(["RELEVANCE", "PRICE"], "result ordering"),
        "reverse": s.boolean("reverse the sort order"),
        "first": s.integer("page size", minimum=1, maximum=50),
    },
    required=["query"],
    returns=s.obj(
        {
            "products": s.array(
                s.obj(
                    {
                        "sku": s.string("", SKU),
                        "title": s.string(),
                        "vendor": s.string(),
                        "product_type": s.string("", CATEGORY),
                        "price_usd": s.number("", USD, minimum=0),
                        "available_for_sale": s.boolean(),
                    }
                )
            ),
            "total_count": s.integer(minimum=0),
            "top_sku": s.string("most relevant match", SKU),
        },
        required=["products", "total_count"],
    ),
)
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


@tool(
    domain="Shopping",
    category="source",
    group="product_search",
    description="Keyword search in a marketplace catalog (Amazon PA-API SearchItems style).",
    params={
        "keywords": s.string("keywords to search for", PRODUCT_QUERY, min_len=2),
        "search_index": s.enum(list(_SEARCH_INDEX), "catalog index to search"),
        "item_count": s.integer("items per page", minimum=1, maximum=10),
        "min_reviews_rating": s.integer("minimum average star rating", minimum=1, maximum=4),
    },
    required=["keywords"],
    returns=s.obj(
        {
            "search_result": s.obj(
                {
                    "total_result_count": s.integer(minimum=0),
                    "items": s.array(
                        s.obj(
                            {
                                "item_id": s.string("", SKU),
                                "detail_page_url": s.string("", URL),
                                "item_info": s.obj({"title": s.string(), "brand": s.string()}),
                                "offers": s.obj(
                                    {"amount": s.number("", USD), "currency": s.string()}
                                ),
                            }
                        )
                    ),
                }
            ),
            "best_match_id": s.string("most relevant item", SKU),
        },
        required=["search_result"],
    ),
)
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


alternatives(
    "product_search",
    "1-1",
    ["search_products"],
    ["catalog_search"],
    description="two catalog search providers ranking the same products",
    output_kind=SKU,
)


@tool(
    domain="Shopping",
    category="source",
    description="Fetch a product's full record: brand, department, weight, price and images.",
    params={"sku": s.string("product SKU", SKU, pattern=_SKU_PATTERN)},
    returns=s.obj(
        {
            "sku": s.string("", SKU),
            "title": s.string(),
            "brand": s.string(),
            "category": s.string("", CATEGORY),
            "weight_g": s.integer("", WEIGHT, minimum=1),
            "price": s.obj({"amount": s.number("", USD, minimum=0), "currency_code": s.string()}),
            "images": s.array(s.string("", URL)),
        }
    ),
)
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


@tool(
    domain="Shopping",
    category="source",
    group="product_price",
    description="Current selling price of a SKU, with the list (compare-at) price.",
    params={"sku": s.string("product SKU", SKU, pattern=_SKU_PATTERN)},
    returns=s.obj(
        {
            "sku": s.string("", SKU),
            "unit_price_usd": s.number("", USD, minimum=0),
            "list_price_usd": s.number("", USD, minimum=0),
            "on_sale": s.boolean(),
        }
    ),
)
def get_product_price(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _product(args["sku"])
    price, listed = _price(ctx, args["sku"]), _list_price(ctx, args["sku"])
    return {
        "sku": args["sku"],
        "unit_price_usd": price,
        "list_price_usd": listed,
        "on_sale": price < listed,
    }


@tool(
    domain="Shopping",
    category="source",
    group="product_price",
    description="Price tracker (Keepa style): current price plus weekly history and range.",
    params={
        "product_id": s.string("SKU to track", SKU, pattern=_SKU_PATTERN),
        "days": s.integer("history window in days", minimum=7, maximum=90),
    },
    required=["product_id"],
    returns=s.obj(
        {
            "product_id": s.string("", SKU),
            "current_price_usd": s.number("", USD, minimum=0),
            "lowest_usd": s.number("", USD),
            "highest_usd": s.number("", USD),
            "history": s.array(s.obj({"days_ago": s.integer(minimum=0), "price_usd": s.number()})),
        }
    ),
)
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


alternatives(
    "product_price",
    "1-1",
    ["get_product_price"],
    ["track_product_price"],
    description="catalog price API vs a price tracker reporting the same current price",
    output_kind=USD,
)


# -- reviews --------------------------------------------------------------------------------------
@tool(
    domain="Shopping",
    category="source",
    group="product_rating",
    description="List customer reviews of a product; also returns every star rating.",
    params={
        "sku": s.string("product SKU", SKU, pattern=_SKU_PATTERN),
        "sort": s.enum(["most_recent", "most_helpful", "lowest_rating"], "review ordering"),
        "limit": s.integer("reviews to return", minimum=1, maximum=20),
    },
    required=["sku"],
    returns=s.obj(
        {
            "reviews": s.array(
                s.obj(
                    {
                        "review_id": s.string("", REVIEW_ID),
                        "rating": s.integer(minimum=1, maximum=5),
                        "title": s.string(),
                        "author": s.string(),
                        "verified_purchase": s.boolean(),
                        "helpful_votes": s.integer(minimum=0),
                    }
                )
            ),
            "ratings": s.array(s.integer(minimum=1, maximum=5), "all star ratings", STAR_RATINGS),
            "total_reviews": s.integer(minimum=0),
        }
    ),
)
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


@tool(
    domain="Shopping",
    category="source",
    group="product_rating",
    description="Review statistics for a product (Bazaarvoice style): average and distribution.",
    params={"product_id": s.string("SKU", SKU, pattern=_SKU_PATTERN)},
    returns=s.obj(
        {
            "product_id": s.string("", SKU),
            "average_overall_rating": s.number("", RATING, minimum=1, maximum=5),
            "total_review_count": s.integer(minimum=0),
            "rating_distribution": s.array(
                s.obj({"rating_value": s.integer(), "count": s.integer()})
            ),
            "recommended_percent": s.number("", minimum=0, maximum=100),
        }
    ),
)
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


@tool(
    domain="Shopping",
    category="processor",
    group="product_rating",
    description="Average a list of 1-5 star ratings and count each star value.",
    params={
        "ratings": s.array(
            s.integer(minimum=1, maximum=5), "star ratings", STAR_RATINGS, min_items=1
        )
    },
    returns=s.obj(
        {
            "average_rating": s.number("", RATING, minimum=1, maximum=5),
            "count": s.integer(minimum=1),
            "stars": s.obj({str(v): s.integer(minimum=0) for v in (1, 2, 3, 4, 5)}),
        }
    ),
)
def aggregate_review_scores(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    ratings = args["ratings"]
    return {
        "average_rating": _average(ratings),
        "count": len(ratings),
        "stars": {str(v): ratings.count(v) for v in (1, 2, 3, 4, 5)},
    }


alternatives(
    "product_rating",
    "1-N",
    ["get_rating_summary"],
    ["get_product_reviews", "aggregate_review_scores"],
    description="review statistics API vs listing reviews and averaging their stars",
    output_kind=RATING,
)


# -- stock ------------------------------------------------------------------------------------
@tool(
    domain="Shopping",
    category="source",
    group="stock_level",
    description="Inventory levels of a SKU per fulfilment centre (Shopify InventoryLevel style).",
    params={
        "sku": s.string("product SKU", SKU, pattern=_SKU_PATTERN),
        "location_ids": s.array(
            s.string("", WAREHOUSE, pattern="^WH-[A-Z]{3}$"),
            "only these locations",
            min_items=1,
            max_items=3,
        ),
    },
    required=["sku"],
    returns=s.obj(
        {
            "inventory_levels": s.array(
                s.obj({"location_id": s.string("", WAREHOUSE), "available": s.integer(minimum=0)})
            ),
            "total_available": s.integer("", STOCK, minimum=0),
        }
    ),
)
def check_stock_levels(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _product(args["sku"])
    stock = _stock(ctx, args["sku"])
    locs = args.get("location_ids", _WAREHOUSES)
    for loc in locs:
        if loc not in stock:
            raise InvalidValue("location_ids", f"unknown fulfilment location {loc!r}")
    levels = [{"location_id": loc, "available": stock[loc]} for loc in locs]
    return {"inventory_levels": levels, "total_available": sum(lv["available"] for lv in levels)}


@tool(
    domain="Shopping",
    category="source",
    group="stock_level",
    description="Online availability of a product: orderable quantity and dispatch time.",
    params={"product_id": s.string("SKU", SKU, pattern=_SKU_PATTERN)},
    returns=s.obj(
        {
            "product_id": s.string("", SKU),
            "online_availability": s.boolean(),
            "quantity_available": s.integer("", STOCK, minimum=0),
            "ships_in_days": s.integer(minimum=0),
        }
    ),
)
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


alternatives(
    "stock_level",
    "1-1",
    ["check_stock_levels"],
    ["get_product_availability"],
    description="inventory API vs availability API over the same stock",
    output_kind=STOCK,
)


@tool(
    domain="Shopping",
    category="source",
    description="In-store pickup: stock of a SKU at the stores of a city.",
    params={
        "sku": s.string("product SKU", SKU, pattern=_SKU_PATTERN),
        "city": s.string("city to search in", CITY, min_len=2),
        "radius_km": s.integer("search radius", minimum=1, maximum=100),
    },
    required=["sku", "city"],
    returns=s.obj(
        {
            "stores": s.array(
                s.obj(
                    {
                        "store_id": s.string("", STORE_ID),
                        "name": s.string(),
                        "address": s.string("", ADDRESS),
                        "quantity": s.integer(minimum=0),
                        "pickup_today": s.boolean(),
                    }
                )
            )
        }
    ),
)
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
@tool(
    domain="Shopping",
    category="source",
    group="coupon_price",
    description="Validate a promotion code and return its discount.",
    params={"code": s.string("promotion code", COUPON, pattern="^[A-Z0-9]{4,16}$")},
    returns=s.obj(
        {
            "code": s.string("", COUPON),
            "valid": s.boolean(),
            "percent_off": s.number("", DISCOUNT, minimum=0, maximum=100),
            "description": s.string(),
        }
    ),
)
def validate_coupon(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    pct = _coupon(args["code"], "code")
    return {
        "code": args["code"],
        "valid": True,
        "percent_off": pct,
        "description": f"{pct:g}% off the order subtotal",
    }


@tool(
    domain="Shopping",
    category="processor",
    group="coupon_price",
    description="Price a line item: unit price times quantity.",
    params={
        "sku": s.string("product SKU", SKU, pattern=_SKU_PATTERN),
        "quantity": s.integer("units", COUNT, minimum=1, maximum=50),
    },
    returns=s.obj(
        {
            "sku": s.string("", SKU),
            "quantity": s.integer("", COUNT),
            "unit_price_usd": s.number("", USD),
            "line_total_usd": s.number("", USD),
        }
    ),
)
def price_line_item(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _product(args["sku"])
    unit = _price(ctx, args["sku"])
    return {
        "sku": args["sku"],
        "quantity": args["quantity"],
        "unit_price_usd": unit,
        "line_total_usd": _money(unit * args["quantity"]),
    }


@tool(
    domain="Shopping",
    category="processor",
    group="coupon_price",
    description="Apply a promotion code to an amount and return the discounted total.",
    params={
        "amount_usd": s.number("pre-discount amount", USD, minimum=0),
        "coupon_code": s.string("promotion code", COUPON, pattern="^[A-Z0-9]{4,16}$"),
    },
    returns=s.obj(
        {
            "original_usd": s.number("", USD),
            "discount_usd": s.number("", USD),
            "discounted_total_usd": s.number("", USD),
        }
    ),
)
def apply_coupon_code(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    pct = _coupon(args["coupon_code"], "coupon_code")
    total = _discounted(args["amount_usd"], pct)
    return {
        "original_usd": args["amount_usd"],
        "discount_usd": _money(args["amount_usd"] - total),
        "discounted_total_usd": total,
    }


@tool(
    domain="Shopping",
    category="processor",
    group="coupon_price",
    description="Quote the price of a SKU and quantity after a percentage discount.",
    params={
        "sku": s.string("product SKU", SKU, pattern=_SKU_PATTERN),
        "quantity": s.integer("units", COUNT, minimum=1, maximum=50),
        "percent_off": s.number("discount in percent", DISCOUNT, minimum=0, maximum=100),
    },
    returns=s.obj(
        {
            "discounted_total_usd": s.number("", USD),
            "savings_usd": s.number("", USD),
            "unit_price_usd": s.number("", USD),
        }
    ),
)
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


alternatives(
    "coupon_price",
    "N-N",
    ["price_line_item", "apply_coupon_code"],
    ["validate_coupon", "quote_discounted_price"],
    description="price then apply the code, or read the code's discount then quote",
    output_kind=USD,
)


@tool(
    domain="Shopping",
    category="processor",
    description="Check whether a quantity of a product fits a budget in USD.",
    params={
        "sku": s.string("product SKU", SKU, pattern=_SKU_PATTERN),
        "quantity": s.integer("units wanted", COUNT, minimum=1, maximum=50),
        "budget_usd": s.number("spending limit in USD", USD, minimum=0),
    },
    returns=s.obj(
        {
            "affordable": s.boolean(),
            "total_usd": s.number("", USD),
            "remaining_usd": s.number("budget left (negative if over)"),
            "max_affordable_quantity": s.integer("", COUNT, minimum=0),
        }
    ),
)
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


@tool(
    domain="Shopping",
    category="processor",
    description="Rank several products by price, rating or value (rating per dollar).",
    params={
        "skus": s.array(
            s.string("", SKU, pattern=_SKU_PATTERN),
            "products to compare",
            SKU_LIST,
            min_items=2,
            max_items=10,
        ),
        "criterion": s.enum(["price", "rating", "value"], "ranking criterion"),
    },
    required=["skus"],
    returns=s.obj(
        {
            "ranking": s.array(
                s.obj(
                    {
                        "sku": s.string("", SKU),
                        "price_usd": s.number("", USD),
                        "rating": s.number("", RATING),
                        "score": s.number(),
                    }
                )
            ),
            "winner_sku": s.string("", SKU),
        }
    ),
)
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
_SELLERS = ["BrightDeals", "Northwind Outlet", "Cedar & Co", "ParcelPoint", "UrbanCart"]
_CONDITIONS = {
    "new": {"new"},
    "used": {"used_like_new", "refurbished"},
    "any": {"new", "used_like_new", "refurbished"},
}


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


_OFFER = s.obj(
    {
        "offer_id": s.string("", OFFER_ID),
        "seller": s.string(),
        "condition": s.enum(["new", "used_like_new", "refurbished"]),
        "price_usd": s.number("", USD, minimum=0),
        "shipping_usd": s.number("", USD, minimum=0),
        "landed_price_usd": s.number("item plus shipping", USD, minimum=0),
    }
)
_CONDITION_PARAM = s.enum(list(_CONDITIONS), "item condition to accept")


@tool(
    domain="Shopping",
    category="source",
    group="best_offer",
    description="Best marketplace offer for a product: lowest price including shipping.",
    params={
        "sku": s.string("product SKU", SKU, pattern=_SKU_PATTERN),
        "condition": _CONDITION_PARAM,
    },
    required=["sku"],
    returns=s.obj({"best_offer": _OFFER, "offer_count": s.integer(minimum=1)}),
)
def find_best_offer(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _product(args["sku"])
    ok = _CONDITIONS[args.get("condition", "any")]
    offers = [o for o in _offers(ctx, args["sku"]) if o["condition"] in ok]
    return {"best_offer": _cheapest(offers), "offer_count": len(offers)}


@tool(
    domain="Shopping",
    category="source",
    group="best_offer",
    description="List every seller offer for a product (Google Shopping offers style).",
    params={
        "sku": s.string("product SKU", SKU, pattern=_SKU_PATTERN),
        "condition": _CONDITION_PARAM,
    },
    required=["sku"],
    returns=s.obj(
        {
            "sku": s.string("", SKU),
            "offers": s.array(_OFFER, "seller offers", OFFER_LIST, min_items=1),
        }
    ),
)
def list_marketplace_offers(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _product(args["sku"])
    ok = _CONDITIONS[args.get("condition", "any")]
    return {
        "sku": args["sku"],
        "offers": [o for o in _offers(ctx, args["sku"]) if o["condition"] in ok],
    }


@tool(
    domain="Shopping",
    category="processor",
    group="best_offer",
    description="Pick the cheapest of several offers by landed price (item plus shipping).",
    params={
        "offers": s.array(
            s.obj(
                {
                    "offer_id": s.string("", OFFER_ID),
                    "landed_price_usd": s.number("", USD, minimum=0),
                },
                required=["offer_id", "landed_price_usd"],
            ),
            "offers to compare",
            OFFER_LIST,
            min_items=1,
        )
    },
    returns=s.obj(
        {
            "offer_id": s.string("", OFFER_ID),
            "landed_price_usd": s.number("", USD, minimum=0),
            "runner_up_gap_usd": s.number("how much cheaper than the next", USD),
        }
    ),
)
def pick_cheapest_offer(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    ranked = sorted(args["offers"], key=lambda o: (o["landed_price_usd"], o["offer_id"]))
    gap = ranked[1]["landed_price_usd"] - ranked[0]["landed_price_usd"] if len(ranked) > 1 else 0.0
    return {
        "offer_id": ranked[0]["offer_id"],
        "landed_price_usd": ranked[0]["landed_price_usd"],
        "runner_up_gap_usd": _money(gap),
    }


alternatives(
    "best_offer",
    "1-N",
    ["find_best_offer"],
    ["list_marketplace_offers", "pick_cheapest_offer"],
    description="best-offer API vs listing the offers and picking the cheapest",
    output_kind=USD,
)


# -- shipping ---------------------------------------------------------------------------------
_SERVICE_PARAM = s.enum(list(_SERVICE_MULT), "service level", SERVICE)


@tool(
    domain="Shopping",
    category="source",
    group="shipping_cost",
    description="Shipping weight and box size for a quantity of a product.",
    params={
        "sku": s.string("product SKU", SKU, pattern=_SKU_PATTERN),
        "quantity": s.integer("units", COUNT, minimum=1, maximum=50),
    },
    returns=s.obj(
        {
            "sku": s.string("", SKU),
            "shipping_weight_g": s.integer("", WEIGHT, minimum=1),
            "boxes": s.integer(minimum=1),
        }
    ),
)
def get_package_weight(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _product(args["sku"])
    weight = _parcel_weight(args["sku"], args["quantity"])
    return {
        "sku": args["sku"],
        "shipping_weight_g": weight,
        "boxes": max(1, math.ceil(weight / 20000)),
    }


@tool(
    domain="Shopping",
    category="processor",
    group="shipping_cost",
    description="Carrier rate calculator: price a parcel of a given weight to a country.",
    params={
        "weight_g": s.integer("parcel weight in grams", WEIGHT, minimum=1, maximum=70000),
        "to_country": s.string("destination country", COUNTRY, pattern=_COUNTRY_PATTERN),
        "service_level": _SERVICE_PARAM,
    },
    returns=s.obj(
        {
            "amount_usd": s.number("", USD, minimum=0),
            "zone": s.integer(minimum=1),
            "carrier": s.string(),
        }
    ),
)
def rate_parcel(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    svc = args["service_level"]
    return {
        "amount_usd": _ship_cost(args["weight_g"], args["to_country"], svc),
        "zone": _zone(args["to_country"]),
        "carrier": _SERVICE_CARRIER[svc],
    }


@tool(
    domain="Shopping",
    category="processor",
    group="shipping_cost",
    description="Estimate shipping cost and transit time for a quantity of a SKU to a country.",
    params={
        "sku": s.string("product SKU", SKU, pattern=_SKU_PATTERN),
        "quantity": s.integer("units", COUNT, minimum=1, maximum=50),
        "destination_country": s.string("ISO country code", COUNTRY, pattern=_COUNTRY_PATTERN),
        "service": _SERVICE_PARAM,
    },
    returns=s.obj(
        {
            "cost_usd": s.number("", USD, minimum=0),
            "transit_days": s.integer(minimum=1),
            "carrier": s.string(),
        }
    ),
)
def estimate_shipping(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _product(args["sku"])
    weight = _parcel_weight(args["sku"], args["quantity"])
    svc = args["service"]
    return {
        "cost_usd": _ship_cost(weight, args["destination_country"], svc),
        "transit_days": _transit_days(args["destination_country"], svc),
        "carrier": _SERVICE_CARRIER[svc],
    }


alternatives(
    "shipping_cost",
    "1-N",
    ["estimate_shipping"],
    ["get_package_weight", "rate_parcel"],
    description="one shipping estimate vs weighing the parcel and rating it",
    output_kind=USD,
)


_DELIVERY_SPEED = s.enum(list(_SERVICE_MULT), "shipping speed", SERVICE)


@tool(
    domain="Shopping",
    category="processor",
    group="delivery_date",
    description="Estimate the delivery date of a product ordered on a date.",
    params={
        "sku": s.string("product SKU", SKU, pattern=_SKU_PATTERN),
        "destination_country": s.string("ISO country code", COUNTRY, pattern=_COUNTRY_PATTERN),
        "order_date": s.date("day the order is placed"),
        "service": _DELIVERY_SPEED,
    },
    required=["sku", "destination_country", "order_date"],
    returns=s.obj(
        {"estimated_delivery": s.date("expected arrival"), "business_days": s.integer(minimum=1)}
    ),
)
def estimate_delivery_date(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _product(args["sku"])
    day, n = _delivery_date(
        args["sku"],
        args["destination_country"],
        args["order_date"],
        args.get("service", "standard"),
    )
    return {"estimated_delivery": day, "business_days": n}


@tool(
    domain="Shopping",
    category="processor",
    group="delivery_date",
    description="Delivery promise shown at checkout: the latest arrival date for an order.",
    params={
        "product_id": s.string("SKU", SKU, pattern=_SKU_PATTERN),
        "country_code": s.string("shipping country", COUNTRY, pattern=_COUNTRY_PATTERN),
        "purchase_date": s.date("purchase day"),
        "shipping_speed": _DELIVERY_SPEED,
    },
    required=["product_id", "country_code", "purchase_date"],
    returns=s.obj(
        {
            "promise": s.obj(
                {"deliver_by": s.date("guaranteed arrival"), "dispatch_by": s.date("", None)}
            ),
            "shipping_speed": s.string("", SERVICE),
        }
    ),
)
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


alternatives(
    "delivery_date",
    "1-1",
    ["estimate_delivery_date"],
    ["get_delivery_promise"],
    description="two delivery-date estimators over the same handling and transit times",
    output_kind=DATE,
)


@tool(
    domain="Shopping",
    category="source",
    description="Quote carrier rates for a parcel (Shippo shipment style); rates can be bought.",
    params={
        "address_to": s.obj(
            {
                "country": s.string("", COUNTRY, pattern=_COUNTRY_PATTERN),
                "postal_code": s.string("", min_len=3, max_len=10),
            },
            "destination",
            DESTINATION,
        ),
        "parcel": s.obj(
            {
                "weight_g": s.integer("", minimum=1, maximum=70000),
                "length_cm": s.number("", exclusive_minimum=0, maximum=200),
                "width_cm": s.number("", exclusive_minimum=0, maximum=200),
                "height_cm": s.number("", exclusive_minimum=0, maximum=200),
            },
            "parcel size and weight",
            PARCEL,
        ),
    },
    returns=s.obj(
        {
            "shipment_id": s.string(),
            "billable_weight_g": s.integer("", WEIGHT),
            "rates": s.array(
                s.obj(
                    {
                        "rate_id": s.string("", RATE_ID),
                        "provider": s.string(),
                        "servicelevel": s.string("", SERVICE),
                        "amount_usd": s.number("", USD, minimum=0),
                        "estimated_days": s.integer(minimum=1),
                    }
                ),
                min_items=3,
                max_items=3,
            ),
        }
    ),
    effects=[
        Effect(
            op="create",
            collection="shop_shipping_rates",
            key=f"rates.{i}.rate_id",
            fields={
                "status": "quoted",
                "amount_usd": f"$output.rates.{i}.amount_usd",
                "provider": f"$output.rates.{i}.provider",
                "service": f"$output.rates.{i}.servicelevel",
                "country": "$arg.address_to.country",
            },
        )
        for i in range(3)
    ],
)
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


@tool(
    domain="Shopping",
    category="action",
    description="Buy a quoted carrier rate and get the label and tracking number.",
    params={
        "rate_id": s.string(
            "rate from a shipment quote", RATE_ID, pattern="^RATE-[0-9A-F]{8}-[1-3]$"
        ),
        "label_file_type": s.enum(["PDF", "PNG", "ZPLII"], "label format"),
    },
    required=["rate_id"],
    returns=s.obj(
        {
            "transaction_id": s.string("", LABEL_ID),
            "status": s.enum(["SUCCESS"]),
            "tracking_number": s.string("", TRACKING),
            "label_url": s.string("", URL),
            "amount_usd": s.number("", USD),
        }
    ),
    preconditions=[
        Precondition(
            kind="field_equals",
            collection="shop_shipping_rates",
            arg="rate_id",
            field="status",
            value="quoted",
            description="the rate must be quoted and not yet purchased",
        )
    ],
    effects=[
        Effect(
            op="update",
            collection="shop_shipping_rates",
            key="rate_id",
            fields={"status": "purchased"},
        ),
        Effect(
            op="create",
            collection="shop_labels",
            key="transaction_id",
            fields={"rate_id": "$arg.rate_id", "tracking_number": "$output.tracking_number"},
        ),
    ],
)
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
@tool(
    domain="Shopping",
    category="action",
    group="place_order",
    description="Create an empty shopping cart for a buyer.",
    params={
        "buyer_email": s.email("buyer's e-mail"),
        "note": s.string("order note", max_len=500),
    },
    required=["buyer_email"],
    returns=s.obj({"cart_id": s.string("", CART), "checkout_url": s.string("", URL)}),
    effects=[
        Effect(
            op="create",
            collection="shop_carts",
            key="cart_id",
            fields={
                "checked_out": False,
                "has_items": False,
                "email": "$arg.buyer_email",
                "lines": [],
                "subtotal_usd": 0.0,
                "coupon": None,
                "discount_usd": 0.0,
            },
        )
    ],
)
def create_cart(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    cid = ctx.new_id("CART")
    return {"cart_id": cid, "checkout_url": f"https://shop.example.com/checkout/{cid.lower()}"}


_LINE = s.obj(
    {
        "line_id": s.string(),
        "sku": s.string("", SKU),
        "quantity": s.integer(minimum=1),
        "unit_price_usd": s.number("", USD),
    }
)
_OPEN_CART = Precondition(
    kind="field_equals",
    collection="shop_carts",
    arg="cart_id",
    field="checked_out",
    value=False,
    description="the cart must exist and not be checked out yet",
)
_FILLED_CART = Precondition(
    kind="field_equals",
    collection="shop_carts",
    arg="cart_id",
    field="has_items",
    value=True,
    description="the cart must hold at least one item (add_to_cart)",
)


@tool(
    domain="Shopping",
    category="action",
    group="place_order",
    description="Add units of a SKU to an open cart (Shopify cartLinesAdd style).",
    params={
        "cart_id": s.string("cart to add to", CART, pattern="^CART-"),
        "sku": s.string("product SKU", SKU, pattern=_SKU_PATTERN),
        "quantity": s.integer("units to add", COUNT, minimum=1, maximum=20),
    },
    returns=s.obj(
        {
            "cart_id": s.string("", CART),
            "lines": s.array(_LINE),
            "subtotal_usd": s.number("", USD),
            "discount_usd": s.number("", USD),
            "total_quantity": s.integer("", COUNT, minimum=1),
        }
    ),
    preconditions=[_OPEN_CART],
    effects=[
        Effect(
            op="update",
            collection="shop_carts",
            key="cart_id",
            fields={
                "lines": "$output.lines",
                "subtotal_usd": "$output.subtotal_usd",
                "discount_usd": "$output.discount_usd",
                "has_items": True,
            },
        )
    ],
)
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


@tool(
    domain="Shopping",
    category="action",
    description="Attach a promotion code to an open cart.",
    params={
        "cart_id": s.string("cart", CART, pattern="^CART-"),
        "discount_code": s.string("promotion code", COUPON, pattern="^[A-Z0-9]{4,16}$"),
    },
    returns=s.obj(
        {
            "cart_id": s.string("", CART),
            "discount_code": s.string("", COUPON),
            "discount_usd": s.number("", USD),
            "total_usd": s.number("", USD),
        }
    ),
    preconditions=[_OPEN_CART],
    effects=[
        Effect(
            op="update",
            collection="shop_carts",
            key="cart_id",
            fields={"coupon": "$arg.discount_code", "discount_usd": "$output.discount_usd"},
        )
    ],
)
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


_ORDER_OUT = s.obj(
    {
        "order_id": s.string("", ORDER),
        "status": s.enum(["placed"]),
        "total_usd": s.number("amount charged", USD, minimum=0),
        "confirmation_email": s.string("", EMAIL),
        "line_items": s.array(
            s.obj(
                {
                    "sku": s.string("", SKU),
                    "quantity": s.integer(minimum=1),
                    "unit_price_usd": s.number("", USD),
                }
            )
        ),
    }
)


def _order_effect() -> Effect:
    return Effect(
        op="create",
        collection="shop_orders",
        key="order_id",
        fields={
            "status": "placed",
            "returnable": True,
            "total_usd": "$output.total_usd",
            "email": "$output.confirmation_email",
            "lines": "$output.line_items",
            "shipping_address": "$arg.shipping_address",
        },
    )


_PAYMENT_PARAM = s.string("saved payment method", PAYMENT, pattern="^pm_[A-Za-z0-9_]{3,40}$")


@tool(
    domain="Shopping",
    category="action",
    group="place_order",
    description="Check out an open cart: charge the payment method and create the order.",
    params={
        "cart_id": s.string("cart to check out", CART, pattern="^CART-"),
        "shipping_address": s.string("delivery address", ADDRESS, min_len=5),
        "payment_method": _PAYMENT_PARAM,
    },
    returns=_ORDER_OUT,
    preconditions=[_OPEN_CART, _FILLED_CART],
    effects=[
        Effect(
            op="update",
            collection="shop_carts",
            key="cart_id",
            fields={"checked_out": True, "order_id": "$output.order_id"},
        ),
        _order_effect(),
    ],
)
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


@tool(
    domain="Shopping",
    category="action",
    group="place_order",
    description="One-click purchase of a SKU: creates a paid order without a cart.",
    params={
        "sku": s.string("product SKU", SKU, pattern=_SKU_PATTERN),
        "quantity": s.integer("units", COUNT, minimum=1, maximum=20),
        "buyer_email": s.email("buyer's e-mail"),
        "shipping_address": s.string("delivery address", ADDRESS, min_len=5),
        "payment_method": _PAYMENT_PARAM,
    },
    returns=_ORDER_OUT,
    effects=[_order_effect()],
)
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


alternatives(
    "place_order",
    "1-N",
    ["buy_now"],
    ["create_cart", "add_to_cart", "checkout_cart"],
    description="one-click purchase vs cart, add item, checkout (same order total)",
    output_kind=ORDER,
)


@tool(
    domain="Shopping",
    category="source",
    description="Order status with fulfilment and carrier tracking.",
    params={"order_id": s.string("order number", ORDER, pattern=_ORDER_PATTERN)},
    returns=s.obj(
        {
            "order_id": s.string("", ORDER),
            "status": s.enum(["placed", "cancelled", "return_requested"]),
            "financial_status": s.enum(["paid", "refunded", "refund_pending"]),
            "total_usd": s.number("", USD),
            "fulfillment": s.obj(
                {
                    "carrier": s.string(),
                    "tracking_number": s.string("", TRACKING),
                    "shipment_status": s.string(),
                }
            ),
        }
    ),
    preconditions=[
        Precondition(
            kind="exists", collection="shop_orders", arg="order_id", description="no such order"
        )
    ],
)
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


@tool(
    domain="Shopping",
    category="action",
    description="Cancel an order that has not shipped and refund it in full.",
    params={
        "order_id": s.string("order number", ORDER, pattern=_ORDER_PATTERN),
        "reason": s.enum(
            ["customer", "inventory", "fraud", "declined", "other"], "cancellation reason"
        ),
        "email_customer": s.boolean("notify the buyer"),
    },
    required=["order_id"],
    returns=s.obj(
        {
            "order_id": s.string("", ORDER),
            "status": s.enum(["cancelled"]),
            "refund_usd": s.number("", USD, minimum=0),
        }
    ),
    preconditions=[
        Precondition(
            kind="field_equals",
            collection="shop_orders",
            arg="order_id",
            field="status",
            value="placed",
            description="only a placed, unshipped order can be cancelled",
        )
    ],
    effects=[
        Effect(
            op="update",
            collection="shop_orders",
            key="order_id",
            fields={"status": "cancelled", "returnable": False, "cancel_reason": "$arg.reason"},
        )
    ],
)
def cancel_order(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    order = ctx.state.get("shop_orders", args["order_id"])
    assert order is not None
    return {"order_id": args["order_id"], "status": "cancelled", "refund_usd": order["total_usd"]}


@tool(
    domain="Shopping",
    category="action",
    description="Open a return (RMA) for an order and get a prepaid return label.",
    params={
        "order_id": s.string("order number", ORDER, pattern=_ORDER_PATTERN),
        "reason": s.enum(
            ["damaged", "wrong_item", "no_longer_needed", "not_as_described"],
            "why it is returned",
            RETURN_REASON,
        ),
        "comments": s.string("details for the warehouse", max_len=1000),
    },
    required=["order_id", "reason"],
    returns=s.obj(
        {
            "return_id": s.string("", RETURN_ID),
            "status": s.enum(["authorized"]),
            "label_url": s.string("", URL),
            "refund_estimate_usd": s.number("", USD),
            "restocking_fee_usd": s.number("", USD, minimum=0),
        }
    ),
    preconditions=[
        Precondition(
            kind="field_equals",
            collection="shop_orders",
            arg="order_id",
            field="returnable",
            value=True,
            description="the order must exist and still be returnable",
        )
    ],
    effects=[
        Effect(
            op="update",
            collection="shop_orders",
            key="order_id",
            fields={"status": "return_requested", "returnable": False},
        ),
        Effect(
            op="create",
            collection="shop_returns",
            key="return_id",
            fields={
                "order_id": "$arg.order_id",
                "reason": "$arg.reason",
                "refund_usd": "$output.refund_estimate_usd",
            },
        ),
    ],
)
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


@tool(
    domain="Shopping",
    category="action",
    description="Subscribe to a price-drop alert on a product.",
    params={
        "sku": s.string("product SKU", SKU, pattern=_SKU_PATTERN),
        "target_price_usd": s.number(
            "alert when the price falls to this", USD, exclusive_minimum=0
        ),
        "notify_email": s.email("where to send the alert"),
    },
    returns=s.obj(
        {
            "alert_id": s.string("", ALERT),
            "current_price_usd": s.number("", USD),
            "target_price_usd": s.number("", USD),
            "triggered": s.boolean(),
        }
    ),
    effects=[
        Effect(
            op="create",
            collection="shop_price_alerts",
            key="alert_id",
            fields={
                "sku": "$arg.sku",
                "target_price_usd": "$arg.target_price_usd",
                "email": "$arg.notify_email",
                "status": "active",
            },
        )
    ],
)
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


__all__ = ["CART", "ORDER", "PRODUCT_QUERY", "SKU"]
