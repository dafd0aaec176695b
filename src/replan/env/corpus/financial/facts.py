"""Financial: the seed tables and fact helpers that several sections read (one source per fact)."""

from __future__ import annotations

import datetime as _dt
import math
from typing import Any

from replan.env.corpus.data import SeedTables
from replan.env.world import InvalidValue, ToolContext

SEEDS = SeedTables.load(__package__)  # seeds.json beside this module


# -- reference tables -------------------------------------------------------------------------
#: units of currency per 1 USD (mid-market reference before the per-world jitter)
_USD_RATES = SEEDS.table("usd_rates", dict[str, float])
ZERO_DECIMAL = SEEDS.table("zero_decimal", set[str])


def sig(x: float, digits: int = 6) -> float:
    return float(f"{x:.{digits}g}")


#: "today" of every world: the latest trading session and FX fixing; earlier days are history,
#: later ones (trip dates, due dates) are the future
MARKET_DAY = "2026-11-27"
#: chart ranges -> calendar days
RANGES = SEEDS.table("ranges", dict[str, int])


def wave(ctx: ToolContext, key: str, day: str, slow: float, fast: float, noise: float) -> float:
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
    return _USD_RATES[code] * wave(ctx, f"fx:{code}", day or MARKET_DAY, 0.02, 0.008, 0.002)


def check_ccy(param: str, code: str) -> None:
    if code not in _USD_RATES:
        raise InvalidValue(param, f"unsupported currency {code!r}")


def fx_rate(ctx: ToolContext, base: str, quote: str, day: str | None = None) -> float:
    """Units of ``quote`` per 1 ``base`` (6 significant digits); the one FX fact of the corpus."""
    if base == quote:
        return 1.0
    return sig(_usd_rate(ctx, quote, day) / _usd_rate(ctx, base, day))


def convert(ctx: ToolContext, amount: float, base: str, quote: str) -> float:
    """``amount`` of ``base`` in ``quote`` at the latest rate (cents precision)."""
    return round(amount * fx_rate(ctx, base, quote), 2)


def sessions(days_back: int) -> list[str]:
    """Business days in the ``days_back`` calendar days up to and including the market day."""
    end = _dt.date.fromisoformat(MARKET_DAY)
    out = [end - _dt.timedelta(k) for k in range(days_back)]
    return [d.isoformat() for d in reversed(out) if d.weekday() < 5]


def money_sum(values: list[float]) -> float:
    return round(math.fsum(values), 2)


ACCOUNTS = SEEDS.table("accounts", dict[str, dict[str, Any]])


def balance(ctx: ToolContext, account_id: str) -> float:
    """Seeded balance minus every transfer sent from the account in this world."""
    acc = ctx.state.get("fin_accounts", account_id)
    assert acc is not None
    out = [
        t["source_amount"]
        for t in ctx.state.records("fin_transfers").values()
        if t.get("source_account_id") == account_id
    ]
    return round(acc["opening_balance"] - math.fsum(out), 2)


CUSTOMERS = SEEDS.table("customers", dict[str, dict[str, Any]])
CARDS = SEEDS.table("cards", dict[str, dict[str, Any]])
