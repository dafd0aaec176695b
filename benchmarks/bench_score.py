"""Scoring throughput: prefix + ToolMaze metrics for 100,000 Episodes, one core.

Synthetic episodes are copies of a few dozen template runs really executed on the corpus's
travel tools (search -> quote -> book) across every level C1-C4 and mode NP, P1-P4: clean runs,
invalid calls, precondition failures, retries, alternative paths, sentinels, give-ups.

Scoring ("replan") = replay every episode against its task's world (compiled argument checks,
references, preconditions, effects) for FED and the first error's type, the ToolMaze record, and
all aggregates with their 95% intervals. The baseline re-validates every call with a fresh
``jsonschema.validate`` (schema only: it misses references and preconditions, so the ratio
understates the gap) and builds the same ToolMaze record; it is timed on a subset and compared
per episode. Target: >= 10x, and 100,000 episodes in under a minute.

    .venv/bin/python benchmarks/bench_score.py [--episodes 100000] [--baseline 2000]
"""

from __future__ import annotations

import argparse
import copy
import time
from typing import Any

import jsonschema

from replan.core.task import Checker, PerturbationProfile, RequiredRecord, Task
from replan.core.trace import Call, Episode, Perturbation, Step
from replan.env import task_world
from replan.env.corpus import load_corpus
from replan.evaluators.perturbation import recovery_record, summarize_toolmaze
from replan.evaluators.prefix import (
    PrefixRecord,
    episode_verdicts,
    record_from_verdicts,
    resolve_success,
    summarize_prefix,
    task_world_or_none,
)

ROUTE = {"origin": "LIS", "destination": "KIX", "date": "2026-12-03"}
WHO = {"traveller_name": "Ana Silva", "contact_email": "ana@example.com"}
SENTINEL = 987654.32
SEARCH = ("search_flights", ROUTE, "1")
ALT = (
    "find_flight_offers",
    {"from_city": "Lisbon", "to_city": "Osaka", "travel_date": "2026-12-03"},
    "1b",
)
QUOTE = ("quote_flight", {"flight_id": "${1.cheapest_flight_id}"}, "2")
QUOTE_ALT = ("quote_flight", {"flight_id": "${1b.best_offer.flight_id}"}, "2")
BOOK = ("book_flight", {"quote_id": "${2.quote_id}", **WHO}, "3")

#: per mode: (calls with an optional fault marker, answer) — "!" explicit fault, "~" implicit
TEMPLATES: dict[str, list[tuple[list[tuple], str]]] = {
    "NP": [
        ([SEARCH, QUOTE, BOOK], "Booked {booking}"),
        ([SEARCH, ("quote_flight", {"passengers": 1}, "2"), QUOTE, BOOK], "Booked {booking}"),
        ([SEARCH, ("book_flight", {"quote_id": "FQ-EXPIRED1", **WHO}, "3")], "could not book"),
        ([SEARCH, ("quote_flight", {"flight_id": 7}, "2")], "failed"),
    ],
    "P1": [
        ([("!", *SEARCH), SEARCH, QUOTE, BOOK], "Booked {booking}"),
        ([("!", *SEARCH)], "the service is down"),
        ([("!", *SEARCH), ALT, QUOTE_ALT, BOOK], "Booked {booking}"),
    ],
    "P2": [
        ([("!", *SEARCH), ("!", *SEARCH), ALT, QUOTE_ALT, BOOK], "Booked {booking}"),
        ([("!", *SEARCH), ("!", *SEARCH)], "unable to search flights"),
    ],
    "P3": [
        ([("~", *SEARCH), QUOTE, BOOK], "Booked {booking} at 987654.32"),
        ([("~", *SEARCH), SEARCH, QUOTE, BOOK], "Booked {booking}"),
    ],
    "P4": [
        ([("~", *SEARCH), QUOTE, BOOK], "Booked {booking}"),
        ([("~", *SEARCH), ALT, QUOTE_ALT, BOOK], "Booked {booking}"),
    ],
}


def make_task(level: str, mode: str) -> Task:
    pert = None
    if mode != "NP":
        pert = PerturbationProfile(
            mode=mode,  # type: ignore[arg-type]
            victim="search_flights",
            group="flight_search",
            kind="http_503" if mode in ("P1", "P2") else "price_x1000",
            sentinel=SENTINEL if mode in ("P3", "P4") else None,
        )
    return Task(
        task_id=f"{level}-{mode}",
        suite="toolmaze",
        query="Book the cheapest LIS->KIX flight on 2026-12-03 for Ana Silva.",
        tools=["search_flights", "find_flight_offers", "quote_flight", "book_flight"],
        level=level,
        mode=mode,  # type: ignore[arg-type]
        min_calls=3,
        perturbation=pert,
        checker=Checker(
            required_records=[
                RequiredRecord(
                    collection="flight_bookings", where={"traveller": "Ana Silva"}, mention_key=True
                )
            ]
        ),
        valid_paths=[
            ["search_flights", "quote_flight", "book_flight"],
            ["find_flight_offers", "quote_flight", "book_flight"],
        ],
    )


