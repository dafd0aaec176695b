"""The whole ToolMaze suite × 4 designs (8,000 episodes) on the local backend, in worker processes.

Measured in the same invocation, each phase in its own process (so each peak RSS is its own):

1. the baseline: one process (``LocalBackend``, today's default) on a slice
   (``--baseline-limit`` tasks × 4 designs), then ``--workers`` processes (0: one per core) on
   the same slice, back to back: their ratio;
2. the run: the workers on the whole suite, or on ``--limit`` tasks;
3. the summary and the report of the slice's store and of the run's (what ``replan run`` does
   after its episodes), to show their peak RSS against the number of episodes.

Prints (as each phase ends) time, episodes/s, peak RSS of the driver and of the largest worker, the ratios, and
the full suite's time extrapolated from the measured rate when ``--limit`` ran a part of it.

    .venv/bin/python benchmarks/bench_full_suite.py [--limit 200] [--workers 0]

Memory figures are MiB (RSS / 2^20; printed as "MB" before 2026-12-03 19:00, so every "MB" of
RSS below is MiB). Measured 2026-12-03 at 19:01, tasks held packed by the run (load 2.2 to
6.2): ``--suite toolmaze-guided --workers 2``, 8,000 episodes in 296.4 s = 4.9 min, 64 ms CPU
per episode, every process at once 525 MiB RSS (407 MiB PSS); docs/performance.md has the
steps.

Measured 2026-12-01 at 16:56, after each built-in design's graph was compiled once per run
instead of once per episode, on 2 cores (load 1.1 at the start, 4.4 during the run): one
process 14.8 episodes/s on the 160-episode slice (69 ms CPU per episode; 9.0 and about 110 ms
before); the whole suite, 8,000 episodes, 332.5 s = 5.5 min with two workers (24.1 episodes/s,
78 ms CPU per episode in the workers; peak RSS driver 290 MB, largest worker 319 MB, all
workers 760 MB); summary + report of 8,000 episodes 23.5 s (load 3), peak RSS 383 MB.

Measured 2026-12-01 at 15:07, after the simulated model stopped rescanning the query on every
turn (about 3x less CPU per episode), on 2 otherwise idle cores (load 0.4 at the start, 4.4 during
the run, its own processes): one process 9.0 episodes/s on the 160-episode slice, two workers
14.1 (1.57x; CPU per episode 1.01x); the whole suite, 8,000 episodes, 393 s = 6.6 min with two
workers (20.3 episodes/s, 93 ms CPU per episode; peak RSS driver 290 MB, largest worker 312 MB,
all workers 745 MB); summary + report of 8,000 episodes 14.5 s, peak RSS 383 MB (29.6 kB per
episode over the slice's 157 MB).

Earlier the same day, before that change, on 2 cores shared with a CI trial (load average 4
to 20 during the runs, CPU pressure 99%), so wall times are several times what an idle machine
gives; the ratios and the CPU time per episode are what to read.

- ``--limit 300`` (load 6 to 11): one process 2.5 episodes/s (160 episodes, 341 ms CPU each);
  two workers 2.7 episodes/s on the same slice (1.10x), 3.8 episodes/s on 1,200 episodes
  (310 ms CPU each, of which the driver 8 ms: the workers score); whole suite extrapolated
  34.7 min at that load. Peak RSS: driver 196 MB at 160 and at 1,200 episodes; largest worker
  112 MB at 160, 147 MB at 1,200 (its world cache filling, bounded at 2,048 tasks); all workers
  and the fork server 345 and 415 MB.
- ``--limit 100`` (load 3.5 to 7): one process 2.0 episodes/s, two workers 3.1 (1.58x); CPU per
  episode the same in both (0.98x), so on two free cores the workers run at twice one process.
- Summary + report after the run, peak RSS: 157 MB at 160 episodes, 202 MB at 1,200 (45 kB per
  episode). Before this change (every episode held whole, the drill-down's 1,000 at once): 158 MB
  at 160 and 272 MB at 1,000 (139 kB per episode, the issue's 0.15 MB; it saw 1.4 GB at 8,000).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

DESIGNS = 4


def full_tasks(suite: str | None = None) -> int:
    """The instances of ``suite``, or of the suite a run draws by default (``toolmaze``: 1,000
    since v3; the issue's 8,000 episodes were its 2,000 instances of v2, now ``toolmaze-guided``)."""
    from replan.runner.experiment import RunConfig
    from replan.suites import load_suite

    return len(load_suite(suite or RunConfig().suite))


def _peak_self_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux


def _watch_workers(stop: threading.Event, peak: dict[str, Any]) -> None:
    """Sample the RSS and CPU time of every descendant process (the workers) until ``stop``."""
    import psutil

    me = psutil.Process()
    cpu: dict[int, float] = peak.setdefault("cpu", {})
    tick = 0
    while not stop.wait(0.2):
        rss = []
        kids = me.children(recursive=True)
        for k in kids:
            try:
                rss.append(k.memory_info().rss / 2**20)
                t = k.cpu_times()
                cpu[k.pid] = t.user + t.system
            except psutil.Error:
                continue
        if rss:
            peak["max"] = max(peak.get("max", 0.0), max(rss))
            peak["sum"] = max(peak.get("sum", 0.0), sum(rss))
            # every process of the run at the same moment: the driver and its workers
            peak["all"] = max(peak.get("all", 0.0), me.memory_info().rss / 2**20 + sum(rss))
        tick += 1
        if rss and tick % 10 == 0:  # PSS (a shared page split between its sharers), every 2 s
            try:
                pss = sum(p.memory_full_info().pss for p in [me, *kids]) / 2**20
            except (psutil.Error, AttributeError):
                continue
            peak["all_pss"] = max(peak.get("all_pss", 0.0), pss)


def phase_run(
    out: str, limit: int | None, workers: int, concurrency: int, suite: str | None = None
) -> dict[str, Any]:
    from replan.runner.backends import make_backend
    from replan.runner.experiment import RunConfig, arun

    picked = {"suite": suite} if suite else {}
    cfg = RunConfig(limit=limit, per_cell=0, concurrency=concurrency, workers=workers, **picked)
    stop, peak = threading.Event(), {}
    watcher = threading.Thread(target=_watch_workers, args=(stop, peak), daemon=True)
    watcher.start()
    t0, c0 = time.perf_counter(), time.process_time()
    outcome = asyncio.run(arun(cfg, out, backend=make_backend(cfg)))
    wall, driver_cpu = time.perf_counter() - t0, time.process_time() - c0
    stop.set()
    watcher.join()
    workers_cpu = sum(peak.get("cpu", {}).values())
    return {
        "driver_cpu_s": driver_cpu,
        "workers_cpu_s": workers_cpu,
        "cpu_per_episode_ms": (driver_cpu + workers_cpu) / max(1, outcome.ran) * 1000,
        "episodes": outcome.ran,
        "failures": outcome.failures,
        "wall_s": wall,
        "rate": outcome.ran / wall,
        "driver_mb": _peak_self_mb(),
        "worker_mb": peak.get("max", 0.0),
        "workers_sum_mb": peak.get("sum", 0.0),
        "all_mb": peak.get("all", _peak_self_mb()),
        "all_pss_mb": peak.get("all_pss", 0.0),
    }


def phase_report(out: str) -> dict[str, Any]:
    """What ``replan run`` does after the episodes: the summary, then the report."""
    from replan.report import write_report
    from replan.report.summary import summarize

    base = _peak_self_mb()
    t0 = time.perf_counter()
    summarize(out)
    write_report(out)
    return {"wall_s": time.perf_counter() - t0, "peak_mb": _peak_self_mb(), "import_mb": base}


def _phase(*args: str, options: tuple[str, ...] = ()) -> dict[str, Any]:
    res = subprocess.run(
        [sys.executable, __file__, *options, "--phase", *args],
        capture_output=True,
        text=True,
        check=False,
    )
    if res.returncode != 0:
        raise SystemExit(f"phase {args[0]} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=None, help="tasks (default: all of the suite)")
    ap.add_argument("--suite", default=None, help="suite (default: the run's default suite)")
    ap.add_argument("--workers", type=int, default=0, help="worker processes (0: one per core)")
    ap.add_argument("--baseline-limit", type=int, default=40, help="tasks, single process")
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--phase", nargs="+", help=argparse.SUPPRESS)
    ns = ap.parse_args()
    if ns.phase:
        kind, *rest = ns.phase
        if kind == "run":
            out, limit, workers = rest[0], rest[1], int(rest[2])
            lim = None if limit == "all" else int(limit)
            print(json.dumps(phase_run(out, lim, workers, ns.concurrency, ns.suite)))
        else:
            print(json.dumps(phase_report(rest[0])))
        return

    def show(name: str, r: dict[str, Any]) -> None:
        print(
            f"{name}: {r['episodes']} episodes ({r['failures']} failed) in {r['wall_s']:.1f} s ="
            f" {r['rate']:.1f} episodes/s; peak RSS (MiB) driver {r['driver_mb']:.0f}, largest "
            f"worker {r['worker_mb']:.0f} (all workers {r['workers_sum_mb']:.0f}, all "
            f"processes at once {r['all_mb']:.0f}; their PSS {r['all_pss_mb']:.0f}); CPU "
            f"{r['cpu_per_episode_ms']:.0f} ms per episode (driver {r['driver_cpu_s']:.0f} s, "
            f"workers {r['workers_cpu_s']:.0f} s); load {os.getloadavg()[0]:.1f}",
            flush=True,
        )

    print(f"cores: {os.cpu_count()}, load average {os.getloadavg()[0]:.2f}", flush=True)
    workers = str(ns.workers)
    # the children run the suite and concurrency asked for here
    options = ("--concurrency", str(ns.concurrency)) + (("--suite", ns.suite) if ns.suite else ())
    with tempfile.TemporaryDirectory() as tmp:
        small, same, big = (str(Path(tmp) / n) for n in ("one", "workers", "run"))
        # the ratio: the same slice, one process then the workers, back to back
        base = _phase("run", small, str(ns.baseline_limit), "1", options=options)
        show(f"slice, 1 process ({ns.baseline_limit} tasks)", base)
        multi = _phase("run", same, str(ns.baseline_limit), workers, options=options)
        show(f"slice, --workers {ns.workers or 'auto'}", multi)
        print(f"workers / 1 process throughput: {multi['rate'] / base['rate']:.2f}x", flush=True)
        # on a loaded machine wall time says little; CPU time per episode does not depend on
        # the load: with every core free, the workers' rate is about cores / CPU per episode
        cores = len(os.sched_getaffinity(0))
        bound = cores / (multi["cpu_per_episode_ms"] / 1000)
        print(
            f"CPU per episode, workers / 1 process: "
            f"{multi['cpu_per_episode_ms'] / base['cpu_per_episode_ms']:.2f}x; on {cores} free "
            f"cores the workers would run about {bound:.1f} episodes/s, the whole suite in "
            f"{full_tasks(ns.suite) * DESIGNS / bound / 60:.1f} min (vs 1 process at most "
            f"{1000 / base['cpu_per_episode_ms']:.1f} episodes/s)",
            flush=True,
        )
        limit = "all" if ns.limit is None else str(ns.limit)
        run = _phase("run", big, limit, workers, options=options)
        show(f"run, --workers {ns.workers or 'auto'} ({limit} tasks)", run)
        full = full_tasks(ns.suite) * DESIGNS
        if run["episodes"] < full:
            print(
                f"whole suite ({full} episodes) at the run's rate: "
                f"{full / run['rate'] / 60:.1f} min (extrapolated)",
                flush=True,
            )
        else:
            print(f"whole suite: {run['wall_s'] / 60:.1f} min (measured)", flush=True)
        reps = [
            (base["episodes"], _phase("report", small)),
            (run["episodes"], _phase("report", big)),
        ]
    for n, r in reps:
        print(
            f"summary + report of {n} episodes: {r['wall_s']:.1f} s, peak RSS "
            f"{r['peak_mb']:.0f} MiB ({r['import_mb']:.0f} MiB after imports)"
        )
    (n1, r1), (n2, r2) = reps
    if n2 > n1:
        grow = (r2["peak_mb"] - r1["peak_mb"]) / (n2 - n1)
        print(f"report peak RSS growth: {grow * 1024:.1f} KiB per episode")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
