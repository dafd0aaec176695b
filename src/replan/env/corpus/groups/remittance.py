"""N-N group, Financial: a supplier's remittance e-mail."""

from __future__ import annotations

from typing import Any

from replan.env.corpus.groups import facts
from replan.env.corpus.groups.facts import VENDOR
from replan.env.corpus.kinds import KINDS
from replan.env.corpus.registry import implementation
from replan.env.world import InvalidValue, ToolContext


def _vendor(param: str, name: str) -> str:
    name = name.strip()
    if len(name) < 3:
        raise InvalidValue(param, "supplier name too short")
    return name


def _remit_email(name: str) -> str:
    return f"ap@{facts.slug(name).replace('-', '')[:20]}.example.com"


@implementation
def coupa_search_suppliers(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    name = _vendor("name_contains", args["name_contains"])
    if args.get("status", "active") != "active":
        return {"suppliers": []}
    num = "SUP-" + facts.digits(ctx, f"vendor:{name}:no", 6)
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
        if "SUP-" + facts.digits(ctx, f"vendor:{name}:no", 6) == number:
            return name
    raise InvalidValue(param, f"no supplier {number!r}")


def _known_vendors() -> list[str]:
    return list(KINDS[VENDOR].examples)


@implementation
def quickbooks_query_vendors(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    name = _vendor("display_name", args["display_name"])
    vid = "QBV" + facts.slug(name).replace("-", "_")
    return {"QueryResponse": {"Vendor": [{"Id": vid, "DisplayName": name}], "maxResults": 1}}


@implementation
def quickbooks_read_vendor(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    key = args["vendor_id"][3:]
    name = next((v for v in _known_vendors() if facts.slug(v).replace("-", "_") == key), None)
    if name is None:
        raise InvalidValue("vendor_id", f"vendor {args['vendor_id']} not found")
    return {
        "Vendor": {
            "Id": args["vendor_id"],
            "PrimaryEmailAddr": {"Address": _remit_email(name)},
            "Balance": ctx.number(f"vendor:{name}:bal", 0, 9000),
        }
    }
