"""Run episodes in local worker processes: ``replan run --workers N`` (0: one per core).

With the simulated model an episode is pure Python, so one process is bound by one core; this
backend spreads batches of jobs over ``N`` long-lived worker processes (forkserver, else spawn:
no fork of a threaded driver). As with :class:`~replan.runner.ray_backend.RayBackend`, workers
run jobs and send each finished Episode back as JSON, here with its scores (scoring is a fair
share of an episode's CPU); the driver alone writes the store (``on_done``), so resume and the
kill-and-resume guarantee are the local ones.

A worker that dies (a crash, the OOM killer) costs only the episodes it had not yet sent: they
run again in a fresh worker, and after ``max_retries`` deaths they are stored as crashed. A worker
that sends nothing for longer than the episode deadline (plus a grace) is killed and its
unsent episodes are stored as timeouts, so the run never hangs.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import multiprocessing as mp
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from multiprocessing.managers import BaseManager
from typing import Any

from replan.core.trace import EndReason, Episode
from replan.models.local import CORES_ENV
from replan.runner.experiment import (
    Job,
    OnDone,
    RunConfig,
    Scored,
    ScoringTimeout,
    failed_episode,
    play,
    score_rows,
    split_batches,
    unscored,
)
from replan.runner.limits import LocalLimiter
from replan.runner.options import cpu_workers, remote_models
from replan.runner.safety import run_abandoning_threads

#: seconds a worker may stay silent beyond the episode deadline before it is deemed hung
HANG_GRACE_S = 60.0
#: the most jobs per batch: small batches balance the workers and keep messages small
MAX_BATCH = 32
#: environment variables the workers take from the driver (test fault injection)
_PASSED_ENV = ("REPLAN_CHAOS_KILL_KEY", "REPLAN_CHAOS_MARKER", "REPLAN_CHAOS_HANG_KEY")


#: imported once by the fork server, so that each worker starts with them (seconds of imports)
PRELOAD = ("replan.runner.process_backend", "replan.graphs", "replan.evaluators", "replan.models")


def _context(extra: Sequence[str] = ()) -> Any:
    """forkserver where the platform has it (a fork of a clean server process that imported
    :data:`PRELOAD` and ``extra``), else spawn."""
    if "forkserver" not in mp.get_all_start_methods():
        return mp.get_context("spawn")
    ctx = mp.get_context("forkserver")
    # no effect once this process started the server; a module that fails to import is skipped
    ctx.set_forkserver_preload([*PRELOAD, *extra])
    return ctx


def client_modules(cfg: RunConfig) -> list[str]:
    """The LangChain packages of the run's provider models, loaded once by the fork server
    instead of by every worker (about 0.6 s of CPU each for ``langchain_openai``)."""
    from replan.models.providers import PACKAGES

    if not remote_models(cfg):
        return []
    found = (PACKAGES.get(m.partition(":")[0].strip()) for m in cfg.models)
    return sorted({"langchain.chat_models", *(p.replace("-", "_") for p in found if p)})


# -- worker side -------------------------------------------------------------------------------
#: seconds between a worker's checks that its driver is still alive
DRIVER_CHECK_S = 2.0


def _end_with_driver(driver: int) -> None:
    """End this worker once the driver process is gone: a driver killed outright (SIGKILL,
    SIGTERM) cannot stop its workers, and an orphan would play its episode to the end (minutes
    of a local model's CPU, or a provider's calls) for a result nobody will store."""
    while True:
        time.sleep(DRIVER_CHECK_S)
        try:
            os.kill(driver, 0)
        except ProcessLookupError:
            os._exit(1)
        except OSError:  # it exists (owned by another user: not ours to signal)
            pass


def _worker_main(
    conn: Connection,
    cfg: RunConfig,
    env: dict[str, str],
    limiter: Any = None,
    driver: int | None = None,
) -> None:
    """A worker's life: take ``(batch_id, jobs)`` messages, answer ``("ep", batch_id, index,
    json)`` per finished episode and ``("done", batch_id)`` per batch, until ``None`` or EOF
    (or until the ``driver`` process is gone)."""
    from replan.runner.ray_backend import kill_if_chaos

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the driver's; it ends the workers
    os.environ.update(env)
    if driver is not None:
        threading.Thread(target=_end_with_driver, args=(driver,), daemon=True).start()
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):  # the driver is gone
            return
        if msg is None:
            return
        batch_id, jobs = msg
        kill_if_chaos(jobs)
        _hang_hook(jobs)
        run_abandoning_threads(_run_batch(conn, batch_id, jobs, cfg, limiter))
        conn.send(("done", batch_id))


def _hang_hook(jobs: list[Job]) -> None:
    """Fault injection for tests: with ``REPLAN_CHAOS_HANG_KEY`` naming a job key, the worker
    given that job's batch stops answering (as a worker stuck in native code would)."""
    key = os.environ.get("REPLAN_CHAOS_HANG_KEY")
    if key and any(j.key == key for j in jobs):
        time.sleep(3600)


