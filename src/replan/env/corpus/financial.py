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

from replan.core.tools import Effect, Precondition
from replan.env.corpus.kinds import (
    COUNTRY,
    CURRENCY,
    MONEY,
    PERCENT,
    PERSON,
    TEXT,
    URL,
    USD,
    kind,
)
from replan.env.corpus.registry import alternatives, initial_state, s, tool
from replan.env.world import InvalidValue, ToolContext

# -- kinds --------------------------------------------------------------------------------------
FX_RATE = kind("fx_rate", "an exchange rate: units of the quote currency per unit of the base")
INVERSE_RATE = kind("inverse_fx_rate", "units of the base currency per unit of the quote")
TICKER = kind(
    "ticker", "a stock ticker symbol", ["AAPL", "MSFT", "NVDA", "TSLA", "KO", "SAP", "TM", "SHOP"]
)
SHARE_PRICE = kind("share_price", "a price of one share, in USD")
HISTORY_RANGE = kind("history_range", "a trailing chart window", ["5d", "1mo", "3mo", "6mo", "1y"])
LOOKBACK = kind("lookback_days", "a look-back window in days", [7, 30, 90, 365])
PRICE_SERIES = kind("price_series", "a chronological list of closing prices")
RETURN_PCT = kind("return_pct", "a signed percentage change")
CRYPTO_PAIR = kind(
    "crypto_pair", "a crypto spot pair, BASE-QUOTE", ["BTC-USD", "ETH-EUR", "SOL-USD", "BTC-JPY"]
)
ACCOUNT_ID = kind(
    "bank_account_id",
    "an identifier of one of the user's bank accounts",
    ["ACC-1001", "ACC-1002", "ACC-2001", "ACC-3001", "ACC-4001"],
)
ACCOUNT_BALANCE = kind("account_balance", "the current (ledger) balance of a bank account")
YEAR_MONTH = kind(
    "year_month", "a calendar month, YYYY-MM", ["2026-08", "2026-09", "2026-10", "2026-11"]
)
TXN_LIST = kind("transaction_list", "a list of bank transactions as returned by a bank API")
TXN_ID = kind("transaction_id", "a bank transaction identifier")
SPEND_TOTAL = kind("spend_total", "the total spent (sum of debits) over a period")
STATEMENT_ID = kind("statement_id", "a generated bank statement")
BUDGET_CATEGORY = kind(
    "budget_category",
    "a spending category",
    ["groceries", "dining", "transport", "utilities", "entertainment", "travel"],
)
BUDGET_ID = kind("budget_id", "a spending budget created by the user")
IBAN = kind(
    "iban",
    "an International Bank Account Number",
    [
        "PT50000201231234567890154",
        "DE89370400440532013000",
        "GB29NWBK60161331926819",
        "FR1420041010050500013M02606",
        "PL61109010140000071219812874",
        "EE382200221020145685",
    ],
)
TRANSFER_QUOTE_ID = kind("transfer_quote_id", "a locked-rate money transfer quote")
TRANSFER_ID = kind("transfer_id", "a money transfer that was sent")
CUSTOMER_ID = kind(
    "payment_customer_id",
    "a customer of the payment processor",
    ["cus_Qk3rT8vLm2", "cus_Hn7wE4pZx9", "cus_Bt5yU1cJd6"],
)
PAYMENT_METHOD_ID = kind(
    "payment_method_id",
    "a stored card of a payment customer",
    ["pm_Qk3rVisa4242", "pm_Hn7wMc5454", "pm_Bt5yAmex0005"],
)
MINOR_AMOUNT = kind(
    "minor_amount", "an amount in the currency's minor unit (cents)", [999, 2500, 12000, 150000]
)
PAYMENT_INTENT_ID = kind("payment_intent_id", "an authorised payment awaiting capture")
CHARGE_ID = kind("charge_id", "a captured card charge")
REFUND_ID = kind("refund_id", "a refund of a card charge")
INVOICE_ID = kind("invoice_id", "an invoice issued to a customer")
LINE_ITEMS = kind(
    "invoice_line_items",
    "the billed lines of an invoice: description, quantity, unit price",
    [
        [{"description": "Consulting, October", "quantity": 10, "unit_price": 120.0}],
        [
            {"description": "Website redesign", "quantity": 1, "unit_price": 2400.0},
            {"description": "Hosting, 12 months", "quantity": 12, "unit_price": 15.0},
        ],
        [{"description": "Translation, per page", "quantity": 35, "unit_price": 18.5}],
    ],
)
LOAN_PAYMENT = kind("loan_payment", "the fixed periodic payment of an amortising loan")
TERM_MONTHS = kind("term_months", "a loan term in months", [12, 36, 60, 240, 360])
HORIZON_YEARS = kind("horizon_years", "an investment horizon in whole years", [1, 3, 5, 10, 25])
FUTURE_VALUE = kind("future_value", "the value of a balance after compounding")
TAX_AMOUNT = kind("tax_amount", "an amount of tax owed, in local currency")
TAX_TABLE_ID = kind("tax_table_id", "an identifier of one country's income-tax bracket table")
TAX_THRESHOLD = kind("tax_threshold", "a boundary of an income-tax band, in local currency")
TAX_YEAR = kind("tax_year", "a fiscal year", [2025, 2026, 2027])
REDUCED_RATE = kind("reduced_vat_rate", "a reduced VAT/GST band, in percent")
GROSS_AMOUNT = kind("gross_amount", "an amount including sales tax / VAT")

# -- reference tables -------------------------------------------------------------------------
#: units of currency per 1 USD (mid-market reference before the per-world jitter)
_USD_RATES: dict[str, float] = {
    "USD": 1.0,
    "EUR": 0.92,
    "GBP": 0.79,
    "JPY": 151.2,
    "CAD": 1.37,
    "PLN": 3.98,
    "CHF": 0.88,
    "AUD": 1.52,
    "NZD": 1.66,
    "KES": 129.0,
    "CLP": 940.0,
    "VND": 25400.0,
    "SEK": 10.4,
    "NOK": 10.6,
    "DKK": 6.86,
    "CZK": 23.2,
    "HUF": 362.0,
    "INR": 83.5,
    "CNY": 7.24,
    "KRW": 1360.0,
    "SGD": 1.35,
    "HKD": 7.82,
    "ZAR": 18.4,
    "MXN": 17.2,
    "BRL": 5.2,
}
_ZERO_DECIMAL = {"JPY", "KRW", "VND", "CLP", "HUF"}


def _sig(x: float, digits: int = 6) -> float:
    return float(f"{x:.{digits}g}")


#: "today" of every world: the latest trading session and FX fixing; earlier days are history,
#: later ones (trip dates, due dates) are the future
_MARKET_DAY = "2026-11-27"
#: chart ranges -> calendar days
_RANGES = {"5d": 7, "1mo": 30, "3mo": 91, "6mo": 182, "1y": 365}


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
_CCY = s.string("ISO 4217 code", CURRENCY, pattern="^[A-Z]{3}$")


