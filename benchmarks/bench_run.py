"""Runner throughput and the cost of the graph machinery.

1. Episodes per second for ToolMaze-style instances × the four designs with the simulated model
   (``--per-level 100`` is the full suite: 2,000 instances × 4 designs).
2. The overhead of LangGraph: the ``react`` graph against a bare Python loop that drives the same
   simulated policy against the same World (same prompts, same tool messages), on the same
   instances. Both must make the same calls; the ratio is graph time / loop time (target <= 3).

    .venv/bin/python benchmarks/bench_run.py [--per-level 10]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

from langchain_core.messages import ToolMessage

from replan.core.trace import Call
from replan.env import task_world
from replan.env.perturb import injector_for
from replan.graphs import run_episode
from replan.models import make_model
from replan.nodes.prompts import executor_messages
from replan.runner.experiment import LocalBackend, RunConfig, arun
from replan.suites import load_suite


def bare_react(task, seed: int = 0, max_steps: int = 25) -> list[str]:
    """ReAct without LangGraph: the same model requests and tool messages, in a while loop."""
    world = task_world(task, injector_for(task) if task.mode != "NP" else None)
    model = make_model("simulated:competent", task=task, seed=seed)
    bound = model.bind_tools([spec.to_openai() for spec in world.tools.values()])
    messages = executor_messages(task.query)
    calls: list[str] = []
    while len(calls) < max_steps:
        ai = bound.invoke(messages)
        messages.append(ai)
        if not ai.tool_calls:
            break
        for tc in ai.tool_calls:
            if len(calls) >= max_steps:
                break
            res = world.execute(Call(tool=tc["name"], args=tc["args"]))
            calls.append(tc["name"])
            messages.append(
                ToolMessage(content=json.dumps(res.observation, default=str), tool_call_id=tc["id"])
            )
    return calls


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
        out = asyncio.run(arun(cfg, Path(tmp), backend=LocalBackend(ns.concurrency)))
        wall = time.perf_counter() - t0
    print(
        f"runner: {out.total} episodes ({out.failures} failed) in {wall:.1f} s = "
        f"{out.total / wall:.1f} episodes/s (suite generation, scoring and storing included)"
    )

    tasks = load_suite("toolmaze", per_level=ns.per_level)
    # warm both paths once (imports, compiled validators)
    bare_react(tasks[0])
    run_episode("react", make_model("simulated:competent", task=tasks[0]), tasks[0])
    t0 = time.perf_counter()
    bare = [bare_react(t) for t in tasks]
    t_bare = time.perf_counter() - t0
    t0 = time.perf_counter()
    graph = []
    for t in tasks:
        ep = run_episode(
            "react",
            make_model("simulated:competent", task=t),
            t,
            faults=injector_for(t) if t.mode != "NP" else None,
        )
        graph.append([s.call.tool for s in ep.steps])
    t_graph = time.perf_counter() - t0
    same = sum(a == b for a, b in zip(bare, graph, strict=True))
    print(
        f"react on {len(tasks)} instances: bare loop {t_bare:.2f} s, LangGraph {t_graph:.2f} s; "
        f"same calls in {same}/{len(tasks)} episodes"
    )
    print(f"LangGraph / bare loop: {t_graph / t_bare:.2f}x (target <= 3)")


if __name__ == "__main__":
    main()
