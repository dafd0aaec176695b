"""The experiment runner: episodes × designs × models × seeds, concurrently, resumable.

Each job is one episode. The local backend runs jobs as asyncio tasks under a semaphore of
``concurrency``; the graphs' nodes are synchronous and run in the event loop's executor, which
the backend sizes to the concurrency (Python's default pool has ``min(32, cores + 4)`` threads,
6 on two cores, whatever was asked), so ``concurrency`` episodes really wait on their model calls
at once. Per-endpoint limits (calls in flight, requests and tokens per minute, ``Retry-After``)
hold every model call of the run (:mod:`replan.runner.limits`). Another backend (Ray) plugs in
through :class:`Backend`.
Every finished episode is scored, once, and committed to the results store at once with its
feedback and records (what the summary, the report and compare read), so a killed run loses only
the episodes in flight and rerunning the same command skips what is done.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import json
import math
import sys
import threading
import time
import traceback
import weakref
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from replan.core.redact import redact
from replan.core.task import MODES, PackedTask, Task
from replan.core.trace import FAILURE_END_REASONS, EndReason, Episode
from replan.runner.options import DEFAULT_SUITE, RunOptions, default_designs
from replan.runner.store import (
    SUITE_RECORD,
    FeedbackRow,
    ResultsStore,
    WriterLock,
    episode_key,
)

if TYPE_CHECKING:
    from replan.runner.limits import LocalLimiter

#: the run's models that serve every episode (kinds marked ``shared``), by spec; set per run
SHARED_MODELS: ContextVar[dict[str, Any] | None] = ContextVar("replan_models", default=None)
#: chat model objects given as they are (``evaluate_agent(model=<chat model>)``), by their label
#: in the run's ``models``; set by :func:`arun` for its run: used in place, never copied,
#: pickled or sent to another process
GIVEN_MODELS: ContextVar[Mapping[str, Any] | None] = ContextVar("replan_given", default=None)

#: the run's options (one declaration, :mod:`replan.runner.options`); the runner's name for them
RunConfig = RunOptions


@dataclass(frozen=True)
class Job:
    """One episode to run: a task, a design, a model spec, a seed and the prompt variant.

    The task is held packed (its JSON text, :class:`~replan.core.task.PackedTask`; a
    :class:`~replan.core.task.Task` given is packed): a run holds every job from start to end,
    and is parsed where the episode is played or scored (``job.task.parse()``), in whichever
    process that is."""

    task: PackedTask
    design: str
    model: str
    seed: int
    prompt: str = "standard"

    def __post_init__(self) -> None:
        if not isinstance(self.task, PackedTask):
            object.__setattr__(self, "task", PackedTask.of(self.task))

    @property
    def label(self) -> str:
        """The model as the episode records it: the spec, or ``spec+hint`` for the hint
        prompt, so that a hint run is never mistaken for a standard one."""
        return self.model if self.prompt == "standard" else f"{self.model}+{self.prompt}"

    @property
    def key(self) -> str:
        return episode_key(self.task.task_id, self.design, self.label, self.seed)


#: an episode's feedback rows and per-run records (:func:`score_rows`)
Scored = tuple[list[FeedbackRow], dict[str, Any] | None]


class OnDone(Protocol):
    """``on_done(job, episode)``, or with the episode already scored where it ran (``scored``:
    :func:`score_rows`' result, so that worker processes share the scoring)."""

    def __call__(self, job: Job, episode: Episode, scored: Scored | None = None) -> None: ...


class Backend(Protocol):
    """Runs jobs with :func:`run_job` and calls ``on_done(job, episode)`` as each finishes (in any
    order, in the driver's process: the driver alone writes the store)."""

    async def run(
        self, jobs: Sequence[Job], cfg: RunConfig, agent: Callable[..., Any] | None, on_done: OnDone
    ) -> None: ...


#: executor threads beyond one per episode in flight (LangGraph's own short tasks)
SPARE_THREADS = 8
#: the executors this module installed, by event loop, and their sizes
_EXECUTORS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, int] = weakref.WeakKeyDictionary()


