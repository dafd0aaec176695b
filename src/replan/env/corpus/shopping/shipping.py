"""Shopping tools: shipping."""

from __future__ import annotations

import math
from typing import Any

from replan.env.corpus.registry import implementation
from replan.env.corpus.shopping import facts
from replan.env.world import ToolContext


@implementation
def get_package_weight(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    facts.product(args["sku"])
    weight = facts.parcel_weight(args["sku"], args["quantity"])
    return {
        "sku": args["sku"],
        "shipping_weight_g": weight,
        "boxes": max(1, math.ceil(weight / 20000)),
    }


@implementation
def rate_parcel(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    svc = args["service_level"]
    return {
        "amount_usd": facts.ship_cost(args["weight_g"], args["to_country"], svc),
        "zone": facts.shipping_zone(args["to_country"]),
        "carrier": facts.SERVICE_CARRIER[svc],
    }


@implementation
def estimate_shipping(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    facts.product(args["sku"])
    weight = facts.parcel_weight(args["sku"], args["quantity"])
    svc = args["service"]
    return {
        "cost_usd": facts.ship_cost(weight, args["destination_country"], svc),
        "transit_days": facts.transit_days(args["destination_country"], svc),
        "carrier": facts.SERVICE_CARRIER[svc],
    }


@implementation
def estimate_delivery_date(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    facts.product(args["sku"])
    day, n = facts.delivery_date(
        args["sku"],
        args["destination_country"],
        args["order_date"],
        args.get("service", "standard"),
    )
    return {"estimated_delivery": day, "business_days": n}


@implementation
def get_delivery_promise(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    sku = args["product_id"]
    facts.product(sku, "product_id")
    speed = args.get("shipping_speed", "standard")
    day, _ = facts.delivery_date(sku, args["country_code"], args["purchase_date"], speed)
    dispatch, _ = facts.delivery_date(sku, "US", args["purchase_date"], "overnight")
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
            "provider": facts.SERVICE_CARRIER[svc],
            "servicelevel": svc,
            "amount_usd": facts.ship_cost(billable, country, svc),
            "estimated_days": facts.transit_days(country, svc),
        }
        for i, svc in enumerate(facts.SERVICE_MULT)
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
