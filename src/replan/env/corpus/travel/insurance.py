"""Travel tools: travel insurance."""

from __future__ import annotations

from typing import Any

from replan.env.corpus.registry import implementation
from replan.env.corpus.travel import facts
from replan.env.world import ToolContext


@implementation
def quote_travel_insurance(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    cover = args.get("coverage", "standard")
    region = (
        1.8
        if args["destination_country"] in ("US", "CA")
        else 1.2
        if args["destination_country"] in ("JP", "AU", "NZ", "GB")
        else 1.0
    )
    level = {"basic": 0.7, "standard": 1.0, "premium": 1.6}[cover]
    per_day = 0.0
    for age in args["traveller_ages"]:
        per_day += 2.1 * (0.5 if age < 18 else 1.0 if age < 40 else 1.4 if age < 65 else 2.5)
    trip_cost = args.get("trip_cost_usd", 0.0)
    premium = per_day * args["trip_days"] * region * level
    if cover != "basic":
        premium += trip_cost * 0.04
    return {
        "quote_id": ctx.new_id("IQ"),
        "premium_usd": round(premium, 2),
        "limits": {
            "medical_usd": {"basic": 50000.0, "standard": 250000.0, "premium": 1000000.0}[cover],
            "cancellation_usd": 0.0 if cover == "basic" else float(trip_cost),
            "baggage_usd": {"basic": 500.0, "standard": 1500.0, "premium": 3000.0}[cover],
        },
        "return_date": facts.plus_days(args["departure_date"], args["trip_days"]),
    }


@implementation
def purchase_travel_insurance(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    q = ctx.state.get("insurance_quotes", args["insurance_quote_id"]) or {}
    pol = ctx.new_id("POL")
    return {
        "policy_number": pol,
        "status": "active",
        "premium_charged_usd": q["premium_usd"],
        "certificate_url": f"https://insure.example.com/certificates/{pol}.pdf",
    }