@tool(
    domain="Financial",
    category="source",
    group="fx_convert",
    description="Latest mid-market exchange rate for one currency pair (ECB reference style).",
    params={
        "base": s.string("currency to convert from", CURRENCY, pattern="^[A-Z]{3}$"),
        "quote": s.string("currency to convert to", CURRENCY, pattern="^[A-Z]{3}$"),
    },
    returns=s.obj(
        {
            "base": _CCY,
            "quote": _CCY,
            "rate": s.number("units of quote per 1 base", FX_RATE, exclusive_minimum=0),
            "inverse": s.number("units of base per 1 quote", INVERSE_RATE),
        }
    ),
)
def get_fx_rate(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _check_ccy("base", args["base"])
    _check_ccy("quote", args["quote"])
    rate = fx_rate(ctx, args["base"], args["quote"])
    inverse = fx_rate(ctx, args["quote"], args["base"])
    return {"base": args["base"], "quote": args["quote"], "rate": rate, "inverse": inverse}


@tool(
    domain="Financial",
    category="processor",
    group="fx_convert",
    description="Multiply an amount by a given exchange rate, rounded to cents.",
    params={
        "amount": s.number("amount in the base currency", MONEY, exclusive_minimum=0),
        "rate": s.number("exchange rate to apply", FX_RATE, exclusive_minimum=0),
    },
    returns=s.obj(
        {
            "converted_amount": s.number("amount in the quote currency", MONEY),
            "rate_applied": s.number("", FX_RATE),
        }
    ),
)
def apply_fx_rate(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return {
        "converted_amount": round(args["amount"] * args["rate"], 2),
        "rate_applied": args["rate"],
    }


@tool(
    domain="Financial",
    category="processor",
    group="fx_convert",
    description="Convert an amount between two currencies at the latest rate (exchangerate.host style).",
    params={
        "from": s.string("source currency", CURRENCY, pattern="^[A-Z]{3}$"),
        "to": s.string("target currency", CURRENCY, pattern="^[A-Z]{3}$"),
        "amount": s.number("amount to convert", MONEY, exclusive_minimum=0),
    },
    returns=s.obj(
        {
            "query": s.obj({"from": _CCY, "to": _CCY}),
            "info": s.obj({"rate": s.number("", FX_RATE)}),
            "result": s.number("converted amount", MONEY),
        }
    ),
)
def convert_currency(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _check_ccy("from", args["from"])
    _check_ccy("to", args["to"])
    rate = fx_rate(ctx, args["from"], args["to"])
    return {
        "query": {"from": args["from"], "to": args["to"]},
        "info": {"rate": rate},
        "result": round(args["amount"] * rate, 2),
    }


alternatives(
    "fx_convert",
    "1-N",
    ["convert_currency"],
    ["get_fx_rate", "apply_fx_rate"],
    description="convert directly, or fetch the rate and apply it",
    output_kind=MONEY,
)


@tool(
    domain="Financial",
    category="source",
    description="Daily reference rates of one pair over the last N days (business days only).",
    params={
        "base": s.string("base currency", CURRENCY, pattern="^[A-Z]{3}$"),
        "symbol": s.string("quote currency", CURRENCY, pattern="^[A-Z]{3}$"),
        "days": s.integer(
            "look-back window in calendar days (default 30)", LOOKBACK, minimum=2, maximum=366
        ),
    },
    required=["base", "symbol"],
    returns=s.obj(
        {
            "base": _CCY,
            "symbol": _CCY,
            "rates": s.array(s.obj({"date": s.date(""), "rate": s.number("", FX_RATE)})),
            "average_rate": s.number("mean of the daily rates", FX_RATE),
        }
    ),
)
def get_fx_timeseries(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _check_ccy("base", args["base"])
    _check_ccy("symbol", args["symbol"])
    days = _sessions(args.get("days", 30))
    rates = [{"date": d, "rate": fx_rate(ctx, args["base"], args["symbol"], d)} for d in days]
    avg = _sig(math.fsum(r["rate"] for r in rates) / len(rates))
    return {"base": args["base"], "symbol": args["symbol"], "rates": rates, "average_rate": avg}


# == market data =================================================================================
#: ticker -> (company, sector, exchange, reference price USD, shares outstanding in billions)
_TICKERS: dict[str, tuple[str, str, str, float, float]] = {
    "AAPL": ("Apple Inc.", "Technology", "NASDAQ", 190.0, 15.2),
    "MSFT": ("Microsoft Corporation", "Technology", "NASDAQ", 415.0, 7.43),
    "NVDA": ("NVIDIA Corporation", "Technology", "NASDAQ", 120.0, 24.5),
    "TSLA": ("Tesla, Inc.", "Consumer Cyclical", "NASDAQ", 240.0, 3.2),
    "AMZN": ("Amazon.com, Inc.", "Consumer Cyclical", "NASDAQ", 185.0, 10.5),
    "GOOGL": ("Alphabet Inc.", "Communication Services", "NASDAQ", 170.0, 12.3),
    "JPM": ("JPMorgan Chase & Co.", "Financial Services", "NYSE", 200.0, 2.87),
    "KO": ("The Coca-Cola Company", "Consumer Defensive", "NYSE", 62.0, 4.31),
    "SAP": ("SAP SE (ADR)", "Technology", "NYSE", 220.0, 1.17),
    "TM": ("Toyota Motor Corporation (ADR)", "Consumer Cyclical", "NYSE", 180.0, 1.35),
    "SHOP": ("Shopify Inc.", "Technology", "NYSE", 75.0, 1.29),
    "V": ("Visa Inc.", "Financial Services", "NYSE", 275.0, 1.95),
}


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


_SYMBOL = s.string("ticker", TICKER, pattern=r"^[A-Z]{1,5}$")


@tool(
    domain="Financial",
    category="source",
    group="stock_quote",
    description="Latest quote of a stock: price, change and session range (Alpha Vantage GLOBAL_QUOTE style).",
    params={"symbol": s.string("ticker symbol, e.g. MSFT", TICKER, pattern=r"^[A-Z]{1,5}$")},
    returns=s.obj(
        {
            "symbol": _SYMBOL,
            "open": s.number("", USD),
            "high": s.number("", USD),
            "low": s.number("", USD),
            "price": s.number("last traded price", SHARE_PRICE),
            "volume": s.integer("shares traded", minimum=0),
            "latest_trading_day": s.date(""),
            "previous_close": s.number("", USD),
            "change": s.number("price minus previous close, USD"),
            "change_percent": s.number("", RETURN_PCT),
        }
    ),
)
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


@tool(
    domain="Financial",
    category="source",
    group="stock_quote",
    description="Snapshot of one ticker: day bar, previous day and last trade (Polygon style).",
    params={
        "ticker": s.string("case-sensitive ticker", TICKER, pattern=r"^[A-Z]{1,5}$"),
        "include_otc": s.boolean("also search OTC markets"),
    },
    required=["ticker"],
    returns=s.obj(
        {
            "status": s.enum(["OK"]),
            "ticker": s.obj(
                {
                    "ticker": _SYMBOL,
                    "todaysChange": s.number("USD"),
                    "todaysChangePerc": s.number("", RETURN_PCT),
                    "day": s.obj(
                        {
                            "o": s.number("open", USD),
                            "h": s.number("high", USD),
                            "l": s.number("low", USD),
                            "c": s.number("close", USD),
                            "v": s.integer("volume", minimum=0),
                        }
                    ),
                    "prevDay": s.obj({"c": s.number("previous close", USD)}),
                    "lastTrade": s.obj(
                        {"p": s.number("price", SHARE_PRICE), "x": s.string("exchange MIC")}
                    ),
                }
            ),
        }
    ),
)
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


alternatives(
    "stock_quote",
    "1-1",
    ["get_stock_quote"],
    ["fetch_equity_snapshot"],
    description="two market-data vendors quoting the same last price",
    output_kind=SHARE_PRICE,
)


@tool(
    domain="Financial",
    category="source",
    description="Closing prices of a stock over a trailing range, daily or weekly bars (chart API style).",
    params={
        "symbol": s.string("ticker", TICKER, pattern=r"^[A-Z]{1,5}$"),
        "range": s.enum(list(_RANGES), "trailing window (default 1mo)", HISTORY_RANGE),
        "interval": s.enum(["1d", "1wk"], "bar size (default 1d)"),
    },
    required=["symbol"],
    returns=s.obj(
        {
            "symbol": _SYMBOL,
            "bars": s.array(s.obj({"date": s.date(""), "close": s.number("", SHARE_PRICE)})),
            "closes": s.array(s.number(), "closes, oldest first", PRICE_SERIES),
        }
    ),
)
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


@tool(
    domain="Financial",
    category="processor",
    description="Summary statistics of a price series: mean, range, total return, volatility.",
    params={
        "prices": s.array(
            s.number(exclusive_minimum=0),
            "prices, oldest first",
            PRICE_SERIES,
            min_items=2,
            max_items=400,
        )
    },
    returns=s.obj(
        {
            "observations": s.integer(minimum=2),
            "mean": s.number("", SHARE_PRICE),
            "min": s.number("", SHARE_PRICE),
            "max": s.number("", SHARE_PRICE),
            "total_return_pct": s.number("last vs first", RETURN_PCT),
            "volatility_pct": s.number("stdev of period returns", PERCENT, minimum=0),
        }
    ),
)
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


@tool(
    domain="Financial",
    category="source",
    description="Company fundamentals for a ticker: name, sector, market cap, P/E, dividend yield.",
    params={"ticker": s.string("ticker", TICKER, pattern=r"^[A-Z]{1,5}$")},
    returns=s.obj(
        {
            "ticker": _SYMBOL,
            "name": s.string("company name"),
            "sector": s.string(""),
            "exchange": s.enum(["NASDAQ", "NYSE"]),
            "market_cap_usd": s.number("", USD, minimum=0),
            "pe_ratio": s.number("trailing P/E", minimum=0),
            "dividend_yield_pct": s.number("", PERCENT, minimum=0),
        }
    ),
)
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


_GROWTH = ("TSLA", "AMZN", "SHOP", "NVDA")
_CRYPTO_USD = {"BTC": 68000.0, "ETH": 3500.0, "SOL": 150.0, "ADA": 0.45, "DOGE": 0.15, "XRP": 0.55}


@tool(
    domain="Financial",
    category="source",
    description="Spot price of a crypto asset in a fiat currency (Coinbase spot-price style).",
    params={
        "currency_pair": s.string(
            "pair such as BTC-USD", CRYPTO_PAIR, pattern="^[A-Z]{2,5}-[A-Z]{3}$"
        )
    },
    returns=s.obj(
        {
            "data": s.obj(
                {
                    "base": s.string("crypto asset"),
                    "currency": _CCY,
                    "amount": s.number("price of 1 unit", MONEY),
                }
            )
        }
    ),
)
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
_ACCOUNTS: dict[str, dict[str, Any]] = {
    "ACC-1001": {
        "name": "Everyday Checking",
        "type": "checking",
        "currency": "USD",
        "balance": 8420.55,
        "owner": "Dana Reyes",
        "mask": "4821",
    },
    "ACC-1002": {
        "name": "High-Yield Savings",
        "type": "savings",
        "currency": "USD",
        "balance": 25310.0,
        "owner": "Dana Reyes",
        "mask": "9930",
    },
    "ACC-2001": {
        "name": "Conta a Ordem",
        "type": "checking",
        "currency": "EUR",
        "balance": 6120.4,
        "owner": "Ana Silva",
        "mask": "0154",
    },
    "ACC-3001": {
        "name": "Current Account",
        "type": "checking",
        "currency": "GBP",
        "balance": 3980.1,
        "owner": "Luc Tremblay",
        "mask": "6819",
    },
    "ACC-4001": {
        "name": "Futsuu Yokin",
        "type": "savings",
        "currency": "JPY",
        "balance": 1250000.0,
        "owner": "Kenji Mori",
        "mask": "7713",
    },
}


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


_ACCOUNT_EXISTS = Precondition(
    kind="exists",
    collection="fin_accounts",
    arg="account_id",
    description="the bank account must be one of the linked accounts",
)


@tool(
    domain="Financial",
    category="source",
    description="List the linked bank accounts with their current balances (Plaid /accounts/get style).",
    params={
        "type": s.enum(["checking", "savings"], "only accounts of this type"),
        "iso_currency_code": s.string(
            "only accounts in this currency", CURRENCY, pattern="^[A-Z]{3}$"
        ),
    },
    required=[],
    returns=s.obj(
        {
            "accounts": s.array(
                s.obj(
                    {
                        "account_id": s.string("", ACCOUNT_ID),
                        "name": s.string(""),
                        "type": s.enum(["checking", "savings"]),
                        "mask": s.string("last 4 digits"),
                        "iso_currency_code": _CCY,
                        "current_balance": s.number("", ACCOUNT_BALANCE),
                    }
                )
            )
        }
    ),
)
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


@tool(
    domain="Financial",
    category="source",
    group="account_balance",
    description="Real-time balance of one account: current, available and currency.",
    params={"account_id": s.string("linked account", ACCOUNT_ID, pattern=r"^ACC-\d{4}$")},
    returns=s.obj(
        {
            "account_id": s.string("", ACCOUNT_ID),
            "balances": s.obj(
                {
                    "current": s.number("ledger balance", ACCOUNT_BALANCE),
                    "available": s.number("current minus pending holds", MONEY),
                    "iso_currency_code": _CCY,
                }
            ),
        }
    ),
    preconditions=[_ACCOUNT_EXISTS],
)
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


@tool(
    domain="Financial",
    category="source",
    group="account_balance",
    description="Core-banking account record: owner, product, ledger balance and status.",
    params={
        "account_id": s.string("account number", ACCOUNT_ID, pattern=r"^ACC-\d{4}$"),
        "include_owner": s.boolean("include the account holder's name"),
    },
    required=["account_id"],
    returns=s.obj(
        {
            "id": s.string("", ACCOUNT_ID),
            "product": s.string("product name"),
            "status": s.enum(["active", "frozen"]),
            "currency": _CCY,
            "ledger_balance": s.number("", ACCOUNT_BALANCE),
            "owner": s.string("account holder", PERSON),
        },
        required=["id", "product", "status", "currency", "ledger_balance"],
    ),
    preconditions=[_ACCOUNT_EXISTS],
)
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


alternatives(
    "account_balance",
    "1-1",
    ["get_account_balance"],
    ["retrieve_account_details"],
    description="aggregator balance vs core-banking record",
    output_kind=ACCOUNT_BALANCE,
)

_MERCHANTS: dict[str, list[str]] = {
    "groceries": ["Lidl", "Aldi", "Costco"],
    "dining": ["Starbucks", "McDonald's", "Pizza Hut", "Local Bistro"],
    "transport": ["Uber", "Shell", "BP"],
    "utilities": ["Electricity Co.", "Vodafone", "Water Utility", "Fibre Broadband"],
    "entertainment": ["Netflix", "Spotify", "Steam", "Cinema"],
    "travel": ["Airbnb", "Booking.com", "Expedia", "Hertz"],
}
#: local merchants per account currency, mixed in with the international ones
_LOCAL_MERCHANTS: dict[str, dict[str, list[str]]] = {
    "USD": {
        "groceries": ["Whole Foods Market", "Trader Joe's", "Safeway"],
        "transport": ["Lyft", "Chevron"],
        "dining": ["Chipotle"],
    },
    "EUR": {
        "groceries": ["Pingo Doce", "Continente"],
        "transport": ["Bolt", "Galp"],
        "dining": ["Pastelaria Versailles"],
    },
    "GBP": {
        "groceries": ["Tesco", "Sainsbury's"],
        "transport": ["TfL", "Trainline"],
        "dining": ["Pret A Manger", "Nando's"],
    },
    "JPY": {
        "groceries": ["Aeon", "Lawson", "FamilyMart"],
        "transport": ["Suica Charge"],
        "dining": ["Sushiro", "Yoshinoya"],
    },
}
_CATEGORY_USD = {
    "groceries": (18, 160),
    "dining": (6, 85),
    "transport": (4, 70),
    "utilities": (35, 140),
    "entertainment": (8, 40),
    "travel": (90, 620),
}


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


_TXN = s.obj(
    {
        "transaction_id": s.string("", TXN_ID),
        "date": s.date("posting date"),
        "merchant_name": s.string("counterparty"),
        "category": s.string("spending category", BUDGET_CATEGORY),
        "amount": s.number("signed: negative is money out", MONEY),
        "iso_currency_code": _CCY,
    }
)
_MONTH = s.string("statement month, YYYY-MM", YEAR_MONTH, pattern=r"^\d{4}-(0[1-9]|1[0-2])$")


@tool(
    domain="Financial",
    category="source",
    group="monthly_spending",
    description="Posted transactions of an account for one calendar month.",
    params={
        "account_id": s.string("linked account", ACCOUNT_ID, pattern=r"^ACC-\d{4}$"),
        "month": _MONTH,
        "category": s.enum([*_MERCHANTS, "income"], "only this category", BUDGET_CATEGORY),
    },
    required=["account_id", "month"],
    returns=s.obj(
        {
            "account_id": s.string("", ACCOUNT_ID),
            "transactions": s.array(_TXN, "", TXN_LIST),
            "total_transactions": s.integer(minimum=0),
        }
    ),
    preconditions=[_ACCOUNT_EXISTS],
)
def list_transactions(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _check_month(args["month"])
    txns = _transactions(ctx, args["account_id"], args["month"])
    if args.get("category"):
        txns = [t for t in txns if t["category"] == args["category"]]
    return {"account_id": args["account_id"], "transactions": txns, "total_transactions": len(txns)}


@tool(
    domain="Financial",
    category="processor",
    group="monthly_spending",
    description="Total outgoing spend of a list of transactions, broken down by category.",
    params={
        "transactions": s.array(
            s.obj(
                {
                    "amount": s.number(),
                    "category": s.string(),
                    "merchant_name": s.string(),
                    "date": s.string(),
                    "transaction_id": s.string(),
                    "iso_currency_code": s.string(),
                },
                required=["amount", "category"],
            ),
            "transactions as returned by a bank API",
            TXN_LIST,
            max_items=500,
        )
    },
    returns=s.obj(
        {
            "total_spent": s.number("sum of debits", SPEND_TOTAL, minimum=0),
            "total_income": s.number("sum of credits", MONEY, minimum=0),
            "by_category": s.array(
                s.obj({"category": s.string("", BUDGET_CATEGORY), "spent": s.number("", MONEY)})
            ),
            "debit_count": s.integer(minimum=0),
        }
    ),
)
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


@tool(
    domain="Financial",
    category="processor",
    group="monthly_spending",
    description="Generate the monthly statement document of an account.",
    params={
        "account_id": s.string("linked account", ACCOUNT_ID, pattern=r"^ACC-\d{4}$"),
        "month": _MONTH,
        "format": s.enum(["pdf", "csv", "ofx"], "document format"),
    },
    required=["account_id", "month"],
    returns=s.obj(
        {
            "statement_id": s.string("", STATEMENT_ID),
            "period": s.obj({"start": s.date(""), "end": s.date("")}),
            "download_url": s.string("", URL),
        }
    ),
    preconditions=[_ACCOUNT_EXISTS],
    effects=[
        Effect(
            op="create",
            collection="fin_statements",
            key="statement_id",
            fields={"account_id": "$arg.account_id", "month": "$arg.month", "status": "ready"},
        )
    ],
)
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


@tool(
    domain="Financial",
    category="processor",
    group="monthly_spending",
    description="Totals of a generated statement: debits, credits and number of lines.",
    params={
        "statement_id": s.string(
            "statement from generate_statement", STATEMENT_ID, pattern="^STMT-"
        )
    },
    returns=s.obj(
        {
            "statement_id": s.string("", STATEMENT_ID),
            "account_id": s.string("", ACCOUNT_ID),
            "currency": _CCY,
            "total_debits": s.number("money out", SPEND_TOTAL, minimum=0),
            "total_credits": s.number("money in", MONEY, minimum=0),
            "line_count": s.integer(minimum=0),
        }
    ),
    preconditions=[
        Precondition(
            kind="exists",
            collection="fin_statements",
            arg="statement_id",
            description="the statement must have been generated",
        )
    ],
)
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


alternatives(
    "monthly_spending",
    "N-N",
    ["list_transactions", "summarize_spending"],
    ["generate_statement", "get_statement_summary"],
    description="sum the month's transactions, or generate the statement and read it",
    output_kind=SPEND_TOTAL,
)


# == transfers ===================================================================================
def _iban_ok(iban: str) -> bool:
    moved = iban[4:] + iban[:4]
    digits = "".join(str(int(ch, 36)) for ch in moved)
    return int(digits) % 97 == 1


@tool(
    domain="Financial",
    category="processor",
    description="Lock a rate for sending money from a linked account to another currency (Wise quote style).",
    params={
        "account_id": s.string("account to send from", ACCOUNT_ID, pattern=r"^ACC-\d{4}$"),
        "target_currency": s.string("currency the recipient gets", CURRENCY, pattern="^[A-Z]{3}$"),
        "source_amount": s.number("amount debited from the account", MONEY, exclusive_minimum=0),
    },
    returns=s.obj(
        {
            "quote_id": s.string("", TRANSFER_QUOTE_ID),
            "source_currency": _CCY,
            "target_currency": _CCY,
            "rate": s.number("", FX_RATE),
            "fee": s.number("fee in the source currency", MONEY, minimum=0),
            "target_amount": s.number("what the recipient gets", MONEY),
        }
    ),
    preconditions=[_ACCOUNT_EXISTS],
    effects=[
        Effect(
            op="create",
            collection="fin_transfer_quotes",
            key="quote_id",
            fields={
                "account_id": "$arg.account_id",
                "source_amount": "$arg.source_amount",
                "target_currency": "$arg.target_currency",
                "target_amount": "$output.target_amount",
                "status": "open",
            },
        )
    ],
)
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


@tool(
    domain="Financial",
    category="action",
    description="Send money to an IBAN using a locked transfer quote; consumes the quote.",
    params={
        "quote_id": s.string("transfer quote", TRANSFER_QUOTE_ID, pattern="^TQ-"),
        "recipient_iban": s.string(
            "beneficiary IBAN", IBAN, pattern="^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$"
        ),
        "recipient_name": s.string("beneficiary's name", PERSON, min_len=2),
        "reference": s.string("payment reference", TEXT, max_len=140),
    },
    required=["quote_id", "recipient_iban", "recipient_name"],
    returns=s.obj(
        {
            "transfer_id": s.string("", TRANSFER_ID),
            "status": s.enum(["processing"]),
            "source_account_id": s.string("", ACCOUNT_ID),
            "source_amount": s.number("debited", MONEY),
            "target_amount": s.number("credited", MONEY),
            "estimated_delivery": s.date(""),
        }
    ),
    preconditions=[
        Precondition(
            kind="field_equals",
            collection="fin_transfer_quotes",
            arg="quote_id",
            field="status",
            value="open",
            description="the transfer quote must exist and be unused",
        )
    ],
    effects=[
        Effect(
            op="update",
            collection="fin_transfer_quotes",
            key="quote_id",
            fields={"status": "funded"},
        ),
        Effect(
            op="create",
            collection="fin_transfers",
            key="transfer_id",
            fields={
                "quote_id": "$arg.quote_id",
                "source_account_id": "$output.source_account_id",
                "source_amount": "$output.source_amount",
                "target_amount": "$output.target_amount",
                "recipient_iban": "$arg.recipient_iban",
                "estimated_delivery": "$output.estimated_delivery",
                "status": "processing",
            },
        ),
    ],
)
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


@tool(
    domain="Financial",
    category="source",
    description="Tracking status of a money transfer.",
    params={"transfer_id": s.string("transfer to track", TRANSFER_ID, pattern="^TR-")},
    returns=s.obj(
        {
            "transfer_id": s.string("", TRANSFER_ID),
            "status": s.enum(["processing", "outgoing_payment_sent"]),
            "recipient_iban": s.string("", IBAN),
            "target_amount": s.number("", MONEY),
            "estimated_delivery": s.date(""),
        }
    ),
    preconditions=[
        Precondition(
            kind="exists",
            collection="fin_transfers",
            arg="transfer_id",
            description="no such transfer",
        )
    ],
)
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
_CUSTOMERS: dict[str, dict[str, Any]] = {
    "cus_Qk3rT8vLm2": {
        "name": "Ana Silva",
        "email": "ana.silva@example.org",
        "default_payment_method": "pm_Qk3rVisa4242",
    },
    "cus_Hn7wE4pZx9": {
        "name": "Kenji Mori",
        "email": "kenji.mori@example.jp",
        "default_payment_method": "pm_Hn7wMc5454",
    },
    "cus_Bt5yU1cJd6": {
        "name": "Dana Reyes",
        "email": "dana.reyes@example.com",
        "default_payment_method": "pm_Bt5yAmex0005",
    },
}
_CARDS: dict[str, dict[str, Any]] = {
    "pm_Qk3rVisa4242": {
        "customer": "cus_Qk3rT8vLm2",
        "brand": "visa",
        "last4": "4242",
        "exp": "2028-04",
    },
    "pm_Hn7wMc5454": {
        "customer": "cus_Hn7wE4pZx9",
        "brand": "mastercard",
        "last4": "5454",
        "exp": "2027-11",
    },
    "pm_Bt5yAmex0005": {
        "customer": "cus_Bt5yU1cJd6",
        "brand": "amex",
        "last4": "0005",
        "exp": "2029-01",
    },
}
_PAY_CCY = s.string("three-letter ISO currency, upper case", CURRENCY, pattern="^[A-Z]{3}$")
_MINOR = s.integer(
    "amount in the smallest currency unit", MINOR_AMOUNT, minimum=50, maximum=99_999_999
)
_CUSTOMER = s.string("payment customer", CUSTOMER_ID, pattern="^cus_[A-Za-z0-9]{6,}$")


@tool(
    domain="Financial",
    category="action",
    group="card_charge",
    description="Authorise a card payment for a customer, to be captured later (Stripe PaymentIntent, manual capture).",
    params={
        "customer": _CUSTOMER,
        "amount": _MINOR,
        "currency": _PAY_CCY,
        "description": s.string("shown on the receipt", TEXT, max_len=200),
    },
    required=["customer", "amount", "currency"],
    returns=s.obj(
        {
            "id": s.string("", PAYMENT_INTENT_ID),
            "status": s.enum(["requires_capture"]),
            "amount_capturable": s.integer("", MINOR_AMOUNT),
            "currency": _PAY_CCY,
        }
    ),
    preconditions=[
        Precondition(
            kind="exists",
            collection="fin_customers",
            arg="customer",
            description="unknown payment customer",
        )
    ],
    effects=[
        Effect(
            op="create",
            collection="fin_payment_intents",
            key="id",
            fields={
                "customer": "$arg.customer",
                "amount": "$arg.amount",
                "currency": "$arg.currency",
                "status": "requires_capture",
            },
        )
    ],
)
def create_payment_intent(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _check_ccy("currency", args["currency"])
    return {
        "id": ctx.new_id("pi"),
        "status": "requires_capture",
        "amount_capturable": args["amount"],
        "currency": args["currency"],
    }


@tool(
    domain="Financial",
    category="action",
    group="card_charge",
    description="Capture an authorised payment intent; creates the charge.",
    params={"payment_intent": s.string("authorised intent", PAYMENT_INTENT_ID, pattern="^pi-")},
    returns=s.obj(
        {
            "payment_intent": s.string("", PAYMENT_INTENT_ID),
            "status": s.enum(["succeeded"]),
            "latest_charge": s.string("", CHARGE_ID),
            "amount_received": s.integer("", MINOR_AMOUNT),
            "currency": _PAY_CCY,
        }
    ),
    preconditions=[
        Precondition(
            kind="field_equals",
            collection="fin_payment_intents",
            arg="payment_intent",
            field="status",
            value="requires_capture",
            description="the payment intent must be authorised and not yet captured",
        )
    ],
    effects=[
        Effect(
            op="update",
            collection="fin_payment_intents",
            key="payment_intent",
            fields={"status": "succeeded"},
        ),
        Effect(
            op="create",
            collection="fin_charges",
            key="latest_charge",
            fields={
                "amount": "$output.amount_received",
                "currency": "$output.currency",
                "payment_intent": "$arg.payment_intent",
                "status": "succeeded",
            },
        ),
    ],
)
def capture_payment_intent(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    pi = ctx.state.get("fin_payment_intents", args["payment_intent"]) or {}
    return {
        "payment_intent": args["payment_intent"],
        "status": "succeeded",
        "latest_charge": ctx.new_id("ch"),
        "amount_received": pi["amount"],
        "currency": pi["currency"],
    }


@tool(
    domain="Financial",
    category="source",
    group="card_charge",
    description="The default card on file of a payment customer.",
    params={"customer_id": _CUSTOMER},
    returns=s.obj(
        {
            "customer_id": s.string("", CUSTOMER_ID),
            "payment_method_id": s.string("", PAYMENT_METHOD_ID),
            "card": s.obj(
                {
                    "brand": s.enum(["visa", "mastercard", "amex"]),
                    "last4": s.string("", pattern=r"^\d{4}$"),
                    "exp": s.string("YYYY-MM"),
                }
            ),
        }
    ),
    preconditions=[
        Precondition(
            kind="exists",
            collection="fin_customers",
            arg="customer_id",
            description="unknown payment customer",
        )
    ],
)
def get_default_payment_method(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    cus = ctx.state.get("fin_customers", args["customer_id"]) or {}
    pm = cus["default_payment_method"]
    card = ctx.state.get("fin_payment_methods", pm) or {}
    return {
        "customer_id": args["customer_id"],
        "payment_method_id": pm,
        "card": {"brand": card["brand"], "last4": card["last4"], "exp": card["exp"]},
    }


@tool(
    domain="Financial",
    category="action",
    group="card_charge",
    description="Charge a stored card immediately (one-step sale).",
    params={
        "payment_method_id": s.string("card on file", PAYMENT_METHOD_ID, pattern="^pm_"),
        "amount": _MINOR,
        "currency": _PAY_CCY,
        "statement_descriptor": s.string("text on the card statement", max_len=22),
    },
    required=["payment_method_id", "amount", "currency"],
    returns=s.obj(
        {
            "charge_id": s.string("", CHARGE_ID),
            "paid": s.boolean(),
            "amount": s.integer("", MINOR_AMOUNT),
            "currency": _PAY_CCY,
            "card_last4": s.string(""),
        }
    ),
    preconditions=[
        Precondition(
            kind="exists",
            collection="fin_payment_methods",
            arg="payment_method_id",
            description="unknown card",
        )
    ],
    effects=[
        Effect(
            op="create",
            collection="fin_charges",
            key="charge_id",
            fields={
                "amount": "$arg.amount",
                "currency": "$arg.currency",
                "payment_method": "$arg.payment_method_id",
                "status": "succeeded",
            },
        )
    ],
)
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


alternatives(
    "card_charge",
    "N-N",
    ["create_payment_intent", "capture_payment_intent"],
    ["get_default_payment_method", "charge_payment_method"],
    description="authorise then capture, or charge the default card in one step",
    output_kind=CHARGE_ID,
)


@tool(
    domain="Financial",
    category="action",
    description="Refund a charge in full or in part.",
    params={
        "charge": s.string("charge to refund", CHARGE_ID, pattern="^ch-"),
        "amount": s.integer("partial amount in minor units; default full", MINOR_AMOUNT, minimum=1),
        "reason": s.enum(["duplicate", "fraudulent", "requested_by_customer"]),
    },
    required=["charge"],
    returns=s.obj(
        {
            "refund_id": s.string("", REFUND_ID),
            "amount": s.integer("", MINOR_AMOUNT),
            "status": s.enum(["succeeded"]),
            "charge_status": s.enum(["refunded", "partially_refunded"]),
        }
    ),
    preconditions=[
        Precondition(
            kind="field_equals",
            collection="fin_charges",
            arg="charge",
            field="status",
            value="succeeded",
            description="the charge must exist and not be refunded yet",
        )
    ],
    effects=[
        Effect(
            op="update",
            collection="fin_charges",
            key="charge",
            fields={"status": "$output.charge_status"},
        )
    ],
)
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
_LINE = s.obj(
    {
        "description": s.string("what is billed", TEXT, min_len=1),
        "quantity": s.integer("units", minimum=1, maximum=10000),
        "unit_price": s.number("price per unit", MONEY, minimum=0),
    }
)


@tool(
    domain="Financial",
    category="action",
    description="Create a draft invoice with line items for a customer e-mail.",
    params={
        "customer_email": s.email("who is billed"),
        "currency": _PAY_CCY,
        "line_items": s.array(_LINE, "billed items", LINE_ITEMS, min_items=1, max_items=50),
        "due_date": s.date("payment due date"),
        "memo": s.string("note printed on the invoice", TEXT, max_len=500),
    },
    required=["customer_email", "currency", "line_items"],
    returns=s.obj(
        {
            "invoice_id": s.string("", INVOICE_ID),
            "status": s.enum(["draft"]),
            "amount_due": s.number("", MONEY),
            "currency": _PAY_CCY,
            "due_date": s.date(""),
        }
    ),
    effects=[
        Effect(
            op="create",
            collection="fin_invoices",
            key="invoice_id",
            fields={
                "customer_email": "$arg.customer_email",
                "amount_due": "$output.amount_due",
                "currency": "$arg.currency",
                "due_date": "$output.due_date",
                "status": "draft",
            },
        )
    ],
)
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


@tool(
    domain="Financial",
    category="action",
    description="Finalise a draft invoice and e-mail it to the customer.",
    params={
        "invoice_id": s.string("draft invoice", INVOICE_ID, pattern="^in-"),
        "cc": s.array(s.email(""), "extra recipients", max_items=5),
    },
    required=["invoice_id"],
    returns=s.obj(
        {
            "invoice_id": s.string("", INVOICE_ID),
            "status": s.enum(["open"]),
            "hosted_invoice_url": s.string("payment page", URL),
            "sent_to": s.array(s.email("")),
        }
    ),
    preconditions=[
        Precondition(
            kind="field_equals",
            collection="fin_invoices",
            arg="invoice_id",
            field="status",
            value="draft",
            description="only a draft invoice can be sent",
        )
    ],
    effects=[
        Effect(op="update", collection="fin_invoices", key="invoice_id", fields={"status": "open"})
    ],
)
def send_invoice(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    inv = ctx.state.get("fin_invoices", args["invoice_id"]) or {}
    return {
        "invoice_id": args["invoice_id"],
        "status": "open",
        "hosted_invoice_url": f"https://pay.example.com/i/{args['invoice_id']}",
        "sent_to": [inv["customer_email"], *args.get("cc", [])],
    }


@tool(
    domain="Financial",
    category="action",
    description="Record an out-of-band payment of a sent invoice (bank transfer, cash).",
    params={
        "invoice_id": s.string("open invoice", INVOICE_ID, pattern="^in-"),
        "paid_on": s.date("date the money arrived"),
        "method": s.enum(["bank_transfer", "cash", "check"], "how it was paid"),
    },
    required=["invoice_id", "paid_on"],
    returns=s.obj(
        {
            "invoice_id": s.string("", INVOICE_ID),
            "status": s.enum(["paid"]),
            "amount_paid": s.number("", MONEY),
            "days_late": s.integer(minimum=0),
        }
    ),
    preconditions=[
        Precondition(
            kind="field_equals",
            collection="fin_invoices",
            arg="invoice_id",
            field="status",
            value="open",
            description="only an open (sent, unpaid) invoice can be paid",
        )
    ],
    effects=[
        Effect(
            op="update",
            collection="fin_invoices",
            key="invoice_id",
            fields={"status": "paid", "paid_on": "$arg.paid_on"},
        )
    ],
)
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


@tool(
    domain="Financial",
    category="processor",
    group="loan_payment",
    description="Monthly payment, total interest and total cost of a fixed-rate loan.",
    params={
        "principal": s.number("amount borrowed", MONEY, exclusive_minimum=0),
        "annual_rate_pct": s.number(
            "nominal annual interest rate, %", PERCENT, minimum=0, maximum=100
        ),
        "term_months": s.integer("number of monthly payments", TERM_MONTHS, minimum=1, maximum=480),
    },
    returns=s.obj(
        {
            "monthly_payment": s.number("", LOAN_PAYMENT),
            "total_interest": s.number("", MONEY),
            "total_paid": s.number("", MONEY),
        }
    ),
)
def calculate_loan_payment(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    pmt = _payment(args["principal"], args["annual_rate_pct"], args["term_months"])
    total = round(pmt * args["term_months"], 2)
    return {
        "monthly_payment": pmt,
        "total_interest": round(total - args["principal"], 2),
        "total_paid": total,
    }


@tool(
    domain="Financial",
    category="processor",
    group="loan_payment",
    description="Amortisation table of a fixed-rate loan (first 12 payments) and its payment.",
    params={
        "loan_amount": s.number("principal", MONEY, exclusive_minimum=0),
        "interest_rate": s.number("annual rate in percent", PERCENT, minimum=0, maximum=100),
        "payments": s.integer("number of monthly payments", TERM_MONTHS, minimum=1, maximum=480),
        "first_payment_date": s.date("date of the first instalment"),
    },
    required=["loan_amount", "interest_rate", "payments"],
    returns=s.obj(
        {
            "payment": s.number("fixed monthly instalment", LOAN_PAYMENT),
            "schedule": s.array(
                s.obj(
                    {
                        "n": s.integer(minimum=1),
                        "due": s.string("due date or empty"),
                        "interest": s.number("", MONEY),
                        "principal": s.number("", MONEY),
                        "balance": s.number("remaining principal", MONEY),
                    }
                ),
                max_items=12,
            ),
        }
    ),
)
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


alternatives(
    "loan_payment",
    "1-1",
    ["calculate_loan_payment"],
    ["build_amortization_schedule"],
    description="two loan calculators (annuity formula)",
    output_kind=LOAN_PAYMENT,
)


def _fv(principal: float, rate_pct: float, per_year: int, years: int) -> float:
    return principal * (1 + rate_pct / 100 / per_year) ** (per_year * years)


@tool(
    domain="Financial",
    category="processor",
    group="compound_growth",
    description="Future value of a lump sum with compound interest.",
    params={
        "principal": s.number("starting amount", MONEY, exclusive_minimum=0),
        "annual_rate_pct": s.number("annual rate, %", PERCENT, minimum=0, maximum=100),
        "years": s.integer("years invested", HORIZON_YEARS, minimum=1, maximum=60),
        "compounds_per_year": s.enum([1, 4, 12, 365], "compounding frequency"),
    },
    required=["principal", "annual_rate_pct", "years"],
    returns=s.obj(
        {"future_value": s.number("", FUTURE_VALUE), "interest_earned": s.number("", MONEY)}
    ),
)
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


@tool(
    domain="Financial",
    category="processor",
    group="compound_growth",
    description="Project a savings balance with monthly compounding and optional monthly deposits.",
    params={
        "starting_balance": s.number("balance today", MONEY, exclusive_minimum=0),
        "apr": s.number("annual interest rate, %", PERCENT, minimum=0, maximum=100),
        "horizon_years": s.integer("years to project", HORIZON_YEARS, minimum=1, maximum=60),
        "monthly_deposit": s.number("added at the end of each month", MONEY, minimum=0),
    },
    required=["starting_balance", "apr", "horizon_years"],
    returns=s.obj(
        {
            "ending_balance": s.number("", FUTURE_VALUE),
            "total_deposits": s.number("", MONEY),
            "yearly": s.array(
                s.obj({"year": s.integer(minimum=1), "balance": s.number("", MONEY)})
            ),
        }
    ),
)
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


alternatives(
    "compound_growth",
    "1-1",
    ["calculate_compound_interest"],
    ["project_savings_balance"],
    description="compound-interest calculator vs savings projection (monthly)",
    output_kind=FUTURE_VALUE,
)


# == tax =========================================================================================
#: simplified national income-tax schedules: (upper bound of band or None, marginal rate %)
_BRACKETS: dict[str, tuple[str, list[tuple[float | None, float]]]] = {
    "PT": ("EUR", [(7703, 13.0), (21321, 25.0), (51997, 35.5), (81199, 45.0), (None, 48.0)]),
    "JP": (
        "JPY",
        [
            (1950000, 5.0),
            (3300000, 10.0),
            (6950000, 20.0),
            (9000000, 23.0),
            (18000000, 33.0),
            (40000000, 40.0),
            (None, 45.0),
        ],
    ),
    "US": (
        "USD",
        [
            (11600, 10.0),
            (47150, 12.0),
            (100525, 22.0),
            (191950, 24.0),
            (243725, 32.0),
            (609350, 35.0),
            (None, 37.0),
        ],
    ),
    "KE": ("KES", [(288000, 10.0), (388000, 25.0), (6000000, 30.0), (9600000, 32.5), (None, 35.0)]),
    "CA": ("CAD", [(55867, 15.0), (111733, 20.5), (173205, 26.0), (246752, 29.0), (None, 33.0)]),
    "PL": ("PLN", [(30000, 0.0), (120000, 12.0), (None, 32.0)]),
    "NZ": ("NZD", [(14000, 10.5), (48000, 17.5), (70000, 30.0), (180000, 33.0), (None, 39.0)]),
    "CL": (
        "CLP",
        [(10500000, 0.0), (23300000, 4.0), (38800000, 8.0), (54400000, 13.5), (None, 23.0)],
    ),
    "EE": ("EUR", [(7848, 0.0), (None, 22.0)]),
    "VN": (
        "VND",
        [
            (60000000, 5.0),
            (120000000, 10.0),
            (216000000, 15.0),
            (384000000, 20.0),
            (624000000, 25.0),
            (960000000, 30.0),
            (None, 35.0),
        ],
    ),
    "DE": ("EUR", [(11604, 0.0), (66760, 24.0), (277825, 42.0), (None, 45.0)]),
    "FR": ("EUR", [(11294, 0.0), (28797, 11.0), (82341, 30.0), (177106, 41.0), (None, 45.0)]),
    "GB": ("GBP", [(12570, 0.0), (50270, 20.0), (125140, 40.0), (None, 45.0)]),
    "ES": (
        "EUR",
        [(12450, 19.0), (20200, 24.0), (35200, 30.0), (60000, 37.0), (300000, 45.0), (None, 47.0)],
    ),
}


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


_COUNTRY = s.string("ISO 3166 alpha-2", COUNTRY, pattern="^[A-Z]{2}$")


@tool(
    domain="Financial",
    category="processor",
    group="income_tax",
    description="Estimate national income tax on an annual taxable income (simplified schedules).",
    params={
        "country": s.string("tax residence, ISO alpha-2", COUNTRY, pattern="^[A-Z]{2}$"),
        "taxable_income": s.number("annual taxable income in local currency", MONEY, minimum=0),
        "tax_year": s.integer("fiscal year", TAX_YEAR, minimum=2024, maximum=2027),
    },
    required=["country", "taxable_income"],
    returns=s.obj(
        {
            "country": _COUNTRY,
            "currency": _CCY,
            "income_tax": s.number("", TAX_AMOUNT, minimum=0),
            "effective_rate_pct": s.number("", PERCENT),
            "marginal_rate_pct": s.number("", PERCENT),
        }
    ),
)
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


@tool(
    domain="Financial",
    category="source",
    group="income_tax",
    description="Published income-tax bands of a country for a fiscal year.",
    params={
        "country_code": s.string("ISO alpha-2", COUNTRY, pattern="^[A-Z]{2}$"),
        "year": s.integer("fiscal year", TAX_YEAR, minimum=2024, maximum=2027),
    },
    required=["country_code"],
    returns=s.obj(
        {
            "table_id": s.string("", TAX_TABLE_ID),
            "currency": _CCY,
            "bands": s.array(
                s.obj(
                    {
                        "from": s.number("", TAX_THRESHOLD),
                        "to": s.number("upper bound; -1 = open", TAX_THRESHOLD),
                        "rate_pct": s.number("", PERCENT),
                    }
                )
            ),
        }
    ),
)
def get_tax_brackets(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    ccy, bands = _brackets("country_code", args["country_code"])
    year = args.get("year", 2026)
    out, lower = [], 0.0
    for upper, rate in bands:
        out.append({"from": lower, "to": -1 if upper is None else float(upper), "rate_pct": rate})
        lower = float(upper or 0)
    return {"table_id": f"TAX-{args['country_code']}-{year}", "currency": ccy, "bands": out}


@tool(
    domain="Financial",
    category="processor",
    group="income_tax",
    description="Apply a bracket table to an income and return the tax due.",
    params={
        "table_id": s.string("bracket table", TAX_TABLE_ID, pattern=r"^TAX-[A-Z]{2}-\d{4}$"),
        "income": s.number("taxable income", MONEY, minimum=0),
    },
    returns=s.obj(
        {
            "tax_due": s.number("", TAX_AMOUNT, minimum=0),
            "net_income": s.number("income after tax", MONEY),
            "bands_used": s.integer(minimum=0),
        }
    ),
)
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


alternatives(
    "income_tax",
    "1-N",
    ["estimate_income_tax"],
    ["get_tax_brackets", "apply_tax_brackets"],
    description="one-shot estimate, or fetch the bands and apply them",
    output_kind=TAX_AMOUNT,
)

#: standard and reduced VAT / GST rates in percent (US: no national sales tax)
_VAT: dict[str, tuple[float, float]] = {
    "PT": (23.0, 6.0),
    "JP": (10.0, 8.0),
    "US": (0.0, 0.0),
    "KE": (16.0, 8.0),
    "CA": (5.0, 0.0),
    "PL": (23.0, 8.0),
    "NZ": (15.0, 15.0),
    "CL": (19.0, 19.0),
    "EE": (24.0, 9.0),
    "VN": (10.0, 5.0),
    "DE": (19.0, 7.0),
    "FR": (20.0, 5.5),
    "GB": (20.0, 5.0),
    "ES": (21.0, 10.0),
    "AU": (10.0, 0.0),
    "IT": (22.0, 10.0),
    "NL": (21.0, 9.0),
}


def _vat(param: str, country: str, reduced: bool = False) -> float:
    try:
        return _VAT[country][1 if reduced else 0]
    except KeyError as exc:
        raise InvalidValue(param, f"no VAT data for country {country!r}") from exc


@tool(
    domain="Financial",
    category="processor",
    group="vat_gross",
    description="Add VAT/GST of a country to a net amount.",
    params={
        "net_amount": s.number("amount before tax", MONEY, minimum=0),
        "country": s.string("ISO alpha-2 country of sale", COUNTRY, pattern="^[A-Z]{2}$"),
        "rate_type": s.enum(["standard", "reduced"], "which VAT band"),
    },
    required=["net_amount", "country"],
    returns=s.obj(
        {
            "rate_pct": s.number("", PERCENT),
            "vat": s.number("", TAX_AMOUNT),
            "gross": s.number("", GROSS_AMOUNT),
        }
    ),
)
def add_vat(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    rate = _vat("country", args["country"], args.get("rate_type") == "reduced")
    vat = round(args["net_amount"] * rate / 100, 2)
    return {"rate_pct": rate, "vat": vat, "gross": round(args["net_amount"] + vat, 2)}


@tool(
    domain="Financial",
    category="source",
    group="vat_gross",
    description="Standard and reduced VAT/GST rates of a country.",
    params={"country_code": s.string("ISO alpha-2", COUNTRY, pattern="^[A-Z]{2}$")},
    returns=s.obj(
        {
            "country_code": _COUNTRY,
            "standard_rate": s.number("", PERCENT),
            "reduced_rate": s.number("", REDUCED_RATE),
            "tax_name": s.enum(["VAT", "GST", "consumption tax", "sales tax"]),
        }
    ),
)
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


@tool(
    domain="Financial",
    category="processor",
    group="vat_gross",
    description="Apply a percentage tax rate to an amount: tax and total.",
    params={
        "amount": s.number("untaxed amount", MONEY, minimum=0),
        "rate_pct": s.number("tax rate in percent", PERCENT, minimum=0, maximum=100),
    },
    returns=s.obj({"tax": s.number("", TAX_AMOUNT), "total": s.number("", GROSS_AMOUNT)}),
)
def apply_tax_rate(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    tax = round(args["amount"] * args["rate_pct"] / 100, 2)
    return {"tax": tax, "total": round(args["amount"] + tax, 2)}


alternatives(
    "vat_gross",
    "1-N",
    ["add_vat"],
    ["get_vat_rate", "apply_tax_rate"],
    description="add VAT directly, or look the rate up and apply it",
    output_kind=GROSS_AMOUNT,
)


# == budgets =====================================================================================
@tool(
    domain="Financial",
    category="action",
    description="Create a monthly spending budget for a category.",
    params={
        "category": s.enum(list(_MERCHANTS), "spending category", BUDGET_CATEGORY),
        "monthly_limit": s.number("limit per month", MONEY, exclusive_minimum=0),
        "currency": s.string("currency of the limit", CURRENCY, pattern="^[A-Z]{3}$"),
        "alert_at_pct": s.number("warn when this share is used", PERCENT, minimum=1, maximum=100),
    },
    required=["category", "monthly_limit", "currency"],
    returns=s.obj(
        {
            "budget_id": s.string("", BUDGET_ID),
            "category": s.string("", BUDGET_CATEGORY),
            "monthly_limit": s.number("", MONEY),
            "currency": _CCY,
        }
    ),
    effects=[
        Effect(
            op="create",
            collection="fin_budgets",
            key="budget_id",
            fields={
                "category": "$arg.category",
                "monthly_limit": "$arg.monthly_limit",
                "currency": "$arg.currency",
                "alert_at_pct": "$arg.alert_at_pct",
                "status": "active",
            },
        )
    ],
)
def create_budget(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    _check_ccy("currency", args["currency"])
    return {
        "budget_id": ctx.new_id("BDG"),
        "category": args["category"],
        "monthly_limit": args["monthly_limit"],
        "currency": args["currency"],
    }


@tool(
    domain="Financial",
    category="processor",
    description="Compare an amount spent against a budget: remaining, share used, status.",
    params={
        "budget_id": s.string("budget", BUDGET_ID, pattern="^BDG-"),
        "spent": s.number("amount spent so far, in the budget currency", SPEND_TOTAL, minimum=0),
    },
    returns=s.obj(
        {
            "budget_id": s.string("", BUDGET_ID),
            "remaining": s.number("limit minus spent; negative when over", MONEY),
            "used_pct": s.number("", PERCENT, minimum=0),
            "status": s.enum(["on_track", "warning", "over_budget"]),
        }
    ),
    preconditions=[
        Precondition(
            kind="field_equals",
            collection="fin_budgets",
            arg="budget_id",
            field="status",
            value="active",
            description="the budget must exist and be active",
        )
    ],
)
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
