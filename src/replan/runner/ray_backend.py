"""Run episodes on a Ray cluster (extra ``ray``): ``replan run --backend ray [--address ...]``.

Jobs travel as Ray tasks in batches sized to keep every worker busy; a batch is retried by Ray
when its worker dies (``max_retries``), and the driver alone writes the SQLite store as batches
finish, so resume, reports and the kill-and-resume guarantee are the same as locally. Model
clients are built on the workers from the model spec (``make_model``), so no API key travels in
a task payload: keys come from the workers' environment.

Rate limits are per endpoint, not per worker: :class:`EndpointLimiter` is one Ray actor per
run, the very limiter the local backend keeps in-process
(:class:`replan.runner.limits.LocalLimiter`: calls in flight, requests and tokens per minute,
``Retry-After`` pauses); every model call on every worker asks it for a slot through the same
callbacks (:class:`replan.runner.limits.LimitCallbacks`).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from typing import Any

from replan.core.trace import EndReason, Episode
from replan.runner.experiment import (
    Job,
    OnDone,
    RunConfig,
    failed_episode,
    play,
    split_batches,
)
from replan.runner.limits import Limits, LocalLimiter
from replan.runner.safety import run_abandoning_threads


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:  # the extra is optional
        raise ImportError(
            "the Ray backend needs the 'ray' extra: pip install 'replan[ray]'"
        ) from exc
    return ray


#: the run's per-endpoint budgets for the whole cluster, as a Ray actor: the very limiter the
#: local backend keeps in-process (its lock is uncontended there: an actor's methods run one
#: at a time)
EndpointLimiter = LocalLimiter


class ActorLimiter:
    """A worker's handle on the cluster's :class:`EndpointLimiter` (the ``Limiter`` protocol;
    called from the threads where model calls start, so it blocks on the actor's answer)."""

    def __init__(self, actor: Any):
        self.actor = actor

    def try_acquire(self, endpoint: str) -> float:
        return float(_ray().get(self.actor.try_acquire.remote(endpoint)))

    def release(self, endpoint: str, tokens: int, failed: bool) -> None:
        _ray().get(self.actor.release.remote(endpoint, tokens, failed))

    def pause(self, endpoint: str, seconds: float) -> None:
        _ray().get(self.actor.pause.remote(endpoint, seconds))

    def waited(self, endpoint: str, seconds: float) -> None:
        self.actor.waited.remote(endpoint, seconds)


def kill_if_chaos(jobs: list[Job]) -> None:
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
    kill_if_chaos(jobs)

    handle = ActorLimiter(limiter) if limiter is not None else None
    # a node thread stuck past its deadline must not hold the batch (asyncio.run joins them)
    eps = run_abandoning_threads(play(jobs, cfg, concurrency=cfg.concurrency, limiter=handle))
    return [ep.to_json() for ep in eps]


class RayBackend:
    """Ship jobs to Ray in batches; write results in the driver as they arrive."""

    def __init__(
        self,
        address: str | None = None,
        *,
        batch_size: int | None = None,
        max_retries: int = 3,
        endpoint_limits: dict[str, Limits] | None = None,
        init_kwargs: dict[str, Any] | None = None,
    ):
        self.address = address
        self.batch_size = batch_size
        self.max_retries = max_retries
        self.endpoint_limits = dict(endpoint_limits or {})
        self.init_kwargs = dict(init_kwargs or {})

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
        # one actor per run, gone with the driver: no count survives into another run. Each
        # Ray task runs --concurrency episodes, so without a limit of the user's the cluster
        # holds each endpoint to --concurrency calls at once (what --concurrency asks for)
        limits = cfg.limits()
        if not limits.any:
            limits = Limits(max_in_flight=max(1, cfg.concurrency))
        limiter = ray.remote(EndpointLimiter).remote(self.endpoint_limits, limits)
        remote = ray.remote(max_retries=self.max_retries, retry_exceptions=False)(run_batch)
        pending = {}
        for batch in split_batches(jobs, workers, self.batch_size):
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
