"""General tools: time zones."""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

from replan.env.corpus import timezones
from replan.env.corpus.general import facts
from replan.env.corpus.registry import implementation
from replan.env.world import InvalidValue, ToolContext


@implementation
def owm_geocode_city(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    name, rec = facts.city("q", args["q"])
    return {
        "matches": [
            {
                "name": name,
                "lat": rec[0],
                "lon": rec[1],
                "country": rec[2],
                "local_names": {"en": name},
            }
        ]
    }


@implementation
def gmaps_timezone(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    tz = facts.tz_at(args["latitude"], args["longitude"])
    day = dt.date.fromisoformat(args.get("date", facts.NOW.date().isoformat()))
    total, dst = timezones.offset_min(tz, day)
    return {
        "status": "OK",
        "timeZoneId": tz,
        "timeZoneName": facts.TZ_NAMES.get(tz, f"GMT{timezones.fmt_offset(total)}"),
        "rawOffset": (total - dst) * 60,
        "dstOffset": dst * 60,
    }


@implementation
def wikidata_search_entity(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    name, rec = facts.city("search", args["search"])
    return {
        "searchinfo": {"search": args["search"]},
        "search": [
            {
                "id": rec[5],
                "label": name,
                "description": f"city in {facts.COUNTRY_NAMES.get(rec[2], rec[2])}",
                "concepturi": f"http://www.wikidata.org/entity/{rec[5]}",
            }
        ],
    }


@implementation
def wikidata_entity_timezone(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    name = facts.WIKIDATA_INDEX.get(args["entity_id"])
    if name is None:
        raise InvalidValue("entity_id", f"{args['entity_id']} has no P421 (time zone) claim")
    return {
        "entity_id": args["entity_id"],
        "label": name,
        "property": "P421",
        "time_zone": facts.CITIES[name][3],
    }


@implementation
def convert_timezone(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    timezones.zone("from_timezone", args["from_timezone"])
    timezones.zone("to_timezone", args["to_timezone"])
    local, off = timezones.utc_to_local(
        timezones.local_to_utc(args["date"], args["time"], args["from_timezone"]),
        args["to_timezone"],
    )
    shift = (local.date() - dt.date.fromisoformat(args["date"])).days
    return {
        "date": local.date().isoformat(),
        "time": local.strftime("%H:%M"),
        "utc_offset": timezones.fmt_offset(off),
        "day_shift": shift,
    }


@implementation
def local_to_utc(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    timezones.zone("timezone", args["timezone"])
    instant = timezones.local_to_utc(args["local_date"], args["local_time"], args["timezone"])
    off, dst = timezones.offset_min(args["timezone"], dt.date.fromisoformat(args["local_date"]))
    return {
        "utc": instant.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "offset_applied": timezones.fmt_offset(off),
        "is_dst": dst > 0,
    }


@implementation
def utc_to_local(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    timezones.zone("timezone", args["timezone"])
    local, off = timezones.utc_to_local(facts.parse_utc("utc", args["utc"]), args["timezone"])
    return {
        "date": local.date().isoformat(),
        "time": local.strftime("%H:%M"),
        "utc_offset": timezones.fmt_offset(off),
        "zone_name": facts.TZ_NAMES.get(args["timezone"], args["timezone"]),
    }


# -- sunrise / sunset ---------------------------------------------------------------------------
@implementation
def geonames_search(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    name, rec = facts.city("q", args["q"])
    if "country" in args and args["country"] != rec[2]:
        return {"totalResultsCount": 0, "geonames": []}
    return {
        "totalResultsCount": 1,
        "geonames": [
            {
                "geonameId": rec[6],
                "name": name,
                "lat": rec[0],
                "lng": rec[1],
                "countryCode": rec[2],
                "countryName": facts.COUNTRY_NAMES.get(rec[2], rec[2]),
                "population": rec[4],
                "fcode": "PPLC" if rec[4] > 3_000_000 else "PPLA",
            }
        ],
    }


@implementation
def geonames_timezone(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    sun = facts.sun(args["lat"], args["lng"], args["date"])
    std = timezones.TZ[sun["timezone"]][0]
    near, km = facts.nearest(args["lat"], args["lng"])
    return {
        "timezoneId": sun["timezone"],
        "gmtOffset": std / 60,
        "dstOffset": sun["offset_min"] / 60,
        "date": args["date"],
        "sunrise": sun["sunrise"],
        "sunset": sun["sunset"],
        "countryCode": facts.CITIES[near][2] if km <= 300 else "XX",
    }


@implementation
def nominatim_search(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    name, rec = facts.city("q", args["q"])
    return {
        "results": [
            {
                "osm_id": int(ctx.number("gen:osm:" + name, 10_000, 9_999_999, 0)),
                "osm_type": "relation",
                "display_name": f"{name}, {facts.COUNTRY_NAMES.get(rec[2], rec[2])}",
                "lat": rec[0],
                "lon": rec[1],
                "class": "boundary",
                "type": "administrative",
                "importance": round(min(0.95, 0.5 + math.log10(rec[4]) / 20), 3),
            }
        ]
    }


@implementation
def sunrise_sunset_times(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    sun = facts.sun(args["lat"], args["lng"], args["date"])
    tzid = args.get("tzid", sun["timezone"])
    timezones.zone("tzid", tzid)
    out = {k: sun[k] for k in ("sunrise", "sunset", "solar_noon")}
    if tzid != sun["timezone"]:
        for k, v in out.items():
            utc = timezones.local_to_utc(args["date"], v, sun["timezone"])
            out[k] = timezones.utc_to_local(utc, tzid)[0].strftime("%H:%M")
    return {
        "status": "OK",
        "tzid": tzid,
        "results": {**out, "day_length_min": sun["day_length_min"]},
    }
