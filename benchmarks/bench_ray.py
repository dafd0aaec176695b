"""Episodes per second: the local asyncio backend against the Ray backend, like with like.

Each leg runs in its own fresh child process, which loads the suite and imports the runner, the
graphs and the scorer before its clock starts; the clock then times ``arun`` alone over the same
tasks (same jobs, simulated model, concurrency) into a fresh store: episodes, scoring in the
driver, storing. Neither leg inherits the other's in-process caches (suite, scorer worlds).
``ray.init`` is timed apart; the Ray workers' start and imports fall inside the Ray leg (that is
part of what Ray costs on one machine). ``--rounds`` alternates the legs; the
ratio is the Ray rate over the local rate measured in the same run (medians over rounds).

    .venv/bin/python benchmarks/bench_ray.py [--limit 40] [--cpus 2] [--rounds 1]

Last measured 2026-12-01, --limit 40 (160 episodes per leg), on 2 cores shared with a CI trial
and other benchmarks (load 6-16: noisy): setup 0.4 s per leg outside the clocks; local 1.9
episodes/s (82.3 s), Ray 2.6 episodes/s (61.3 s; ray.init 8.8 s apart): Ray / local 1.34x, median
of 2 rounds (1.30x in a 1-round run). Ray's two worker processes use both cores; the local
backend is one process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def leg(name: str, limit: int, cpus: int) -> dict[str, float]:
    """One timed leg in this (fresh) process; setup first, outside the clock."""
    # imported before the clock in both legs
    import replan.evaluators
    import replan.graphs  # noqa: F401
    from replan.runner.experiment import LocalBackend, RunConfig, arun, suite_options
    from replan.suites import load_suite

    cfg = RunConfig(limit=limit, concurrency=4)
    t0 = time.perf_counter()
    tasks = load_suite(cfg.suite, **suite_options(cfg))
    out: dict[str, float] = {"setup_s": time.perf_counter() - t0, "init_s": 0.0}
    if name == "ray":
        import ray

        from replan.runner.ray_backend import RayBackend

        t0 = time.perf_counter()
        ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False)
        out["init_s"] = time.perf_counter() - t0
        backend = RayBackend()
    else:
        backend = LocalBackend()
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        res = asyncio.run(arun(cfg, Path(tmp), tasks=tasks, backend=backend))
        out["run_s"] = time.perf_counter() - t0
    out["episodes"] = res.total
    out["failures"] = res.failures
    if name == "ray":
        ray.shutdown()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=40)
    ap.add_argument("--cpus", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--leg", choices=["local", "ray"], help=argparse.SUPPRESS)
    ns = ap.parse_args()
    if ns.leg:
        print(json.dumps(leg(ns.leg, ns.limit, ns.cpus)))
        return
    runs: dict[str, list[dict[str, float]]] = {"local": [], "ray": []}
    for _ in range(ns.rounds):
        for name in ("local", "ray"):
            argv = [sys.executable, __file__, "--leg", name, f"--limit={ns.limit}"]
            done = subprocess.run(
                [*argv, f"--cpus={ns.cpus}"], capture_output=True, text=True, check=True
            )
            runs[name].append(json.loads(done.stdout.strip().splitlines()[-1]))
    med = {n: statistics.median(r["run_s"] for r in rs) for n, rs in runs.items()}
    n = runs["local"][0]["episodes"]
    fails = {name: sum(r["failures"] for r in rs) for name, rs in runs.items()}
    setup = statistics.median(r["setup_s"] for rs in runs.values() for r in rs)
    init = statistics.median(r["init_s"] for r in runs["ray"])
    print(f"episodes: {n} per leg, {ns.rounds} round(s); failed: {fails}")
    print(f"setup outside both clocks (suite load), per leg: {setup:.1f} s")
    print(f"local backend: {n / med['local']:.1f} episodes/s ({med['local']:.1f} s)")
    print(f"ray backend:   {n / med['ray']:.1f} episodes/s ({med['ray']:.1f} s, {init:.1f} s init)")
    print(f"ray / local throughput: {med['local'] / med['ray']:.2f}x (baseline: local, this run)")


if __name__ == "__main__":
    main()
