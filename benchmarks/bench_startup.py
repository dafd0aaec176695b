"""CPU cost of the commands a person types and waits for, on top of a bare interpreter.

Each command runs in its own process ``--repeat`` times; its CPU seconds (user + system, from
``resource.getrusage(RUSAGE_CHILDREN)``) are taken at their minimum, as is a bare
``python -c pass`` measured in the same run, and printed with the difference and the ratio
(issue 32: each difference <= 0.5 s).

- ``--help``: ``replan --help``
- ``argument error``: ``replan run --concurrency zero`` (exit 2, one line)
- ``no-op rerun``: ``replan run --limit 4 --agents react`` into a store that already holds those
  episodes (the first run, outside the measure, fills it)
- ``suites stats``: ``replan suites stats toolmaze``

    .venv/bin/python benchmarks/bench_startup.py [--repeat 5] [--src OTHER_CHECKOUT/src]

Measured 2026-12-03 on two cores shared with other test runs (CPU seconds over bare python,
before = bef0d45 / after): --help 1.757 / 0.340, argument error 1.517 / 0.318, no-op rerun
2.325 / 0.331, suites stats 3.484 / 1.669 (bare python 0.013 s).

Measured 2026-12-03 at 15:55, load 6 to 7 (before = 7cbe0dd / after, the stored statistics of
a frozen suite): --help 0.402 / 0.360, argument error 0.414 / 0.386, no-op rerun 0.522 /
0.491, suites stats 1.447 / 0.442 (bare python 0.014 s); at 16:19, load 3: --help 0.360 /
0.264, argument error 0.328 / 0.270, no-op rerun 0.406 / 0.371, suites stats 1.154 / 0.397.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def cpu_of(argv: list[str], env: dict[str, str], ok: tuple[int, ...] = (0,)) -> float:
    """CPU seconds (user + system) that one run of ``argv`` took."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(argv, env=env, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in ok:
        raise SystemExit(f"{' '.join(argv)}: exit {proc.returncode}\n{proc.stderr[-2000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--src", type=Path, default=SRC, help="the sources to measure (an older one)")
    ns = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ns.src), "CI": "1"}
    py = sys.executable
    cli = [py, "-m", "replan"]
    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "store")
        run = [*cli, "run", "--limit", "4", "--agents", "react", "--out", out]
        cpu_of(run, env)  # fills the store: the measured runs have nothing to do
        cases = {
            "bare python": ([py, "-c", "pass"], (0,)),
            "--help": ([*cli, "--help"], (0,)),
            "argument error": ([*cli, "run", "--concurrency", "zero"], (2,)),
            "no-op rerun": (run, (0,)),
            "suites stats": ([*cli, "suites", "stats", "toolmaze"], (0,)),
        }
        best = {
            name: min(cpu_of(argv, env, ok) for _ in range(ns.repeat))
            for name, (argv, ok) in cases.items()
        }
    bare = best["bare python"]
    print(f"{ns.src}: CPU seconds, min of {ns.repeat} (bare python {bare:.3f} s)")
    print(f"{'command':<16} {'cpu s':>7} {'over bare':>10} {'x bare':>7}")
    for name, cpu in best.items():
        print(f"{name:<16} {cpu:7.3f} {cpu - bare:10.3f} {cpu / bare:7.1f}")


if __name__ == "__main__":
    main()
