"""Travel tools: points of interest."""

from __future__ import annotations

from typing import Any

from replan.env.corpus.registry import implementation
from replan.env.corpus.travel import facts
from replan.env.world import InvalidValue, ToolContext

_POI_NAMES = facts.SEEDS.table("poi_names", dict[str, tuple[str, list[str]]])
_POI_CODES = {v[0]: k for k, v in _POI_NAMES.items()}


def _poi(ctx: ToolContext, poi_id: str, param: str) -> dict[str, Any]:
    try:
        _, iata, code, idx = poi_id.split("-")
        city, cat = facts.BY_IATA[iata], _POI_CODES[code]
        if not 1 <= int(idx) <= len(_POI_NAMES[cat][1]):
            raise ValueError(idx)
        name = _POI_NAMES[cat][1][int(idx) - 1].format(c=city)
    except (ValueError, KeyError, IndexError) as exc:
        raise InvalidValue(param, f"unknown place {poi_id!r}") from exc
    c = facts.CITIES[city]
    return {
        "poi_id": poi_id,
        "name": name,
        "category": cat,
        "city": city,
        "rating": ctx.number(f"poi:{poi_id}:r", 3.6, 4.9, 1),
        "lat": round(c[2] + ctx.number(f"poi:{poi_id}:lat", -0.04, 0.04, 5), 5),
        "lng": round(c[3] + ctx.number(f"poi:{poi_id}:lng", -0.04, 0.04, 5), 5),
        "address": f"{int(ctx.number(f'poi:{poi_id}:no', 1, 200, 0))} "
        f"{ctx.pick(f'poi:{poi_id}:st', facts.STREETS)}, {city}",
    }


def _pois(ctx: ToolContext, param: str, city: str, category: str) -> list[dict[str, Any]]:
    """The places of a category in a city, best rated first."""
    iata = facts.city(param, city)[1]
    code = _POI_NAMES[category][0]
    out = [_poi(ctx, f"POI-{iata}-{code}-{i}", param) for i in range(1, 6)]
    out.sort(key=lambda p: (-p["rating"], p["poi_id"]))
    return out


@implementation
def search_points_of_interest(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    ps = _pois(ctx, "city", args["city"], args["category"])[: args.get("limit", 5)]
    keep = ("poi_id", "name", "rating", "address", "lat", "lng")
    return {"results": [{k: p[k] for k in keep} for p in ps], "count": len(ps)}


@implementation
def explore_nearby_places(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    ps = _pois(ctx, "near", args["near"], args["section"])
    venues = [
        {
            "id": p["poi_id"],
            "name": p["name"],
            "location": {"formatted_address": p["address"], "lat": p["lat"], "lng": p["lng"]},
            "rating": round(p["rating"] * 2, 1),
        }
        for p in ps
    ]
    return {"venues": venues, "top_pick_id": venues[0]["id"]}


@implementation
def estimate_route(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    a = _poi(ctx, args["origin_poi_id"], "origin_poi_id")
    b = _poi(ctx, args["destination_poi_id"], "destination_poi_id")
    if a["poi_id"] == b["poi_id"]:
        raise InvalidValue("destination_poi_id", "origin and destination are the same place")
    if a["city"] != b["city"]:
        raise InvalidValue("destination_poi_id", "the two places are in different cities")
    mode = args.get("mode", "walking")
    km = round(facts.km(a["lat"], a["lng"], b["lat"], b["lng"]) * 1.3, 2)
    speed, wait = {
        "walking": (4.8, 0),
        "bicycling": (15, 0),
        "driving": (28, 3),
        "transit": (20, 6),
    }[mode]
    return {"distance_km": km, "duration_min": max(1, round(km / speed * 60 + wait)), "mode": mode}
