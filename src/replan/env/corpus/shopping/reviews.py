"""Shopping tools: reviews."""

from __future__ import annotations

from typing import Any

from replan.env.corpus.registry import implementation
from replan.env.corpus.shopping import facts
from replan.env.world import ToolContext


@implementation
def get_product_reviews(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    facts.product(args["sku"])
    reviews = facts.reviews(ctx, args["sku"])
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
    facts.product(args["product_id"], "product_id")
    ratings = [r["rating"] for r in facts.reviews(ctx, args["product_id"])]
    return {
        "product_id": args["product_id"],
        "average_overall_rating": facts.average(ratings),
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
        "average_rating": facts.average(ratings),
        "count": len(ratings),
        "stars": {str(v): ratings.count(v) for v in (1, 2, 3, 4, 5)},
    }
