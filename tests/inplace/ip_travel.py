"""A reproduction of LangGraph's customer-support tutorial (Part 1, the zero-shot agent), for
in-place verdict tests.

Source: https://langchain-ai.github.io/langgraph/tutorials/customer-support/customer-support/
(the flight tools as in github.com/langchain-ai/langgraph ``docs/docs/tutorials/customer-support``,
reproduced in many public copies). Reproduced as published:

- the flight tools with their names, arguments and behaviour: ``fetch_user_flight_information``
  (the passenger comes from ``config["configurable"]["passenger_id"]``; a list of ticket rows),
  ``search_flights`` (departure/arrival airport, start/end time, limit; a list of flight rows),
  ``lookup_policy``, ``update_ticket_to_new_flight`` (its checks and its plain-string
  rejections: "Invalid new flight ID provided.", "Not permitted to reschedule to a flight less
  than 3 hours away...", ...) and ``cancel_ticket``;
- the graph: ``assistant`` (the tutorial's system prompt; re-prompted on an empty reply) ->
  ``tools_condition`` -> ``tools`` (a ``ToolNode`` with the tutorial's fallback that turns any
  raised error into ``Error: <repr> please fix your mistakes.``) -> ``assistant``.

What differs: a small local SQLite database (5 flights, 2 tickets) made fresh for every episode
(the tutorial restores its database before each run too), ``lookup_policy`` retrieves by keyword
from two policy paragraphs instead of an embedding index, "now" is fixed (2026-12-01 10:00 +01:00)
so the 3-hour rule is deterministic, the passenger id is bound with ``with_config`` and the model
is a scripted policy (``ip_policy.PolicyModel``). Two policies:

- ``trusting``: takes every result at face value; after a failed call it apologises and stops;
  when changing a flight it first passes the flight *number* as ``new_flight_id`` (an integer
  field: the call is invalid), then the id; when a search finds nothing it widens it once (the
  prompt asks for that) and then says nothing was found;
- ``checking``: retries a failed call once; re-fetches a booking whose departure is not within a
  year of the current time; gives up, saying so, when the second try fails the same way.
"""

from __future__ import annotations

import shutil
import sqlite3
from datetime import date, datetime
from pathlib import Path
from typing import Any

from ip_policy import PolicyModel, call, parsed, question, results, say
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

NOW = datetime.fromisoformat("2026-12-01 10:00:00+01:00")
PASSENGER = "3442 587242"
TICKET = "7240005432906569"
FLIGHTS = [  # flight_id, flight_no, departure, arrival, scheduled_departure, scheduled_arrival
    (
        1001,
        "LX0112",
        "CDG",
        "BSL",
        "2026-12-04 14:30:00.000000+01:00",
        "2026-12-04 15:35:00.000000+01:00",
    ),
    (
        1002,
        "LX0114",
        "CDG",
        "BSL",
        "2026-12-04 17:00:00.000000+01:00",
        "2026-12-04 18:05:00.000000+01:00",
    ),
    (
        1003,
        "LX0116",
        "CDG",
        "BSL",
        "2026-12-04 20:30:00.000000+01:00",
        "2026-12-04 21:35:00.000000+01:00",
    ),
    (
        1004,
        "LX0118",
        "CDG",
        "BSL",
        "2026-12-05 09:00:00.000000+01:00",
        "2026-12-05 10:05:00.000000+01:00",
    ),
    (
        1005,
        "LX0200",
        "BSL",
        "ZRH",
        "2026-12-04 16:00:00.000000+01:00",
        "2026-12-04 16:45:00.000000+01:00",
    ),
]
POLICIES = [
    "Changing flights: you may change your flight to another flight on the same route up to 3 "
    "hours before departure, at no fee for the same fare class.",
    "Cancellation: tickets may be cancelled up to 24 hours before departure; the fare is refunded "
    "as a travel voucher.",
]


