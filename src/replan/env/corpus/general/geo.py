"""General tools: geocoding, places and routing."""

from __future__ import annotations

import math
from typing import Any

from replan.env.corpus.general import facts
from replan.env.corpus.registry import implementation
from replan.env.world import InvalidValue, ToolContext


@implementation
def gmaps_geocode(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    g = facts.geocode_address(ctx, "address", args["address"])
    return {
        "status": "OK",
        "results": [
            {
                "formatted_address": g["formatted"],
                "place_id": g["place_id"],
                "geometry": {
                    "location": {"lat": g["lat"], "lng": g["lon"]},
                    "location_type": g["precision"],
                },
                "types": ["street_address"]
                if g["precision"] == "ROOFTOP"
                else ["locality", "political"],
            }
        ],
    }


@implementation
def mapbox_geocode(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    g = facts.geocode_address(ctx, "search_text", args["search_text"])
    return {
        "type": "FeatureCollection",
        "query": facts.fold(args["search_text"]).split(),
        "features": [
            {
                "id": g["place_id"],
                "place_name": g["formatted"],
                "center": [g["lon"], g["lat"]],
                "relevance": 1.0 if g["precision"] == "ROOFTOP" else 0.8,
            }
        ],
    }


@implementation
def gmaps_reverse_geocode(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    name, km = facts.nearest(args["latitude"], args["longitude"])
    if km > 150:
        raise InvalidValue("latitude", "ZERO_RESULTS: no locality within 150 km of that point")
    cc = facts.CITIES[name][2]
    return {
        "locality": name,
        "country": cc,
        "formatted_address": f"{name}, {facts.COUNTRY_NAMES.get(cc, cc)}",
        "distance_km": round(km, 2),
    }


_MODES = facts.SEEDS.table("modes", dict[str, tuple[float, float, int]])


@implementation
def gmaps_directions(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    a = ctx.state.get("gen_places", args["origin_place_id"])
    b = ctx.state.get("gen_places", args["destination_place_id"])
    assert a is not None and b is not None
    mode = args.get("mode", "driving")
    detour, speed, overhead = _MODES[mode]
    km = round(facts.haversine(a["lat"], a["lng"], b["lat"], b["lng"]) * detour, 1)
    if mode in ("walking", "bicycling") and km > 300:
        raise InvalidValue("mode", f"ZERO_RESULTS: no {mode} route over {km} km")
    if mode == "transit" and km > 1500:
        raise InvalidValue("mode", f"ZERO_RESULTS: no transit route over {km} km")
    if "ferries" in args.get("avoid", []) and km > 2500:
        raise InvalidValue("avoid", "ZERO_RESULTS: every route needs a ferry")
    minutes = 0 if km == 0 else round(km / speed * 60) + overhead
    via = ctx.pick(
        f"gen:route:{args['origin_place_id']}:{args['destination_place_id']}",
        ["A1", "N6", "I-25", "Ring Road", "Main St", "Coastal Rd"],
    )
    return {
        "status": "OK",
        "routes": [
            {
                "summary": via,
                "legs": [
                    {
                        "start_address": a["address"],
                        "end_address": b["address"],
                        "distance": {"value": int(km * 1000), "text": f"{km} km"},
                        "duration": {
                            "value": minutes * 60,
                            "text": f"{minutes // 60} h {minutes % 60} min"
                            if minutes >= 60
                            else f"{minutes} mins",
                        },
                    }
                ],
            }
        ],
        "distance_km": km,
        "duration_min": minutes,
    }


@implementation
def haversine_distance(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    la1, lo1, la2, lo2 = (
        args["from_latitude"],
        args["from_longitude"],
        args["to_latitude"],
        args["to_longitude"],
    )
    km = facts.haversine(la1, lo1, la2, lo2)
    p1, p2, dl = math.radians(la1), math.radians(la2), math.radians(lo2 - lo1)
    y = math.sin(dl) * math.cos(p2)
    x = math.cos(p1) * math.sin(p2) - math.sin(p1) * math.cos(p2) * math.cos(dl)
    bearing = (math.degrees(math.atan2(y, x)) + 360) % 360
    return {
        "distance_km": round(km, 2),
        "distance_mi": round(km / 1.609344, 2),
        "initial_bearing_deg": round(bearing, 1),
    }
