"""Scoring saved Episodes: per-run records and feedback, aggregates, paired comparison.

- :func:`score_one` / :func:`score_episode` — the per-run records / :class:`Feedback` of one
  episode (what the runner stores per episode), replaying it once.
- :meth:`EpisodeScore.records` / :meth:`EpisodeScore.from_records` — the per-run records as
  data, stored beside the feedback with :func:`scoring_stamp`, so the summary, the report and
  compare aggregate stored runs without scoring them again.
- :func:`score` / :func:`score_records` — every aggregate over many episodes, keyed by metric
  name (``{"value", "low", "high", "n", "method"}``), plus per-mode / per-level tables.
- :func:`compare` / :func:`compare_scores` — two agents on the same (task, seed) pairs.

The task of an episode comes from ``tasks`` (by ``task_id``) or, when the runner embedded it,
from ``episode.metadata["task"]``. Without a task the recorded verdicts are used (see
:mod:`.prefix`).
"""

from __future__ import annotations

import functools
import hashlib
import threading
from collections import OrderedDict, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from replan.core.task import Task
from replan.core.trace import Episode, is_failure
from replan.env.world import World
from replan.evaluators.metric import EpisodeContext, Metric, metrics, paired_metrics
from replan.evaluators.prefix import (
    PrefixRecord,
    episode_verdicts,
    resolve_success,
    summarize_prefix,
    task_world_or_none,
)
from replan.evaluators.sde import SDEJudge
from replan.evaluators.stats import N_BOOT, Feedback, mcnemar, paired_bootstrap, pass_hat_k

#: the most task worlds the scorer keeps (least recently used dropped). A run meets a task's
#: episodes together (task-major jobs), and building a world again costs about as much as a
#: cache hit (2.7 against 3.1 ms per episode scored, measured), while each entry keeps its task
#: alive: in a worker process, which gets its tasks in batches, 2,048 entries held every task it
#: had played (issue 32 §5: the memory of all processes of a --workers 2 run), and 64 held
#: 4.3 MB of a worker's (``toolmaze-guided``, 64 to 73 kB a task); a worker's batch of 32 jobs
#: is 8 tasks × 4 designs
WORLD_CACHE_SIZE = 16
_WORLDS: OrderedDict[str, tuple[Task, World | None]] = OrderedDict()
_WORLDS_LOCK = threading.Lock()


def _world_for(task: Task) -> World | None:
    """The task's world (replay never mutates it), cached by task id; an entry counts only for
    the same task (another task under that id gets its own world)."""
    with _WORLDS_LOCK:
        hit = _WORLDS.get(task.task_id)
        if hit is not None and (hit[0] is task or hit[0] == task):
            _WORLDS.move_to_end(task.task_id)
            return hit[1]
    world = task_world_or_none(task)
    with _WORLDS_LOCK:
        _WORLDS[task.task_id] = (task, world)
        _WORLDS.move_to_end(task.task_id)
        while len(_WORLDS) > WORLD_CACHE_SIZE:
            _WORLDS.popitem(last=False)
    return world


def task_of(episode: Episode, tasks: Mapping[str, Task] | None) -> Task | None:
    """The episode's task: from ``tasks`` by id, else ``episode.metadata["task"]``."""
    if tasks and episode.task_id in tasks:
        return tasks[episode.task_id]
    embedded = episode.metadata.get("task")
    if embedded is None:
        return None
    try:
        return Task.model_validate(embedded)
    except Exception as exc:
        raise ValueError(
            f"episode {episode.episode_id}: metadata['task'] is not a valid Task: {exc}"
        ) from exc


def _task_map(tasks: Mapping[str, Task] | Iterable[Task] | None) -> dict[str, Task]:
    if tasks is None:
        return {}
    if isinstance(tasks, Mapping):
        return dict(tasks)
    return {t.task_id: t for t in tasks}


