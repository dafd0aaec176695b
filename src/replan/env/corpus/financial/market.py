"""Financial tools: market data."""

from __future__ import annotations

import datetime as _dt
import math
from typing import Any

from replan.env.corpus.financial import facts
from replan.env.corpus.financial.facts import fx_rate
from replan.env.corpus.registry import implementation
from replan.env.world import InvalidValue, ToolContext

#: ticker -> (company, sector, exchange, reference price USD, shares outstanding in billions)
_TICKERS = facts.SEEDS.table("tickers", dict[str, tuple[str, str, str, float, float]])


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
    return round(_TICKERS[symbol][3] * facts.wave(ctx, f"stk:{symbol}", day, 0.12, 0.04, 0.012), 2)


def _quote(ctx: ToolContext, symbol: str) -> dict[str, float]:
    """The latest session of a ticker (its close is the history's last close)."""
    last = _close(ctx, symbol, facts.MARKET_DAY)
    prev = _close(ctx, symbol, _prev_session(facts.MARKET_DAY))
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
        "latest_trading_day": facts.MARKET_DAY,
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
    days = facts.sessions(facts.RANGES[args.get("range", "1mo")])
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


_GROWTH = facts.SEEDS.table("growth", tuple[str, ...])
_CRYPTO_USD = facts.SEEDS.table("crypto_usd", dict[str, float])


@implementation
def get_crypto_spot_price(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    base, fiat = args["currency_pair"].split("-")
    if base not in _CRYPTO_USD:
        raise InvalidValue("currency_pair", f"unknown crypto asset {base!r}")
    facts.check_ccy("currency_pair", fiat)
    usd = _CRYPTO_USD[base] * (1 + ctx.number(f"crypto:{base}", -0.06, 0.06, 5))
    return {
        "data": {
            "base": base,
            "currency": fiat,
            "amount": round(usd * fx_rate(ctx, "USD", fiat), 2),
        }
    }
