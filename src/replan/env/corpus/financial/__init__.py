"""Financial: FX, market data, bank accounts, payments, invoices, loans, tax and budgets.

Every fact comes from one private helper (``fx_rate``, ``_quote``, ``_close``, ``_transactions``,
``_balance``, ...) so that two providers asked the same question give the same answer.
Balances are derived from state (seeded balance minus transfers made in this world), so a
transfer shows up in every balance tool without effects doing arithmetic.
"""

from __future__ import annotations

import datetime as _dt
import math
from typing import Any

from replan.env.corpus.data import SeedTables
from replan.env.corpus.registry import implementation, initial_state
from replan.env.world import InvalidValue, ToolContext

_SEEDS = SeedTables.load(__package__)  # seeds.json beside this module


# -- reference tables -------------------------------------------------------------------------
#: units of currency per 1 USD (mid-market reference before the per-world jitter)
_USD_RATES = _SEEDS.table("usd_rates", dict[str, float])
_ZERO_DECIMAL = _SEEDS.table("zero_decimal", set[str])


def _sig(x: float, digits: int = 6) -> float:
    return float(f"{x:.{digits}g}")


#: "today" of every world: the latest trading session and FX fixing; earlier days are history,
#: later ones (trip dates, due dates) are the future
_MARKET_DAY = "2026-11-27"
#: chart ranges -> calendar days
_RANGES = _SEEDS.table("ranges", dict[str, int])


def _wave(ctx: ToolContext, key: str, day: str, slow: float, fast: float, noise: float) -> float:
    """A smooth, seeded multiplier around 1 for ``day``: two cycles plus a little daily noise."""
    t = _dt.date.fromisoformat(day).toordinal()
    p1, p2 = ctx.number(key + ":p1", 0, 6.2832, 4), ctx.number(key + ":p2", 0, 6.2832, 4)
    t1, t2 = ctx.number(key + ":t1", 120, 300, 1), ctx.number(key + ":t2", 18, 45, 1)
    return (
        1
        + slow * math.sin(2 * math.pi * t / t1 + p1)
        + fast * math.sin(2 * math.pi * t / t2 + p2)
        + ctx.number(f"{key}:{day}", -noise, noise, 5)
    )


def _usd_rate(ctx: ToolContext, code: str, day: str | None = None) -> float:
    if code == "USD":
        return 1.0
    return _USD_RATES[code] * _wave(ctx, f"fx:{code}", day or _MARKET_DAY, 0.02, 0.008, 0.002)


def _check_ccy(param: str, code: str) -> None:
    if code not in _USD_RATES:
        raise InvalidValue(param, f"unsupported currency {code!r}")


def fx_rate(ctx: ToolContext, base: str, quote: str, day: str | None = None) -> float:
    """Units of ``quote`` per 1 ``base`` (6 significant digits); the one FX fact of the corpus."""
    if base == quote:
        return 1.0
    return _sig(_usd_rate(ctx, quote, day) / _usd_rate(ctx, base, day))


def convert(ctx: ToolContext, amount: float, base: str, quote: str) -> float:
    """``amount`` of ``base`` in ``quote`` at the latest rate (cents precision)."""
    return round(amount * fx_rate(ctx, base, quote), 2)


def _sessions(days_back: int) -> list[str]:
    """Business days in the ``days_back`` calendar days up to and including the market day."""
    end = _dt.date.fromisoformat(_MARKET_DAY)
    out = [end - _dt.timedelta(k) for k in range(days_back)]
    return [d.isoformat() for d in reversed(out) if d.weekday() < 5]


def _sum(values: list[float]) -> float:
    return round(math.fsum(values), 2)


# == FX ==========================================================================================


