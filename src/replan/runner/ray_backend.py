"""Run episodes on a Ray cluster (extra ``ray``): ``replan run --backend ray [--address ...]``.

Jobs travel as Ray tasks in batches sized to keep every worker busy; a batch is retried by Ray
when its worker dies (``max_retries``), and the driver alone writes the SQLite store as batches
finish, so resume, reports and the kill-and-resume guarantee are the same as locally. Model
clients are built on the workers from the model spec (``make_model``), so no API key travels in
a task payload: keys come from the workers' environment.

Rate limits are per endpoint, not per worker: :class:`EndpointLimiter` is one named Ray actor
per cluster that hands out at most ``limit`` concurrent episode slots per model spec, whichever
worker asks.
"""

from __future__ import annotations

import asyncio
import math
import os
from collections.abc import Callable, Sequence
from typing import Any

from replan.core.trace import EndReason, Episode
from replan.runner.experiment import Job, OnDone, RunConfig, failed_episode, run_job


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:  # the extra is optional
        raise ImportError(
            "the Ray backend needs the 'ray' extra: pip install 'replan[ray]'"
        ) from exc
    return ray


class EndpointLimiter:
    """Cluster-wide semaphores keyed by endpoint (the model spec); a Ray actor."""

    def __init__(self, limits: dict[str, int], default: int):
        self.limits = dict(limits)
        self.default = default
        self.in_use: dict[str, int] = {}

    def acquire(self, endpoint: str) -> bool:
        limit = self.limits.get(endpoint, self.default)
        used = self.in_use.get(endpoint, 0)
        if used >= limit:
            return False
        self.in_use[endpoint] = used + 1
        return True

    def release(self, endpoint: str) -> None:
        self.in_use[endpoint] = max(0, self.in_use.get(endpoint, 0) - 1)

    def peak(self) -> dict[str, int]:
        return dict(self.in_use)


async def _limited(job: Job, cfg: RunConfig, limiter: Any) -> Episode:
    endpoint = job.model.split("+", 1)[0]
    if limiter is None:
        return await run_job(job, cfg)
    while not await limiter.acquire.remote(endpoint):
        await asyncio.sleep(0.05)
    try:
        return await run_job(job, cfg)
    finally:
        await limiter.release.remote(endpoint)


def _chaos_hook(jobs: list[Job]) -> None:
    """Fault injection for tests: with ``REPLAN_CHAOS_KILL_KEY`` naming a job key and
    ``REPLAN_CHAOS_MARKER`` a file path, the first worker to run that job's batch dies (as a lost
    node would) and leaves the marker, so Ray's retry then succeeds."""
    key, marker = os.environ.get("REPLAN_CHAOS_KILL_KEY"), os.environ.get("REPLAN_CHAOS_MARKER")
    if key and marker and not os.path.exists(marker) and any(j.key == key for j in jobs):
        with open(marker, "w") as fh:
            fh.write(key)
        os._exit(1)


def run_batch(jobs: list[Job], cfg: RunConfig, limiter: Any = None) -> list[str]:
    """Worker side: run a batch of jobs concurrently; returns Episode JSON texts in job order."""
    _chaos_hook(jobs)

    async def go() -> list[Episode]:
        sem = asyncio.Semaphore(max(1, cfg.concurrency))

        async def one(j: Job) -> Episode:
            async with sem:
                return await _limited(j, cfg, limiter)

        return await asyncio.gather(*(one(j) for j in jobs))

    return [ep.to_json() for ep in asyncio.run(go())]


class RayBackend:
    """Ship jobs to Ray in batches; write results in the driver as they arrive."""

    def __init__(
        self,
        address: str | None = None,
        *,
        concurrency: int = 4,
        batch_size: int | None = None,
        max_retries: int = 3,
        endpoint_limits: dict[str, int] | None = None,
        init_kwargs: dict[str, Any] | None = None,
    ):
        self.address = address
        self.concurrency = concurrency
        self.batch_size = batch_size
        self.max_retries = max_retries
        self.endpoint_limits = dict(endpoint_limits or {})
        self.init_kwargs = dict(init_kwargs or {})

    def _batches(self, jobs: Sequence[Job], workers: int) -> list[list[Job]]:
        # about four batches per worker: big enough to amortise a task, small enough to balance
        size = self.batch_size or max(1, math.ceil(len(jobs) / max(1, workers * 4)))
        return [list(jobs[i : i + size]) for i in range(0, len(jobs), size)]

    async def run(
        self, jobs: Sequence[Job], cfg: RunConfig, agent: Callable[..., Any] | None, on_done: OnDone
    ) -> None:
        if agent is not None:
            raise ValueError(
                "the Ray backend needs an importable agent factory (module:function), "
                "not a live object"
            )
        ray = _ray()
        if not ray.is_initialized():
            ray.init(
                address=self.address,
                ignore_reinit_error=True,
                log_to_driver=False,
                **self.init_kwargs,
            )
        workers = int(ray.cluster_resources().get("CPU", 1))
        limiter = None
        if self.endpoint_limits or cfg.concurrency:
            actor = ray.remote(EndpointLimiter).options(
                name="replan-endpoint-limiter",
                get_if_exists=True,
                lifetime="detached" if self.address else None,
            )
            limiter = actor.remote(self.endpoint_limits, max(1, cfg.concurrency))
        remote = ray.remote(max_retries=self.max_retries, retry_exceptions=False)(run_batch)
        pending = {}
        for batch in self._batches(jobs, workers):
            pending[remote.remote(batch, cfg, limiter)] = batch
        while pending:
            ready, _ = await asyncio.to_thread(ray.wait, list(pending), num_returns=1)
            for ref in ready:
                batch = pending.pop(ref)
                try:
                    texts = ray.get(ref)
                    eps = [Episode.from_json(t) for t in texts]
                except Exception as exc:  # the batch failed for good: record every episode
                    eps = [
                        failed_episode(j, EndReason.CRASHED, f"ray batch failed: {exc!r}")
                        for j in batch
                    ]
                for job, ep in zip(batch, eps, strict=True):
                    on_done(job, ep)