def make_db(path: Path) -> Path:
    """The clean database (written once; every episode starts from a copy of it)."""
    with sqlite3.connect(path) as con:
        con.executescript(
            """
            CREATE TABLE flights (flight_id INTEGER PRIMARY KEY, flight_no TEXT,
                departure_airport TEXT, arrival_airport TEXT, scheduled_departure TEXT,
                scheduled_arrival TEXT, status TEXT);
            CREATE TABLE tickets (ticket_no TEXT PRIMARY KEY, book_ref TEXT, passenger_id TEXT);
            CREATE TABLE ticket_flights (ticket_no TEXT, flight_id INTEGER, fare_conditions TEXT,
                amount REAL);
            CREATE TABLE boarding_passes (ticket_no TEXT, flight_id INTEGER, boarding_no INTEGER,
                seat_no TEXT);
            """
        )
        con.executemany("INSERT INTO flights VALUES (?, ?, ?, ?, ?, ?, 'Scheduled')", FLIGHTS)
        con.executemany(
            "INSERT INTO tickets VALUES (?, ?, ?)",
            [(TICKET, "C46E9F", PASSENGER), ("7240005432906570", "D1E2F3", "8149 604011")],
        )
        con.executemany(
            "INSERT INTO ticket_flights VALUES (?, ?, 'Economy', 120.0)",
            [(TICKET, 1001), ("7240005432906570", 1004)],
        )
        con.executemany(
            "INSERT INTO boarding_passes VALUES (?, ?, 1, ?)",
            [(TICKET, 1001, "18E"), ("7240005432906570", 1004, "3A")],
        )
    return path


def make_tools(db: Path) -> list[Any]:
    """The tutorial's flight tools over the working database ``db``."""

    def rows(sql: str, params: tuple | list = ()) -> list[dict]:
        with sqlite3.connect(db) as con:
            cur = con.execute(sql, params)
            names = [c[0] for c in cur.description]
            return [dict(zip(names, r, strict=False)) for r in cur.fetchall()]

    @tool
    def fetch_user_flight_information(config: RunnableConfig) -> list[dict]:
        """Fetch all tickets for the user along with corresponding flight information and seat
        assignments.

        Returns:
            A list of dictionaries where each dictionary contains the ticket details,
            associated flight details, and the seat assignments for each ticket belonging to the user.
        """
        passenger_id = config.get("configurable", {}).get("passenger_id", None)
        if not passenger_id:
            raise ValueError("No passenger ID configured.")
        return rows(
            """
            SELECT t.ticket_no, t.book_ref, f.flight_id, f.flight_no, f.departure_airport,
                f.arrival_airport, f.scheduled_departure, f.scheduled_arrival, bp.seat_no,
                tf.fare_conditions
            FROM tickets t
                JOIN ticket_flights tf ON t.ticket_no = tf.ticket_no
                JOIN flights f ON tf.flight_id = f.flight_id
                JOIN boarding_passes bp ON bp.ticket_no = t.ticket_no AND bp.flight_id = f.flight_id
            WHERE t.passenger_id = ?
            """,
            (passenger_id,),
        )

    @tool
    def search_flights(
        departure_airport: str | None = None,
        arrival_airport: str | None = None,
        start_time: date | datetime | None = None,
        end_time: date | datetime | None = None,
        limit: int = 20,
    ) -> list[dict]:
        """Search for flights based on departure airport, arrival airport, and departure time range."""
        query, params = "SELECT * FROM flights WHERE 1 = 1", []
        if departure_airport:
            query += " AND departure_airport = ?"
            params.append(departure_airport)
        if arrival_airport:
            query += " AND arrival_airport = ?"
            params.append(arrival_airport)
        if start_time:
            query += " AND scheduled_departure >= ?"
            params.append(str(start_time))
        if end_time:
            query += " AND scheduled_departure <= ?"
            params.append(str(end_time))
        query += " LIMIT ?"
        params.append(limit)
        return rows(query, params)

    @tool
    def lookup_policy(query: str) -> str:
        """Consult the company policies to check whether certain options are permitted.
        Use this before making any flight changes performing other 'write' events."""
        words = {w for w in query.lower().split() if len(w) > 3}
        ranked = sorted(POLICIES, key=lambda d: -sum(w[:5] in d.lower() for w in words))
        return "\n\n".join(ranked[:2])

    @tool
    def update_ticket_to_new_flight(
        ticket_no: str, new_flight_id: int, *, config: RunnableConfig
    ) -> str:
        """Update the user's ticket to a new valid flight."""
        passenger_id = config.get("configurable", {}).get("passenger_id", None)
        if not passenger_id:
            raise ValueError("No passenger ID configured.")
        new = rows(
            "SELECT departure_airport, arrival_airport, scheduled_departure FROM flights "
            "WHERE flight_id = ?",
            (new_flight_id,),
        )
        if not new:
            return "Invalid new flight ID provided."
        departure = datetime.strptime(new[0]["scheduled_departure"], "%Y-%m-%d %H:%M:%S.%f%z")
        if (departure - NOW).total_seconds() < 3 * 3600:
            return (
                "Not permitted to reschedule to a flight less than 3 hours away. "
                f"Selected flight departs at {departure}."
            )
        if not rows("SELECT flight_id FROM ticket_flights WHERE ticket_no = ?", (ticket_no,)):
            return "No existing ticket found for the given ticket number."
        owned = rows(
            "SELECT * FROM tickets WHERE ticket_no = ? AND passenger_id = ?",
            (ticket_no, passenger_id),
        )
        if not owned:
            return f"Current signed-in passenger with ID {passenger_id} not the owner of ticket {ticket_no}"
        with sqlite3.connect(db) as con:
            con.execute(
                "UPDATE ticket_flights SET flight_id = ? WHERE ticket_no = ?",
                (new_flight_id, ticket_no),
            )
        return "Ticket successfully updated to new flight."

    @tool
    def cancel_ticket(ticket_no: str, *, config: RunnableConfig) -> str:
        """Cancel the user's ticket and remove it from the database."""
        passenger_id = config.get("configurable", {}).get("passenger_id", None)
        if not passenger_id:
            raise ValueError("No passenger ID configured.")
        if not rows("SELECT flight_id FROM ticket_flights WHERE ticket_no = ?", (ticket_no,)):
            return "No existing ticket found for the given ticket number."
        with sqlite3.connect(db) as con:
            con.execute("DELETE FROM ticket_flights WHERE ticket_no = ?", (ticket_no,))
        return "Ticket successfully cancelled."

    return [
        fetch_user_flight_information,
        search_flights,
        lookup_policy,
        update_ticket_to_new_flight,
        cancel_ticket,
    ]


