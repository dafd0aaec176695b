"""Financial: FX, market data, bank accounts, payments, invoices, loans, tax and budgets.

Every fact comes from one helper (``fx_rate`` and ``balance`` in :mod:`.facts`, which several
sections share; ``_quote`` and ``_close`` in :mod:`.market`, ``_transactions`` in
:mod:`.accounts`, ...) so that two providers asked the same question give the same answer. Each
section module (fx, market, accounts, ...) holds that section's tools and its own helpers.
Balances are derived from state (seeded balance minus transfers made in this world), so a
transfer shows up in every balance tool without effects doing arithmetic.
"""

from __future__ import annotations

# importing the section modules registers their implementations (and the start state)
from replan.env.corpus.financial import (  # noqa: F401
    accounts,
    budgets,
    fx,
    invoices,
    loans,
    market,
    payments,
    state,
    tax,
    transfers,
)
from replan.env.corpus.financial.facts import convert, fx_rate

__all__ = ["convert", "fx_rate"]
