"""Financial tools: tax."""

from __future__ import annotations

import math
from typing import Any

from replan.env.corpus.financial import facts
from replan.env.corpus.registry import implementation
from replan.env.world import InvalidValue, ToolContext

#: simplified national income-tax schedules: (upper bound of band or None, marginal rate %)
_BRACKETS = facts.SEEDS.table("brackets", dict[str, tuple[str, list[tuple[int | None, float]]]])


def _brackets(param: str, country: str) -> tuple[str, list[tuple[float | None, float]]]:
    try:
        return _BRACKETS[country]
    except KeyError as exc:
        raise InvalidValue(param, f"no income-tax schedule for country {country!r}") from exc


def _income_tax(bands: list[tuple[float | None, float]], income: float) -> tuple[float, float]:
    """(tax, marginal rate) of ``income`` under progressive ``bands``."""
    tax, lower, marginal = [], 0.0, bands[0][1]
    for upper, rate in bands:
        if income <= lower:
            break
        top = income if upper is None else min(income, upper)
        tax.append((top - lower) * rate / 100)
        marginal = rate
        if upper is None:
            break
        lower = upper
    return round(math.fsum(tax), 2), marginal


@implementation
def estimate_income_tax(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    ccy, bands = _brackets("country", args["country"])
    inc = args["taxable_income"]
    tax, marginal = _income_tax(bands, inc)
    return {
        "country": args["country"],
        "currency": ccy,
        "income_tax": tax,
        "effective_rate_pct": round(tax / inc * 100, 2) if inc else 0.0,
        "marginal_rate_pct": marginal,
    }


@implementation
def get_tax_brackets(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    ccy, bands = _brackets("country_code", args["country_code"])
    year = args.get("year", 2026)
    out, lower = [], 0.0
    for upper, rate in bands:
        out.append({"from": lower, "to": -1 if upper is None else float(upper), "rate_pct": rate})
        lower = float(upper or 0)
    return {"table_id": f"TAX-{args['country_code']}-{year}", "currency": ccy, "bands": out}


@implementation
def apply_tax_brackets(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _, country, year = args["table_id"].split("-")
    if not 2024 <= int(year) <= 2027:
        raise InvalidValue("table_id", f"no tax table for {year}")
    _, bands = _brackets("table_id", country)
    inc = args["income"]
    tax, _m = _income_tax(bands, inc)
    used = sum(
        1 for i, (u, _r) in enumerate(bands) if inc > (0 if i == 0 else (bands[i - 1][0] or 0))
    )
    return {"tax_due": tax, "net_income": round(inc - tax, 2), "bands_used": used}


#: standard and reduced VAT / GST rates in percent (US: no national sales tax)
_VAT = facts.SEEDS.table("vat", dict[str, tuple[float, float]])


def _vat(param: str, country: str, reduced: bool = False) -> float:
    try:
        return _VAT[country][1 if reduced else 0]
    except KeyError as exc:
        raise InvalidValue(param, f"no VAT data for country {country!r}") from exc


@implementation
def add_vat(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    rate = _vat("country", args["country"], args.get("rate_type") == "reduced")
    vat = round(args["net_amount"] * rate / 100, 2)
    return {"rate_pct": rate, "vat": vat, "gross": round(args["net_amount"] + vat, 2)}


@implementation
def get_vat_rate(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    c = args["country_code"]
    std = _vat("country_code", c)
    name = {"JP": "consumption tax", "US": "sales tax", "CA": "GST", "NZ": "GST", "AU": "GST"}.get(
        c, "VAT"
    )
    return {
        "country_code": c,
        "standard_rate": std,
        "reduced_rate": _vat("country_code", c, True),
        "tax_name": name,
    }


@implementation
def apply_tax_rate(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    tax = round(args["amount"] * args["rate_pct"] / 100, 2)
    return {"tax": tax, "total": round(args["amount"] + tax, 2)}
