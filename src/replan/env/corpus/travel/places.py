"""Travel tools: airports and places."""

from __future__ import annotations

from typing import Any

from replan.env.corpus.registry import implementation
from replan.env.corpus.travel import facts
from replan.env.world import InvalidValue, ToolContext


@implementation
def airport_autocomplete(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    term = args["term"].strip().lower()
    hits = []
    for code, name in facts.AIRPORT_NAMES.items():
        city = facts.BY_IATA[code]
        if term == code.lower() or term in city.lower() or term in name.lower():
            rank = 0 if term in (city.lower(), code.lower()) else 1
            hits.append(
                (
                    rank,
                    code,
                    {"code": code, "name": name, "city": city, "country": facts.CITIES[city][0]},
                )
            )
    hits.sort(key=lambda h: (h[0], h[1]))
    return {"locations": [h[2] for h in hits][: args.get("limit", 5)]}


@implementation
def resolve_city_airport(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    info = facts.city("city", args["city"])
    return {
        "iata": info[1],
        "airport_name": facts.AIRPORT_NAMES[info[1]],
        "city": args["city"],
        "country": info[0],
    }


@implementation
def geocode_destination(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    c = facts.city("address", args["address"])
    return {
        "status": "OK",
        "results": [
            {
                "formatted_address": f"{args['address']}, {c[0]}",
                "geometry": {"location": {"lat": c[2], "lng": c[3]}},
                "country_code": c[0],
            }
        ],
    }


@implementation
def timezone_at_coordinates(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    lat, lng = args["lat"], args["lng"]
    best = min(facts.CITIES.values(), key=lambda c: facts.km(lat, lng, c[2], c[3]))
    if facts.km(lat, lng, best[2], best[3]) <= 250:
        zone = best[4]
        raw, name = facts.ZONES[zone]
    else:  # open ocean / unmapped: nautical time zone
        hours = round(lng / 15)
        zone = "Etc/GMT" if hours == 0 else f"Etc/GMT{'-' if hours > 0 else '+'}{abs(hours)}"
        raw, name = hours * 3600, f"UTC{hours:+d}"
    return {
        "status": "OK",
        "timeZoneId": zone,
        "timeZoneName": name,
        "rawOffset": raw,
        "dstOffset": 0,
    }


@implementation
def lookup_locode(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    c = facts.city("city", args["city"])
    if args.get("country") not in (None, c[0]):
        raise InvalidValue("country", f"{args['city']} is not in {args['country']}")
    return {"locode": c[6], "name": args["city"], "country": c[0]}


def _dms(value: float, pos: str, neg: str, width: int) -> str:
    minutes = round(abs(value) * 60)
    return f"{minutes // 60:0{width}d}{minutes % 60:02d}{pos if value >= 0 else neg}"


@implementation
def get_locode_details(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    try:
        name = facts.BY_LOCODE[args["locode"]]
    except KeyError as exc:
        raise InvalidValue("locode", f"unknown UN/LOCODE {args['locode']!r}") from exc
    c = facts.CITIES[name]
    funcs = ["rail", "road", "airport"]
    if name in (
        "Lisbon",
        "Porto",
        "Tallinn",
        "Osaka",
        "Tokyo",
        "New York",
        "Montreal",
        "Mombasa",
        "Auckland",
        "Wellington",
        "Valparaiso",
        "Ho Chi Minh City",
    ):
        funcs.insert(0, "port")
    return {
        "locode": args["locode"],
        "name": name,
        "country": c[0],
        "functions": funcs,
        "coordinates": f"{_dms(c[2], 'N', 'S', 2)} {_dms(c[3], 'E', 'W', 3)}",
        "iata": c[1],
        "timezone": c[4],
    }


@implementation
def get_travel_advisory(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    c = args["country"]
    level = {
        "FR": 2,
        "DE": 2,
        "GB": 2,
        "ES": 2,
        "KE": 2,
        "MX": 2,
        "CO": 3,
        "VE": 4,
        "UA": 4,
        "HT": 4,
    }.get(c, 1)
    labels = [
        "Exercise normal precautions",
        "Exercise increased caution",
        "Reconsider travel",
        "Do not travel",
    ]
    updated = facts.plus_days("2026-06-01", int(ctx.number(f"adv:{c}", 0, 150, 0)))
    return {"country": c, "level": level, "label": labels[level - 1], "last_updated": updated}
