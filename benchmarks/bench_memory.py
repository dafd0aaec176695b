"""Peak RSS of one run process against its number of episodes: this code and an older commit.

Each run is its own process (``arun`` on the local backend, the simulated model, the suite's
four designs, ``--limit`` tasks each), its peak RSS read from ``wait4``; two episode counts per
code, so the growth per episode (the slope between them) is measured, not the start-up.

    .venv/bin/python benchmarks/bench_memory.py [--tasks 25,125] [--baseline-ref 8eff5a2]

Measured 2026-12-03 at 13:50 on 2 shared cores (load 7 to 12), ``--tasks 25,250``:

    code             episodes  peak RSS MB  end RSS MB   CPU s
    old (8eff5a2)         100        195.9       156.8     6.3
    old (8eff5a2)        1000        239.9       239.8    57.6
    old (8eff5a2)    per episode: peak +50.1 kB, end +94.4 kB
    this code             100        218.3       218.1     8.6
    this code            1000        323.6       323.6    61.4
    this code        per episode: peak +119.8 kB, end +120.0 kB

Measured 2026-12-03 at 16:00 (load 6 to 11), ``--tasks 25,250 --baseline-ref 7cbe0dd``:

    code             episodes  peak RSS MB  end RSS MB   CPU s  malloc used/free MB
    old (7cbe0dd)         100        214.8       214.9     9.2       108.1 /  12.9
    old (7cbe0dd)        1000        323.2       323.1    66.7       194.7 /  13.5
    old (7cbe0dd)    per episode: peak +123.3 kB, end +123.1 kB
    this code             100        160.3       151.6     8.2        54.1 /  14.2
    this code            1000        185.9       177.4    64.7        53.7 /  33.0
    this code        per episode: peak +29.1 kB, end +29.3 kB

The growth was RE2's DFA caches: each compiled pattern may cache 8 MiB by default, and a run
compiles ~700 from task data; now 1 MiB a pattern and the last 256 patterns kept
(``linre.MAX_MEM``, ``linre.COMPILED_KEPT``), and glibc's free pages handed back every 100
episodes (``malloc_trim``). The rest of the slope is the first few hundred episodes.

("this code" at 13:50: main then, with other sessions' changes since 8eff5a2.) The runner no
longer holds the episodes it stored (``play``: 49 of 49 held before, a test checks), but the
growth was not that: tracemalloc saw no Python memory growing between episode 40 and 200, so
the ~0.1 MB per episode was native: RE2's, as found at 16:00.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE_REF = "8eff5a2"

RUN = """
import asyncio, ctypes, sys
from replan.runner.experiment import RunConfig, arun
cfg = RunConfig(limit=int(sys.argv[1]))
out = asyncio.run(arun(cfg, sys.argv[2]))
rss = [ln for ln in open("/proc/self/status") if ln.startswith("VmRSS")][0].split()[1]
class MallInfo2(ctypes.Structure):  # glibc's, in bytes: what malloc holds for live blocks
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd",
                "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]
libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = MallInfo2
info = libc.mallinfo2()
print(out.ran, int(rss) / 1024, info.uordblks / 2**20, info.fordblks / 2**20)
"""


def measure(src: Path, tasks: int, out: Path) -> tuple[int, float, float, float, float, float]:
    """``(episodes, peak RSS MB, RSS MB at the end of the run, CPU s, malloc in use MB, malloc
    free MB)`` of one run process with ``src`` first on the path (the peak is often the suite's
    generation, before any episode; the RSS at the end is what the run's episodes left held;
    glibc's in-use and free bytes tell live native memory from fragmentation)."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    proc = subprocess.Popen(
        [sys.executable, "-c", RUN, str(tasks), str(out)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    text = proc.stdout.read().decode() if proc.stdout else ""
    if os.waitstatus_to_exitcode(status):
        err = proc.stderr.read().decode() if proc.stderr else ""
        raise SystemExit(f"run of {tasks} tasks failed:\n{err[-2000:]}")
    ran, end, used, free = text.split()[-4:]
    cpu = usage.ru_utime + usage.ru_stime
    return int(ran), usage.ru_maxrss / 1024, float(end), cpu, float(used), float(free)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", default="25,250", help="two task counts (× 4 designs)")
    ap.add_argument("--baseline-ref", default=BASELINE_REF, help="git commit of the old code")
    args = ap.parse_args()
    small, large = (int(x) for x in args.tasks.split(","))
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as tmp:
        work = Path(tmp)
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", args.baseline_ref, "src"],
            check=True,
            capture_output=True,
        ).stdout
        (work / "old").mkdir()
        subprocess.run(["tar", "-x", "-C", str(work / "old")], input=archive, check=True)
        codes = [(f"old ({args.baseline_ref})", work / "old" / "src"), ("this code", ROOT / "src")]
        print(
            f"{'code':16} {'episodes':>8} {'peak RSS MB':>12} {'end RSS MB':>11} {'CPU s':>7} "
            f"{'malloc used/free MB':>20}"
        )
        for label, src in codes:
            rows = []
            for tasks in (small, large):
                t0 = time.perf_counter()
                n, peak, end, cpu, used, free = measure(src, tasks, work / f"{label[:3]}-{tasks}")
                rows.append((n, peak, end))
                wall = time.perf_counter() - t0
                print(
                    f"{label:16} {n:8d} {peak:12.1f} {end:11.1f} {cpu:7.1f} "
                    f"{used:11.1f} / {free:5.1f}  ({wall:.0f} s)"
                )
            (n1, p1, e1), (n2, p2, e2) = rows
            print(
                f"{label:16} per episode: peak {1024 * (p2 - p1) / (n2 - n1):+.1f} kB, "
                f"end {1024 * (e2 - e1) / (n2 - n1):+.1f} kB",
                flush=True,
            )


if __name__ == "__main__":
    main()
