"""Many-to-many (N-N) routes to one fact: pairs of two-call chains from different providers.

Each group below offers two chains of two tools that take the same input kinds and end in the
same fact (a supplier's remittance e-mail, a city's country, a barcode's store SKU, ...). Facts
live in private helpers keyed by what they describe, never by the tool, so both chains agree;
intermediate handles (supplier numbers, ICAO idents, scan ids) encode what they name.
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any

from replan.env.corpus.data import SeedTables
from replan.env.corpus.kinds import KINDS
from replan.env.corpus.registry import implementation
from replan.env.world import InvalidValue, ToolContext

_SEEDS = SeedTables.load(__package__)  # seeds.json beside this module


VENDOR = "pth_vendor_name"
STATION = "pth_weather_station"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _digits(ctx: ToolContext, key: str, n: int) -> str:
    return str(int(ctx.number(key, 10 ** (n - 1), 10**n - 1, 0)))


# == Financial: a supplier's remittance e-mail ==================================================
def _vendor(param: str, name: str) -> str:
    name = name.strip()
    if len(name) < 3:
        raise InvalidValue(param, "supplier name too short")
    return name


def _remit_email(name: str) -> str:
    return f"ap@{_slug(name).replace('-', '')[:20]}.example.com"


@implementation
def coupa_search_suppliers(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    name = _vendor("name_contains", args["name_contains"])
    if args.get("status", "active") != "active":
        return {"suppliers": []}
    num = "SUP-" + _digits(ctx, f"vendor:{name}:no", 6)
    return {"suppliers": [{"number": num, "name": name, "status": "active"}]}


@implementation
def coupa_get_supplier_contact(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    # the number was issued by a search; its name is kept in the lookup table below
    name = _supplier_by_number(ctx, args["number"], "number")
    return {
        "number": args["number"],
        "primary_contact": {"name_family": "Accounts Payable", "email": _remit_email(name)},
        "payment_term": ctx.pick(f"vendor:{name}:terms", ["Net 30", "Net 45", "Net 60"]),
    }


def _supplier_by_number(ctx: ToolContext, number: str, param: str) -> str:
    for name in _known_vendors():
        if "SUP-" + _digits(ctx, f"vendor:{name}:no", 6) == number:
            return name
    raise InvalidValue(param, f"no supplier {number!r}")


def _known_vendors() -> list[str]:
    return list(KINDS[VENDOR].examples)


@implementation
def quickbooks_query_vendors(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    name = _vendor("display_name", args["display_name"])
    vid = "QBV" + _slug(name).replace("-", "_")
    return {"QueryResponse": {"Vendor": [{"Id": vid, "DisplayName": name}], "maxResults": 1}}


@implementation
def quickbooks_read_vendor(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    key = args["vendor_id"][3:]
    name = next((v for v in _known_vendors() if _slug(v).replace("-", "_") == key), None)
    if name is None:
        raise InvalidValue("vendor_id", f"vendor {args['vendor_id']} not found")
    return {
        "Vendor": {
            "Id": args["vendor_id"],
            "PrimaryEmailAddr": {"Address": _remit_email(name)},
            "Balance": ctx.number(f"vendor:{name}:bal", 0, 9000),
        }
    }


# == Financial: the holder of an IBAN (confirmation of payee) ===================================
_HOLDERS = _SEEDS.table("holders", list[str])
_IBAN_RE = "^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$"


def _iban(param: str, iban: str) -> str:
    iban = iban.replace(" ", "").upper()
    if not re.match(_IBAN_RE, iban):
        raise InvalidValue(param, f"not an IBAN: {iban!r}")
    return iban


def _holder(ctx: ToolContext, iban: str) -> str:
    return ctx.pick(f"iban:{iban}:holder", _HOLDERS)


def _bic(ctx: ToolContext, iban: str) -> str:
    return f"{ctx.pick(f'iban:{iban}:bank', ['BCOM', 'CGDI', 'NWBK', 'DEUT', 'BPKO'])}{iban[:2]}XX"


@implementation
def ibanapi_validate(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    iban = _iban("iban", args["iban"])
    bic = _bic(ctx, iban)
    return {
        "result": 1,
        "data": {"country_code": iban[:2], "bank": {"bic": bic, "bank_name": f"Bank {bic[:4]}"}},
    }


@implementation
def verify_payee_name(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    iban = _iban("account_iban", args["account_iban"])
    return {"match": "name_returned", "account_name": _holder(ctx, iban)}


@implementation
def wise_create_recipient(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    iban = _iban("iban", args["iban"])
    return {"id": f"rcp-{iban}", "type": "iban"}


@implementation
def wise_get_recipient(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    iban = _iban("account_id", args["account_id"][4:])
    return {
        "id": args["account_id"],
        "accountHolderName": _holder(ctx, iban),
        "details": {"iban": iban},
    }


# == Travel: a city's country and currency ======================================================
#: city -> (ISO country, ICAO ident of its main airport, currency)
_CITIES = _SEEDS.table("cities", dict[str, tuple[str, str, str]])
_BY_ICAO = {v[1]: k for k, v in _CITIES.items()}
_BY_SLUG = {_slug(k): k for k in _CITIES}


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
        "data": [{"id": "GDB-" + _slug(name), "name": name}],
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
    return {"ua_slug": _slug(args["search"]), "matches": 1}


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


# == Shopping: the store SKU behind a barcode ===================================================
_EAN_SKU = _SEEDS.table("ean_sku", dict[str, str])
_MPN = {ean: f"MPN-{sku[4:]}-{ean[-3:]}" for ean, sku in _EAN_SKU.items()}


def _ean(param: str, code: str) -> str:
    if not re.fullmatch("[0-9]{13}", code):
        raise InvalidValue(param, "an EAN-13 has 13 digits")
    total = sum(int(d) * (3 if i % 2 else 1) for i, d in enumerate(code[:12]))
    if (10 - total % 10) % 10 != int(code[12]):
        raise InvalidValue(param, f"bad check digit in {code}")
    if code not in _EAN_SKU:
        raise InvalidValue(param, f"barcode {code} is not in the catalogue")
    return code


@implementation
def upcitemdb_lookup(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    ean = _ean("upc", args["upc"].zfill(13))
    return {"code": "OK", "items": [{"ean": ean, "model": _MPN[ean]}]}


@implementation
def catalog_find_by_mpn(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    ean = next((e for e, m in _MPN.items() if m == args["mpn"]), None)
    if ean is None:
        raise InvalidValue("mpn", f"no listing for {args['mpn']}")
    return {"sku": _EAN_SKU[ean], "listing_status": "active"}


@implementation
def inventory_scan_barcode(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    ean = _ean("ean13", args["ean13"])
    return {"scan_id": f"SCN-{ean}", "valid_checksum": True}


@implementation
def inventory_resolve_scan(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    ean = _ean("scan_id", args["scan_id"][4:])
    sku = _EAN_SKU[ean]
    return {
        "scan_id": args["scan_id"],
        "item": {"sku": sku, "on_hand": int(ctx.number(f"sku:{sku}:onhand", 0, 40, 0))},
    }


# == Office: someone's first free half hour on a day ============================================
def _day(param: str, date: str) -> str:
    try:
        _dt.date.fromisoformat(date)
    except ValueError as exc:
        raise InvalidValue(param, f"not a date: {date!r}") from exc
    return date


def _free_slot(ctx: ToolContext, email: str, date: str) -> str:
    busy = [ctx.number(f"busy:{email.lower()}:{date}:{h}", 0, 1) < 0.55 for h in range(18)]
    for i, b in enumerate(busy):  # half-hour slots from 08:00
        if not b:
            return f"{8 + i // 2:02d}:{30 * (i % 2):02d}"
    return "17:00"


@implementation
def graph_get_user(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    upn = args["userPrincipalName"].lower()
    return {"id": "gu:" + upn, "displayName": upn.split("@")[0].replace(".", " ").title()}


@implementation
def graph_find_meeting_times(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    day = _day("day", args["day"])
    slot = _free_slot(ctx, args["user_id"][3:], day)
    return {"meetingTimeSuggestions": [{"start": slot}], "emptySuggestionsReason": ""}


@implementation
def gcal_freebusy_query(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    date = _day("date", args["date"])
    return {"kind": "calendar#freeBusy", "query_token": f"fb|{args['calendar_id'].lower()}|{date}"}


@implementation
def gcal_first_gap(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _, email, date = args["token"].split("|", 2)
    _day("token", date)
    slot = _free_slot(ctx, email, date)
    h, m = map(int, slot.split(":"))
    return {"first_free": slot, "busy_blocks": (h - 8) * 2 + m // 30}


# == IoT: the day's high at a home weather station ==============================================
def _station(param: str, name: str) -> str:
    for st in KINDS[STATION].examples:
        if st.lower() == name.strip().lower():
            return st
    raise InvalidValue(param, f"no station named {name!r}")


def _high(ctx: ToolContext, station: str, date: str) -> float:
    return ctx.number(f"wx:{station}:{date}:high", 17.0, 23.0, 1)


@implementation
def netatmo_get_stations(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    st = _station("station_name", args["station_name"])
    mac = "02:00:00:" + ":".join(f"{ord(c) % 100:02d}" for c in st[:3])
    return {"devices": [{"module_id": mac, "name": st}]}


@implementation
def netatmo_get_measure(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    st = next(
        (
            x
            for x in KINDS[STATION].examples
            if "02:00:00:" + ":".join(f"{ord(c) % 100:02d}" for c in x[:3]) == args["module_id"]
        ),
        None,
    )
    if st is None:
        raise InvalidValue("module_id", f"no module {args['module_id']}")
    return {"max_temp": _high(ctx, st, _day("date_begin", args["date_begin"])), "scale": "1day"}


@implementation
def weatherlink_stations(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    st = _station("station_label", args["station_label"])
    return {"stations": [{"station_id": 71000 + list(KINDS[STATION].examples).index(st)}]}


@implementation
def weatherlink_daily_summary(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    names = list(KINDS[STATION].examples)
    i = args["station_id"] - 71000
    if not 0 <= i < len(names):
        raise InvalidValue("station_id", f"no station {args['station_id']}")
    hi = _high(ctx, names[i], _day("day", args["day"]))
    if args.get("units", "metric") == "imperial":
        return {"temp_out_hi": round(hi * 9 / 5 + 32, 1), "units": "F"}
    return {"temp_out_hi": hi, "units": "C"}


# == General: the next business day in a country ===============================================
def _holiday(ctx: ToolContext, country: str, d: _dt.date) -> bool:
    return ctx.number(f"holiday:{country}:{d.isoformat()}", 0, 1, 4) < 0.06


def _next_business_day(ctx: ToolContext, country: str, date: str) -> str:
    d = _dt.date.fromisoformat(date) + _dt.timedelta(1)
    while d.weekday() >= 5 or _holiday(ctx, country, d):
        d += _dt.timedelta(1)
    return d.isoformat()


@implementation
def holiday_calendar_for_country(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return {"calendar_id": f"{args['countryCode'].lower()}.public#holiday", "global_only": True}


@implementation
def calendar_next_business_day(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    country = args["calendar_id"][:2].upper()
    nxt = _next_business_day(ctx, country, _day("after", args["after"]))
    gap = (_dt.date.fromisoformat(nxt) - _dt.date.fromisoformat(args["after"])).days - 1
    return {"next_business_day": nxt, "skipped": gap}


@implementation
def workdays_region(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    if not args["country"].isalpha():
        raise InvalidValue("country", "expected two letters")
    return {"region": "WD-" + args["country"].upper(), "week": "Mon-Fri"}


@implementation
def workdays_add(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    nxt = _next_business_day(ctx, args["region"][3:], _day("start_date", args["start_date"]))
    return {"result_date": nxt, "region": args["region"]}
