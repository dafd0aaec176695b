"""Hand-built tasks over the corpus travel tools, and fault injectors from the real engine."""

from __future__ import annotations

from typing import Any

import pytest

from replan.core.task import Checker, PerturbationProfile, RequiredRecord, Task
from replan.env.perturb import ImplicitSpec, Perturber

QUERY = (
    "Book the cheapest flight from Lisbon (LIS) to Osaka (KIX) on 2026-12-03 for Ana Silva "
    "(ana.silva@example.org) and tell me the booking code."
)
TRAVEL_TOOLS = ["search_flights", "find_flight_offers", "quote_flight", "book_flight"]


def _root(desc: str) -> dict[str, Any]:
    return {"id": "root", "desc": desc, "dep": [], "status": True}


def booking_gold(query: str = QUERY) -> dict[str, Any]:
    """search_flights -> quote_flight -> book_flight (3 calls, 3 waves)."""
    return {
        "tasks": [
            _root(query),
            {
                "id": "1",
                "name": "search_flights",
                "para": {"origin": "LIS", "destination": "KIX", "date": "2026-12-03"},
                "desc": "find flights",
                "dep": ["root"],
                "status": False,
            },
            {
                "id": "2",
                "name": "quote_flight",
                "para": {"flight_id": "${1.cheapest_flight_id}", "passengers": 1},
                "desc": "price the cheapest",
                "dep": ["1"],
                "status": False,
            },
            {
                "id": "3",
                "name": "book_flight",
                "para": {
                    "quote_id": "${2.quote_id}",
                    "traveller_name": "Ana Silva",
                    "contact_email": "ana.silva@example.org",
                },
                "desc": "book it",
                "dep": ["2"],
                "status": False,
            },
            {"id": "response", "desc": "answer", "dep": ["3"], "status": False},
        ]
    }


def alt_booking_plan(query: str = QUERY) -> dict[str, Any]:
    """The other valid path: find_flight_offers (cities) -> quote_flight -> book_flight."""
    gold = booking_gold(query)
    gold["tasks"][1] = {
        "id": "1",
        "name": "find_flight_offers",
        "para": {"from_city": "Lisbon", "to_city": "Osaka", "travel_date": "2026-12-03"},
        "desc": "find flights by city",
        "dep": ["root"],
        "status": False,
    }
    gold["tasks"][2]["para"]["flight_id"] = "${1.best_offer.flight_id}"
    return gold


def booking_task(task_id: str = "hand-book", **kw: Any) -> Task:
    data: dict[str, Any] = {
        "task_id": task_id,
        "suite": "hand",
        "query": QUERY,
        "tools": TRAVEL_TOOLS,
        "gold_plan": booking_gold(),
        "min_calls": 3,
        "optimal_rounds": 3,
        "checker": Checker(
            required_records=[
                RequiredRecord(
                    collection="flight_bookings",
                    where={"traveller": "Ana Silva"},
                    mention_key=True,
                )
            ]
        ),
    }
    data.update(kw)
    return Task(**data)


def quote_task(task_id: str = "hand-quote") -> Task:
    """search_flights -> quote_flight (2 calls)."""
    gold = booking_gold()
    gold["tasks"] = [*gold["tasks"][:3], {"id": "response", "desc": "answer", "dep": ["2"]}]
    return Task(
        task_id=task_id,
        suite="hand",
        query="Quote the cheapest flight from Lisbon (LIS) to Osaka (KIX) on 2026-12-03.",
        tools=TRAVEL_TOOLS,
        gold_plan=gold,
        min_calls=2,
    )


PARALLEL_QUERY = (
    "Two searches, then a quote for each: (1) search one-way flights between two airports on a "
    "date; (2) find places to stay at a destination; recommends the best price; (3) price a "
    "flight offer for a number of "
    "passengers and hold it as a quote; (4) price a stay at a hotel and hold the rate as a "
    "quote. The details: IATA code of the departure airport: LIS; IATA code of the arrival "
    "airport: KIX; departure date / check-in date / arrival date: 2026-12-03; destination "
    "city: Osaka; number of nights: 2; number of passengers: 2."
)


def parallel_task(task_id: str = "hand-par") -> Task:
    """A flight search and a hotel search, then one quote each: 4 calls in 2 waves.

    The query describes each step in the words of its tool's description and states every
    value under its parameter's label, as the ToolMaze queries do, so a reader can plan it.
    """
    tasks = [
        _root(PARALLEL_QUERY),
        {
            "id": "1",
            "name": "search_flights",
            "para": {"origin": "LIS", "destination": "KIX", "date": "2026-12-03"},
            "desc": "flight search",
            "dep": ["root"],
        },
        {
            "id": "2",
            "name": "find_accommodation",
            "para": {"destination": "Osaka", "arrival_date": "2026-12-03", "stay_nights": 2},
            "desc": "hotel search",
            "dep": ["root"],
        },
        {
            "id": "3",
            "name": "quote_flight",
            "para": {"flight_id": "${1.cheapest_flight_id}", "passengers": 2},
            "desc": "quote the flight",
            "dep": ["1"],
        },
        {
            "id": "4",
            "name": "quote_hotel_stay",
            "para": {
                "hotel_id": "${2.recommended.property_id}",
                "check_in": "2026-12-03",
                "nights": 2,
            },
            "desc": "quote the stay",
            "dep": ["2"],
        },
        {"id": "response", "desc": "answer", "dep": ["3", "4"]},
    ]
    return Task(
        task_id=task_id,
        suite="hand",
        query=PARALLEL_QUERY,
        tools=[*TRAVEL_TOOLS, "find_accommodation", "quote_hotel_stay"],
        gold_plan={"tasks": tasks},
        min_calls=4,
    )


def explicit_faults(mode: str = "P2", kind: str = "http_503") -> Perturber:
    """The real perturbation engine: the first flight-search tool called fails explicitly."""
    return Perturber(
        PerturbationProfile(mode=mode, victim="search_flights", group="flight_search", kind=kind),
        group_tools=["search_flights", "find_flight_offers"],
    )


PRICE_SENTINEL = 256_383.77
QUOTE_SENTINEL = "FQ-5187DF4A-K3ZQ7"


def price_faults(mode: str = "P3") -> Perturber:
    """search_flights' first fare ×1000 (schema-valid, implausible)."""
    spec = ImplicitSpec(field="flights.0.price_usd", kind="value_x1000", value=PRICE_SENTINEL)
    return Perturber(
        PerturbationProfile(
            mode=mode, victim="search_flights", kind="value_x1000", sentinel=PRICE_SENTINEL
        ),
        implicit={"search_flights": spec},
    )


def quote_id_faults(mode: str = "P3") -> Perturber:
    """quote_flight returns a tampered quote id (no other quote id to compare it with)."""
    spec = ImplicitSpec(field="quote_id", kind="value_swapped", value=QUOTE_SENTINEL)
    return Perturber(
        PerturbationProfile(
            mode=mode, victim="quote_flight", kind="value_swapped", sentinel=QUOTE_SENTINEL
        ),
        implicit={"quote_flight": spec},
    )


@pytest.fixture
def book() -> Task:
    return booking_task()