def size_executor(threads: int) -> None:
    """Give the running loop a default executor of at least ``threads`` threads.

    The graphs' synchronous nodes (every model call among them) run through the loop's default
    executor; Python sizes it ``min(32, cores + 4)``, which would cap the episodes waiting on
    their model at 6 on two cores whatever ``--concurrency`` says. Threads start only as needed.
    """
    from concurrent.futures import ThreadPoolExecutor

    loop = asyncio.get_running_loop()
    if _EXECUTORS.get(loop, 0) >= threads:
        return
    loop.set_default_executor(
        ThreadPoolExecutor(max_workers=threads, thread_name_prefix="replan-episode")
    )
    _EXECUTORS[loop] = threads


def split_batches(
    jobs: Sequence[Job], workers: int, batch_size: int | None = None, max_size: int | None = None
) -> list[list[Job]]:
    """``jobs`` in batches for ``workers`` workers: ``batch_size`` each, or about four batches
    per worker (big enough to amortise a hand-over, small enough to balance), at most
    ``max_size``."""
    size = batch_size or max(1, math.ceil(len(jobs) / max(1, workers * 4)))
    if not batch_size and max_size:
        size = min(size, max_size)
    return [list(jobs[i : i + size]) for i in range(0, len(jobs), size)]


async def play(
    jobs: Sequence[Job],
    cfg: RunConfig,
    *,
    concurrency: int,
    limiter: Any = None,
    agent: Callable[..., Any] | None = None,
    done: Callable[[int, Job, Episode], None] | None = None,
) -> list[Episode]:
    """Play ``jobs``, ``concurrency`` at a time, as every backend does in its process: executor
    threads for each episode in flight, the run's ``limiter`` on every model call, one client
    per shared model kind; ``done(index, job, episode)`` as each ends. Returns the episodes in
    job order when no ``done`` is given; with one, nothing (each episode is handed over and
    let go, so a long run's memory stays flat in its number of episodes).

    ``concurrency`` workers take the jobs in turn (not one pending task per job: 8,000 jobs
    would hold 8,000 coroutines from the start). The context variables are reset after, so a
    later run in the same context (a notebook, a long-lived worker) starts with its own
    limiter and clients.
    """
    n = max(1, concurrency)
    size_executor(n + SPARE_THREADS)
    from replan.runner.limits import LIMITER

    tokens = LIMITER.set(limiter), SHARED_MODELS.set({})
    try:
        kept: list[Episode | None] = [None] * len(jobs) if done is None else []
        todo = iter(enumerate(jobs))  # shared: each worker takes the next job

        async def worker() -> None:
            for index, job in todo:
                ep = await run_job(job, cfg, agent)
                if done is not None:
                    done(index, job, ep)
                else:
                    kept[index] = ep

        await asyncio.gather(*(worker() for _ in range(min(n, len(jobs)))))
        return [ep for ep in kept if ep is not None]
    finally:
        LIMITER.reset(tokens[0])
        SHARED_MODELS.reset(tokens[1])


class LocalBackend:
    """asyncio tasks under a semaphore of ``concurrency``, in this process; every model call of
    the run held to the run's per-endpoint limits (``limiter``, whose counts the progress line
    shows)."""

    def __init__(self, concurrency: int | None = None, limiter: LocalLimiter | None = None):
        self.concurrency = concurrency  # None: the run's ``concurrency``
        self.limiter = limiter  # made when the run starts (none needed for nothing to run)

    async def run(
        self, jobs: Sequence[Job], cfg: RunConfig, agent: Callable[..., Any] | None, on_done: OnDone
    ) -> None:
        from replan.runner.limits import LocalLimiter

        if cfg.limits().any:
            self.limiter = LocalLimiter(default=cfg.limits())
        elif self.limiter is None:
            self.limiter = LocalLimiter()
        await play(
            jobs,
            cfg,
            concurrency=self.concurrency or cfg.concurrency,
            limiter=self.limiter,
            agent=agent,
            done=lambda _, job, ep: on_done(job, ep),
        )


