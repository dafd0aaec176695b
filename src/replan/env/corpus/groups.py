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

from replan.env.corpus.kinds import (
    CITY,
    COUNTRY,
    CURRENCY,
    DATE,
    EMAIL,
    KINDS,
    PERSON,
    TEMPERATURE,
    TIME,
    kind,
)
from replan.env.corpus.registry import alternatives, s, tool
from replan.env.world import InvalidValue, ToolContext

IBAN = "iban"  # declared in financial.py
PRODUCT_SKU = "product_sku"  # declared in shopping.py

VENDOR = kind(
    "pth_vendor_name",
    "the trading name of a supplier the company pays",
    ["Northwind Traders", "Contoso Office Supply", "Fabrikam Logistics", "Tailspin Catering"],
)
COUPA_SUPPLIER = kind("pth_coupa_supplier_number", "a Coupa supplier number")
QBO_VENDOR = kind("pth_qbo_vendor_id", "a QuickBooks Online vendor id")
BIC = kind("pth_bic", "a bank's BIC / SWIFT code")
WISE_RECIPIENT = kind("pth_wise_recipient_id", "a Wise recipient-account id")
ICAO = kind("pth_icao_ident", "an ICAO airport identifier")
GEODB_CITY = kind("pth_geodb_city_id", "a GeoDB Cities wikiDataId-style city id")
NUMBEO_CITY = kind("pth_numbeo_city_id", "a Numbeo city id")
TELEPORT_SLUG = kind("pth_teleport_ua_slug", "a Teleport urban-area slug")
EAN = kind(
    "pth_ean13",
    "a 13-digit EAN / GTIN-13 barcode printed on a product",
    ["5901234123457", "4006381333931", "8710103917076", "4902505163517", "0012345678905"],
)
MPN = kind("pth_manufacturer_part_number", "a manufacturer part number (MPN)")
SCAN_ID = kind("pth_inventory_scan_id", "an inventory-app barcode scan")
GRAPH_USER = kind("pth_graph_user_id", "a Microsoft Graph user object id")
FREEBUSY_TOKEN = kind("pth_freebusy_token", "a Google Calendar free/busy result handle")
LDAP_DN = kind("pth_ldap_dn", "an LDAP distinguished name")
SCIM_USER = kind("pth_scim_user_id", "a SCIM 2.0 user resource id")
STATION = kind(
    "pth_weather_station",
    "the name of a personal weather station at home",
    ["Garden", "Roof", "Balcony", "Greenhouse"],
)
NETATMO_MODULE = kind("pth_netatmo_module_id", "a Netatmo outdoor-module MAC id")
WEATHERLINK_STATION = kind("pth_weatherlink_station_id", "a Davis WeatherLink station id")
HOLIDAY_CAL = kind("pth_holiday_calendar_id", "a public-holiday calendar id")
WORKDAY_REGION = kind("pth_workday_region", "a business-day calculator region code")

_HHMM = "^([01][0-9]|2[0-3]):[0-5][0-9]$"


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