@implementation
def get_fx_rate(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _check_ccy("base", args["base"])
    _check_ccy("quote", args["quote"])
    rate = fx_rate(ctx, args["base"], args["quote"])
    inverse = fx_rate(ctx, args["quote"], args["base"])
    return {"base": args["base"], "quote": args["quote"], "rate": rate, "inverse": inverse}


@implementation
def apply_fx_rate(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return {
        "converted_amount": round(args["amount"] * args["rate"], 2),
        "rate_applied": args["rate"],
    }


@implementation
def convert_currency(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _check_ccy("from", args["from"])
    _check_ccy("to", args["to"])
    rate = fx_rate(ctx, args["from"], args["to"])
    return {
        "query": {"from": args["from"], "to": args["to"]},
        "info": {"rate": rate},
        "result": round(args["amount"] * rate, 2),
    }


@implementation
def get_fx_timeseries(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _check_ccy("base", args["base"])
    _check_ccy("symbol", args["symbol"])
    days = _sessions(args.get("days", 30))
    rates = [{"date": d, "rate": fx_rate(ctx, args["base"], args["symbol"], d)} for d in days]
    avg = _sig(math.fsum(r["rate"] for r in rates) / len(rates))
    return {"base": args["base"], "symbol": args["symbol"], "rates": rates, "average_rate": avg}


# == market data =================================================================================
#: ticker -> (company, sector, exchange, reference price USD, shares outstanding in billions)
_TICKERS = _SEEDS.table("tickers", dict[str, tuple[str, str, str, float, float]])


def _ticker(param: str, symbol: str) -> tuple[str, str, str, float, float]:
    try:
        return _TICKERS[symbol]
    except KeyError as exc:
        raise InvalidValue(param, f"unknown ticker symbol {symbol!r}") from exc


def _prev_session(day: str) -> str:
    d = _dt.date.fromisoformat(day) - _dt.timedelta(1)
    while d.weekday() >= 5:
        d -= _dt.timedelta(1)
    return d.isoformat()


def _close(ctx: ToolContext, symbol: str, day: str) -> float:
    """Closing price of a ticker on a session: a smooth seeded path around its reference."""
    return round(_TICKERS[symbol][3] * _wave(ctx, f"stk:{symbol}", day, 0.12, 0.04, 0.012), 2)


def _quote(ctx: ToolContext, symbol: str) -> dict[str, float]:
    """The latest session of a ticker (its close is the history's last close)."""
    last = _close(ctx, symbol, _MARKET_DAY)
    prev = _close(ctx, symbol, _prev_session(_MARKET_DAY))
    opn = ctx.number(f"stk:{symbol}:open", prev * 0.99, prev * 1.01)
    high = round(max(opn, last) * (1 + ctx.number(f"stk:{symbol}:hi", 0, 0.012, 4)), 2)
    low = round(min(opn, last) * (1 - ctx.number(f"stk:{symbol}:lo", 0, 0.012, 4)), 2)
    vol = int(ctx.number(f"stk:{symbol}:vol", 4e6, 9e7, 0))
    return {"open": opn, "high": high, "low": low, "last": last, "prev": prev, "volume": vol}


@implementation
def get_stock_quote(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    sym = args["symbol"]
    _ticker("symbol", sym)
    q = _quote(ctx, sym)
    return {
        "symbol": sym,
        "open": q["open"],
        "high": q["high"],
        "low": q["low"],
        "price": q["last"],
        "volume": q["volume"],
        "latest_trading_day": _MARKET_DAY,
        "previous_close": q["prev"],
        "change": round(q["last"] - q["prev"], 2),
        "change_percent": round((q["last"] / q["prev"] - 1) * 100, 4),
    }


@implementation
def fetch_equity_snapshot(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    sym = args["ticker"]
    info = _ticker("ticker", sym)
    q = _quote(ctx, sym)
    return {
        "status": "OK",
        "ticker": {
            "ticker": sym,
            "todaysChange": round(q["last"] - q["prev"], 2),
            "todaysChangePerc": round((q["last"] / q["prev"] - 1) * 100, 4),
            "day": {
                "o": q["open"],
                "h": q["high"],
                "l": q["low"],
                "c": q["last"],
                "v": q["volume"],
            },
            "prevDay": {"c": q["prev"]},
            "lastTrade": {"p": q["last"], "x": "XNAS" if info[2] == "NASDAQ" else "XNYS"},
        },
    }


@implementation
def get_price_history(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    sym = args["symbol"]
    _ticker("symbol", sym)
    days = _sessions(_RANGES[args.get("range", "1mo")])
    if args.get("interval") == "1wk":  # last session of each ISO week
        days = [
            d
            for i, d in enumerate(days)
            if i + 1 == len(days)
            or _dt.date.fromisoformat(days[i + 1]).isocalendar()[:2]
            != _dt.date.fromisoformat(d).isocalendar()[:2]
        ]
    bars = [{"date": d, "close": _close(ctx, sym, d)} for d in days]
    return {"symbol": sym, "bars": bars, "closes": [b["close"] for b in bars]}


@implementation
def compute_price_statistics(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    p = args["prices"]
    rets = [p[i] / p[i - 1] - 1 for i in range(1, len(p))]
    mean_r = math.fsum(rets) / len(rets)
    vol = math.sqrt(math.fsum((r - mean_r) ** 2 for r in rets) / len(rets)) * 100
    return {
        "observations": len(p),
        "mean": round(math.fsum(p) / len(p), 2),
        "min": min(p),
        "max": max(p),
        "total_return_pct": round((p[-1] / p[0] - 1) * 100, 4),
        "volatility_pct": round(vol, 4),
    }


@implementation
def get_company_overview(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    sym = args["ticker"]
    name, sector, exch, _, shares = _ticker("ticker", sym)
    last = _quote(ctx, sym)["last"]
    return {
        "ticker": sym,
        "name": name,
        "sector": sector,
        "exchange": exch,
        "market_cap_usd": round(last * shares * 1e9, -6),
        "pe_ratio": ctx.number(f"stk:{sym}:pe", *((40, 90) if sym in _GROWTH else (14, 34)), 1),
        "dividend_yield_pct": 0.0 if sym in _GROWTH else ctx.number(f"stk:{sym}:div", 0.4, 3.2),
    }


_GROWTH = _SEEDS.table("growth", tuple[str, ...])
_CRYPTO_USD = _SEEDS.table("crypto_usd", dict[str, float])


@implementation
def get_crypto_spot_price(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    base, fiat = args["currency_pair"].split("-")
    if base not in _CRYPTO_USD:
        raise InvalidValue("currency_pair", f"unknown crypto asset {base!r}")
    _check_ccy("currency_pair", fiat)
    usd = _CRYPTO_USD[base] * (1 + ctx.number(f"crypto:{base}", -0.06, 0.06, 5))
    return {
        "data": {
            "base": base,
            "currency": fiat,
            "amount": round(usd * fx_rate(ctx, "USD", fiat), 2),
        }
    }


# == bank accounts ===============================================================================
_ACCOUNTS = _SEEDS.table("accounts", dict[str, dict[str, Any]])


def _balance(ctx: ToolContext, account_id: str) -> float:
    """Seeded balance minus every transfer sent from the account in this world."""
    acc = ctx.state.get("fin_accounts", account_id)
    assert acc is not None
    out = [
        t["source_amount"]
        for t in ctx.state.records("fin_transfers").values()
        if t.get("source_account_id") == account_id
    ]
    return round(acc["opening_balance"] - math.fsum(out), 2)


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
                "current_balance": _balance(ctx, acc_id),
            }
        )
    return {"accounts": out}


@implementation
def get_account_balance(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    acc_id = args["account_id"]
    cur = _balance(ctx, acc_id)
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
        "ledger_balance": _balance(ctx, args["account_id"]),
    }
    if args.get("include_owner", True):
        out["owner"] = acc["owner"]
    return out


_MERCHANTS = _SEEDS.table("merchants", dict[str, list[str]])
#: local merchants per account currency, mixed in with the international ones
_LOCAL_MERCHANTS = _SEEDS.table("local_merchants", dict[str, dict[str, list[str]]])
_CATEGORY_USD = _SEEDS.table("category_usd", dict[str, tuple[int, int]])


def _money(amount: float, currency: str) -> float:
    return round(amount) * 1.0 if currency in _ZERO_DECIMAL else round(amount, 2)


def _check_month(month: str) -> None:
    if month > _MARKET_DAY[:7]:
        raise InvalidValue("month", f"{month} has not started yet (today is {_MARKET_DAY})")


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
    out = [t for t in out if t["date"] <= _MARKET_DAY]  # the current month is still running
    out.sort(key=lambda t: (t["date"], t["merchant_name"], t["amount"]))
    for i, t in enumerate(out):
        t["transaction_id"] = f"txn_{account_id[4:]}{month.replace('-', '')}{i:02d}"
        t["iso_currency_code"] = ccy
    return out


def _spent(txns: list[dict[str, Any]]) -> float:
    return _sum([-t["amount"] for t in txns if t["amount"] < 0])


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
        ({"category": c, "spent": _sum(v)} for c, v in cats.items()),
        key=lambda r: (-r["spent"], r["category"]),
    )
    return {
        "total_spent": _spent(txns),
        "total_income": _sum([t["amount"] for t in txns if t["amount"] > 0]),
        "by_category": by_cat,
        "debit_count": sum(len(v) for v in cats.values()),
    }


@implementation
def generate_statement(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _check_month(args["month"])
    y, m = map(int, args["month"].split("-"))
    last = min((_dt.date(y + m // 12, m % 12 + 1, 1) - _dt.timedelta(1)).isoformat(), _MARKET_DAY)
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
        "total_credits": _sum([t["amount"] for t in txns if t["amount"] > 0]),
        "line_count": len(txns),
    }


# == transfers ===================================================================================
def _iban_ok(iban: str) -> bool:
    moved = iban[4:] + iban[:4]
    digits = "".join(str(int(ch, 36)) for ch in moved)
    return int(digits) % 97 == 1


@implementation
def quote_transfer(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _check_ccy("target_currency", args["target_currency"])
    acc = ctx.state.get("fin_accounts", args["account_id"]) or {}
    src = acc["currency"]
    amt = args["source_amount"]
    fee = 0.0 if src == args["target_currency"] else round(amt * 0.0045 + 0.5, 2)
    if fee >= amt:
        raise InvalidValue("source_amount", "amount does not cover the transfer fee")
    rate = fx_rate(ctx, src, args["target_currency"])
    return {
        "quote_id": ctx.new_id("TQ"),
        "source_currency": src,
        "target_currency": args["target_currency"],
        "rate": rate,
        "fee": fee,
        "target_amount": round((amt - fee) * rate, 2),
    }


@implementation
def create_transfer(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    if not _iban_ok(args["recipient_iban"]):
        raise InvalidValue("recipient_iban", "IBAN checksum is wrong")
    q = ctx.state.get("fin_transfer_quotes", args["quote_id"]) or {}
    if _balance(ctx, q["account_id"]) < q["source_amount"]:
        raise InvalidValue("quote_id", "insufficient funds in the source account")
    delivery = _dt.date.fromisoformat(_MARKET_DAY) + _dt.timedelta(
        int(ctx.number(f"tr:{args['quote_id']}:eta", 0, 2, 0))
    )
    return {
        "transfer_id": ctx.new_id("TR"),
        "status": "processing",
        "source_account_id": q["account_id"],
        "source_amount": q["source_amount"],
        "target_amount": q["target_amount"],
        "estimated_delivery": delivery.isoformat(),
    }


@implementation
def get_transfer_status(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    t = ctx.state.get("fin_transfers", args["transfer_id"]) or {}
    status = ctx.pick(f"trs:{args['transfer_id']}", ["processing", "outgoing_payment_sent"])
    return {
        "transfer_id": args["transfer_id"],
        "status": status,
        "recipient_iban": t["recipient_iban"],
        "target_amount": t["target_amount"],
        "estimated_delivery": t["estimated_delivery"],
    }


# == card payments ===============================================================================
_CUSTOMERS = _SEEDS.table("customers", dict[str, dict[str, Any]])
_CARDS = _SEEDS.table("cards", dict[str, dict[str, Any]])


@implementation
def create_payment_intent(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _check_ccy("currency", args["currency"])
    return {
        "id": ctx.new_id("pi"),
        "status": "requires_capture",
        "amount_capturable": args["amount"],
        "currency": args["currency"],
    }


@implementation
def capture_payment_intent(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    pi = ctx.state.get("fin_payment_intents", args["payment_intent"]) or {}
    return {
        "payment_intent": args["payment_intent"],
        "status": "succeeded",
        "latest_charge": ctx.new_id("ch"),
        "amount_received": pi["amount"],
        "currency": pi["currency"],
    }


@implementation
def get_default_payment_method(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    cus = ctx.state.get("fin_customers", args["customer_id"]) or {}
    pm = cus["default_payment_method"]
    card = ctx.state.get("fin_payment_methods", pm) or {}
    return {
        "customer_id": args["customer_id"],
        "payment_method_id": pm,
        "card": {"brand": card["brand"], "last4": card["last4"], "exp": card["exp"]},
    }


@implementation
def charge_payment_method(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _check_ccy("currency", args["currency"])
    card = ctx.state.get("fin_payment_methods", args["payment_method_id"]) or {}
    return {
        "charge_id": ctx.new_id("ch"),
        "paid": True,
        "amount": args["amount"],
        "currency": args["currency"],
        "card_last4": card["last4"],
    }


@implementation
def refund_charge(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    ch = ctx.state.get("fin_charges", args["charge"]) or {}
    amount = args.get("amount", ch["amount"])
    if amount > ch["amount"]:
        raise InvalidValue("amount", f"refund {amount} exceeds the charged {ch['amount']}")
    return {
        "refund_id": ctx.new_id("re"),
        "amount": amount,
        "status": "succeeded",
        "charge_status": "refunded" if amount == ch["amount"] else "partially_refunded",
    }


# == invoices ====================================================================================


@implementation
def create_invoice_draft(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _check_ccy("currency", args["currency"])
    total = _sum([li["quantity"] * li["unit_price"] for li in args["line_items"]])
    if total <= 0:
        raise InvalidValue("line_items", "an invoice must bill a positive amount")
    due = (
        args.get("due_date")
        or (_dt.date.fromisoformat(_MARKET_DAY) + _dt.timedelta(30)).isoformat()
    )
    return {
        "invoice_id": ctx.new_id("in"),
        "status": "draft",
        "amount_due": total,
        "currency": args["currency"],
        "due_date": due,
    }


@implementation
def send_invoice(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    inv = ctx.state.get("fin_invoices", args["invoice_id"]) or {}
    return {
        "invoice_id": args["invoice_id"],
        "status": "open",
        "hosted_invoice_url": f"https://pay.example.com/i/{args['invoice_id']}",
        "sent_to": [inv["customer_email"], *args.get("cc", [])],
    }


@implementation
def mark_invoice_paid(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    inv = ctx.state.get("fin_invoices", args["invoice_id"]) or {}
    late = (_dt.date.fromisoformat(args["paid_on"]) - _dt.date.fromisoformat(inv["due_date"])).days
    return {
        "invoice_id": args["invoice_id"],
        "status": "paid",
        "amount_paid": inv["amount_due"],
        "days_late": max(0, late),
    }


# == loans and savings ===========================================================================
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


# == tax =========================================================================================
#: simplified national income-tax schedules: (upper bound of band or None, marginal rate %)
_BRACKETS = _SEEDS.table("brackets", dict[str, tuple[str, list[tuple[int | None, float]]]])


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
_VAT = _SEEDS.table("vat", dict[str, tuple[float, float]])


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


# == budgets =====================================================================================
@implementation
def create_budget(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _check_ccy("currency", args["currency"])
    return {
        "budget_id": ctx.new_id("BDG"),
        "category": args["category"],
        "monthly_limit": args["monthly_limit"],
        "currency": args["currency"],
    }


@implementation
def check_budget(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    b = ctx.state.get("fin_budgets", args["budget_id"]) or {}
    limit, spent = b["monthly_limit"], args["spent"]
    used = round(spent / limit * 100, 2)
    alert = b.get("alert_at_pct") or 80.0
    status = "over_budget" if spent > limit else "warning" if used >= alert else "on_track"
    return {
        "budget_id": args["budget_id"],
        "remaining": round(limit - spent, 2),
        "used_pct": used,
        "status": status,
    }


@initial_state
def _financial_state(seed: int) -> dict[str, dict[str, dict[str, Any]]]:
    accounts = {
        k: {
            "name": v["name"],
            "type": v["type"],
            "currency": v["currency"],
            "opening_balance": v["balance"],
            "owner": v["owner"],
            "mask": v["mask"],
            "status": "active",
        }
        for k, v in _ACCOUNTS.items()
    }
    return {
        "fin_accounts": accounts,
        "fin_customers": {k: dict(v) for k, v in _CUSTOMERS.items()},
        "fin_payment_methods": {k: dict(v) for k, v in _CARDS.items()},
        # a quote that was already used, so a stale literal id fails like a real API would
        "fin_transfer_quotes": {
            "TQ-USED0001": {
                "account_id": "ACC-1001",
                "source_amount": 100.0,
                "target_currency": "EUR",
                "target_amount": 91.5,
                "status": "funded",
            }
        },
    }


__all__ = ["convert", "fx_rate"]