def call_stats(backend: Backend) -> dict[str, int]:
    """The backend's model calls now in flight, failed calls (each retried or final) and calls
    that waited for a slot, summed over every endpoint (none: the backend keeps no counts), and
    its worker processes (``workers``, when it has more than one)."""
    workers = getattr(backend, "workers", 1)
    out = {"workers": workers} if isinstance(workers, int) and workers > 1 else {}
    limiter = getattr(backend, "limiter", None)
    if limiter is None:
        return out
    stats = limiter.stats().values()
    return out | {k: sum(s[k] for s in stats) for k in ("in_flight", "failed_calls", "waits")}


def failed_episode(job: Job, reason: EndReason, error: str) -> Episode:
    """The record of an episode that could not run: kept, counted as a failure, never dropped."""
    return Episode(
        episode_id=job.key,
        task_id=job.task.task_id,
        suite=job.task.suite,
        design=job.design,
        model=job.label,
        seed=job.seed,
        mode=job.task.mode,
        query=job.task.parse().query,
        end_reason=reason,
        error=error,
        success=False,
    )


def __getattr__(name: str) -> Any:
    """``DEFAULT_DESIGNS``: the default suite's designs (kept for ``from replan.runner.experiment
    import DEFAULT_DESIGNS``; the suite's ``default_designs`` field is the one definition)."""
    if name == "DEFAULT_DESIGNS":
        return tuple(default_designs(DEFAULT_SUITE))
    raise AttributeError(f"module 'replan.runner.experiment' has no attribute {name!r}")


def filter_parts(cfg: RunConfig) -> tuple[list[str], list[str]]:
    """``--filter`` split into the suite's levels and the modes (upper-cased)."""
    from replan.suites import get_suite

    levels = get_suite(cfg.suite).levels
    tokens = [f.strip().upper() for f in cfg.filter]
    return [t for t in tokens if t in levels], [t for t in tokens if t in MODES]


def suite_options(cfg: RunConfig) -> dict[str, Any]:
    """The suite's load options for this run: the configured ones, plus what the suite's
    ``subset_options`` narrows generation to for the filter, limit and default subset."""
    from replan.suites import get_suite

    opts = dict(cfg.suite_options)
    narrow = get_suite(cfg.suite).subset_options
    if narrow is not None and "per_level" not in opts:
        levels, modes = filter_parts(cfg)
        for k, v in narrow(levels, modes, cfg.limit, cfg.per_cell).items():
            opts.setdefault(k, v)
    return opts


def round_robin_cells(tasks: Sequence[Task], limit: int) -> list[Task]:
    """At most ``limit`` tasks taken one per (level, mode) cell in turn, so that every cell is
    represented once ``limit`` reaches the number of cells (ToolMaze's figures average over the
    C × P cells); order within a cell kept."""
    cells: dict[tuple[str, str], list[Task]] = {}
    for t in tasks:
        cells.setdefault((t.level or "-", t.mode or "NP"), []).append(t)
    # cell order: each next cell the one whose level and mode were taken least so far, so that
    # a limit below the number of cells still spreads over the levels and the modes
    order: list[tuple[str, str]] = []
    used: Counter[str] = Counter()
    left = sorted(cells)
    while left:
        nxt = min(left, key=lambda c: used["L" + c[0]] + used["M" + c[1]])
        left.remove(nxt)
        order.append(nxt)
        used.update(("L" + nxt[0], "M" + nxt[1]))
    queues = [cells[k] for k in order]
    out: list[Task] = []
    depth = 0
    while len(out) < limit and any(depth < len(q) for q in queues):
        for q in queues:
            if depth < len(q) and len(out) < limit:
                out.append(q[depth])
        depth += 1
    return out


def cells_covered(tasks: Sequence[Task]) -> dict[str, int]:
    """``{"C1/NP": 2, ...}``: how many of ``tasks`` fall in each level × mode cell."""
    out: dict[str, int] = {}
    for t in tasks:
        key = f"{t.level or '-'}/{t.mode or 'NP'}"
        out[key] = out.get(key, 0) + 1
    return dict(sorted(out.items()))


