"""N-N group, Shopping: the store SKU behind a barcode."""

from __future__ import annotations

from typing import Any

from replan.core import linre
from replan.env.corpus.groups import facts
from replan.env.corpus.registry import implementation
from replan.env.world import InvalidValue, ToolContext

_EAN_SKU = facts.SEEDS.table("ean_sku", dict[str, str])
_MPN = {ean: f"MPN-{sku[4:]}-{ean[-3:]}" for ean, sku in _EAN_SKU.items()}


def _ean(param: str, code: str) -> str:
    if not linre.fullmatch("[0-9]{13}", code):
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
