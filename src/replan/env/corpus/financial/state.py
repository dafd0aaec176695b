"""Financial: the start state of the domain's collections."""

from __future__ import annotations

from typing import Any

from replan.env.corpus.financial import facts
from replan.env.corpus.registry import initial_state


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
        for k, v in facts.ACCOUNTS.items()
    }
    return {
        "fin_accounts": accounts,
        "fin_customers": {k: dict(v) for k, v in facts.CUSTOMERS.items()},
        "fin_payment_methods": {k: dict(v) for k, v in facts.CARDS.items()},
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