class EpisodeScore:
    """All per-run records of one episode, by metric family (what :func:`score` aggregates);
    each family's record is also an attribute (``s.prefix``, ``s.recovery``, ``s.sde``: the
    family's ``attribute``, see :mod:`replan.evaluators.metric`)."""

    __slots__ = ("_by_attribute", "by_metric", "episode", "task")

    def __init__(
        self,
        episode: Episode,
        task: Task | None,
        records: Mapping[str, Any],
        *,
        families: Sequence[Metric] | None = None,
    ):
        """``families``: :func:`metrics` when the caller has it (a reader of many scores)."""
        self.episode = episode
        self.task = task
        self.by_metric = dict(records)
        self._by_attribute = {
            m.attribute: self.by_metric[m.name]
            for m in (metrics() if families is None else families)
            if m.name in self.by_metric
        }

    def __getattr__(self, name: str) -> Any:
        try:
            return object.__getattribute__(self, "_by_attribute")[name]
        except KeyError:
            raise AttributeError(f"EpisodeScore has no record {name!r}") from None

    def feedback(self) -> list[Feedback]:
        """Every family's feedback on this run, families in order."""
        return [
            f
            for m in metrics()
            if m.name in self.by_metric
            for f in m.feedback(self.by_metric[m.name])
        ]

    def records(self) -> dict[str, Any]:
        """The per-run records as JSON-ready data, by family: what every aggregate needs of this
        run, stored at scoring time so that summaries never replay the episode again."""
        return {
            m.name: m.dump(self.by_metric[m.name]) for m in metrics() if m.name in self.by_metric
        }

    @classmethod
    def from_records(
        cls,
        episode: Episode,
        task: Task | None,
        records: Mapping[str, Any],
        *,
        families: Sequence[Metric] | None = None,
    ) -> EpisodeScore:
        """The score :meth:`records` stored, rebuilt without scoring ``episode`` again (a
        registered family without a stored record is a ``KeyError``: score the episode);
        ``families``: :func:`metrics`, when a reader of many scores has it."""
        fams = metrics() if families is None else families
        loaded = {m.name: m.load(records[m.name]) for m in fams}
        return cls(episode, task, loaded, families=fams)


#: the parts of replan whose code decides an episode's records (the replay, the checker, the
#: metric families); a change to any of their files changes :func:`scoring_stamp`
SCORING_CODE = ("core", "env", "evaluators")


@functools.cache
def _code_digest() -> str:
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for part in SCORING_CODE:
        for f in sorted((root / part).rglob("*")):
            if f.is_file() and "__pycache__" not in f.parts and f.suffix != ".pyc":
                h.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def scoring_stamp() -> str:
    """A digest of the scoring code's files (:data:`SCORING_CODE`) and of the registered metric
    families (a plugin's included), stored with each episode's records: records made by other
    scoring code (an upgrade, an edit, another set of metrics) are recomputed, never aggregated
    (see :func:`replan.report.data.stored_scores`)."""
    families = ",".join(f"{m.name}@{m.record.__module__}" for m in metrics())
    return hashlib.sha256(f"{_code_digest()}|{families}".encode()).hexdigest()[:16]


def score_one(
    episode: Episode, task: Task | None = None, *, judge: SDEJudge | Any = None
) -> EpisodeScore:
    """Every per-run record of one episode (replaying it once)."""
    world = _world_for(task) if task is not None else None
    verdicts, source, state = episode_verdicts(episode, task, world)
    success = resolve_success(episode, task, state)
    if judge is not None and not isinstance(judge, SDEJudge):
        judge = SDEJudge(judge)
    ctx = EpisodeContext(episode, task, success, verdicts, source, judge)
    return EpisodeScore(episode, task, {m.name: m.record(ctx) for m in metrics()})


def score_episode(
    episode: Episode, task: Task | None = None, *, judge: SDEJudge | Any = None
) -> list[Feedback]:
    """Per-run feedback of every family (stable keys; see :mod:`replan.evaluators.langsmith`).

    ``judge`` (a chat model or :class:`SDEJudge`) adds the 13 judged SDE items.
    """
    return score_one(episode, task, judge=judge).feedback()


#: the per-mode / per-level prefix columns (TER always beside the share of zero-call runs)
PREFIX_TABLE_KEYS = ("prefix.runs", "prefix.ter", "prefix.zero_call", "prefix.auc_pec", "prefix.rr")