def suite_source(cfg: RunConfig) -> str:
    """What a suite's tasks are read from, beyond the config: the suite's pinned version and
    digest, and each data file's path, size and modification time. A stored selection is reused
    only while this is unchanged, so a new suite version is loaded (and checked against the
    store) instead of resumed."""
    from replan.suites import suite_versions

    pin = suite_versions().get(cfg.suite, {})
    path = cfg.suite_options.get("path")
    files: list[Path] = []
    if path:
        p = Path(path)
        files = sorted(p.rglob("*.jsonl")) if p.is_dir() else [p]
    return json.dumps(
        {
            "version": pin.get("version"),
            "digest": pin.get("digest"),
            "files": [
                [str(f), f.stat().st_size, f.stat().st_mtime_ns] for f in files if f.exists()
            ],
        }
    )


def select_tasks(tasks: Sequence[Task], cfg: RunConfig) -> list[Task]:
    """Apply ``--filter`` (levels and/or modes), the stratified default subset and ``--limit``."""
    from replan.suites import get_suite

    levels, modes = filter_parts(cfg)
    out = [
        t
        for t in tasks
        if (not levels or (t.level or "").upper() in levels) and (not modes or t.mode in modes)
    ]
    stratifier = get_suite(cfg.suite).stratifier
    if cfg.per_cell and cfg.limit is None and stratifier is not None:
        out = stratifier(out, cfg.per_cell)
    if cfg.limit is not None:
        out = round_robin_cells(out, cfg.limit)
    return out


def held_packed(tasks: list[Task]) -> list[PackedTask]:
    """``tasks`` packed, to be held for a whole run, and emptied of the parsed ones: ``tasks``
    is cleared (the caller holds no other reference) and its memory handed back before the
    packed tasks' names are allocated, so that none of them sits in (and keeps from the
    system) a page the parsed tasks filled; the whole ``toolmaze-guided`` suite parsed is
    146 MB, and a driver whose jobs had been made while it was alive stayed 120 MB larger.
    Each task is parsed once more for its names (about 0.1 ms)."""
    data = [PackedTask.dump(t) for t in tasks]
    tasks.clear()
    gc.collect()
    if (trim := _malloc_trim()) is not None:
        trim(0)
    return [PackedTask.load(d) for d in data]


def make_jobs(tasks: Iterable[Task | PackedTask], cfg: RunConfig) -> list[Job]:
    """One job per model × task × seed × design, in that order (each with the run's prompt
    variant, :attr:`Job.label`). Task-major order: a run stopped part way (a slow real model, a deadline) has
    every design on the same tasks, but for the few tasks that were in flight (concurrency,
    workers), so what it stored compares designs like for like."""
    packed = [PackedTask.of(t) for t in tasks]  # one text per task, shared by its jobs
    return [
        Job(t, d, m, s, cfg.prompt)
        for m in cfg.models
        for t in packed
        for s in range(cfg.seeds)
        for d in cfg.agents
    ]


async def run_job(job: Job, cfg: RunConfig, agent: Callable[..., Any] | None = None) -> Episode:
    """Run one episode; any failure becomes a stored failed episode naming the task.

    The episode runs under ``cfg.episode_timeout_s``: past it, it is abandoned (user code in its
    daemon thread is left behind) and recorded with the end reason ``timeout``.
    """
    if not cfg.episode_timeout_s:
        return await _run_job(job, cfg, agent)
    try:
        return await asyncio.wait_for(_run_job(job, cfg, agent), cfg.episode_timeout_s)
    except TimeoutError:
        return failed_episode(
            job,
            EndReason.TIMEOUT,
            f"task {job.task.task_id}, design {job.design}: no result within the episode "
            f"deadline of {cfg.episode_timeout_s:g} s (--episode-timeout); abandoned",
        )


def model_options(spec: str, cfg: RunConfig) -> dict[str, Any]:
    """Client options for a model whose kind takes a request timeout (providers)."""
    from replan.models.registry import kind_of

    kind = kind_of(spec)
    if cfg.model_timeout_s and kind is not None and kind.takes_timeout:
        return {"timeout": cfg.model_timeout_s}
    return {}


