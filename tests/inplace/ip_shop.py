"""A user's own tools (three plain ``@tool`` functions), tasks, and agents built on them.

The scripted model follows a fixed plan (see :class:`replan.inplace.ScriptedToolModel`), so
every number the tests expect follows from the tools and the stated fault mechanics.
"""

from __future__ import annotations

import re
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import ToolRetryMiddleware
from langchain_core.tools import tool

from replan.inplace import FaultInjectionMiddleware, ScriptedToolModel

CUSTOMERS = {
    "ada@example.com": {"customer_id": "C-1042", "name": "Ada Lovelace"},
    "alan@example.com": {"customer_id": "C-2077", "name": "Alan Turing"},
}
ORDERS = {"C-1042": [118.40, 64.25], "C-2077": [310.00]}
RATE = 0.9231


@tool
def find_customer(email: str) -> dict:
    """Find a customer by email address."""
    return CUSTOMERS.get(email, {})


@tool
def list_orders(customer_id: str) -> dict:
    """A customer's open orders and their total in USD."""
    totals = ORDERS.get(customer_id, [])
    return {"customer_id": customer_id, "orders": len(totals), "total_usd": round(sum(totals), 2)}


@tool
def usd_to_eur(amount: float) -> str:
    """Convert US dollars to euros at today's rate."""
    return f"{amount:.2f} USD = {amount * RATE:.2f} EUR"


TOOLS = [find_customer, list_orders, usd_to_eur]


def eur(email: str) -> float:
    return round(sum(ORDERS[CUSTOMERS[email]["customer_id"]]) * RATE, 2)


TASKS = [
    {
        "id": "ada",
        "input": "What do Ada's open orders (ada@example.com) total in EUR?",
        "expected": eur("ada@example.com"),
        "min_calls": 3,
    },
    {
        "id": "alan",
        "input": "What do Alan's open orders (alan@example.com) total in EUR?",
        "expected": eur("alan@example.com"),
        "min_calls": 3,
    },
]


def _email(question: str) -> str:
    m = re.search(r"\(([^)]+)\)", question)
    return m.group(1) if m else ""


def _last_number(results: list[Any]) -> str:
    text = results[2]["text"] if isinstance(results[2], dict) else str(results[2])
    return re.findall(r"-?\d+(?:\.\d+)?", text)[-1]


def model(on_error: str = "continue") -> ScriptedToolModel:
    """find_customer -> list_orders -> usd_to_eur -> answer with the EUR figure."""
    return ScriptedToolModel(
        plan=[
            ("find_customer", lambda r, q: {"email": _email(q)}),
            ("list_orders", lambda r: {"customer_id": r[0]["customer_id"]}),
            ("usd_to_eur", lambda r: {"amount": r[1]["total_usd"]}),
        ],
        answer=lambda r: f"The open orders total {_last_number(r)} EUR.",
        on_error=on_error,
    )


def agent(*, retry: bool = False, on_error: str = "continue") -> Any:
    """create_agent with replan's middleware last (and LangChain's retry before it)."""
    middleware: list[Any] = []
    if retry:
        middleware.append(ToolRetryMiddleware(max_retries=2, initial_delay=0, jitter=False))
    middleware.append(FaultInjectionMiddleware())
    return create_agent(model(on_error), TOOLS, middleware=middleware)
