"""N-N group, Travel: a city's country and currency."""

from __future__ import annotations

from typing import Any

from replan.env.corpus.groups import facts
from replan.env.corpus.registry import implementation
from replan.env.world import InvalidValue, ToolContext

#: city -> (ISO country, ICAO ident of its main airport, currency)
_CITIES = facts.SEEDS.table("cities", dict[str, tuple[str, str, str]])
_BY_ICAO = {v[1]: k for k, v in _CITIES.items()}
_BY_SLUG = {facts.slug(k): k for k in _CITIES}


def _city(param: str, name: str) -> tuple[str, str, str]:
    for k, v in _CITIES.items():
        if k.lower() == name.strip().lower():
            return v
    raise InvalidValue(param, f"unknown city {name!r}")


@implementation
def ourairports_search(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    c = _city("municipality", args["municipality"])
    return {"airports": [{"ident": c[1], "municipality": args["municipality"]}]}


@implementation
def ourairports_airport(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    city = _BY_ICAO.get(args["ident"])
    if city is None:
        raise InvalidValue("ident", f"no airport {args['ident']}")
    return {
        "ident": args["ident"],
        "iso_country": _CITIES[city][0],
        "elevation_ft": int(ctx.number(f"apt:{args['ident']}:elev", 5, 5400, 0)),
    }


@implementation
def geodb_find_cities(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _city("namePrefix", args["namePrefix"])
    name = args["namePrefix"].strip()
    return {
        "data": [{"id": "GDB-" + facts.slug(name), "name": name}],
        "metadata": {"totalCount": 1},
    }


@implementation
def geodb_city_details(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    city = _BY_SLUG.get(args["cityId"][4:])
    if city is None:
        raise InvalidValue("cityId", f"no city {args['cityId']}")
    return {
        "data": {
            "id": args["cityId"],
            "countryCode": _CITIES[city][0],
            "population": int(ctx.number(f"city:{city}:pop", 2e5, 9e6, 0)),
        }
    }


@implementation
def numbeo_city_search(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _city("query", args["query"])
    name = next(k for k in _CITIES if k.lower() == args["query"].strip().lower())
    return {"city_id": 5000 + list(_CITIES).index(name), "name": name}


@implementation
def numbeo_city_prices(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    i = args["city_id"] - 5000
    if not 0 <= i < len(_CITIES):
        raise InvalidValue("city_id", f"no city {args['city_id']}")
    city = list(_CITIES)[i]
    return {
        "city_id": args["city_id"],
        "currency": _CITIES[city][2],
        "contributors": int(ctx.number(f"city:{city}:contrib", 40, 900, 0)),
    }


@implementation
def teleport_city_search(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _city("search", args["search"])
    return {"ua_slug": facts.slug(args["search"]), "matches": 1}


@implementation
def teleport_ua_details(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    city = _BY_SLUG.get(args["slug"])
    if city is None:
        raise InvalidValue("slug", f"no urban area {args['slug']!r}")
    return {
        "slug": args["slug"],
        "currency_code": _CITIES[city][2],
        "cost_of_living_index": ctx.number(f"city:{city}:col", 2, 9.5),
    }
