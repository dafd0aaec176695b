"""Runner throughput, its determinism, and the cost of the graph machinery, on the same calls.

1. Runner: episodes per second for ToolMaze instances × the four designs with the simulated
   model (suite loading, scoring and storing included; ``--per-level 100`` is the full suite).
2. Determinism: the runner's react episodes (``--concurrency`` at once, in threads) against the
   same episodes played one at a time; same calls (tool and arguments) in n/n.
3. LangGraph overhead: the ``react`` graph against a bare Python loop that drives the same
   simulated policy against the same World (same prompts, same tool messages), on the same
   instances; same calls (tool and arguments) in n/n, and graph time / loop time (target <= 3).
   Any differing episode is named; the overhead ratio is printed only when all agree.

    .venv/bin/python benchmarks/bench_run.py [--per-level 10] [--concurrency 4]

The loop renders tool messages with the graph's ``observation_text``: the 188/200 of earlier
runs came from its ASCII-escaped ``json.dumps`` while the simulated model keyed decisions by a
digest of the conversation text (until cfe2580); 12 instances with non-ASCII observations differed.

Last measured 2026-12-01, --per-level 10, on 2 cores shared with a CI trial and other benchmarks
(load 4-16, so times are noisy): runner 800 episodes in 308 s = 2.6 episodes/s; runner vs one at
a time 200/200; graph vs bare loop 200/200; bare loop 62.9 s, LangGraph 114.8 s = 1.83x.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import ToolMessage

from replan.core.task import Task
from replan.core.trace import Call, Episode
from replan.env import task_world
from replan.env.perturb import injector_for
from replan.env.tool_wrapper import observation_text
from replan.graphs import run_episode
from replan.models import make_model
from replan.nodes.prompts import executor_messages
from replan.runner.experiment import RunConfig, arun
from replan.runner.store import ResultsStore
from replan.suites import load_suite

Calls = list[tuple[str, Any]]


def bare_react(task: Task, seed: int = 0, max_steps: int = 25) -> Calls:
    """ReAct without LangGraph: the same model requests and tool messages, in a while loop."""
    world = task_world(task, injector_for(task) if task.mode != "NP" else None)
    model = make_model("simulated:competent", task=task, seed=seed)
    bound = model.bind_tools([spec.to_openai() for spec in world.tools.values()])
    messages = executor_messages(task.query)
    calls: Calls = []
    while len(calls) < max_steps:
        ai = bound.invoke(messages)
        messages.append(ai)
        if not ai.tool_calls:
            break
        for tc in ai.tool_calls:
            if len(calls) >= max_steps:
                break
            res = world.execute(Call(tool=tc["name"], args=tc["args"]))
            calls.append((tc["name"], tc["args"]))
            messages.append(
                ToolMessage(content=observation_text(res.observation), tool_call_id=tc["id"])
            )
    return calls


def graph_react(task: Task, seed: int = 0) -> Episode:
    """The ``react`` graph on ``task``, as the runner plays it."""
    faults = injector_for(task) if task.mode != "NP" else None
    return run_episode(
        "react", make_model("simulated:competent", task=task, seed=seed), task, faults=faults
    )


def calls_of(ep: Episode) -> Calls:
    return [(s.call.tool, s.call.args) for s in ep.steps]


def agree(name: str, ids: list[str], a: list[Calls], b: list[Calls]) -> bool:
    """Print how many episodes made the same calls; name the ones that did not."""
    differ = [i for i, x, y in zip(ids, a, b, strict=True) if x != y]
    print(f"{name}: same calls in {len(ids) - len(differ)}/{len(ids)} episodes")
    if differ:
        print(f"  differing: {', '.join(differ[:10])}{' ...' if len(differ) > 10 else ''}")
    return not differ


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-level", type=int, default=10)
    ap.add_argument("--concurrency", type=int, default=4)
    ns = ap.parse_args()

    cfg = RunConfig(
        per_cell=0, suite_options={"per_level": ns.per_level}, concurrency=ns.concurrency
    )
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        out = asyncio.run(arun(cfg, Path(tmp)))
        wall = time.perf_counter() - t0
        store = ResultsStore(tmp)
        runner = {e.task_id: calls_of(e) for e in store.episodes() if e.design == "react"}
        store.close()
    print(
        f"runner: {out.total} episodes ({out.failures} failed) in {wall:.1f} s = "
        f"{out.total / wall:.1f} episodes/s (suite loading, scoring and storing included)"
    )

    tasks = load_suite("toolmaze", per_level=ns.per_level)
    ids = [t.task_id for t in tasks]
    # warm both paths once (imports, compiled validators)
    bare_react(tasks[0])
    graph_react(tasks[0])
    t0 = time.perf_counter()
    bare = [bare_react(t) for t in tasks]
    t_bare = time.perf_counter() - t0
    t0 = time.perf_counter()
    graph = [calls_of(graph_react(t)) for t in tasks]
    t_graph = time.perf_counter() - t0
    agree(
        f"runner ({ns.concurrency} at once) vs one at a time", ids, [runner[i] for i in ids], graph
    )
    same = agree("react graph vs bare loop", ids, graph, bare)
    print(f"react on {len(tasks)} instances: bare loop {t_bare:.2f} s, LangGraph {t_graph:.2f} s")
    if same:
        print(f"LangGraph / bare loop: {t_graph / t_bare:.2f}x (target <= 3)")
    else:
        print("LangGraph / bare loop: not comparable (the two paths made different calls)")


if __name__ == "__main__":
    main()