@tool(
    domain="Financial",
    category="source",
    group="pth_vendor_remit_email",
    description="Search Coupa suppliers by name (GET /api/suppliers?name[contains]=...).",
    params={
        "name_contains": s.string("part of the supplier name", VENDOR, min_len=3),
        "status": s.enum(["active", "inactive"], "supplier status"),
    },
    required=["name_contains"],
    returns=s.obj(
        {
            "suppliers": s.array(
                s.obj(
                    {
                        "number": s.string("supplier number", COUPA_SUPPLIER),
                        "name": s.string("", VENDOR),
                        "status": s.string(),
                    }
                )
            )
        }
    ),
)
def coupa_search_suppliers(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    name = _vendor("name_contains", args["name_contains"])
    if args.get("status", "active") != "active":
        return {"suppliers": []}
    num = "SUP-" + _digits(ctx, f"vendor:{name}:no", 6)
    return {"suppliers": [{"number": num, "name": name, "status": "active"}]}


@tool(
    domain="Financial",
    category="source",
    group="pth_vendor_remit_email",
    description="Read a Coupa supplier's primary contact and remit-to details.",
    params={"number": s.string("supplier number", COUPA_SUPPLIER, pattern="^SUP-[0-9]{6}$")},
    returns=s.obj(
        {
            "number": s.string("", COUPA_SUPPLIER),
            "primary_contact": s.obj(
                {"name_family": s.string(), "email": s.email("remittance e-mail")}
            ),
            "payment_term": s.string(),
        }
    ),
)
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


@tool(
    domain="Financial",
    category="source",
    group="pth_vendor_remit_email",
    description="Query QuickBooks Online vendors (SELECT * FROM Vendor WHERE DisplayName LIKE).",
    params={"display_name": s.string("vendor display name", VENDOR, min_len=1, max_len=100)},
    returns=s.obj(
        {
            "QueryResponse": s.obj(
                {
                    "Vendor": s.array(
                        s.obj({"Id": s.string("", QBO_VENDOR), "DisplayName": s.string()})
                    ),
                    "maxResults": s.integer(minimum=0),
                }
            )
        }
    ),
)
def quickbooks_query_vendors(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    name = _vendor("display_name", args["display_name"])
    vid = "QBV" + _slug(name).replace("-", "_")
    return {"QueryResponse": {"Vendor": [{"Id": vid, "DisplayName": name}], "maxResults": 1}}


@tool(
    domain="Financial",
    category="source",
    group="pth_vendor_remit_email",
    description="Read one QuickBooks Online vendor record (GET /v3/company/.../vendor/{id}).",
    params={"vendor_id": s.string("vendor Id", QBO_VENDOR, pattern="^QBV[a-z0-9_]+$")},
    returns=s.obj(
        {
            "Vendor": s.obj(
                {
                    "Id": s.string("", QBO_VENDOR),
                    "PrimaryEmailAddr": s.obj({"Address": s.email("billing e-mail")}),
                    "Balance": s.number(minimum=0),
                }
            )
        }
    ),
)
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


alternatives(
    "pth_vendor_remit_email",
    "N-N",
    ["coupa_search_suppliers", "coupa_get_supplier_contact"],
    ["quickbooks_query_vendors", "quickbooks_read_vendor"],
    description="a supplier's remittance e-mail: from Coupa, or from QuickBooks",
    output_kind=EMAIL,
)


# == Financial: the holder of an IBAN (confirmation of payee) ===================================
_HOLDERS = ["Ana Silva", "Kenji Mori", "Dana Reyes", "Wanjiru Kamau", "Luc Tremblay", "Marta Nowak"]
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


@tool(
    domain="Financial",
    category="source",
    group="pth_iban_holder",
    description="Validate an IBAN and return its bank (ibanapi.com /v1/validate).",
    params={"iban": s.string("IBAN, spaces allowed", IBAN, min_len=15, max_len=40)},
    returns=s.obj(
        {
            "result": s.integer(minimum=0, maximum=1),
            "data": s.obj(
                {
                    "country_code": s.string("", COUNTRY),
                    "bank": s.obj({"bic": s.string("", BIC), "bank_name": s.string()}),
                }
            ),
        }
    ),
)
def ibanapi_validate(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    iban = _iban("iban", args["iban"])
    bic = _bic(ctx, iban)
    return {
        "result": 1,
        "data": {"country_code": iban[:2], "bank": {"bic": bic, "bank_name": f"Bank {bic[:4]}"}},
    }


@tool(
    domain="Financial",
    category="processor",
    group="pth_iban_holder",
    description="Confirmation of Payee: the name on the account at a bank (CoP / VoP check).",
    params={
        "bic": s.string("bank BIC", BIC, pattern="^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$"),
        "account_iban": s.string("account IBAN", IBAN, pattern=_IBAN_RE),
    },
    returns=s.obj({"match": s.enum(["name_returned"]), "account_name": s.string("holder", PERSON)}),
)
def verify_payee_name(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    iban = _iban("account_iban", args["account_iban"])
    return {"match": "name_returned", "account_name": _holder(ctx, iban)}


@tool(
    domain="Financial",
    category="source",
    group="pth_iban_holder",
    description="Look up a bank account as a Wise recipient (POST /v1/accounts, type=iban).",
    params={
        "iban": s.string("recipient IBAN", IBAN, pattern=_IBAN_RE),
        "currency": s.string("recipient currency", CURRENCY, pattern="^[A-Z]{3}$"),
    },
    required=["iban"],
    returns=s.obj({"id": s.string("recipient id", WISE_RECIPIENT), "type": s.string()}),
)
def wise_create_recipient(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    iban = _iban("iban", args["iban"])
    return {"id": f"rcp-{iban}", "type": "iban"}


@tool(
    domain="Financial",
    category="source",
    group="pth_iban_holder",
    description="Read a Wise recipient account (GET /v1/accounts/{id}).",
    params={"account_id": s.string("recipient id", WISE_RECIPIENT, pattern="^rcp-[A-Z0-9]+$")},
    returns=s.obj(
        {
            "id": s.string("", WISE_RECIPIENT),
            "accountHolderName": s.string("", PERSON),
            "details": s.obj({"iban": s.string("", IBAN)}),
        }
    ),
)
def wise_get_recipient(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    iban = _iban("account_id", args["account_id"][4:])
    return {
        "id": args["account_id"],
        "accountHolderName": _holder(ctx, iban),
        "details": {"iban": iban},
    }


alternatives(
    "pth_iban_holder",
    "N-N",
    ["ibanapi_validate", "verify_payee_name"],
    ["wise_create_recipient", "wise_get_recipient"],
    description="the name on an account: validate then confirm the payee, or via Wise",
    output_kind=PERSON,
)


# == Travel: a city's country and currency ======================================================
#: city -> (ISO country, ICAO ident of its main airport, currency)
_CITIES: dict[str, tuple[str, str, str]] = {
    "Lisbon": ("PT", "LPPT", "EUR"),
    "Porto": ("PT", "LPPR", "EUR"),
    "Madrid": ("ES", "LEMD", "EUR"),
    "Paris": ("FR", "LFPG", "EUR"),
    "London": ("GB", "EGLL", "GBP"),
    "Berlin": ("DE", "EDDB", "EUR"),
    "Warsaw": ("PL", "EPWA", "PLN"),
    "Krakow": ("PL", "EPKK", "PLN"),
    "Tallinn": ("EE", "EETN", "EUR"),
    "Osaka": ("JP", "RJBB", "JPY"),
    "Tokyo": ("JP", "RJTT", "JPY"),
    "Denver": ("US", "KDEN", "USD"),
    "Austin": ("US", "KAUS", "USD"),
    "New York": ("US", "KJFK", "USD"),
    "Montreal": ("CA", "CYUL", "CAD"),
    "Toronto": ("CA", "CYYZ", "CAD"),
    "Nairobi": ("KE", "HKJK", "KES"),
    "Mombasa": ("KE", "HKMO", "KES"),
    "Auckland": ("NZ", "NZAA", "NZD"),
    "Wellington": ("NZ", "NZWN", "NZD"),
    "Valparaiso": ("CL", "SCEL", "CLP"),
    "Hanoi": ("VN", "VVNB", "VND"),
    "Ho Chi Minh City": ("VN", "VVTS", "VND"),
}
_BY_ICAO = {v[1]: k for k, v in _CITIES.items()}
_BY_SLUG = {_slug(k): k for k in _CITIES}


def _city(param: str, name: str) -> tuple[str, str, str]:
    for k, v in _CITIES.items():
        if k.lower() == name.strip().lower():
            return v
    raise InvalidValue(param, f"unknown city {name!r}")


@tool(
    domain="Travel",
    category="source",
    group="pth_city_country",
    description="Search OurAirports for the main airport serving a city.",
    params={
        "municipality": s.string("city served", CITY, min_len=2),
        "type": s.enum(["large_airport", "medium_airport"], "airport size"),
    },
    required=["municipality"],
    returns=s.obj(
        {
            "airports": s.array(
                s.obj({"ident": s.string("ICAO ident", ICAO), "municipality": s.string()})
            )
        }
    ),
)
def ourairports_search(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    c = _city("municipality", args["municipality"])
    return {"airports": [{"ident": c[1], "municipality": args["municipality"]}]}


@tool(
    domain="Travel",
    category="source",
    group="pth_city_country",
    description="Read an OurAirports airport record by ICAO ident.",
    params={"ident": s.string("ICAO ident", ICAO, pattern="^[A-Z]{4}$")},
    returns=s.obj(
        {
            "ident": s.string("", ICAO),
            "iso_country": s.string("ISO alpha-2", COUNTRY),
            "elevation_ft": s.integer(),
        }
    ),
)
def ourairports_airport(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    city = _BY_ICAO.get(args["ident"])
    if city is None:
        raise InvalidValue("ident", f"no airport {args['ident']}")
    return {
        "ident": args["ident"],
        "iso_country": _CITIES[city][0],
        "elevation_ft": int(ctx.number(f"apt:{args['ident']}:elev", 5, 5400, 0)),
    }


@tool(
    domain="Travel",
    category="source",
    group="pth_city_country",
    description="Find cities by name prefix (GeoDB Cities /v1/geo/cities?namePrefix=).",
    params={
        "namePrefix": s.string("start of the city name", CITY, min_len=2),
        "limit": s.integer("results", minimum=1, maximum=10),
    },
    required=["namePrefix"],
    returns=s.obj(
        {
            "data": s.array(s.obj({"id": s.string("", GEODB_CITY), "name": s.string()})),
            "metadata": s.obj({"totalCount": s.integer(minimum=0)}),
        }
    ),
)
def geodb_find_cities(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _city("namePrefix", args["namePrefix"])
    name = args["namePrefix"].strip()
    return {
        "data": [{"id": "GDB-" + _slug(name), "name": name}],
        "metadata": {"totalCount": 1},
    }


@tool(
    domain="Travel",
    category="source",
    group="pth_city_country",
    description="GeoDB Cities city details (/v1/geo/cities/{cityId}).",
    params={"cityId": s.string("city id", GEODB_CITY, pattern="^GDB-[a-z0-9-]+$")},
    returns=s.obj(
        {
            "data": s.obj(
                {
                    "id": s.string("", GEODB_CITY),
                    "countryCode": s.string("", COUNTRY),
                    "population": s.integer(minimum=0),
                }
            )
        }
    ),
)
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


alternatives(
    "pth_city_country",
    "N-N",
    ["ourairports_search", "ourairports_airport"],
    ["geodb_find_cities", "geodb_city_details"],
    description="a city's country: via its airport record, or via GeoDB Cities",
    output_kind=COUNTRY,
)


@tool(
    domain="Travel",
    category="source",
    group="pth_city_currency",
    description="Resolve a city to a Numbeo city id (/api/cities?query=).",
    params={"query": s.string("city name", CITY, min_len=2, max_len=80)},
    returns=s.obj({"city_id": s.integer("", NUMBEO_CITY, minimum=1), "name": s.string()}),
)
def numbeo_city_search(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _city("query", args["query"])
    name = next(k for k in _CITIES if k.lower() == args["query"].strip().lower())
    return {"city_id": 5000 + list(_CITIES).index(name), "name": name}


@tool(
    domain="Travel",
    category="source",
    group="pth_city_currency",
    description="Numbeo city prices (/api/city_prices?city_id=): local currency and items.",
    params={"city_id": s.integer("Numbeo city id", NUMBEO_CITY, minimum=5000, maximum=5999)},
    returns=s.obj(
        {
            "city_id": s.integer("", NUMBEO_CITY),
            "currency": s.string("local currency", CURRENCY),
            "contributors": s.integer(minimum=0),
        }
    ),
)
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


@tool(
    domain="Travel",
    category="source",
    group="pth_city_currency",
    description="Find the Teleport urban area of a city (/api/cities/?search=).",
    params={"search": s.string("city to search", CITY, min_len=2)},
    returns=s.obj({"ua_slug": s.string("urban-area slug", TELEPORT_SLUG), "matches": s.integer()}),
)
def teleport_city_search(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _city("search", args["search"])
    return {"ua_slug": _slug(args["search"]), "matches": 1}


@tool(
    domain="Travel",
    category="source",
    group="pth_city_currency",
    description="Teleport urban-area details (/api/urban_areas/slug:{slug}/details/).",
    params={"slug": s.string("urban-area slug", TELEPORT_SLUG, pattern="^[a-z0-9-]+$")},
    returns=s.obj(
        {
            "slug": s.string("", TELEPORT_SLUG),
            "currency_code": s.string("", CURRENCY),
            "cost_of_living_index": s.number(minimum=0, maximum=10),
        }
    ),
)
def teleport_ua_details(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    city = _BY_SLUG.get(args["slug"])
    if city is None:
        raise InvalidValue("slug", f"no urban area {args['slug']!r}")
    return {
        "slug": args["slug"],
        "currency_code": _CITIES[city][2],
        "cost_of_living_index": ctx.number(f"city:{city}:col", 2, 9.5),
    }


alternatives(
    "pth_city_currency",
    "N-N",
    ["numbeo_city_search", "numbeo_city_prices"],
    ["teleport_city_search", "teleport_ua_details"],
    description="a city's local currency: from Numbeo, or from Teleport",
    output_kind=CURRENCY,
)


# == Shopping: the store SKU behind a barcode ===================================================
_EAN_SKU = {
    "5901234123457": "SKU-10001",
    "4006381333931": "SKU-10005",
    "8710103917076": "SKU-10008",
    "4902505163517": "SKU-10010",
    "0012345678905": "SKU-10015",
}
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


@tool(
    domain="Shopping",
    category="source",
    group="pth_barcode_sku",
    description="Look a barcode up in the UPCitemdb product database (/prod/trial/lookup?upc=).",
    params={"upc": s.string("UPC / EAN barcode", EAN, pattern="^[0-9]{12,13}$")},
    returns=s.obj(
        {
            "code": s.enum(["OK"]),
            "items": s.array(s.obj({"ean": s.string(), "model": s.string("MPN", MPN)})),
        }
    ),
)
def upcitemdb_lookup(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    ean = _ean("upc", args["upc"].zfill(13))
    return {"code": "OK", "items": [{"ean": ean, "model": _MPN[ean]}]}


@tool(
    domain="Shopping",
    category="source",
    group="pth_barcode_sku",
    description="Find the store catalogue entry for a manufacturer part number.",
    params={
        "mpn": s.string("manufacturer part number", MPN, pattern="^MPN-[0-9]{5}-[0-9]{3}$"),
        "include_inactive": s.boolean("also discontinued listings"),
    },
    required=["mpn"],
    returns=s.obj({"sku": s.string("store SKU", PRODUCT_SKU), "listing_status": s.string()}),
)
def catalog_find_by_mpn(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    ean = next((e for e, m in _MPN.items() if m == args["mpn"]), None)
    if ean is None:
        raise InvalidValue("mpn", f"no listing for {args['mpn']}")
    return {"sku": _EAN_SKU[ean], "listing_status": "active"}


@tool(
    domain="Shopping",
    category="source",
    group="pth_barcode_sku",
    description="Record a barcode scan in the inventory app (POST /scans).",
    params={
        "ean13": s.string("scanned EAN-13", EAN, min_len=13, max_len=13),
        "location": s.enum(["store_floor", "backroom"], "where it was scanned"),
    },
    required=["ean13"],
    returns=s.obj({"scan_id": s.string("", SCAN_ID), "valid_checksum": s.boolean()}),
)
def inventory_scan_barcode(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    ean = _ean("ean13", args["ean13"])
    return {"scan_id": f"SCN-{ean}", "valid_checksum": True}


@tool(
    domain="Shopping",
    category="source",
    group="pth_barcode_sku",
    description="Resolve an inventory scan to the matched catalogue item.",
    params={"scan_id": s.string("scan id", SCAN_ID, pattern="^SCN-[0-9]{13}$")},
    returns=s.obj(
        {
            "scan_id": s.string("", SCAN_ID),
            "item": s.obj({"sku": s.string("", PRODUCT_SKU), "on_hand": s.integer(minimum=0)}),
        }
    ),
)
def inventory_resolve_scan(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    ean = _ean("scan_id", args["scan_id"][4:])
    sku = _EAN_SKU[ean]
    return {
        "scan_id": args["scan_id"],
        "item": {"sku": sku, "on_hand": int(ctx.number(f"sku:{sku}:onhand", 0, 40, 0))},
    }


alternatives(
    "pth_barcode_sku",
    "N-N",
    ["upcitemdb_lookup", "catalog_find_by_mpn"],
    ["inventory_scan_barcode", "inventory_resolve_scan"],
    description="a barcode's store SKU: UPC database then catalogue, or inventory scan",
    output_kind=PRODUCT_SKU,
)


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


@tool(
    domain="Office",
    category="source",
    group="pth_first_free_slot",
    description="Find a user in Microsoft Graph by user principal name (GET /users/{upn}).",
    params={"userPrincipalName": s.email("the user's sign-in address")},
    returns=s.obj({"id": s.string("object id", GRAPH_USER), "displayName": s.string()}),
)
def graph_get_user(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    upn = args["userPrincipalName"].lower()
    return {"id": "gu:" + upn, "displayName": upn.split("@")[0].replace(".", " ").title()}


@tool(
    domain="Office",
    category="source",
    group="pth_first_free_slot",
    description="Graph findMeetingTimes for one attendee on a day: the earliest free 30 minutes.",
    params={
        "user_id": s.string("Graph user object id", GRAPH_USER, pattern="^gu:.+@.+$"),
        "day": s.date("day to search"),
        "meetingDuration": s.enum(["PT30M"], "slot length"),
    },
    required=["user_id", "day"],
    returns=s.obj(
        {
            "meetingTimeSuggestions": s.array(
                s.obj({"start": s.string("local start", TIME, pattern=_HHMM)})
            ),
            "emptySuggestionsReason": s.string(),
        }
    ),
)
def graph_find_meeting_times(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    day = _day("day", args["day"])
    slot = _free_slot(ctx, args["user_id"][3:], day)
    return {"meetingTimeSuggestions": [{"start": slot}], "emptySuggestionsReason": ""}


@tool(
    domain="Office",
    category="source",
    group="pth_first_free_slot",
    description="Google Calendar freeBusy query for one calendar on a day (POST /freeBusy).",
    params={
        "calendar_id": s.email("calendar (the owner's address)"),
        "date": s.date("day to query"),
    },
    returns=s.obj(
        {"kind": s.enum(["calendar#freeBusy"]), "query_token": s.string("", FREEBUSY_TOKEN)}
    ),
)
def gcal_freebusy_query(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    date = _day("date", args["date"])
    return {"kind": "calendar#freeBusy", "query_token": f"fb|{args['calendar_id'].lower()}|{date}"}


@tool(
    domain="Office",
    category="processor",
    group="pth_first_free_slot",
    description="Earliest free 30-minute gap in a Google Calendar free/busy result.",
    params={"token": s.string("free/busy handle", FREEBUSY_TOKEN, pattern=r"^fb\|.+\|.+$")},
    returns=s.obj(
        {"first_free": s.string("HH:MM", TIME, pattern=_HHMM), "busy_blocks": s.integer()}
    ),
)
def gcal_first_gap(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _, email, date = args["token"].split("|", 2)
    _day("token", date)
    slot = _free_slot(ctx, email, date)
    h, m = map(int, slot.split(":"))
    return {"first_free": slot, "busy_blocks": (h - 8) * 2 + m // 30}


alternatives(
    "pth_first_free_slot",
    "N-N",
    ["graph_get_user", "graph_find_meeting_times"],
    ["gcal_freebusy_query", "gcal_first_gap"],
    description="someone's first free half hour on a day: Microsoft Graph, or Google free/busy",
    output_kind=TIME,
)


# == IoT: the day's high at a home weather station ==============================================
def _station(param: str, name: str) -> str:
    for st in KINDS[STATION].examples:
        if st.lower() == name.strip().lower():
            return st
    raise InvalidValue(param, f"no station named {name!r}")


def _high(ctx: ToolContext, station: str, date: str) -> float:
    return ctx.number(f"wx:{station}:{date}:high", 17.0, 23.0, 1)


@tool(
    domain="IoT",
    category="source",
    group="pth_station_high",
    description="List Netatmo weather stations (getstationsdata) and their outdoor modules.",
    params={"station_name": s.string("station name", STATION, min_len=2)},
    returns=s.obj(
        {"devices": s.array(s.obj({"module_id": s.string("", NETATMO_MODULE), "name": s.string()}))}
    ),
)
def netatmo_get_stations(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    st = _station("station_name", args["station_name"])
    mac = "02:00:00:" + ":".join(f"{ord(c) % 100:02d}" for c in st[:3])
    return {"devices": [{"module_id": mac, "name": st}]}


@tool(
    domain="IoT",
    category="source",
    group="pth_station_high",
    description="Netatmo getmeasure: a module's max temperature for one day (scale=1day).",
    params={
        "module_id": s.string(
            "outdoor module MAC", NETATMO_MODULE, pattern="^([0-9a-f]{2}:){5}[0-9a-f]{2}$"
        ),
        "date_begin": s.date("day"),
    },
    returns=s.obj({"max_temp": s.number("degrees C", TEMPERATURE), "scale": s.enum(["1day"])}),
)
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


@tool(
    domain="IoT",
    category="source",
    group="pth_station_high",
    description="List Davis WeatherLink stations (/v2/stations) matching a name.",
    params={"station_label": s.string("station name", STATION, min_len=2, max_len=40)},
    returns=s.obj({"stations": s.array(s.obj({"station_id": s.integer("", WEATHERLINK_STATION)}))}),
)
def weatherlink_stations(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    st = _station("station_label", args["station_label"])
    return {"stations": [{"station_id": 71000 + list(KINDS[STATION].examples).index(st)}]}


@tool(
    domain="IoT",
    category="source",
    group="pth_station_high",
    description="WeatherLink historic daily summary: the day's high outdoor temperature.",
    params={
        "station_id": s.integer("WeatherLink station id", WEATHERLINK_STATION, minimum=71000),
        "day": s.date("day"),
        "units": s.enum(["metric", "imperial"], "units"),
    },
    required=["station_id", "day"],
    returns=s.obj({"temp_out_hi": s.number("", TEMPERATURE), "units": s.string()}),
)
def weatherlink_daily_summary(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    names = list(KINDS[STATION].examples)
    i = args["station_id"] - 71000
    if not 0 <= i < len(names):
        raise InvalidValue("station_id", f"no station {args['station_id']}")
    hi = _high(ctx, names[i], _day("day", args["day"]))
    if args.get("units", "metric") == "imperial":
        return {"temp_out_hi": round(hi * 9 / 5 + 32, 1), "units": "F"}
    return {"temp_out_hi": hi, "units": "C"}


alternatives(
    "pth_station_high",
    "N-N",
    ["netatmo_get_stations", "netatmo_get_measure"],
    ["weatherlink_stations", "weatherlink_daily_summary"],
    description="a home weather station's high on a day: Netatmo, or Davis WeatherLink",
    output_kind=TEMPERATURE,
)


# == General: the next business day in a country ===============================================
def _holiday(ctx: ToolContext, country: str, d: _dt.date) -> bool:
    return ctx.number(f"holiday:{country}:{d.isoformat()}", 0, 1, 4) < 0.06


def _next_business_day(ctx: ToolContext, country: str, date: str) -> str:
    d = _dt.date.fromisoformat(date) + _dt.timedelta(1)
    while d.weekday() >= 5 or _holiday(ctx, country, d):
        d += _dt.timedelta(1)
    return d.isoformat()


@tool(
    domain="General",
    category="source",
    group="pth_next_business_day",
    description="Pick the public-holiday calendar of a country (Nager.Date-style).",
    params={"countryCode": s.string("ISO alpha-2", COUNTRY, pattern="^[A-Z]{2}$")},
    returns=s.obj({"calendar_id": s.string("", HOLIDAY_CAL), "global_only": s.boolean()}),
)
def holiday_calendar_for_country(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return {"calendar_id": f"{args['countryCode'].lower()}.public#holiday", "global_only": True}


@tool(
    domain="General",
    category="processor",
    group="pth_next_business_day",
    description="The next working day after a date on a holiday calendar (weekends skipped).",
    params={
        "calendar_id": s.string(
            "holiday calendar", HOLIDAY_CAL, pattern=r"^[a-z]{2}\.public#holiday$"
        ),
        "after": s.date("start date (excluded)"),
    },
    returns=s.obj({"next_business_day": s.date("", DATE), "skipped": s.integer(minimum=0)}),
)
def calendar_next_business_day(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    country = args["calendar_id"][:2].upper()
    nxt = _next_business_day(ctx, country, _day("after", args["after"]))
    gap = (_dt.date.fromisoformat(nxt) - _dt.date.fromisoformat(args["after"])).days - 1
    return {"next_business_day": nxt, "skipped": gap}


@tool(
    domain="General",
    category="source",
    group="pth_next_business_day",
    description="Resolve the business-day region of a country (workingdays API /regions).",
    params={
        "country": s.string("ISO 3166 alpha-2", COUNTRY, min_len=2, max_len=2),
        "subdivision": s.string("optional region code"),
    },
    required=["country"],
    returns=s.obj({"region": s.string("region code", WORKDAY_REGION), "week": s.string()}),
)
def workdays_region(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    if not args["country"].isalpha():
        raise InvalidValue("country", "expected two letters")
    return {"region": "WD-" + args["country"].upper(), "week": "Mon-Fri"}


@tool(
    domain="General",
    category="processor",
    group="pth_next_business_day",
    description="Add working days to a date in a region (workingdays API /add_working_days).",
    params={
        "region": s.string("region code", WORKDAY_REGION, pattern="^WD-[A-Z]{2}$"),
        "start_date": s.date("start date"),
        "days": s.integer("working days to add", minimum=1, maximum=1),
    },
    required=["region", "start_date"],
    returns=s.obj({"result_date": s.date("", DATE), "region": s.string("", WORKDAY_REGION)}),
)
def workdays_add(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    nxt = _next_business_day(ctx, args["region"][3:], _day("start_date", args["start_date"]))
    return {"result_date": nxt, "region": args["region"]}


alternatives(
    "pth_next_business_day",
    "N-N",
    ["holiday_calendar_for_country", "calendar_next_business_day"],
    ["workdays_region", "workdays_add"],
    description="the next business day in a country: holiday calendar, or working-days API",
    output_kind=DATE,
)