def _prefix_tables(scores: Sequence[EpisodeScore], seed: int, n_boot: int) -> dict[str, Any]:
    groups: dict[str, dict[str, list[PrefixRecord]]] = {"mode": {}, "level": {}}
    for s in scores:
        groups["mode"].setdefault(s.recovery.mode, []).append(s.prefix)
        groups["level"].setdefault(s.recovery.level or "-", []).append(s.prefix)
    out: dict[str, Any] = {}
    for name, by in groups.items():
        table: dict[str, Any] = {}
        for k, recs in sorted(by.items()):
            summary = summarize_prefix(recs, seed=seed, n_boot=n_boot)
            row = {key: summary[key] for key in PREFIX_TABLE_KEYS}
            row["prefix.after_fault"] = {
                "value": sum(1 for r in recs if r.after_fault),
                "n": summary["prefix.rr"]["eligible"],
            }
            table[k] = row
        out[f"prefix.by_{name}"] = table
    return out


def prefix_headline(scores: Sequence[EpisodeScore], seed: int, n_boot: int) -> dict[str, Any]:
    """The prefix figures a summary leads with: on the NP runs when the set mixes NP with
    perturbed modes (under P1–P4 a call that carried an injected corrupted value counts as the
    agent's error), else on every run; ``scope`` says which."""
    modes = {s.recovery.mode for s in scores}
    np_only = "NP" in modes and len(modes) > 1
    recs = [s.prefix for s in scores if not np_only or s.recovery.mode == "NP"]
    summary = summarize_prefix(recs, seed=seed, n_boot=n_boot)
    out = {key: summary[key] for key in PREFIX_TABLE_KEYS}
    out["scope"] = "NP" if np_only else "all runs"
    return out


def score_records(
    scores: Sequence[EpisodeScore], *, seed: int = 0, n_boot: int = N_BOOT
) -> dict[str, Any]:
    """Aggregate already-scored episodes (see :func:`score`).

    The one place that accounts infrastructure failures (:func:`is_failure`), for ``replan
    score``, the run summary and the report alike: they count as *failed runs* in the success
    rates (``toolmaze.tsr``, ``sde.pass@1``, ``pass^k``) and are *left out* of every process
    metric (prefix, recovery, E5, tool-use efficiency, invalid-DAG rate, sde-auto, the tables),
    where a crashed run would otherwise read as a clean run or an invalid DAG. ``failures`` and
    ``failure_reasons`` count them.
    """
    every = list(scores)
    scores = [s for s in every if not is_failure(s.episode)]
    failed_scores = [s for s in every if is_failure(s.episode)]
    failed = [s.episode.end_reason.value for s in failed_scores]
    out: dict[str, Any] = {
        "episodes": len(every),
        "failures": len(failed),
        "failure_reasons": {r: failed.count(r) for r in sorted(set(failed))},
    }
    sources: dict[str, int] = defaultdict(int)
    for s in scores:
        sources[s.prefix.source] += 1
    out["verdict_sources"] = dict(sources)
    tables: dict[str, Any] = {}
    for m in metrics():  # each family counts failures in its success rates itself
        extra: dict[str, Any] = {}
        if m.failed_records:
            extra["failed"] = [s.by_metric[m.name] for s in failed_scores if m.name in s.by_metric]
        agg = m.summarize(
            [s.by_metric[m.name] for s in scores],
            seed=seed,
            n_boot=n_boot,
            failures=len(failed),
            **extra,
        )
        tables.update(agg.pop("tables", None) or {})
        out.update(agg)
    by_task: dict[tuple[str, str, str], dict[int, bool]] = defaultdict(dict)
    for s in every:
        e = s.episode
        by_task[(e.task_id, e.design, e.model)][e.seed] = bool(s.prefix.success)
    k = max((len(v) for v in by_task.values()), default=0)
    if k >= 2:  # pass^k with k = the most seeds any (task, design, model) has
        out["pass^k"] = pass_hat_k(
            {t: list(v.values()) for t, v in by_task.items()}, k, seed=seed, n_boot=n_boot
        )
    tables.update(_prefix_tables(scores, seed, n_boot))
    out["prefix.headline"] = prefix_headline(scores, seed, n_boot)
    out["tables"] = tables
    return out


