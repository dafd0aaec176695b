"""Financial tools: loans and savings."""

from __future__ import annotations

import datetime as _dt
from typing import Any

from replan.env.corpus.registry import implementation
from replan.env.world import ToolContext


def _payment(principal: float, rate_pct: float, n: int) -> float:
    r = rate_pct / 1200
    if r == 0:
        return round(principal / n, 2)
    return round(principal * r / (1 - (1 + r) ** -n), 2)


@implementation
def calculate_loan_payment(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    pmt = _payment(args["principal"], args["annual_rate_pct"], args["term_months"])
    total = round(pmt * args["term_months"], 2)
    return {
        "monthly_payment": pmt,
        "total_interest": round(total - args["principal"], 2),
        "total_paid": total,
    }


@implementation
def build_amortization_schedule(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    n, bal = args["payments"], args["loan_amount"]
    pmt = _payment(bal, args["interest_rate"], n)
    start = args.get("first_payment_date")
    rows = []
    for k in range(1, min(n, 12) + 1):
        interest = round(bal * args["interest_rate"] / 1200, 2)
        princ = round(min(pmt - interest, bal), 2) if k < n else round(bal, 2)
        bal = round(bal - princ, 2)
        due = ""
        if start:
            d = _dt.date.fromisoformat(start)
            y, m = divmod(d.month - 1 + k - 1, 12)
            due = _dt.date(d.year + y, m + 1, min(d.day, 28)).isoformat()
        rows.append({"n": k, "due": due, "interest": interest, "principal": princ, "balance": bal})
    return {"payment": pmt, "schedule": rows}


def _fv(principal: float, rate_pct: float, per_year: int, years: int) -> float:
    return principal * (1 + rate_pct / 100 / per_year) ** (per_year * years)


@implementation
def calculate_compound_interest(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    fv = round(
        _fv(
            args["principal"],
            args["annual_rate_pct"],
            args.get("compounds_per_year", 12),
            args["years"],
        ),
        2,
    )
    return {"future_value": fv, "interest_earned": round(fv - args["principal"], 2)}


@implementation
def project_savings_balance(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    p, apr, dep = args["starting_balance"], args["apr"], args.get("monthly_deposit", 0.0)

    def at(years: int) -> float:
        v = _fv(p, apr, 12, years)
        if dep:
            m, i = 12 * years, apr / 1200
            v += dep * m if i == 0 else dep * ((1 + i) ** m - 1) / i
        return round(v, 2)

    yearly = [{"year": y, "balance": at(y)} for y in range(1, args["horizon_years"] + 1)]
    return {
        "ending_balance": at(args["horizon_years"]),
        "total_deposits": round(dep * 12 * args["horizon_years"], 2),
        "yearly": yearly,
    }