def episode_model(spec: str, task: Task, seed: int, cfg: RunConfig) -> Any:
    """The model of one episode: built for it, or the run's one client of a ``shared`` kind
    (a provider: building its client costs more than many episodes' own work, and one client
    keeps one connection pool)."""
    from replan.models import make_model
    from replan.models.registry import kind_of

    given = GIVEN_MODELS.get()
    if given is not None and spec in given:
        return given[spec]
    kind = kind_of(spec)
    shared = SHARED_MODELS.get()
    key = f"{spec} {cfg.base_url}"
    if kind is not None and kind.shared and shared is not None and key in shared:
        return shared[key]
    model = make_model(
        spec, task=task, seed=seed, base_url=cfg.base_url, **model_options(spec, cfg)
    )
    if kind is not None and kind.shared and shared is not None:
        shared[key] = model
    return model


async def _run_job(job: Job, cfg: RunConfig, agent: Callable[..., Any] | None = None) -> Episode:
    from replan.graphs import arun_episode, design_names, get_design
    from replan.runner.safety import in_daemon_thread

    spec = job.model
    task = job.task.parse()  # parsed for this episode only; the run holds it packed
    try:
        model = episode_model(spec, task, job.seed, cfg)
    except Exception as exc:  # a model that cannot even be built fails this episode only
        return failed_episode(job, EndReason.MODEL_ERROR, redact(f"{type(exc).__name__}: {exc}"))
    from replan.runner.limits import LIMITER, limit_model

    limiter = LIMITER.get()
    # a model object of the user's own is counted only where limits were asked for: the
    # counting callbacks would otherwise stay on the user's object after the run
    given = spec in (GIVEN_MODELS.get() or {})
    if limiter is not None and (not given or cfg.limits().any):
        try:
            model = limit_model(
                model,
                limiter,
                spec,
                strict=cfg.limits().any,
                max_wait_s=cfg.episode_timeout_s,  # past it nobody waits for the answer
            )
        except ValueError as exc:
            return failed_episode(job, EndReason.MODEL_ERROR, str(exc))
    try:
        faults = fault_injector(task)
        point = task.replan_point
        if point is not None and point.starts_mid_run and not cfg.agent_factory:
            if not get_design(job.design).replans:
                replanners = [d for d in design_names() if get_design(d).replans]
                return failed_episode(
                    job,
                    EndReason.CRASHED,
                    f"task {task.task_id}: {task.suite} instances start mid-run, at the "
                    f"replanner; run them with --agents {','.join(replanners)} "
                    f"(not {job.design})",
                )
            ep = await arun_episode(
                job.design, model, task, seed=job.seed, config=episode_config(cfg)
            )
        elif cfg.agent_factory:
            from replan.graphs.custom import run_compiled_agent

            factory = agent or load_factory(cfg.agent_factory)
            ep = await in_daemon_thread(
                run_compiled_agent,
                factory,
                model,
                task,
                faults=faults,
                seed=job.seed,
                config=episode_config(cfg),
                design=job.design,
                episode_id=job.key,
            )
        else:
            ep = await arun_episode(
                job.design,
                model,
                task,
                faults=faults,
                seed=job.seed,
                config=episode_config(cfg),
            )
    except Exception as exc:
        tb = traceback.format_exc(limit=3)
        return failed_episode(
            job,
            EndReason.CRASHED,
            redact(
                f"task {job.task.task_id}, design {job.design}: {type(exc).__name__}: {exc}\n{tb}"
            ),
        )
    return ep.model_copy(update={"model": job.label, "design": job.design, "episode_id": job.key})


def episode_config(cfg: RunConfig) -> Any:
    """The agents' configuration: the suite's protocol budgets (ParaRecover's one replan),
    under the run's own."""
    from replan.nodes.config import AgentConfig
    from replan.suites import SUITES

    found = SUITES.find(cfg.suite)
    protocol = dict(found.budgets) if found is not None else {}
    return AgentConfig(hint=cfg.prompt == "hint", **{**protocol, **cfg.budgets})


def fault_injector(task: Task) -> Any:
    if task.perturbation is None or task.mode == "NP":
        return None
    from replan.env.perturb import injector_for

    return injector_for(task)


def load_factory(spec: str) -> Callable[..., Any]:
    """Import ``module:function`` (the user's ``make_agent(tools, model)``); a mistake raises
    one-line :class:`~replan.runner.preflight.PreflightError` (a ``ValueError``)."""
    from replan.runner.preflight import load_agent_factory

    return load_agent_factory(spec)