async def _run_batch(
    conn: Connection, batch_id: int, jobs: list[Job], cfg: RunConfig, limiter: Any = None
) -> None:
    def done(index: int, job: Job, ep: Episode) -> None:
        conn.send(("ep", batch_id, index, ep.to_json(), _score(job, ep, cfg)))

    await play(jobs, cfg, concurrency=cfg.concurrency, limiter=limiter, done=done)


def _score(job: Job, ep: Episode, cfg: RunConfig) -> Scored | None:
    """The episode scored here, in the worker, so that the driver only stores it (``None``: the
    scoring failed, and the driver scores it again and records the error; a scoring past the
    episode deadline is recorded as such at once)."""
    try:
        return score_rows(ep, job.task.parse(), cfg.episode_timeout_s)
    except ScoringTimeout as exc:  # scoring it again would only wait as long again
        return unscored(exc)
    except Exception:
        return None


# -- driver side -------------------------------------------------------------------------------
@dataclass
class _Batch:
    jobs: list[Job]
    deaths: int = 0
    sent: set[int] = field(default_factory=set)  # indexes whose episode arrived
    #: the indexes of the jobs last handed to a worker (its message ``index`` maps through this)
    given: list[int] = field(default_factory=list)

    def left(self) -> list[Job]:
        return [j for i, j in enumerate(self.jobs) if i not in self.sent]


class LimiterServer(BaseManager):
    """Serves the run's one :class:`~replan.runner.limits.LocalLimiter` to its worker processes
    (what the Ray backend's limiter actor is on a cluster): every worker's model calls wait on
    the same per-endpoint budgets, one round trip to this server per call start and end."""


LimiterServer.register("LocalLimiter", LocalLimiter)


class _FinalStats:
    """The limiter's last counts, kept for the run's last progress line once its server stops."""

    def __init__(self, stats: dict[str, dict[str, Any]]):
        self._stats = stats

    def stats(self) -> dict[str, dict[str, Any]]:
        return self._stats


class _Worker:
    """One worker process, its pipe and the batch it runs."""

    def __init__(self, ctx: Any, cfg: RunConfig, env: dict[str, str], limiter: Any = None):
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(
            target=_worker_main, args=(child, cfg, env, limiter, os.getpid()), daemon=True
        )
        self.proc.start()
        child.close()
        self.batch: _Batch | None = None
        self.batch_id = -1
        self.heard = 0.0  # loop time of the last message (or of the batch's start)

    def give(self, batch_id: int, batch: _Batch, now: float) -> None:
        self.batch, self.batch_id, self.heard = batch, batch_id, now
        batch.given = [i for i in range(len(batch.jobs)) if i not in batch.sent]
        # a worker that died since its last batch: the run loop sees it dead and runs the batch
        # again elsewhere
        with contextlib.suppress(OSError):
            self.conn.send((batch_id, [batch.jobs[i] for i in batch.given]))

    def messages(self) -> list[tuple[Any, ...]]:
        """Every message waiting in the pipe (also after the worker died)."""
        out = []
        with contextlib.suppress(EOFError, OSError):
            while self.conn.poll():
                out.append(self.conn.recv())
        return out

    def stop(self, *, hard: bool = False) -> None:
        if not hard and self.proc.is_alive():
            with contextlib.suppress(OSError):
                self.conn.send(None)
            self.proc.join(timeout=2)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(timeout=2)
        self.conn.close()