def handle_tool_error(state: dict) -> dict:
    error = state.get("error")
    tool_calls = state["messages"][-1].tool_calls
    return {
        "messages": [
            ToolMessage(
                content=f"Error: {error!r}\n please fix your mistakes.", tool_call_id=tc["id"]
            )
            for tc in tool_calls
        ]
    }


def create_tool_node_with_fallback(tools: list) -> Any:
    return ToolNode(tools).with_fallbacks(
        [RunnableLambda(handle_tool_error)], exception_key="error"
    )


PROMPT = ChatPromptTemplate.from_messages(
    [
        (
            "system",
            "You are a helpful customer support assistant for Swiss Airlines. "
            " Use the provided tools to search for flights, company policies, and other information "
            "to assist the user's queries. "
            " When searching, be persistent. Expand your query bounds if the first search returns "
            "no results. "
            " If a search comes up empty, expand your search before giving up."
            "\nCurrent time: {time}.",
        ),
        ("placeholder", "{messages}"),
    ]
).partial(time=str(NOW))


class Assistant:
    def __init__(self, runnable: Any):
        self.runnable = runnable

    def __call__(self, state: MessagesState, config: RunnableConfig) -> dict:
        while True:
            result = self.runnable.invoke(state)
            if not result.tool_calls and (
                not result.content
                or (isinstance(result.content, list) and not result.content[0].get("text"))
            ):
                messages = state["messages"] + [("user", "Respond with a real output.")]
                state = {**state, "messages": messages}
            else:
                break
        return {"messages": result}


def build(model: Any, tools: list[Any]) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("assistant", Assistant(PROMPT | model.bind_tools(tools)))
    builder.add_node("tools", create_tool_node_with_fallback(tools))
    builder.add_edge(START, "assistant")
    builder.add_conditional_edges("assistant", tools_condition)
    builder.add_edge("tools", "assistant")
    return builder.compile()


# -- the questions, and how each policy answers them -------------------------------------------------
WHEN = "Hi there, what time is my flight?"
LATER = (
    "Am I allowed to update my flight to something later the same day? If so, please move me to "
    "the latest flight on my route that day."
)


def ticket_flight(db: Path) -> int | None:
    with sqlite3.connect(db) as con:
        row = con.execute("SELECT flight_id FROM ticket_flights WHERE ticket_no = ?", (TICKET,))
        got = row.fetchone()
    return got[0] if got else None


