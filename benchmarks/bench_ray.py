"""Episodes per second: local asyncio backend vs the Ray backend on this machine.

Same jobs, same simulated model, fresh stores; prints both rates and the Ray/local ratio. On one
small machine Ray can only add overhead (process start, serialisation, scheduling); its value is
on a cluster, where the same command spreads batches over every node.

    .venv/bin/python benchmarks/bench_ray.py [--limit 40] [--cpus 2]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from replan.runner.experiment import LocalBackend, RunConfig, arun


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=40)
    ap.add_argument("--cpus", type=int, default=2)
    ns = ap.parse_args()
    import ray

    cfg = RunConfig(limit=ns.limit, concurrency=4)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        out = asyncio.run(arun(cfg, Path(tmp) / "local", backend=LocalBackend(4)))
        t_local = time.perf_counter() - t0
        from replan.runner.ray_backend import RayBackend

        t0 = time.perf_counter()
        ray.init(num_cpus=ns.cpus, include_dashboard=False, log_to_driver=False)
        t_init = time.perf_counter() - t0
        t0 = time.perf_counter()
        asyncio.run(arun(cfg, Path(tmp) / "ray", backend=RayBackend()))
        t_ray = time.perf_counter() - t0
        ray.shutdown()
    n = out.total
    print(f"episodes: {n}")
    print(f"local backend: {n / t_local:.1f} episodes/s ({t_local:.1f} s)")
    print(
        f"ray backend:   {n / t_ray:.1f} episodes/s ({t_ray:.1f} s, plus {t_init:.1f} s ray.init)"
    )
    print(f"ray / local throughput: {t_local / t_ray:.2f}x")


if __name__ == "__main__":
    main()
