"""Plan parsing time against input size, on hostile texts and on a real plan padded to size.

For each input family the parse time at 1x, 2x, 4x and 8x the base size is divided by the time
at 1x, in the same run: a linear parser gives ratios near 2, 4, 8; the quadratic regexes that
issue 17 found gave ~4, 16, 64 (180 KB of ``<thought>`` took 28.7 s). The size cap
(``MAX_PLAN_CHARS``) is reported as the ``too_large`` verdict, in microseconds.

    .venv/bin/python benchmarks/bench_plan_parse.py [--base 20000]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

from replan.core.plan import MAX_PLAN_CHARS, Plan

REAL = json.dumps(
    {
        "tasks": [
            {"id": "root", "desc": "q", "dep": [], "status": True},
            {"id": "1", "name": "search", "para": {"q": "LIS"}, "dep": ["root"]},
            {"id": "response", "desc": "answer", "dep": ["1"]},
        ]
    }
)

FAMILIES: dict[str, Callable[[int], str]] = {
    "real plan, padded": lambda n: "<thought>ok</thought>" + REAL + " " * n,
    "unclosed <thought>": lambda n: "<thought>" * (n // 9),
    "blank lines in JSON": lambda n: '{"tasks": [' + "\n" * n + "1,]",
    "unclosed fences": lambda n: "```json {" * (n // 9),
    "commas and spaces": lambda n: "{" + ", " * (n // 2),
    "open braces": lambda n: "{" * n,
}


def best_of(text: str, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        Plan.parse(text)
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", type=int, default=20_000, help="characters at 1x")
    ap.add_argument("--repeats", type=int, default=5)
    ns = ap.parse_args()
    print(f"{'input':24s} {'1x ms':>9s}  ratios 2x 4x 8x (linear: 2 4 8)")
    for name, make in FAMILIES.items():
        times = [best_of(make(ns.base * k), ns.repeats) for k in (1, 2, 4, 8)]
        ratios = " ".join(f"{t / times[0]:5.1f}" for t in times[1:])
        print(f"{name:24s} {times[0] * 1e3:9.3f}  {ratios}")
    cap = best_of("x" * (MAX_PLAN_CHARS + 1), ns.repeats)
    print(f"over the cap ({MAX_PLAN_CHARS + 1:,} chars): too_large in {cap * 1e6:.0f} us")


if __name__ == "__main__":
    main()