def score(
    episodes: Iterable[Episode],
    tasks: Mapping[str, Task] | Iterable[Task] | None = None,
    *,
    judge: SDEJudge | Any = None,
    by: str | None = None,
    seed: int = 0,
    n_boot: int = N_BOOT,
) -> dict[str, Any]:
    """Every aggregate over ``episodes``, keyed by metric name, each with its 95% interval.

    ``tasks`` maps task ids to Tasks (or is an iterable of Tasks). ``by`` (an Episode field such
    as ``"design"`` or ``"model"``) adds ``groups``: the same result per value of that field.
    Intervals are deterministic for a given ``seed``.
    """
    tmap = _task_map(tasks)
    if judge is not None and not isinstance(judge, SDEJudge):
        judge = SDEJudge(judge)
    scores = [score_one(ep, task_of(ep, tmap), judge=judge) for ep in episodes]
    out = score_records(scores, seed=seed, n_boot=n_boot)
    if by is not None:
        if by not in Episode.model_fields:
            raise ValueError(f"score(by={by!r}): not an Episode field")
        parts: dict[str, list[EpisodeScore]] = defaultdict(list)
        for s in scores:
            parts[str(getattr(s.episode, by))].append(s)
        out["groups"] = {
            k: score_records(v, seed=seed, n_boot=n_boot) for k, v in sorted(parts.items())
        }
    return out


def compare(
    episodes_a: Iterable[Episode],
    episodes_b: Iterable[Episode],
    tasks: Mapping[str, Task] | Iterable[Task] | None = None,
    *,
    seed: int = 0,
    n_boot: int = N_BOOT,
) -> dict[str, Any]:
    """Two agents on the same (task, seed) pairs: paired tests of A − B.

    Every registered family's paired comparisons (``Metric.paired``); the built-in ones:
    McNemar on success and on clean runs; paired bootstrap on the per-run AUC-PEC term, on
    C_rec (exposed runs of both, c* known) and on E5 (where both are defined). Unpaired
    episodes are counted and left out.
    """
    tmap = _task_map(tasks)
    return compare_scores(
        [score_one(ep, task_of(ep, tmap)) for ep in episodes_a],
        [score_one(ep, task_of(ep, tmap)) for ep in episodes_b],
        seed=seed,
        n_boot=n_boot,
    )


def compare_scores(
    scores_a: Iterable[EpisodeScore],
    scores_b: Iterable[EpisodeScore],
    *,
    seed: int = 0,
    n_boot: int = N_BOOT,
) -> dict[str, Any]:
    """:func:`compare` on already-scored episodes (stored records, say)."""

    def index(scores: Iterable[EpisodeScore]) -> dict[tuple[str, int], EpisodeScore]:
        return {(s.episode.task_id, s.episode.seed): s for s in scores}

    a, b = index(scores_a), index(scores_b)
    keys = sorted(set(a) & set(b))
    pa, pb = [a[k] for k in keys], [b[k] for k in keys]

    out: dict[str, Any] = {
        "pairs": len(keys),
        "unpaired_a": len(a) - len(keys),
        "unpaired_b": len(b) - len(keys),
    }
    for m, p in paired_metrics():  # every registered family's paired comparisons
        xs = [
            (p.value(x.by_metric[m.name]), p.value(y.by_metric[m.name]))
            for x, y in zip(pa, pb, strict=True)
        ]
        if p.test == "mcnemar":
            out[p.key] = mcnemar([bool(u) for u, _ in xs], [bool(v) for _, v in xs])
            continue
        xs = [(u, v) for u, v in xs if u is not None and v is not None]
        out[p.key] = paired_bootstrap(
            [u for u, _ in xs],
            [v for _, v in xs],
            key=p.boot_key or p.key,
            seed=seed,
            n_boot=n_boot,
        )
    return out


__all__ = [
    "SCORING_CODE",
    "WORLD_CACHE_SIZE",
    "EpisodeScore",
    "compare",
    "compare_scores",
    "prefix_headline",
    "score",
    "score_episode",
    "score_one",
    "score_records",
    "scoring_stamp",
    "task_of",
]