class ProcessBackend:
    """Batches of jobs on ``workers`` local processes; results written by the driver. A run
    with per-endpoint limits (``--max-in-flight``, ``--rpm``, ``--tpm``) or a provider's model
    (whose ``Retry-After`` pauses every worker) holds all workers to one set of budgets
    (:class:`LimiterServer`); ``limiter`` is then its handle."""

    def __init__(
        self,
        workers: int = 0,
        *,
        batch_size: int | None = None,
        max_retries: int = 2,
    ):
        self.workers = workers if workers > 0 else cpu_workers()
        self.batch_size = batch_size
        self.max_retries = max_retries
        self.limiter: Any = None

    def _batches(self, jobs: Sequence[Job], concurrency: int) -> list[_Batch]:
        """About four batches per worker, at most MAX_BATCH jobs each (small messages), but at
        least two of a worker's waves of ``concurrency`` episodes as long as every worker gets
        one: a worker plays one batch at a time, so a smaller batch would cap the episodes it
        keeps in flight (32 a worker, whatever ``--concurrency`` asked, before)."""
        size = self.batch_size
        if not size:
            n = len(jobs)
            small = min(MAX_BATCH, math.ceil(n / (self.workers * 4)))
            size = max(1, small, min(2 * concurrency, math.ceil(n / self.workers)))
        return [_Batch(b) for b in split_batches(jobs, self.workers, size)]

    async def run(
        self, jobs: Sequence[Job], cfg: RunConfig, agent: Callable[..., Any] | None, on_done: OnDone
    ) -> None:
        """Run ``jobs`` on the workers; ``on_done`` is called here, in the driver's loop."""
        if agent is not None:
            raise ValueError(
                "worker processes need an importable agent factory (module:function), "
                "not a live object; run with one worker"
            )
        if not jobs:
            return
        loop = asyncio.get_running_loop()
        queue = deque(enumerate(self._batches(jobs, cfg.concurrency)))
        ctx = _context(client_modules(cfg))
        env = {k: os.environ[k] for k in _PASSED_ENV if k in os.environ}
        # each worker's share of the cores, for models that run threads of their own (a local
        # llama.cpp model); a share the user set stands
        env[CORES_ENV] = os.environ.get(CORES_ENV) or str(max(1, cpu_workers() // self.workers))
        # an episode, then its scoring, each within the episode deadline
        silent_s = 2 * (cfg.episode_timeout_s or math.inf) + HANG_GRACE_S
        server: LimiterServer | None = None
        # a provider's Retry-After pauses every worker: one limiter, even without limits
        if cfg.limits().any or remote_models(cfg):
            server = LimiterServer(ctx=ctx)
            server.start()
            self.limiter = server.LocalLimiter(None, cfg.limits())  # type: ignore[attr-defined]
        limiter = self.limiter if server is not None else None

        def start() -> _Worker:
            return _Worker(ctx, cfg, env, limiter)

        workers = [start() for _ in range(min(self.workers, len(queue)))]
        try:
            while True:
                for w in workers:
                    if w.batch is None and queue:
                        batch_id, batch = queue.popleft()
                        w.give(batch_id, batch, loop.time())
                busy = [w for w in workers if w.batch is not None]
                if not busy:
                    return
                waits = [w.conn for w in busy] + [w.proc.sentinel for w in busy]
                await asyncio.to_thread(wait, waits, 1.0)
                now = loop.time()
                for i, w in enumerate(workers):
                    if w.batch is None:
                        continue
                    self._take(w, w.messages(), on_done, now)
                    if w.batch is None:
                        continue
                    if not w.proc.is_alive():
                        self._take(w, w.messages(), on_done, now)  # what it sent before dying
                        self._lost(w, queue, on_done, "the worker process died")
                        workers[i] = start()
                    elif now - w.heard > silent_s:
                        self._hung(w, on_done, silent_s)
                        w.stop(hard=True)
                        workers[i] = start()
        finally:
            for w in workers:
                w.stop(hard=w.batch is not None)
            if server is not None:
                with contextlib.suppress(Exception):  # the counts are only for the last line
                    self.limiter = _FinalStats(self.limiter.stats())
                server.shutdown()

    @staticmethod
    def _take(w: _Worker, msgs: list[tuple[Any, ...]], on_done: OnDone, now: float) -> None:
        """Hand each arrived episode of ``w``'s batch to ``on_done``; free ``w`` at its end."""
        for msg in msgs:
            if w.batch is None or msg[1] != w.batch_id:
                continue
            w.heard = now
            if msg[0] == "ep":
                index = w.batch.given[msg[2]]
                w.batch.sent.add(index)
                on_done(w.batch.jobs[index], Episode.from_json(msg[3]), msg[4])
            elif msg[0] == "done":
                w.batch = None

    def _lost(self, w: _Worker, queue: deque, on_done: OnDone, why: str) -> None:
        """``w`` died with its batch unfinished: run the rest again, or record it as crashed."""
        batch, w.batch = w.batch, None
        assert batch is not None
        batch.deaths += 1
        if batch.deaths <= self.max_retries:
            queue.appendleft((w.batch_id, batch))
            return
        for job in batch.left():
            on_done(
                job,
                failed_episode(
                    job,
                    EndReason.CRASHED,
                    f"task {job.task.task_id}, design {job.design}: {why} "
                    f"{batch.deaths} times while running this episode's batch",
                ),
            )

    @staticmethod
    def _hung(w: _Worker, on_done: OnDone, silent_s: float) -> None:
        batch, w.batch = w.batch, None
        assert batch is not None
        for job in batch.left():
            on_done(
                job,
                failed_episode(
                    job,
                    EndReason.TIMEOUT,
                    f"task {job.task.task_id}, design {job.design}: its worker process sent "
                    f"nothing for {silent_s:g} s; killed",
                ),
            )