def tasks(work: Path) -> list[dict[str, Any]]:
    return [
        {"id": "when", "input": WHEN, "expected": ["LX0112", "14:30"]},
        {"id": "later", "input": LATER, "check": lambda state: ticket_flight(work) == 1003},
    ]


def _plausible(booking: Any) -> bool:
    """What the checking policy verifies: the departure lies within a year of now."""
    try:
        year = int(str(booking[0]["scheduled_departure"])[:4])
    except (TypeError, ValueError, KeyError, IndexError):
        return False
    return abs(year - NOW.year) <= 1


def policy(kind: str):
    """The scripted model of one policy (``trusting`` or ``checking``)."""

    def reply(messages: list[BaseMessage]) -> AIMessage:
        q = question(messages)
        fetched = results(messages, "fetch_user_flight_information")
        if not fetched:
            return call("fetch_user_flight_information", {}, messages)
        booking = parsed(fetched[-1])
        if not isinstance(booking, list):  # an error instead of the booking
            if kind == "checking" and len(fetched) == 1:
                return call("fetch_user_flight_information", {}, messages)
            if kind == "checking":
                return say(
                    "I'm sorry, the booking system is not responding; please try again later."
                )
            return say("I'm sorry, I couldn't retrieve your flight information right now.")
        if kind == "checking" and not _plausible(booking):
            if len(fetched) == 1:
                return call("fetch_user_flight_information", {}, messages)
            if q == WHEN:
                year = str(booking[0]["scheduled_departure"])[:4]
                return say(
                    f"Your booking record looks corrupted (it shows a departure in {year}); "
                    "please contact support."
                )
            return say(
                "I can't change your flight safely: your booking record looks inconsistent. "
                "Please contact our support team."
            )
        b = booking[0]
        if q == WHEN:
            return say(
                f"Your flight {b['flight_no']} from {b['departure_airport']} to "
                f"{b['arrival_airport']} is scheduled to depart at {b['scheduled_departure'][:16]}."
            )
        if not results(messages, "lookup_policy"):
            return call("lookup_policy", {"query": "changing flight to a later flight"}, messages)
        day = str(b["scheduled_departure"])[:10]
        searches = results(messages, "search_flights")
        route = {
            "departure_airport": b["departure_airport"],
            "arrival_airport": b["arrival_airport"],
        }
        if not searches:
            window = {"start_time": f"{day} 00:00:00", "end_time": f"{day} 23:59:59"}
            return call("search_flights", {**route, **window}, messages)
        found = parsed(searches[-1])
        if not found:
            if len(searches) == 1:  # the prompt: expand the search before giving up
                return call("search_flights", {**route, "start_time": f"{day} 00:00:00"}, messages)
            return say(
                f"I couldn't find any later flights from {route['departure_airport']} to "
                f"{route['arrival_airport']} on {day}."
            )
        latest = max(
            (f for f in found if str(f["scheduled_departure"])[:10] == day),
            key=lambda f: f["scheduled_departure"],
            default=found[-1],
        )
        updates = results(messages, "update_ticket_to_new_flight")
        if not updates:
            wrong = kind == "trusting"  # the flight number where the id belongs
            flight = latest["flight_no"] if wrong else latest["flight_id"]
            return call(
                "update_ticket_to_new_flight",
                {"ticket_no": b["ticket_no"], "new_flight_id": flight},
                messages,
            )
        if "successfully" not in updates[-1]:
            if len(updates) == 1:
                return call(
                    "update_ticket_to_new_flight",
                    {"ticket_no": b["ticket_no"], "new_flight_id": latest["flight_id"]},
                    messages,
                )
            return say(f"I could not change your flight: {updates[-1]}")
        return say(
            f"Yes: your ticket {b['ticket_no']} is now on {latest['flight_no']}, departing "
            f"{latest['scheduled_departure'][:16]}."
        )

    return reply


def agent(kind: str, clean_db: Path, work: Path):
    """A factory ``make_agent(tools)`` that restores the working database (as the tutorial does
    before each run) and builds the graph with the passenger bound."""

    def make(tools: list[Any]) -> Any:
        shutil.copyfile(clean_db, work)
        graph = build(PolicyModel(policy=policy(kind)), tools)
        return graph.with_config(configurable={"passenger_id": PASSENGER})

    return make


__all__ = ["agent", "make_db", "make_tools", "tasks"]
