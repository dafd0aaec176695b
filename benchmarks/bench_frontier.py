"""Frontier execution: do the calls of one wave overlap in time?

Runs the replanner loop on a DAG of ``width`` independent chains, each ``depth`` calls long, over
tools that sleep ``latency`` seconds, and prints

- wall time of the parallel run, the lower bound ``depth * latency``, and the time spent in the
  (scripted, near-instant) model calls;
- the wall time of the same DAG run one call at a time (``AgentConfig(max_parallel=1)``, same
  graph, same run) and the speedup over it.

Targets: wall <= 1.3 x (bound + model time); speedup >= 0.8 x width. Both are measured in the
same process against a baseline of the same run; nothing is asserted.

    .venv/bin/python benchmarks/bench_frontier.py [--width 4] [--depth 3] [--latency 0.2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import threading
import time
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import PrivateAttr

from replan.core.task import Task
from replan.core.tools import ToolSpec
from replan.env.world import World
from replan.graphs import AgentConfig, arun_episode, run_episode
from replan.nodes.prompts import request_kind


def sleeping_tool(name: str, latency: float) -> ToolSpec:
    def impl(args: dict[str, Any], ctx: Any) -> dict[str, Any]:
        time.sleep(latency)
        return {"value": int(args.get("x", 0)) + 1}

    return ToolSpec(
        name=name,
        description=f"waits {latency}s (a remote API) and returns x + 1",
        parameters={"type": "object", "properties": {"x": {"type": "integer"}}, "required": []},
        returns={"type": "object", "properties": {"value": {"type": "integer"}}},
        category="source",
        implementation=impl,
    )


def dag_text(width: int, depth: int) -> str:
    """``width`` chains of ``depth`` calls; call (c, l) feeds its value to (c, l + 1)."""
    tasks: list[dict[str, Any]] = [{"id": "root", "desc": "request", "dep": [], "status": True}]
    last = []
    for c in range(width):
        prev = "root"
        for level in range(depth):
            nid = str(c * depth + level + 1)
            args = {"x": c} if prev == "root" else {"x": "${" + prev + ".value}"}
            tasks.append(
                {
                    "id": nid,
                    "name": f"api{c}",
                    "para": args,
                    "desc": "",
                    "dep": [prev],
                    "status": False,
                }
            )
            prev = nid
        last.append(prev)
    tasks.append({"id": "response", "desc": "answer", "dep": last, "status": False})
    return "<thought>independent chains run side by side</thought>\n" + json.dumps({"tasks": tasks})


class FrontierModel(BaseChatModel):
    """Plans (and replans) the same DAG and answers at once; times its own calls."""

    plan: str
    _seconds: float = PrivateAttr(default=0.0)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "bench-frontier"

    def bind_tools(self, tools: Any, **kwargs: Any) -> FrontierModel:
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        t0 = time.perf_counter()
        kind = request_kind(messages)
        text = self.plan if kind in ("plan", "replan") else "All chains finished."
        with self._lock:
            self._seconds += time.perf_counter() - t0
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])

    @property
    def seconds(self) -> float:
        return self._seconds


def one_run(
    width: int, depth: int, latency: float, parallel: int | None, use_async: bool
) -> tuple[float, float, int]:
    tools = [sleeping_tool(f"api{c}", latency) for c in range(width)]
    task = Task(
        task_id="bench", suite="bench", query="run every chain", tools=[t.name for t in tools]
    )
    model = FrontierModel(plan=dag_text(width, depth))
    cfg = AgentConfig(max_parallel=parallel)
    t0 = time.perf_counter()
    if use_async:
        ep = asyncio.run(
            arun_episode("replanner_loop", model, task, world=World(tools), config=cfg)
        )
    else:
        ep = run_episode("replanner_loop", model, task, world=World(tools), config=cfg)
    wall = time.perf_counter() - t0
    if ep.end_reason != "answered" or len(ep.steps) != width * depth or ep.rounds != depth:
        raise RuntimeError(
            f"benchmark run went wrong: {ep.end_reason} {ep.error} {len(ep.steps)} steps"
        )
    return wall, model.seconds, ep.rounds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--width", type=int, default=4)
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args()
    w, d, lat = args.width, args.depth, args.latency
    one_run(w, d, 0.0, None, False)  # warm up imports and caches
    results: dict[str, Any] = {"width": w, "depth": d, "latency_s": lat, "bound_s": d * lat}
    for mode in ("sync", "async"):
        par = [one_run(w, d, lat, None, mode == "async") for _ in range(args.reps)]
        seq = [one_run(w, d, lat, 1, mode == "async") for _ in range(args.reps)]
        wall = statistics.median(r[0] for r in par)
        model_s = statistics.median(r[1] for r in par)
        seq_wall = statistics.median(r[0] for r in seq)
        results[mode] = {
            "wall_s": round(wall, 4),
            "model_s": round(model_s, 4),
            "wall_over_bound_plus_model": round(wall / (d * lat + model_s), 3),
            "sequential_wall_s": round(seq_wall, 4),
            "speedup": round(seq_wall / wall, 3),
            "speedup_target": 0.8 * w,
        }
        results[mode]["targets_met"] = (
            results[mode]["wall_over_bound_plus_model"] <= 1.3 and seq_wall / wall >= 0.8 * w
        )
    if args.json:
        print(json.dumps(results))
        return
    print(
        f"DAG: width {w}, depth {d}, tool latency {lat}s; lower bound depth*latency = {d * lat:.3f}s"
    )
    for mode in ("sync", "async"):
        r = results[mode]
        print(
            f"[{mode:5}] wall {r['wall_s']:.3f}s  model {r['model_s']:.4f}s  "
            f"wall/(bound+model) {r['wall_over_bound_plus_model']:.3f} (target <= 1.3)  "
            f"one-at-a-time {r['sequential_wall_s']:.3f}s  speedup {r['speedup']:.2f}x "
            f"(target >= {r['speedup_target']:.1f}x)  {'OK' if r['targets_met'] else 'MISSED'}"
        )


if __name__ == "__main__":
    main()