def execute(task: Task, calls: list[tuple], answer: str, episode_id: str) -> Episode:
    """Run a template on the task's world, injecting the marked faults, and check success."""
    from replan.env.checker import check

    world = task_world(task)
    bindings: dict[str, Any] = {}
    steps = []
    booking = None
    for i, c in enumerate(calls):
        fault = c[0] if c[0] in ("!", "~") else None
        tool, args, node = c[1:] if fault else c
        call = Call(tool=tool, args=args, node_id=node)
        pert = None
        if fault == "!":
            verdict, resolved = world.check(call, bindings)
            obs: Any = {"error": "503 Service Unavailable"}
            pert = Perturbation(
                mode=task.mode,
                explicit=True,
                permanent=task.mode == "P2",  # type: ignore[arg-type]
                kind="http_503",
                victim=tool,
                group="flight_search",
            )
        else:
            res = world.execute(call, bindings)
            verdict, resolved, obs = res.verdict, res.resolved_args, res.observation
            if fault == "~":
                obs = copy.deepcopy(obs)
                obs["flights"][0]["price_usd"] = SENTINEL
                pert = Perturbation(
                    mode=task.mode,
                    explicit=False,
                    permanent=task.mode == "P4",  # type: ignore[arg-type]
                    kind="price_x1000",
                    victim=tool,
                    group="flight_search",
                    sentinel=SENTINEL,
                )
            if res.ok and tool == "book_flight":
                booking = obs["booking_id"]
        if verdict.ok and node:
            bindings[node] = obs
        steps.append(
            Step(
                index=i,
                round=i,
                call=call,
                resolved_args=resolved,
                verdict=verdict,
                observation=obs,
                perturbation=pert,
            )
        )
    ep = Episode(
        episode_id=episode_id,
        task_id=task.task_id,
        suite=task.suite,
        design="react",
        mode=task.mode,
        steps=steps,
        final_answer=answer.format(booking=booking),
    )
    ep.success = check(task, world.state, ep.final_answer, ep).success
    return ep


def synthesize(n: int) -> tuple[list[Episode], dict[str, Task]]:
    tasks = {
        t.task_id: t
        for t in (make_task(lv, m) for lv in ("C1", "C2", "C3", "C4") for m in TEMPLATES)
    }
    templates = [
        execute(t, calls, answer, f"{t.task_id}-{j}")
        for t in tasks.values()
        for j, (calls, answer) in enumerate(TEMPLATES[t.mode])
    ]
    eps = [
        templates[i % len(templates)].model_copy(update={"episode_id": f"ep-{i}", "seed": i})
        for i in range(n)
    ]
    return eps, tasks


def score_replan(eps: list[Episode], tasks: dict[str, Task]) -> tuple[list, list]:
    worlds = {tid: task_world_or_none(t) for tid, t in tasks.items()}
    prefix, recovery = [], []
    for ep in eps:
        task = tasks[ep.task_id]
        verdicts, source, state = episode_verdicts(ep, task, worlds[ep.task_id])
        success = resolve_success(ep, task, state)
        prefix.append(record_from_verdicts(verdicts, success, source))
        recovery.append(recovery_record(ep, task, success=success))
    return prefix, recovery


def score_baseline(eps: list[Episode], tasks: dict[str, Task]) -> tuple[list, list]:
    specs = load_corpus().tools
    prefix, recovery = [], []
    for ep in eps:
        task = tasks[ep.task_id]
        fed = None
        for k, s in enumerate(ep.steps, start=1):
            spec = specs.get(s.call.tool)
            try:
                if spec is None:
                    raise jsonschema.ValidationError("unknown tool")
                jsonschema.validate(s.resolved_args or s.call.args, spec.parameters)
            except jsonschema.ValidationError:
                fed = fed or k
        prefix.append(PrefixRecord(n=len(ep.steps), fed=fed, success=ep.success))
        recovery.append(recovery_record(ep, task, success=ep.success))
    return prefix, recovery


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=100_000)
    ap.add_argument("--baseline", type=int, default=2_000, help="episodes timed for the baseline")
    ns = ap.parse_args()

    t0 = time.perf_counter()
    eps, tasks = synthesize(ns.episodes)
    t_build = time.perf_counter() - t0
    calls = sum(len(e.steps) for e in eps)
    score_replan(eps[:200], tasks)  # warm the compiled validators and the corpus

    t0 = time.perf_counter()
    cpu0 = time.process_time()
    prefix, recovery = score_replan(eps, tasks)
    t_records = time.perf_counter() - t0
    p = summarize_prefix(prefix)
    m = summarize_toolmaze(recovery)
    t_total = time.perf_counter() - t0
    cpu_total = time.process_time() - cpu0

    sub = eps[: ns.baseline]
    t0 = time.perf_counter()
    score_baseline(sub, tasks)
    t_base = time.perf_counter() - t0

    plain = [(r.fed, r.n, r.success) for r in prefix]
    t0 = time.perf_counter()
    summarize_prefix(plain)
    t_plain = time.perf_counter() - t0

    rate = len(eps) / t_total
    base_rate = len(sub) / t_base
    print(
        f"episodes:                      {len(eps):,} ({calls:,} calls; built in {t_build:.1f} s)"
    )
    print(f"replan scoring (replay + ToolMaze records): {t_records:.1f} s")
    print(f"  + aggregates with 95% intervals:          {t_total - t_records:.2f} s")
    print(f"  total {t_total:.1f} s wall, {cpu_total:.1f} s CPU -> {rate:,.0f} episodes/s")
    print(
        f"baseline (fresh jsonschema.validate per call + ToolMaze records): "
        f"{base_rate:,.0f} episodes/s (on {len(sub):,} episodes)"
    )
    print(f"ratio:                         {rate / base_rate:.1f}x (target >= 10x)")
    print(f"under a minute for 100,000:    {'yes' if t_total * 100_000 / len(eps) < 60 else 'no'}")
    print(f"aggregates from plain (fed, n, success) records: {len(plain):,} in {t_plain:.2f} s")
    print(
        f"TER {p['prefix.ter']['value']:.3f}  AUC-PEC {p['prefix.auc_pec']['value']:.3f}  "
        f"RR {p['prefix.rr']['value']:.3f} (eligible {p['prefix.rr']['eligible']:,})  "
        f"ToolMaze Avg {m['toolmaze.avg']['value']:.3f}"
    )


if __name__ == "__main__":
    main()
