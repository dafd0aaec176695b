"""Travel: the start state of the domain's collections."""

from __future__ import annotations

from typing import Any

from replan.env.corpus.registry import initial_state


@initial_state
def _travel_state(seed: int) -> dict[str, dict[str, dict[str, Any]]]:
    # quotes and bookings only come from tools; one expired quote of each kind exists so that a
    # literal, stale id fails its precondition the way a real API would
    return {
        "flight_quotes": {
            "FQ-EXPIRED1": {
                "flight_id": "FL-LISKIX-20261203-1",
                "total_usd": 999.0,
                "status": "expired",
            }
        },
        "hotel_quotes": {
            "HQ-EXPIRED1": {
                "hotel_id": "HTL-LIS-1",
                "check_in": "2026-12-03",
                "check_out": "2026-12-05",
                "total_usd": 310.0,
                "status": "expired",
            }
        },
    }
