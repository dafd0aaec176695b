"""Model calls in flight against a fake OpenAI-compatible server with a fixed latency.

With a real model an evaluation waits on model latency, so its speed is the number of calls kept
in flight. This starts ``replan.models.fake_openai`` in its own process on 127.0.0.1 (its own
interpreter: the server's work does not share the runner's GIL), runs the same slice of ToolMaze
instances with the ReAct design at each concurrency through the real runner (``arun``, the
OpenAI client over HTTP, the store), and prints episodes/s, model calls/s, the most requests the
server saw in flight at once (counted server-side), and calls/s as a fraction of the bound
``concurrency / latency``, with the runner's CPU time (share of one core, and per episode):
where calls/s falls short of the bound while the server sees the full concurrency in flight,
the runner's own CPU per episode is what stands in the way.

    .venv/bin/python benchmarks/bench_llm_concurrency.py [--latency 0.2] [--episodes 256]
        [--levels 1,8,32,128]

Target (issue 18): in-flight maximum = concurrency at every level; at least 0.8 of the bound at
32 and 0.6 at 128 on two cores. Measured figures are in docs/performance.md ("Throughput with
a real model").
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
import urllib.request

from replan.runner.backends import make_backend
from replan.runner.experiment import RunConfig, arun
from replan.suites import load_suite


def start_server(latency: float, tool_turns: int) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "replan.models.fake_openai",
            "--latency",
            str(latency),
            "--tool-turns",
            str(tool_turns),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def server_stats(base_url: str) -> dict:
    with urllib.request.urlopen(base_url.rsplit("/v1", 1)[0] + "/stats", timeout=10) as r:
        return json.loads(r.read())


def measure(tasks: list, base_url: str, concurrency: int, workers: int = 1) -> dict:
    """One level: ``concurrency`` episodes in flight in all, over ``workers`` processes."""
    before = server_stats(base_url)
    cfg = RunConfig(
        agents=["react"],
        models=["openai:fake"],
        base_url=base_url,
        concurrency=max(1, concurrency // workers),  # per process
        limit=len(tasks),  # every task given, not the stratified default subset
        workers=workers,
    )
    t0, cpu0 = time.perf_counter(), time.process_time()
    with tempfile.TemporaryDirectory() as out:
        outcome = asyncio.run(arun(cfg, out, tasks=tasks, backend=make_backend(cfg)))
    wall = time.perf_counter() - t0
    # the driver's CPU; worker processes are the fork server's children, not counted here
    cpu = time.process_time() - cpu0 if workers == 1 else float("nan")
    after = server_stats(base_url)
    calls = after["requests"] - before["requests"]
    return {
        "concurrency": concurrency,
        "episodes": outcome.ran,
        "failures": outcome.failures,
        "wall_s": wall,
        "episodes_per_s": outcome.ran / wall,
        "calls_per_s": calls / wall,
        "cpu_ms_per_episode": 1000 * cpu / max(1, outcome.ran),
        "cpu_share": cpu / wall,
    }


def _pct(x: float) -> str:
    return "–" if x != x else f"{x:.0%}"


def _num(x: float) -> str:
    return "–" if x != x else f"{x:.0f}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--episodes", type=int, default=256)
    ap.add_argument("--tool-turns", type=int, default=2)
    ap.add_argument("--levels", default="1,8,32,128")
    ap.add_argument(
        "--workers",
        type=int,
        default=1,
        help="worker processes (replan run --workers); each keeps concurrency/workers in flight",
    )
    args = ap.parse_args()
    levels = [int(x) for x in args.levels.split(",")]
    tasks = load_suite("toolmaze")[: args.episodes]
    print(
        f"{len(tasks)} react episodes per level, {args.tool_turns + 1} model calls each at "
        f"most, server latency {args.latency * 1000:.0f} ms"
        + (f", {args.workers} worker processes" if args.workers > 1 else "")
    )
    print(
        f"{'concurrency':>11} {'wall s':>7} {'eps/s':>7} {'calls/s':>8} {'server max':>10} "
        f"{'bound':>7} {'of bound':>8} {'runner CPU':>10} {'CPU ms/ep':>9}"
    )
    for c in levels:
        proc, url = start_server(args.latency, args.tool_turns)  # fresh counts per level
        try:
            row = measure(tasks, url, c, args.workers)
            server_max = server_stats(url)["max_in_flight"]
        finally:
            proc.terminate()
            proc.wait(10)
        bound = c / args.latency
        print(
            f"{c:>11} {row['wall_s']:>7.1f} {row['episodes_per_s']:>7.1f} "
            f"{row['calls_per_s']:>8.1f} {server_max:>10} {bound:>7.0f} "
            f"{row['calls_per_s'] / bound:>8.2f} {_pct(row['cpu_share']):>10} "
            f"{_num(row['cpu_ms_per_episode']):>9}"
            + (f"  ({row['failures']} failed)" if row["failures"] else "")
        )


if __name__ == "__main__":
    main()
