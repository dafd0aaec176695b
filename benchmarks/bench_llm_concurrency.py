"""Model calls in flight against a fake OpenAI-compatible server with a fixed latency.

With a real model an evaluation waits on model latency, so its speed is the number of calls kept
in flight. For each number of worker processes and each concurrency C (in all, over the
workers), this starts ``replan.models.fake_openai`` in its own process on 127.0.0.1, runs the
same slice of ToolMaze instances with the ReAct design through the real runner (``arun``, the
OpenAI client over HTTP, the store; with ``--workers`` the process backend and, limits on, its
one limiter server for every worker) in a fresh process, and prints:

- ``server max``: the most requests the server had in flight at once (counted server-side, what
  a provider's concurrency quota sees), against the C asked for;
- ``calls/s`` and ``of bound``: model calls per second (counted server-side) as a share of the
  bound ``C / latency``;
- ``CPU ms/call``: the runner's CPU time (the run's process and every process it started:
  workers, fork server, limiter server; ``resource.getrusage`` of the process and its reaped
  children) per model call, past the run's start-up: a run of 8 episodes per worker count is
  measured first, and the level's CPU and calls less that run's are divided (the start-up's
  CPU, printed apart, is mostly the worker processes' imports); ``cores``: the level's whole
  CPU over its wall time. The fake server's own CPU is not in it.

    .venv/bin/python benchmarks/bench_llm_concurrency.py [--latency 0.2] [--episodes 512]
        [--levels 32,128,256] [--workers 1,0] [--no-limits]

``--workers 0`` is one worker per core; limits are on by default (``--max-in-flight C``: every
call goes through the run's limiter, across workers its server). Target (issue 32): in-flight
maximum = C at every level up to 256; at least 0.8 of the bound at C=32 and 0.6 at C=128 with
``--workers`` = cores and limits on. The load of the machine (``uptime``) is printed before and
after: on shared cores compare rows of one run, not absolute figures across runs. Measured
figures are in docs/performance.md ("Throughput with a real model").
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import urllib.request

#: episodes of the small run that measures a run's start-up CPU (subtracted per call)
STARTUP_EPISODES = 8


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


def _cpu_s() -> float:
    """CPU seconds of this process and of its children that have ended and been reaped."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def child(args: argparse.Namespace) -> None:
    """One level in this (fresh) process: run it, then print its counts as one JSON line."""
    from replan.runner.backends import make_backend
    from replan.runner.experiment import RunConfig, arun
    from replan.runner.process_backend import cpu_workers
    from replan.suites import load_suite

    tasks = load_suite("toolmaze")[: args.episodes]
    # loaded before the clock starts: the start-up is measured apart (benchmarks/bench_startup.py)
    import langchain_openai  # noqa: F401

    import replan.graphs  # noqa: F401

    c, workers = args.child_level, args.child_workers
    n = workers if workers > 0 else cpu_workers()
    cfg = RunConfig(  # C in all: C / n per process
        agents=["react"],
        models=["openai:fake"],
        base_url=args.child_url,
        concurrency=max(1, c // n),  # per process
        limit=len(tasks),  # every task given, not the stratified default subset
        workers=workers,
        max_in_flight=None if args.no_limits else c,
    )
    cpu0, t0 = _cpu_s(), time.perf_counter()
    with tempfile.TemporaryDirectory() as out:
        outcome = asyncio.run(arun(cfg, out, tasks=tasks, backend=make_backend(cfg)))
    wall = time.perf_counter() - t0
    if workers != 1:  # end the fork server, so that it and the workers it reaped are counted
        from multiprocessing import forkserver

        time.sleep(0.3)  # the last workers' exits reach the fork server first
        with contextlib.suppress(Exception):
            forkserver._forkserver._stop()  # type: ignore[attr-defined]
    print(
        json.dumps(
            {
                "episodes": outcome.ran,
                "failures": outcome.failures,
                "wall_s": wall,
                "cpu_s": _cpu_s() - cpu0,
                "processes": n,
            }
        )
    )


def measure(args: argparse.Namespace, c: int, workers: int) -> dict:
    """One level in a fresh process against a fresh server; counts from both."""
    server, url = start_server(args.latency, args.tool_turns)
    try:
        cmd = [sys.executable, __file__, "--episodes", str(args.episodes)]
        cmd += ["--child-level", str(c), "--child-workers", str(workers), "--child-url", url]
        cmd += ["--no-limits"] if args.no_limits else []
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"level {c}, workers {workers} failed:\n{done.stderr[-3000:]}")
        row = json.loads(done.stdout.strip().splitlines()[-1])
        stats = server_stats(url)
    finally:
        server.terminate()
        server.wait(10)
    row.update(calls=stats["requests"], server_max=stats["max_in_flight"], c=c)
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--episodes", type=int, default=512)
    ap.add_argument("--tool-turns", type=int, default=2)
    ap.add_argument("--levels", default="32,128,256")
    ap.add_argument(
        "--workers",
        default="1,0",
        help="worker process counts to compare (replan run --workers; 0: one per core); each "
        "keeps C/workers episodes in flight",
    )
    ap.add_argument("--no-limits", action="store_true", help="no --max-in-flight (no limiter)")
    ap.add_argument("--child-level", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--child-workers", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--child-url", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child_level is not None:
        child(args)
        return
    levels = [int(x) for x in args.levels.split(",")]
    counts = [int(x) for x in args.workers.split(",")]
    load = os.getloadavg()
    print(
        f"{args.episodes} react episodes per level, {args.tool_turns + 1} model calls each, "
        f"server latency {args.latency * 1000:.0f} ms, {os.cpu_count()} cores, limits "
        f"{'off' if args.no_limits else 'on (--max-in-flight C)'}; load before "
        f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
    print(
        f"{'workers':>7} {'C':>5} {'server max':>10} {'wall s':>7} {'calls/s':>8} "
        f"{'bound':>6} {'of bound':>8} {'CPU ms/call':>11} {'cores':>6}"
    )
    for workers in counts:
        small = measure(
            argparse.Namespace(**{**vars(args), "episodes": STARTUP_EPISODES}), 8, workers
        )
        print(
            f"{small['processes']:>7} process(es): a run of {STARTUP_EPISODES} episodes "
            f"({small['calls']} calls) took {small['cpu_s']:.2f} s of CPU (start-up included)"
        )
        for c in levels:
            row = measure(args, c, workers)
            bound = c / args.latency
            rate = row["calls"] / row["wall_s"]
            per_call = (row["cpu_s"] - small["cpu_s"]) / max(1, row["calls"] - small["calls"])
            print(
                f"{row['processes']:>7} {c:>5} {row['server_max']:>10} {row['wall_s']:>7.1f} "
                f"{rate:>8.1f} {bound:>6.0f} {rate / bound:>8.2f} {1000 * per_call:>11.1f} "
                f"{row['cpu_s'] / row['wall_s']:>6.2f}"
                + (f"  ({row['failures']} failed)" if row["failures"] else ""),
                flush=True,
            )
    load = os.getloadavg()
    print(f"load after {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
