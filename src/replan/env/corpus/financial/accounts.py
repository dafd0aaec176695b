"""Financial tools: bank accounts."""

from __future__ import annotations

import datetime as _dt
from typing import Any

from replan.env.corpus.financial import facts
from replan.env.corpus.financial.facts import fx_rate
from replan.env.corpus.registry import implementation
from replan.env.world import InvalidValue, ToolContext


def _held(ctx: ToolContext, account_id: str) -> float:
    return round(ctx.number(f"acct:{account_id}:hold", 0, 150), 2)


@implementation
def list_bank_accounts(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    out = []
    for acc_id, acc in sorted(ctx.state.records("fin_accounts").items()):
        if args.get("type") not in (None, acc["type"]):
            continue
        if args.get("iso_currency_code") not in (None, acc["currency"]):
            continue
        out.append(
            {
                "account_id": acc_id,
                "name": acc["name"],
                "type": acc["type"],
                "mask": acc["mask"],
                "iso_currency_code": acc["currency"],
                "current_balance": facts.balance(ctx, acc_id),
            }
        )
    return {"accounts": out}


@implementation
def get_account_balance(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    acc_id = args["account_id"]
    cur = facts.balance(ctx, acc_id)
    acc = ctx.state.get("fin_accounts", acc_id) or {}
    return {
        "account_id": acc_id,
        "balances": {
            "current": cur,
            "available": round(cur - _held(ctx, acc_id), 2),
            "iso_currency_code": acc["currency"],
        },
    }


@implementation
def retrieve_account_details(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    acc = ctx.state.get("fin_accounts", args["account_id"]) or {}
    out = {
        "id": args["account_id"],
        "product": acc["name"],
        "status": acc["status"],
        "currency": acc["currency"],
        "ledger_balance": facts.balance(ctx, args["account_id"]),
    }
    if args.get("include_owner", True):
        out["owner"] = acc["owner"]
    return out


_MERCHANTS = facts.SEEDS.table("merchants", dict[str, list[str]])
#: local merchants per account currency, mixed in with the international ones
_LOCAL_MERCHANTS = facts.SEEDS.table("local_merchants", dict[str, dict[str, list[str]]])
_CATEGORY_USD = facts.SEEDS.table("category_usd", dict[str, tuple[int, int]])


def _money(amount: float, currency: str) -> float:
    return round(amount) * 1.0 if currency in facts.ZERO_DECIMAL else round(amount, 2)


def _check_month(month: str) -> None:
    if month > facts.MARKET_DAY[:7]:
        raise InvalidValue("month", f"{month} has not started yet (today is {facts.MARKET_DAY})")


def _transactions(ctx: ToolContext, account_id: str, month: str) -> list[dict[str, Any]]:
    """The statement lines of an account for a month (seeded, the same for every tool)."""
    acc = ctx.state.get("fin_accounts", account_id)
    assert acc is not None
    ccy = acc["currency"]
    rate = fx_rate(ctx, "USD", ccy)
    key = f"txn:{account_id}:{month}"
    n = int(ctx.number(key + ":n", 5, 10, 0))
    cats = list(_MERCHANTS)
    out = []
    for i in range(n):
        cat = ctx.pick(f"{key}:{i}:cat", cats)
        lo, hi = _CATEGORY_USD[cat]
        out.append(
            {
                "date": f"{month}-{int(ctx.number(f'{key}:{i}:d', 1, 28, 0)):02d}",
                "merchant_name": ctx.pick(
                    f"{key}:{i}:m", _MERCHANTS[cat] + _LOCAL_MERCHANTS.get(ccy, {}).get(cat, [])
                ),
                "category": cat,
                "amount": -_money(ctx.number(f"{key}:{i}:a", lo, hi) * rate, ccy),
            }
        )
    if acc["type"] == "checking":
        out.append(
            {
                "date": f"{month}-25",
                "merchant_name": "Payroll",
                "category": "income",
                "amount": _money(ctx.number(f"{key}:pay", 3200, 5400) * rate, ccy),
            }
        )
    else:
        out.append(
            {
                "date": f"{month}-28",
                "merchant_name": "Interest",
                "category": "income",
                "amount": _money(ctx.number(f"{key}:int", 20, 90) * rate, ccy),
            }
        )
    out = [t for t in out if t["date"] <= facts.MARKET_DAY]  # the current month is still running
    out.sort(key=lambda t: (t["date"], t["merchant_name"], t["amount"]))
    for i, t in enumerate(out):
        t["transaction_id"] = f"txn_{account_id[4:]}{month.replace('-', '')}{i:02d}"
        t["iso_currency_code"] = ccy
    return out


def _spent(txns: list[dict[str, Any]]) -> float:
    return facts.money_sum([-t["amount"] for t in txns if t["amount"] < 0])


@implementation
def list_transactions(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _check_month(args["month"])
    txns = _transactions(ctx, args["account_id"], args["month"])
    if args.get("category"):
        txns = [t for t in txns if t["category"] == args["category"]]
    return {"account_id": args["account_id"], "transactions": txns, "total_transactions": len(txns)}


@implementation
def summarize_spending(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    txns = args["transactions"]
    cats: dict[str, list[float]] = {}
    for t in txns:
        if t["amount"] < 0:
            cats.setdefault(t["category"], []).append(-t["amount"])
    by_cat = sorted(
        ({"category": c, "spent": facts.money_sum(v)} for c, v in cats.items()),
        key=lambda r: (-r["spent"], r["category"]),
    )
    return {
        "total_spent": _spent(txns),
        "total_income": facts.money_sum([t["amount"] for t in txns if t["amount"] > 0]),
        "by_category": by_cat,
        "debit_count": sum(len(v) for v in cats.values()),
    }


@implementation
def generate_statement(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _check_month(args["month"])
    y, m = map(int, args["month"].split("-"))
    last = min(
        (_dt.date(y + m // 12, m % 12 + 1, 1) - _dt.timedelta(1)).isoformat(), facts.MARKET_DAY
    )
    sid = ctx.new_id("STMT")
    fmt = args.get("format", "pdf")
    return {
        "statement_id": sid,
        "period": {"start": f"{args['month']}-01", "end": last},
        "download_url": f"https://bank.example.com/statements/{sid}.{fmt}",
    }


@implementation
def get_statement_summary(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    st = ctx.state.get("fin_statements", args["statement_id"]) or {}
    txns = _transactions(ctx, st["account_id"], st["month"])
    acc = ctx.state.get("fin_accounts", st["account_id"]) or {}
    return {
        "statement_id": args["statement_id"],
        "account_id": st["account_id"],
        "currency": acc["currency"],
        "total_debits": _spent(txns),
        "total_credits": facts.money_sum([t["amount"] for t in txns if t["amount"] > 0]),
        "line_count": len(txns),
    }
