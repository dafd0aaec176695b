"""Hand-built tasks and episodes on the corpus's travel tools, for the evaluator tests.

Episodes are produced by really executing calls on ``task_world(task)``; a call can be made to
meet an explicit fault (nothing runs, an error observation) or an implicit one (it runs, and one
field of the observation is replaced by a sentinel), exactly as the perturbation engine does.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from replan.core.task import Checker, PerturbationProfile, RequiredRecord, Task
from replan.core.trace import Call, EndReason, Episode, Perturbation, PlanVersion, Step
from replan.env import task_world
from replan.env.world import lookup_path

TOOLS = ["search_flights", "find_flight_offers", "quote_flight", "book_flight"]
ROUTE = {"origin": "LIS", "destination": "KIX", "date": "2026-12-03"}
TRAVELLER = {"traveller_name": "Ana Silva", "contact_email": "ana@example.com"}
SENTINEL = 987654.32


def task(
    task_id: str = "t-travel",
    *,
    mode: str = "NP",
    level: str = "C2",
    graceful: bool = False,
    min_calls: int | None = 3,
    metadata: dict[str, Any] | None = None,
    valid_paths: list[list[str]] | None = None,
    optimal_rounds: int | None = 3,
) -> Task:
    """Search -> quote -> book for Ana Silva; the booking must exist and its id be stated."""
    pert = None
    if mode != "NP":
        pert = PerturbationProfile(
            mode=mode,  # type: ignore[arg-type]
            victim="search_flights",
            group="flight_search",
            kind="http_503" if mode in ("P1", "P2") else "price_x1000",
            sentinel=SENTINEL if mode in ("P3", "P4") else None,
            field="flights.0.price_usd" if mode in ("P3", "P4") else None,
        )
    checker = (
        Checker(graceful=True, forbidden_after_failure=["quote_flight", "book_flight"])
        if graceful
        else Checker(
            required_records=[
                RequiredRecord(
                    collection="flight_bookings", where={"traveller": "Ana Silva"}, mention_key=True
                )
            ]
        )
    )
    return Task(
        task_id=task_id,
        suite="toolmaze",
        query="Book the cheapest LIS->KIX flight on 2026-12-03 for Ana Silva (ana@example.com).",
        tools=list(TOOLS),
        level=level,
        mode=mode,  # type: ignore[arg-type]
        min_calls=min_calls,
        optimal_rounds=optimal_rounds,
        perturbation=pert,
        checker=checker,
        valid_paths=valid_paths
        if valid_paths is not None
        else [
            ["search_flights", "quote_flight", "book_flight"],
            ["find_flight_offers", "quote_flight", "book_flight"],
        ],
        metadata=metadata or {},
        gold_plan={
            "tasks": [
                {"id": "root", "desc": "book", "dep": []},
                {"id": "1", "name": "search_flights", "para": ROUTE, "dep": ["root"]},
                {
                    "id": "2",
                    "name": "quote_flight",
                    "para": {"flight_id": "${1.cheapest_flight_id}"},
                    "dep": ["1"],
                },
                {
                    "id": "3",
                    "name": "book_flight",
                    "para": {"quote_id": "${2.quote_id}", **TRAVELLER},
                    "dep": ["2"],
                },
                {"id": "response", "desc": "answer", "dep": ["3"]},
            ]
        },
    )


@dataclass
class Act:
    """One call to make; ``fault`` = None | "explicit" | "implicit"; ``mode`` of the fault."""

    tool: str
    args: dict[str, Any]
    node: str | None = None
    fault: str | None = None
    mode: str = "P1"
    round: int | None = None
    field: str = "flights.0.price_usd"


def search(node: str = "1", **kw: Any) -> Act:
    return Act("search_flights", dict(ROUTE), node, **kw)


def alt_search(node: str = "1b", **kw: Any) -> Act:
    return Act(
        "find_flight_offers",
        {"from_city": "Lisbon", "to_city": "Osaka", "travel_date": "2026-12-03"},
        node,
        **kw,
    )


def quote(ref: str = "${1.cheapest_flight_id}", node: str = "2", **kw: Any) -> Act:
    return Act("quote_flight", {"flight_id": ref}, node, **kw)


def book(ref: str = "${2.quote_id}", node: str = "3", **kw: Any) -> Act:
    return Act("book_flight", {"quote_id": ref, **TRAVELLER}, node, **kw)


def _set_path(obj: Any, path: str, value: Any) -> None:
    parts = path.split(".")
    cur = obj
    for p in parts[:-1]:
        cur = cur[int(p)] if isinstance(cur, list) else cur[p]
    last = parts[-1]
    if isinstance(cur, list):
        cur[int(last)] = value
    else:
        cur[last] = value


def run(
    t: Task,
    acts: list[Act],
    *,
    answer: str | None = None,
    episode_id: str = "ep",
    success: bool | None = None,
    end_reason: EndReason = EndReason.ANSWERED,
    plans: list[PlanVersion] | None = None,
    seed: int = 0,
    design: str = "react",
) -> Episode:
    """Execute ``acts`` in order on the task's world and record the Episode.

    ``answer`` may contain ``{booking}`` (the booking id of the last successful book_flight)."""
    world = task_world(t)
    bindings: dict[str, Any] = {}
    steps: list[Step] = []
    booking = None
    for i, a in enumerate(acts):
        call = Call(tool=a.tool, args=a.args, node_id=a.node)
        pert = None
        if a.fault == "explicit":
            verdict, resolved = world.check(call, bindings)
            obs: Any = {"error": "503 Service Unavailable"}
            pert = Perturbation(
                mode=a.mode,  # type: ignore[arg-type]
                explicit=True,
                permanent=a.mode in ("P2", "P4"),
                kind="http_503",
                victim=a.tool,
                group="flight_search"
                if a.tool in ("search_flights", "find_flight_offers")
                else None,
            )
        else:
            res = world.execute(call, bindings)
            verdict, resolved, obs = res.verdict, res.resolved_args, res.observation
            if a.fault == "implicit" and res.ok:
                obs = copy.deepcopy(obs)
                _set_path(obs, a.field, SENTINEL)
                if a.tool == "search_flights":
                    obs["cheapest_flight_id"] = lookup_path(obs, ["flights", "0", "flight_id"])
                pert = Perturbation(
                    mode=a.mode,  # type: ignore[arg-type]
                    explicit=False,
                    permanent=a.mode in ("P2", "P4"),
                    kind="price_x1000",
                    victim=a.tool,
                    group="flight_search",
                    sentinel=SENTINEL,
                )
            if res.ok and a.tool == "book_flight":
                booking = obs["booking_id"]
        if verdict.ok and a.node:  # as replay binds: what the agent observed
            bindings[a.node] = obs
        steps.append(
            Step(
                index=i,
                round=i if a.round is None else a.round,
                call=call,
                resolved_args=resolved,
                verdict=verdict,
                observation=obs,
                perturbation=pert,
            )
        )
    text = answer.format(booking=booking) if answer is not None else None
    return Episode(
        episode_id=episode_id,
        task_id=t.task_id,
        suite=t.suite,
        design=design,
        model="test",
        seed=seed,
        mode=t.mode,
        query=t.query,
        steps=steps,
        plans=plans or [],
        final_answer=text,
        end_reason=end_reason,
        success=success,
    )