#: the experiment record's key for where every design, metric, suite and model kind came from
PROVENANCE_RECORD = "provenance"


def provenance(cfg: RunConfig) -> dict[str, dict[str, dict[str, str | None]]]:
    """Which module (and installed package, with its version) supplied each design, metric
    family, suite and model kind this run uses: recorded with the experiment, so that a table
    made with a plugin (or another version of one) says so."""
    from replan.core.registry import module_origin
    from replan.evaluators.metric import METRICS
    from replan.graphs.registry import DESIGN_REGISTRY
    from replan.models.registry import MODEL_KINDS, kind_of
    from replan.suites import SUITES

    if cfg.agent_factory:  # the user's own agent: its factory's module
        module = cfg.agent_factory.partition(":")[0]
        designs = {d: module_origin(module) for d in cfg.agents}
    else:
        designs = {d: DESIGN_REGISTRY.origin(d) for d in cfg.agents}
    kinds = {k.name for m in cfg.models if (k := kind_of(m)) is not None}
    return {
        "designs": designs,
        "metrics": {name: METRICS.origin(name) for name in METRICS.names()},
        "suite": {cfg.suite: SUITES.origin(cfg.suite)} if cfg.suite in SUITES else {},
        "model_kinds": {k: MODEL_KINDS.origin(k) for k in sorted(kinds)},
    }


