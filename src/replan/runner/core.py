"""The experiment runner: episodes × designs × models × seeds, concurrently, resumable.

Each job is one episode. The local backend runs jobs as asyncio tasks under a semaphore (model
calls and tools are the only waits); another backend (Ray) plugs in through :class:`Backend`.
Every finished episode is scored and committed to the results store at once, so a killed run
loses only the episodes in flight and rerunning the same command skips what is done.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from replan.core.redact import redact, redact_url, redact_value
from replan.core.task import Task
from replan.core.trace import FAILURE_END_REASONS, EndReason, Episode
from replan.runner.store import (
    FeedbackRow,
    ResultsStore,
    WriterLock,
    episode_key,
)

DEFAULT_DESIGNS = ("react", "plan_conditioned", "dual_loop", "replanner_loop")
DEFAULT_MODEL = "simulated:competent"
#: suites whose instances start at a replan point (the previous plan and the last wave's results)
REPLAN_POINT_SUITES = ("pararecover", "pararecover-synth")
#: seconds one episode may take before it is abandoned and recorded as ``timeout``
DEFAULT_EPISODE_TIMEOUT_S = 900.0
#: RunConfig fields that do not change results (left out of the experiment id)
OPERATIONAL_FIELDS = ("concurrency", "episode_timeout_s", "model_timeout_s")


@dataclass
class RunConfig:
    """Everything that defines an experiment (and so its id, which resume relies on)."""

    suite: str = "toolmaze"
    agents: list[str] = field(default_factory=lambda: list(DEFAULT_DESIGNS))
    models: list[str] = field(default_factory=lambda: [DEFAULT_MODEL])
    seeds: int = 1
    limit: int | None = None
    filter: list[str] = field(default_factory=list)  # e.g. ["C2", "P3"]
    per_cell: int = 3  # stratified default subset: tasks per C × P cell
    prompt: str = "standard"  # or "hint" (ToolMaze's failure-aware prompt)
    suite_options: dict[str, Any] = field(default_factory=dict)
    budgets: dict[str, Any] = field(default_factory=dict)
    concurrency: int = 4
    base_url: str | None = None
    agent_factory: str | None = None  # "module:function" for a user agent
    #: hard wall-clock deadline of one episode, user code included (``None``: none)
    episode_timeout_s: float | None = DEFAULT_EPISODE_TIMEOUT_S
    #: seconds per model request (``None``: $REPLAN_MODEL_TIMEOUT or the providers' default)
    model_timeout_s: float | None = None

    def experiment_id(self) -> str:
        """What the results depend on, hashed: not how fast or how long they may take, nor a
        credential inside ``base_url``."""
        ident = {k: v for k, v in asdict(self).items() if k not in OPERATIONAL_FIELDS}
        ident = redact_value(ident, redact_url)  # not environment-dependent
        return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Job:
    task: Task
    design: str
    model: str
    seed: int

    @property
    def key(self) -> str:
        return episode_key(self.task.task_id, self.design, self.model, self.seed)


OnDone = Callable[[Job, Episode], None]


class Backend(Protocol):
    """Runs jobs with :func:`run_job` and calls ``on_done(job, episode)`` as each finishes (in any
    order, in the driver's process: the driver alone writes the store)."""

    async def run(
        self, jobs: Sequence[Job], cfg: RunConfig, agent: Callable[..., Any] | None, on_done: OnDone
    ) -> None: ...


class LocalBackend:
    """asyncio tasks under a semaphore of ``concurrency``, in this process."""

    def __init__(self, concurrency: int = 4):
        self.concurrency = max(1, concurrency)

    async def run(
        self, jobs: Sequence[Job], cfg: RunConfig, agent: Callable[..., Any] | None, on_done: OnDone
    ) -> None:
        sem = asyncio.Semaphore(self.concurrency)

        async def one(job: Job) -> None:
            async with sem:
                ep = await run_job(job, cfg, agent)
            on_done(job, ep)

        await asyncio.gather(*(one(j) for j in jobs))


def failed_episode(job: Job, reason: EndReason, error: str) -> Episode:
    """The record of an episode that could not run: kept, counted as a failure, never dropped."""
    return Episode(
        episode_id=job.key,
        task_id=job.task.task_id,
        suite=job.task.suite,
        design=job.design,
        model=job.model,
        seed=job.seed,
        mode=job.task.mode,
        query=job.task.query,
        end_reason=reason,
        error=error,
        success=False,
    )


def suite_options(cfg: RunConfig) -> dict[str, Any]:
    """Generate only what the run needs: the ToolMaze generator is prefix-stable (the first k
    base tasks of a level are the same whatever the total), so a subset asks for k per level."""
    opts = dict(cfg.suite_options)
    if cfg.suite == "toolmaze" and "per_level" not in opts:
        levels = [f.upper() for f in cfg.filter if f.upper().startswith("C")]
        modes = [f.upper() for f in cfg.filter if f.upper().startswith(("P", "NP"))]
        if cfg.limit is not None:  # --limit spreads over the cells: ceil(N / cells) per cell
            cells = (len(levels) or 4) * (len(modes) or 5)
            wanted = -(-cfg.limit // cells)
        else:
            wanted = cfg.per_cell
        if wanted:
            opts["per_level"] = min(100, wanted)
        if levels:
            opts.setdefault("levels", levels)
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
    """What a suite's tasks are read from, beyond the config: each data file's path, size and
    modification time (``""`` for generated suites, which the config determines)."""
    path = cfg.suite_options.get("path")
    if not path:
        return ""
    p = Path(path)
    files = sorted(p.rglob("*.jsonl")) if p.is_dir() else [p]
    return json.dumps(
        [[str(f), f.stat().st_size, f.stat().st_mtime_ns] for f in files if f.exists()]
    )


def select_tasks(tasks: Sequence[Task], cfg: RunConfig) -> list[Task]:
    """Apply ``--filter`` (levels and/or modes), the stratified default subset and ``--limit``."""
    levels = {f for f in cfg.filter if f.upper().startswith("C")}
    modes = {f.upper() for f in cfg.filter if f.upper().startswith(("P", "NP"))}
    out = [
        t
        for t in tasks
        if (not levels or (t.level or "") in levels) and (not modes or t.mode in modes)
    ]
    if cfg.per_cell and cfg.limit is None and cfg.suite == "toolmaze":
        cells: dict[tuple[str | None, str], list[Task]] = {}
        for t in out:
            cells.setdefault((t.level, t.mode), []).append(t)
        out = [t for cell in sorted(cells, key=str) for t in cells[cell][: cfg.per_cell]]
    if cfg.limit is not None:
        out = round_robin_cells(out, cfg.limit)
    return out


def make_jobs(tasks: Iterable[Task], cfg: RunConfig) -> list[Job]:
    """One job per model × design × task × seed; the model label carries the prompt variant
    (``simulated:competent+hint``) so that a hint run is never mistaken for a standard one."""
    return [
        Job(t, d, model_with_prompt(m, cfg.prompt), s)
        for m in cfg.models
        for d in cfg.agents
        for t in tasks
        for s in range(cfg.seeds)
    ]


def model_with_prompt(spec: str, prompt: str) -> str:
    """The model spec a job records: ``spec`` itself, or ``spec+hint`` for the hint prompt."""
    return spec if prompt == "standard" else f"{spec}+{prompt}"


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
    """Client options for a provider model (the request timeout); none for simulated/local."""
    kind = spec.partition(":")[0].strip()
    if cfg.model_timeout_s and kind not in ("simulated", "local"):
        return {"timeout": cfg.model_timeout_s}
    return {}


async def _run_job(job: Job, cfg: RunConfig, agent: Callable[..., Any] | None = None) -> Episode:
    from replan.graphs import arun_episode
    from replan.models import make_model
    from replan.runner.safety import in_daemon_thread

    spec = job.model.split("+", 1)[0]
    try:
        model = make_model(
            spec, task=job.task, seed=job.seed, base_url=cfg.base_url, **model_options(spec, cfg)
        )
    except Exception as exc:  # a model that cannot even be built fails this episode only
        return failed_episode(job, EndReason.MODEL_ERROR, redact(f"{type(exc).__name__}: {exc}"))
    try:
        faults = fault_injector(job.task)
        if job.task.suite in REPLAN_POINT_SUITES and not cfg.agent_factory:
            if job.design != "replanner_loop":
                return failed_episode(
                    job,
                    EndReason.CRASHED,
                    f"task {job.task.task_id}: {job.task.suite} instances start mid-run, at the "
                    f"replanner; run them with --agents replanner_loop (not {job.design})",
                )
            from replan.graphs.replan_point import replay_task

            ep = await in_daemon_thread(
                replay_task,
                job.task,
                model,
                design=job.design,
                seed=job.seed,
                hint=cfg.prompt == "hint",
            )
        elif cfg.agent_factory:
            from replan.graphs.custom import run_compiled_agent

            factory = agent or load_factory(cfg.agent_factory)
            ep = await in_daemon_thread(
                run_compiled_agent,
                factory,
                model,
                job.task,
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
                job.task,
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
    return ep.model_copy(update={"model": job.model, "design": job.design, "episode_id": job.key})


def episode_config(cfg: RunConfig) -> Any:
    from replan.nodes.config import AgentConfig

    return AgentConfig(hint=cfg.prompt == "hint", **cfg.budgets)


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


def score_rows(episode: Episode, task: Task) -> list[FeedbackRow]:
    """Per-episode feedback rows from the evaluators."""
    from replan.evaluators import score_episode

    return [
        FeedbackRow(
            key=f.key, score=f.score, comment=f.comment or "", value=getattr(f, "value", None)
        )
        for f in score_episode(episode, task)
    ]


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
    keys: list[str] = field(default_factory=list)  # the selected episodes' store keys
    cells: dict[str, int] = field(default_factory=dict)  # tasks per level/mode cell selected


async def arun(
    cfg: RunConfig,
    out_dir: str | Path,
    *,
    tasks: Sequence[Task] | None = None,
    backend: Backend | None = None,
    progress: Callable[[int, int, int], None] | None = None,
    agent: Callable[..., Any] | None = None,
    rerun: bool = False,
    retry_failed: bool = True,
) -> RunOutcome:
    """Run (or resume) an experiment into ``out_dir``; returns counts.

    ``agent`` is the user's ``make_agent(tools, model)`` when it is a live object (defined in a
    notebook); otherwise ``cfg.agent_factory`` names it as ``module:function``. A resume skips
    the selected episodes already stored, except infrastructure failures (model error, crash,
    timeout), which run again unless ``retry_failed`` is false; an agent's own failure is a
    result and stays. ``rerun`` runs every selected episode again (replacing only those).
    """
    from replan.suites import load_suite

    t0 = time.perf_counter()
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
            if tasks is None:
                tasks = load_suite(cfg.suite, **suite_options(cfg))
            chosen = select_tasks(tasks, cfg)
            store.ensure_experiment(exp, asdict(cfg))
            store.save_tasks(chosen)
            store.save_selection(exp, source, [t.task_id for t in chosen])
        jobs = make_jobs(chosen, cfg)
        done = set() if rerun else store.done_keys(with_failed=not retry_failed)
        todo = [j for j in jobs if j.key not in done]
        retried = len({j.key for j in todo} & store.failed_keys()) if not rerun else 0
        counts = {"done": len(jobs) - len(todo), "failures": 0}
        if progress:
            progress(counts["done"], len(jobs), 0)

        def on_done(job: Job, ep: Episode) -> None:
            try:
                rows = score_rows(ep, job.task)
            except Exception as exc:  # scoring must never lose the episode
                rows = [FeedbackRow(key="replan.scoring_error", score=None, comment=str(exc))]
            store.save_episode(exp, ep, rows, level=job.task.level)
            counts["done"] += 1
            counts["failures"] += int(ep.end_reason.value in FAILURE_END_REASONS)
            if progress:
                progress(counts["done"], len(jobs), counts["failures"])

        await (backend or LocalBackend(cfg.concurrency)).run(todo, cfg, agent, on_done)
        return RunOutcome(
            exp,
            Path(out_dir),
            len(jobs),
            len(jobs) - len(todo),
            len(todo),
            counts["failures"],
            time.perf_counter() - t0,
            retried,
            [j.key for j in jobs],
            cells_covered(chosen),
        )
    finally:
        store.close()
        lock.release()