#: episodes scored or stored in one process between two hand-backs of freed heap memory to
#: the system
TRIM_EVERY = 100
_scored_here = [0]


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim`` (``None`` on another C library)."""
    import ctypes
    import ctypes.util

    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


def note_episode_done() -> None:
    """Every :data:`TRIM_EVERY` episodes scored or stored here, hand the heap's free pages back
    to the system: glibc keeps what an episode freed in its arenas, and a run process grew by
    ~20 kB per episode of it (issue 32 §5: 201 -> 182 MB RSS after 1,000 episodes, flat from
    ~350 on; a call costs about a millisecond). Called where a worker scores an episode and
    where the driver stores one."""
    _scored_here[0] += 1
    if _scored_here[0] % TRIM_EVERY == 0 and (trim := _malloc_trim()) is not None:
        trim(0)


def score_rows(
    episode: Episode, task: Task, timeout_s: float | None = None
) -> tuple[list[FeedbackRow], dict[str, Any]]:
    """The one scoring of an episode: its feedback rows and its per-run records (stored together
    with :func:`~replan.evaluators.scoring_stamp`).

    With ``timeout_s`` (the episode's deadline) the scoring runs in a daemon thread and is
    abandoned past it, raising :class:`ScoringTimeout` (the caller keeps the episode and records
    why it has no scores); the thread waiting meanwhile holds no lock, so the progress line and
    Ctrl-C stay live.
    """
    if not timeout_s:
        from replan.evaluators import score_one

        scored = score_one(episode, task)
        note_episode_done()
        return [FeedbackRow.of(f) for f in scored.feedback()], scored.records()
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["rows"] = score_rows(episode, task)
        except BaseException as exc:  # handed to the caller below
            box["error"] = exc

    worker = threading.Thread(target=target, name="replan-scoring", daemon=True)
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        raise ScoringTimeout(
            f"task {task.task_id}: scoring did not finish within the episode deadline of "
            f"{timeout_s:g} s (--episode-timeout); abandoned, the episode is kept unscored"
        )
    if "error" in box:
        raise box["error"]
    return box["rows"]


class ScoringTimeout(RuntimeError):
    """Scoring an episode took longer than the episode's deadline (and was abandoned)."""


def unscored(exc: BaseException) -> Scored:
    """What an episode whose scoring failed stores: one ``replan.scoring_error`` row saying why,
    and no records (so a later ``replan score`` scores it again)."""
    return [FeedbackRow(key="replan.scoring_error", score=None, comment=str(exc))], None


@dataclass
class RunOutcome:
    experiment_id: str
    out_dir: Path
    total: int
    skipped: int
    ran: int
    failures: int
    wall_s: float
    retried: int = 0  # of ``ran``: infrastructure failures of an earlier run, run again
    restored: int = 0  # of ``skipped``: taken from the archive (stored now, not run)
    keys: list[str] = field(default_factory=list)  # the selected episodes' store keys
    cells: dict[str, int] = field(default_factory=dict)  # tasks per level/mode cell selected
    #: the suite the tasks came from (name, version, digest) and the selection (tasks, digest)
    suite: dict[str, Any] = field(default_factory=dict)


def _from_archive(
    archive: str | Path,
    store: ResultsStore,
    jobs: list[Job],
    todo: list[Job],
    cfg: RunConfig,
    store_episode: Callable[[Job, Episode], None],
    rerun: bool,
    retry_failed: bool,
    warn: Callable[[str], None] | None,
) -> tuple[list[Job], int]:
    """The archive's part of :func:`arun`: add the selection's stored episodes it lacks, store
    the episodes of ``todo`` it answers; returns the jobs left to run and how many it answered."""
    from replan.runner import archive as archives

    say = warn or (lambda text: print(text, file=sys.stderr))
    archived, errors = archives.read_archive(archive)
    for err in errors:
        say(f"{err} (skipped: that episode runs again)")
    left = {j.key for j in todo}
    stored = store.episodes_by_key(j.key for j in jobs if j.key not in left)
    archives.add_missing(archive, archived, stored.values())
    if rerun:
        return todo, 0
    taken, rest = archives.take_archived(
        archived,
        todo,
        budgets=episode_config(cfg).budgets(),
        retry_failed=retry_failed,
        warn=say,
    )
    for job, episode in taken:
        store_episode(job, episode)
    return rest, len(taken)


async def arun(
    cfg: RunConfig,
    out_dir: str | Path | None = None,
    *,
    tasks: Sequence[Task] | None = None,
    backend: Backend | None = None,
    progress: Callable[..., None] | None = None,
    agent: Callable[..., Any] | None = None,
    warn: Callable[[str], None] | None = None,
    models: Mapping[str, Any] | None = None,
    check: Callable[[], Any] | None = None,
) -> RunOutcome:
    """Run (or resume) an experiment into ``out_dir`` (default ``cfg.out``); returns counts.

    ``agent`` is the user's ``make_agent(tools, model)`` when it is a live object (defined in a
    notebook); otherwise ``cfg.agent_factory`` names it as ``module:function``. A resume skips
    the selected episodes already stored, except infrastructure failures (model error, crash,
    timeout), which run again unless ``cfg.retry_failed`` is false; an agent's own failure is a
    result and stays. Without ``cfg.resume`` every selected episode runs again (replacing only
    those). ``cfg.archive`` is an Episode JSON Lines file every finished episode is appended to
    before it is stored, and that answers the episodes it holds (:mod:`replan.runner.archive`);
    ``warn`` gets its one-line notes (default: stderr). ``backend`` default: this process
    (:class:`LocalBackend`; :func:`replan.runner.backends.make_backend` builds the others).
    ``progress(done, total, failures, call_stats)`` is called at the start and as each episode
    ends; ``call_stats()`` sums the backend's model-call counts over every endpoint
    (:func:`call_stats`). ``models`` maps labels in ``cfg.models`` to chat model objects used
    as they are (:data:`GIVEN_MODELS`; in this process only). ``check()`` (the run's checks,
    raising on a mistake) is called before anything is written, and only when there is
    something to do: a rerun with every episode stored checks nothing (it starts at once).
    """
    from replan.suites import load_suite, suite_digest, suite_identity
    from replan.suites.versions import custom_identity

    t0 = time.perf_counter()
    out_dir = Path(cfg.out if out_dir is None else out_dir)
    rerun, retry_failed, archive = not cfg.resume, cfg.retry_failed, cfg.archive
    if backend is None:  # worker processes and Ray: replan.runner.backends.make_backend(cfg)
        if cfg.backend != "local" or cfg.workers != 1:
            raise ValueError(
                f"arun runs in this process without a backend; for backend={cfg.backend!r}, "
                f"workers={cfg.workers} pass backend=make_backend(cfg) "
                "(replan.runner.backends)"
            )
        backend = LocalBackend()
    if models and not isinstance(backend, LocalBackend):
        raise ValueError(
            f"a model object ({', '.join(models)}) runs only in this process, not on the "
            f"{type(backend).__name__}: give a model spec string instead"
        )
    if archive is not None:
        from replan.runner import archive as archives

        archives.check_archive(archive)  # before the store is touched
    if check is not None and not (out_dir / ResultsStore.FILENAME).exists():
        check()  # a new store: nothing is created before the checks pass
        check = None
    lock = WriterLock(out_dir).acquire()  # one writer per store: a second run stops here
    try:
        store = ResultsStore(out_dir)  # a corrupt store stops here, before anything is written
    except BaseException:
        lock.release()
        raise
    exp = cfg.experiment_id()
    try:
        source = suite_source(cfg)
        # a resume takes the experiment's selection from the store instead of generating the
        # suite again (seconds for ToolMaze), unless its data file changed since
        chosen = store.selection(exp, source) if tasks is None and not rerun else None
        if chosen is None:
            if check is not None:  # a new experiment: checked before anything is recorded
                check()
                check = None
            if tasks is None:
                opts = suite_options(cfg)
                tasks = load_suite(cfg.suite, **opts)
                ident = suite_identity(cfg.suite, tasks, opts)
            else:
                ident = custom_identity(cfg.suite, tasks)
            chosen = select_tasks(tasks, cfg)
            # the suite's identity and the selection's, recorded with the experiment; a store
            # holding another version of the suite (or another definition of a task) stops here
            suite = {**ident, "tasks": len(chosen), "tasks_digest": suite_digest(chosen)}
            store.check_tasks(chosen)
            store.ensure_experiment(
                exp, {**cfg.record(), SUITE_RECORD: suite, PROVENANCE_RECORD: provenance(cfg)}
            )
            store.save_tasks(chosen)
            store.save_selection(exp, source, [t.task_id for t in chosen])
        else:
            suite = store.suite_record(exp)
        cells = cells_covered(chosen)
        tasks = None  # the suite loaded here goes with the selection's parsed tasks (a
        # caller's own list stays the caller's)
        jobs = make_jobs(held_packed(chosen), cfg)
        done = set() if rerun else store.done_keys(with_failed=not retry_failed)
        todo = [j for j in jobs if j.key not in done]
        if todo and check is not None:  # a resume with something left to run
            check()

        def stamp() -> str:
            from replan.evaluators import scoring_stamp

            return scoring_stamp()

        def store_episode(job: Job, ep: Episode, scored: Scored | None = None) -> None:
            try:
                rows, records = scored or score_rows(ep, job.task.parse(), cfg.episode_timeout_s)
            except Exception as exc:  # scoring must never lose the episode
                rows, records = unscored(exc)
            store.save_episode(exp, ep, rows, level=job.task.level, records=records, stamp=stamp())

        restored = 0
        if archive is not None:
            todo, restored = _from_archive(
                archive, store, jobs, todo, cfg, store_episode, rerun, retry_failed, warn
            )
        retried = len({j.key for j in todo} & store.failed_keys()) if not rerun else 0
        counts = {"done": len(jobs) - len(todo), "failures": 0}
        stats = functools.partial(call_stats, backend)
        if progress:
            progress(counts["done"], len(jobs), 0, stats)

        def on_done(job: Job, ep: Episode, scored: Scored | None = None) -> None:
            if archive is not None:  # first: a kill between the two loses neither copy
                archives.append_episode(archive, ep)
            store_episode(job, ep, scored)
            note_episode_done()
            counts["done"] += 1
            counts["failures"] += int(ep.end_reason.value in FAILURE_END_REASONS)
            if progress:
                progress(counts["done"], len(jobs), counts["failures"], stats)

        token = GIVEN_MODELS.set(dict(models)) if models else None
        try:
            if todo:
                await backend.run(todo, cfg, agent, on_done)
        finally:
            if token is not None:
                GIVEN_MODELS.reset(token)
        return RunOutcome(
            exp,
            Path(out_dir),
            len(jobs),
            len(jobs) - len(todo),
            len(todo),
            counts["failures"],
            time.perf_counter() - t0,
            retried,
            restored,
            [j.key for j in jobs],
            cells,
            suite,
        )
    finally:
        store.close()
        lock.release()
