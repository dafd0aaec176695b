"""What the report shows, computed from a results store: per-agent aggregates, C × P cells,
first-error types, paired comparisons (between designs of one store, or between two stores).

Decisions:

- **Scores are read, not recomputed**: every number comes from the per-run records the runner
  stored when the episode finished (:func:`stored_scores`). Episodes stored without records, or
  with records from other scoring code, are scored once here, stored, and named in one line.
- **Unit** = one agent design, or ``design · model`` when the store holds several models.
- **Failures** (end reasons in :data:`replan.core.trace.FAILURE_END_REASONS`: model error,
  crash, timeout) did not run to a verdict of the agent's own. They are *counted separately*, and
  in the headline success rate (TSR) they count as failed runs, so a flaky endpoint lowers the
  score instead of vanishing from it. They are left out of the process metrics (prefix,
  recovery, E5), where a crashed run with no calls would otherwise count as a clean run. The
  rule lives in :func:`replan.evaluators.score_records`, which ``replan score`` uses too.
- **PRR** and **RC** in the summary row are seed 002's Table 2 "Avg" columns: each C × P cell's
  PRR (recovered / exposed runs) and RC (mean pert·C_rec) averaged over the P1–P4 cells (macro,
  bootstrap interval over the cells' runs). Per-cell values are in the C × P table.
- **Prefix figures** (TER, zero-call share, AUC-PEC, RR) in the summary row are on the NP runs
  when the unit mixes NP with perturbed modes (``prefix_scope``), on every run otherwise.
- **E5 and tool-use efficiency** are ParaRecover's (tool-use efficiency with replan's own
  formula): they are shown only for units that are not all ToolMaze runs.
- **Paired tests** go through :func:`replan.evaluators.compare` (McNemar on success and clean
  runs, paired bootstrap on AUC-PEC terms, C_rec and E5). One test decides each row and the
  interval shown is that test's: a rate difference gets the exact McNemar p-value and the exact
  conditional interval that inverts the same binomial tails (:func:`mcnemar_exact`), so the
  interval excludes 0 exactly when p < alpha; a bootstrap row shows the bootstrap's own
  percentile interval and p-value.
  A verdict calls a difference significant at ``alpha`` (0.05, not adjusted for multiple
  comparisons); a bootstrap test on fewer than :data:`MIN_PAIRS` pairs is not called.
"""

from __future__ import annotations

import functools
import math
import sys
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replan.core import linre
from replan.core.task import MODES, Task
from replan.core.taxonomy import ErrorType
from replan.core.trace import Episode
from replan.evaluators import (
    EpisodeScore,
    compare_scores,
    is_failure,
    score_one,
    score_records,
    scoring_stamp,
    task_of,
    wilson,
)
from replan.evaluators.metric import OMIT, UnitView, columns, metrics, paired_metrics
from replan.evaluators.stats import N_BOOT
from replan.runner.store import SUITE_RECORD, FeedbackRow, ResultsStore, StoreError, episode_key
from replan.suites.versions import identity_label

ALPHA = 0.05
#: fewest pairs on which a paired-bootstrap difference is called significant
MIN_PAIRS = 5
ERROR_TYPES: tuple[str, ...] = tuple(e.value for e in ErrorType)


def open_store(out_dir: str | Path) -> ResultsStore:
    """The results store of ``out_dir``; a clear error when there is none (nothing is created)."""
    path = Path(out_dir) / ResultsStore.FILENAME
    if not (path.exists() or path.is_symlink()):  # what else is there, the store names
        raise FileNotFoundError(
            f"{out_dir}: no {ResultsStore.FILENAME} here, so it is not a replan results "
            "directory (write one with `replan run --out DIR`)"
        )
    return ResultsStore(out_dir)


def key_of(ep: Episode) -> str:
    """The store key of an episode (task, design, model, seed)."""
    return episode_key(ep.task_id, ep.design, ep.model, ep.seed)


def _stderr(line: str) -> None:
    print(line, file=sys.stderr)


def stored_scores(
    store: ResultsStore,
    tasks: Mapping[str, Task],
    keys: Collection[str] | None = None,
    *,
    say: Callable[[str], None] = _stderr,
    slim: bool = False,
) -> list[EpisodeScore]:
    """The score of every stored episode (or of ``keys``), in key order, from the records the
    runner stored: nothing is replayed. Episodes without current records (stored before records
    were, by other scoring code, or rewritten since) are scored once here and their feedback and
    records stored; ``say`` gets one line naming how many (a store that cannot be written
    keeps its old rows and the line says so). ``slim`` keeps each episode without its steps
    and plans (:func:`slim_episode`): what aggregates need, a fraction of the memory; the
    store is read a page at a time."""
    stamp = scoring_stamp()
    families = metrics()
    out: list[EpisodeScore] = []
    rescored: list[tuple[str, str, list[FeedbackRow], dict[str, Any]]] = []
    for ep, digest, records in store.iter_scored_episodes(stamp, keys, slim=slim):
        task = task_of(ep, tasks)
        if records is not None:
            s = EpisodeScore.from_records(ep, task, records, families=families)
        else:
            s = score_one(ep, task)
            rescored.append(
                (key_of(ep), digest, [FeedbackRow.of(f) for f in s.feedback()], s.records())
            )
        if slim and (ep.steps or ep.plans):  # read whole: scored again, or not JSON to SQLite
            s.episode = slim_episode(ep)
        out.append(s)
    if rescored:
        try:
            store.save_scores(stamp, rescored)
            kept = "stored them"
        except StoreError as exc:
            kept = f"could not store them: {exc}"
        say(
            f"{store.path}: {len(rescored)} episode(s) had no scores from this scoring code "
            f"(stored before them, or by other code); scored them once and {kept}"
        )
    return out


def slim_episode(ep: Episode) -> Episode:
    """``ep`` without its trace (steps and plans, nearly all of its memory): what the stored
    records are aggregated with. ``usage.tool_calls`` still counts the calls; the report reads
    the full episodes it shows again from the store."""
    return ep.model_copy(update={"steps": [], "plans": []})


def _level_key(level: str) -> tuple:
    m = linre.match(r"^(\D*)(\d+)$", level)
    return (level == "-", m.group(1) if m else level, int(m.group(2)) if m else 0, level)


def order_levels(levels: Iterable[str]) -> list[str]:
    """C1 < C2 < … < C10, unknown level ("-") last."""
    return sorted(set(levels), key=_level_key)


def order_modes(modes: Iterable[str]) -> list[str]:
    rank = {m: i for i, m in enumerate(MODES)}
    return sorted(set(modes), key=lambda m: (rank.get(m, 99), m))


# -- per agent ---------------------------------------------------------------------------------
@dataclass
class Unit:
    """One agent (design, or design · model) with its scored episodes and aggregates."""

    label: str
    design: str
    model: str
    scores: list[EpisodeScore]
    failures: list[Episode]
    aggregate: dict[str, Any] = field(default_factory=dict)
    row: dict[str, Any] = field(default_factory=dict)

    @property
    def episodes(self) -> list[Episode]:
        return [s.episode for s in self.scores]


def summary_row(unit: Unit, *, seed: int = 0, n_boot: int = N_BOOT) -> dict[str, Any]:
    """The headline metrics of one unit, each an estimate dict (value, low, high, n, method)."""
    agg = unit.aggregate
    reasons: dict[str, int] = defaultdict(int)
    for e in unit.failures:
        reasons[e.end_reason.value] += 1
    row: dict[str, Any] = {
        "episodes": len(unit.scores),
        "failures": len(unit.failures),
        "failure_reasons": dict(sorted(reasons.items())),
    }
    if not unit.aggregate:
        return row
    # prefix figures on NP when the runs mix NP with perturbed modes (see
    # evaluators.prefix_headline); ``prefix_scope`` says which runs they cover
    row["prefix_scope"] = agg["prefix.headline"]["scope"]
    view = UnitView(agg, unit.scores, len(unit.failures), seed, n_boot)
    for col in columns():  # every registered metric family's columns
        value = col.value(view)
        if value is not OMIT:
            row[col.label] = value
    row["pass^k"] = agg.get("pass^k")
    return row


def build_units(
    scored: Sequence[EpisodeScore],
    *,
    seed: int = 0,
    n_boot: int = N_BOOT,
) -> tuple[list[Unit], dict[str, EpisodeScore]]:
    """Aggregate scored episodes (:func:`stored_scores`) per unit; also returns the non-failed
    episodes' scores by store key (for the drill-down)."""
    models = sorted({s.episode.model for s in scored})
    several = len(models) > 1
    parts: dict[tuple[str, str], list[EpisodeScore]] = defaultdict(list)
    for s in scored:
        parts[(s.episode.design, s.episode.model)].append(s)
    by_key: dict[str, EpisodeScore] = {}
    units: list[Unit] = []
    for design, model in sorted(parts):
        every = parts[(design, model)]
        scores = [s for s in every if not is_failure(s.episode)]
        by_key.update((key_of(s.episode), s) for s in scores)
        unit = Unit(
            label=f"{design} · {model}" if several else design,
            design=design,
            model=model,
            scores=scores,
            failures=[s.episode for s in every if is_failure(s.episode)],
        )
        # failures too (a unit whose every run failed has TSR 0, its process metrics none):
        # score_records is the one place that accounts them
        unit.aggregate = score_records(every, seed=seed, n_boot=n_boot)
        unit.row = summary_row(unit, seed=seed, n_boot=n_boot)
        units.append(unit)
    return units, by_key


def first_error_table(units: Sequence[Unit]) -> dict[str, dict[str, dict[str, Any]]]:
    """type -> unit label -> {count, share (Wilson, among the unit's runs with an error)}.

    Rows: the 14 ParaRecover types in taxonomy order, then any other label seen
    (``unmapped``: a first error whose code has no ParaRecover type).
    """
    seen: dict[str, dict[str, Any]] = {}
    for u in units:
        seen[u.label] = (u.aggregate or {}).get("prefix.first_error_types") or {}
    extra = sorted({t for d in seen.values() for t in d} - set(ERROR_TYPES))
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for t in (*ERROR_TYPES, *extra):
        out[t] = {}
        for u in units:
            eligible = (u.aggregate or {}).get("prefix.rr", {}).get("eligible", 0)
            count = seen[u.label].get(t, {}).get("count", 0)
            out[t][u.label] = {"count": count, "share": wilson(count, eligible).to_dict()}
    return out


def cell_grid(unit: Unit) -> tuple[list[str], list[str], dict[str, dict[str, Any]]]:
    """(levels, modes, cells keyed "level/mode") of a unit's C × P table."""
    cells = ((unit.aggregate or {}).get("tables") or {}).get("toolmaze.by_level_mode") or {}
    levels = order_levels(k.split("/", 1)[0] for k in cells)
    modes = order_modes(k.split("/", 1)[1] for k in cells)
    return levels, modes, cells


# -- paired tests ------------------------------------------------------------------------------
def paired_rows() -> list[tuple[str, str, bool]]:
    """``(key in evaluators.compare, words, lower is better)`` of every registered paired
    comparison (:func:`replan.evaluators.metric.paired_metrics`), the report's delta rows."""
    return [(p.key, p.words, p.lower_is_better) for _, p in paired_metrics()]


def __getattr__(name: str) -> Any:
    """``PAIRED_METRICS``: :func:`paired_rows` when asked (the registry may grow by plugins)."""
    if name == "PAIRED_METRICS":
        return tuple(paired_rows())
    raise AttributeError(f"module 'replan.report.data' has no attribute {name!r}")


def fmt_p(p: float | None) -> str:
    if p is None:
        return "p = n/a"
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


@functools.lru_cache(maxsize=64)
def _log_choose(k: int, n: int) -> tuple[float, ...]:
    """``log C(n, i)`` for i = 0..k: the same for every p a bisection tries."""
    return tuple(
        math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) for i in range(k + 1)
    )


def _binom_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p), summed in log space (n up to many thousands)."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 0.0
    lp, lq = math.log(p), math.log1p(-p)
    logs = [c + i * lp + (n - i) * lq for i, c in enumerate(_log_choose(k, n))]
    top = max(logs)
    return min(1.0, math.exp(top) * sum(math.exp(x - top) for x in logs))


def _solve(f: Any, target: float) -> float:
    """The p in [0, 1] where the decreasing function ``f`` crosses ``target`` (bisection)."""
    lo, hi = 0.0, 1.0
    for _ in range(80):
        mid = (lo + hi) / 2
        if f(mid) > target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def mcnemar_exact(a_only: int, b_only: int, n: int, alpha: float = ALPHA) -> dict[str, Any]:
    """Exact McNemar test of a paired rate difference, with the interval that test implies.

    Conditional on the ``d = a_only + b_only`` discordant pairs, ``a_only ~ Binomial(d, π)`` and
    the rate difference is ``d/n · (2π − 1)``. The p-value doubles the smaller binomial tail at
    π = ½; the interval maps the Clopper–Pearson ``1 − alpha`` interval of π onto the
    difference. Both invert the same tails, so ``p < alpha`` exactly when the interval excludes
    0: the verdict and the interval shown can never disagree.
    """
    d = a_only + b_only
    if n <= 0:
        return {"difference": None, "low": None, "high": None, "p_value": None}
    diff = (a_only - b_only) / n
    if d == 0:
        return {"difference": diff, "low": 0.0, "high": 0.0, "p_value": 1.0}
    k = min(a_only, b_only)
    p_value = min(1.0, 2 * sum(math.comb(d, i) for i in range(k + 1)) / 2**d)
    half = alpha / 2
    # Clopper–Pearson: P(X >= a_only | low) = alpha/2 and P(X <= a_only | high) = alpha/2,
    # where P(X <= k | π) falls as π rises
    lo_pi = 0.0 if a_only == 0 else _solve(lambda q: _binom_cdf(a_only - 1, d, q), 1 - half)
    hi_pi = 1.0 if a_only == d else _solve(lambda q: _binom_cdf(a_only, d, q), half)
    scale = d / n
    return {
        "difference": diff,
        "low": scale * (2 * lo_pi - 1),
        "high": scale * (2 * hi_pi - 1),
        "p_value": p_value,
    }


def verdict(
    name_x: str,
    name_y: str,
    words: str,
    diff: float | None,
    p: float | None,
    n: int,
    *,
    alpha: float = ALPHA,
    bootstrap: bool = False,
) -> str:
    """The result of one paired test in words, e.g. "dual_loop has a higher clean-run rate than
    react (p = 0.003)"."""
    if not n or diff is None or p is None:
        return f"no paired runs to compare the {words} of {name_x} and {name_y}"
    if bootstrap and n < MIN_PAIRS:
        return f"too few paired runs (n = {n}) to test the {words} of {name_x} and {name_y}"
    if p < alpha and diff != 0:
        how = "higher" if diff > 0 else "lower"
        return f"{name_x} has a {how} {words} than {name_y} ({fmt_p(p)})"
    return f"no significant difference in {words} between {name_x} and {name_y} ({fmt_p(p)})"


def _episode(run: Episode | EpisodeScore) -> Episode:
    return run.episode if isinstance(run, EpisodeScore) else run


def _scored(
    runs: Sequence[Episode | EpisodeScore], tasks: Mapping[str, Task]
) -> list[EpisodeScore]:
    """Scores as given; an episode given bare is scored here (a user's own list, say)."""
    return [r if isinstance(r, EpisodeScore) else score_one(r, task_of(r, tasks)) for r in runs]


def paired_tests(
    eps_x: Sequence[Episode | EpisodeScore],
    eps_y: Sequence[Episode | EpisodeScore],
    tasks: Mapping[str, Task],
    *,
    name_x: str,
    name_y: str,
    seed: int = 0,
    n_boot: int = N_BOOT,
    alpha: float = ALPHA,
) -> dict[str, Any]:
    """Paired tests of X − Y on the same (task, seed) pairs, each with an interval and a verdict.

    The runs are scored episodes (stored records: nothing is replayed) or bare episodes (scored
    here). Failed episodes (see :func:`is_failure`) are left out first, so their pairs count as
    unpaired.
    """
    xs = [r for r in eps_x if not is_failure(_episode(r))]
    ys = [r for r in eps_y if not is_failure(_episode(r))]
    res = compare_scores(_scored(xs, tasks), _scored(ys, tasks), seed=seed, n_boot=n_boot)
    tests: dict[str, Any] = {}
    for key, words, lower_better in paired_rows():
        r = res[key]
        if key in ("success", "clean"):
            n = r["n"]
            iv = mcnemar_exact(r["a_only"], r["b_only"], n, alpha)
            entry = {
                "n": n,
                "x": (r["a_only"] + r["both"]) / n if n else None,
                "y": (r["b_only"] + r["both"]) / n if n else None,
                "difference": r["difference"],
                "low": iv["low"],
                "high": iv["high"],
                "p_value": iv["p_value"],
                "method": "McNemar (exact; interval: exact conditional)",
                "x_only": r["a_only"],
                "y_only": r["b_only"],
            }
            boot = False
        else:
            n = r["n"]
            entry = {
                "n": n,
                "difference": r["difference"],
                "low": r["low"],
                "high": r["high"],
                "p_value": r["p_value"],
                "method": "paired bootstrap",
            }
            boot = True
        entry["lower_is_better"] = lower_better
        entry["verdict"] = verdict(
            name_x,
            name_y,
            words,
            entry["difference"],
            entry["p_value"],
            n,
            alpha=alpha,
            bootstrap=boot,
        )
        tests[key] = entry
    return {
        "x": name_x,
        "y": name_y,
        "pairs": res["pairs"],
        "unpaired_x": res["unpaired_a"],
        "unpaired_y": res["unpaired_b"],
        "failures_x": len(eps_x) - len(xs),
        "failures_y": len(eps_y) - len(ys),
        "tests": tests,
    }


def unit_comparisons(
    units: Sequence[Unit],
    tasks: Mapping[str, Task],
    *,
    seed: int = 0,
    n_boot: int = N_BOOT,
    alpha: float = ALPHA,
) -> list[dict[str, Any]]:
    """Paired tests between units of the same model (designs) and of the same design (models)."""
    out = []
    for i, a in enumerate(units):
        for b in units[i + 1 :]:
            if a.model != b.model and a.design != b.design:
                continue
            out.append(
                paired_tests(
                    [*a.scores, *a.failures],
                    [*b.scores, *b.failures],
                    tasks,
                    name_x=a.label,
                    name_y=b.label,
                    seed=seed,
                    n_boot=n_boot,
                    alpha=alpha,
                )
            )
    return out


# -- the whole report --------------------------------------------------------------------------
@dataclass
class ReportData:
    """Everything the HTML report renders."""

    out_dir: Path
    experiments: list[tuple[str, dict[str, Any]]]
    tasks: dict[str, Task]
    episodes: list[Episode]
    units: list[Unit]
    scores: dict[str, EpisodeScore]
    errors: dict[str, dict[str, dict[str, Any]]]
    comparisons: list[dict[str, Any]]
    #: the episodes are slim (:func:`slim_episode`): the drill-down reads the ones it shows
    slim: bool = False


def collect(
    out_dir: str | Path, *, seed: int = 0, n_boot: int = N_BOOT, alpha: float = ALPHA
) -> ReportData:
    """Read the store of ``out_dir`` (episodes and their stored scores) and compute everything
    the report shows."""
    with open_store(out_dir) as store:
        experiments = store.experiments()
        tasks = store.tasks()
        scored = stored_scores(store, tasks, slim=True)
    units, scores = build_units(scored, seed=seed, n_boot=n_boot)
    return ReportData(
        out_dir=Path(out_dir),
        experiments=experiments,
        tasks=tasks,
        episodes=[s.episode for s in scored],
        units=units,
        scores=scores,
        errors=first_error_table(units),
        comparisons=unit_comparisons(units, tasks, seed=seed, n_boot=n_boot, alpha=alpha),
        slim=True,
    )


# -- the suites a store ran ------------------------------------------------------------------
def suite_ids(experiments: Iterable[tuple[str, Mapping[str, Any]]]) -> list[dict[str, str]]:
    """The distinct suites (name, version, digest) the experiments recorded, in order; an
    experiment from before suites were recorded adds nothing."""
    out: list[dict[str, str]] = []
    for _, cfg in experiments:
        rec = cfg.get(SUITE_RECORD) or {}
        ident = {k: rec[k] for k in ("name", "version", "digest") if k in rec}
        if ident and ident not in out:
            out.append(ident)
    return out


def stored_suites(out_dir: str | Path) -> list[dict[str, str]]:
    """The suites the store of ``out_dir`` ran (:func:`suite_ids` of its experiments)."""
    with open_store(out_dir) as store:
        return suite_ids(store.experiments())


def suites_line(suites: Sequence[Mapping[str, Any]]) -> str:
    """``suite toolmaze v2 (aa36ad3d)`` for a report's header (each suite when several)."""
    if not suites:
        return "suite version not recorded"
    return ("suite " if len(suites) == 1 else "suites ") + ", ".join(map(identity_label, suites))


class SuiteMismatchError(ValueError):
    """Two results stores ran different versions (digests) of their suites: paired deltas
    between them would compare answers to different tasks."""


def same_suites(
    a: Sequence[Mapping[str, Any]],
    b: Sequence[Mapping[str, Any]],
    names: tuple[str, str] = ("A", "B"),
    *,
    allow: bool = False,
) -> bool | None:
    """Whether two stores ran the same suites (``None``: one side recorded none, so it cannot
    be told); different ones raise :class:`SuiteMismatchError` unless ``allow``."""
    if not a or not b:
        return None
    if len(a) == len(b) and all(s in b for s in a):  # distinct lists: the same set
        return True
    if not allow:
        raise SuiteMismatchError(
            f"{names[0]} ran {', '.join(map(identity_label, a))} and {names[1]} ran "
            f"{', '.join(map(identity_label, b))}: different suite versions ask different "
            "tasks, so their paired deltas would mislead; rerun one side on the other's suite "
            "version, or pass --allow-suite-mismatch to compare anyway"
        )
    return False


# -- two stores --------------------------------------------------------------------------------
def _pairing(eps_a: Sequence[Episode], eps_b: Sequence[Episode], a: str, b: str) -> bool:
    """True to pair by (design, model), False to pair by design alone (a model change).

    By (design, model) when both sides hold the same models; otherwise each side must hold
    one model per design.
    """
    models_a = {e.model for e in eps_a}
    models_b = {e.model for e in eps_b}
    if models_a == models_b:
        return True
    for name, eps in ((a, eps_a), (b, eps_b)):
        per: dict[str, set[str]] = defaultdict(set)
        for e in eps:
            per[e.design].add(e.model)
        for design, ms in sorted(per.items()):
            if len(ms) > 1:
                raise ValueError(
                    f"{name} holds {len(ms)} models for design {design} ({', '.join(sorted(ms))})"
                    " and the two directories do not hold the same models: compare needs one "
                    "model per design, or the same models on both sides"
                )
    return False


def compare_dirs(
    dir_a: str | Path,
    dir_b: str | Path,
    *,
    seed: int = 0,
    n_boot: int = N_BOOT,
    alpha: float = ALPHA,
    allow_suite_mismatch: bool = False,
) -> dict[str, Any]:
    """Paired deltas B − A per design present in both stores (same tasks, same seeds).

    Tasks come from both stores (B's wins where an id is in both); the result lists the task ids
    only one side ran and the task ids whose definitions differ. Stores that ran different
    suite versions (digests) are refused (:class:`SuiteMismatchError`) unless
    ``allow_suite_mismatch``; ``suites`` in the result says which each ran and whether they match.
    """
    with open_store(dir_a) as sa:
        suites_a = suite_ids(sa.experiments())
    with open_store(dir_b) as sb:
        suites_b = suite_ids(sb.experiments())
    same = same_suites(
        suites_a, suites_b, (f"A ({dir_a})", f"B ({dir_b})"), allow=allow_suite_mismatch
    )
    with open_store(dir_a) as sa:
        tasks_a = sa.tasks()
        scored_a = stored_scores(sa, tasks_a)
    with open_store(dir_b) as sb:
        tasks_b = sb.tasks()
        scored_b = stored_scores(sb, tasks_b)
    eps_a = [s.episode for s in scored_a]
    eps_b = [s.episode for s in scored_b]
    name_a, name_b = "A", "B"
    if not eps_a or not eps_b:
        empty = dir_a if not eps_a else dir_b
        raise ValueError(f"{empty} has no episodes to compare")
    by_model = _pairing(eps_a, eps_b, str(dir_a), str(dir_b))

    def unit(e: Episode) -> str:
        return f"{e.design} · {e.model}" if by_model else e.design

    ga: dict[str, list[EpisodeScore]] = defaultdict(list)
    gb: dict[str, list[EpisodeScore]] = defaultdict(list)
    for s in scored_a:
        ga[unit(s.episode)].append(s)
    for s in scored_b:
        gb[unit(s.episode)].append(s)
    tasks = {**tasks_a, **tasks_b}
    differ = sorted(
        t
        for t in set(tasks_a) & set(tasks_b)
        if tasks_a[t].model_dump_json() != tasks_b[t].model_dump_json()
    )
    ran_a = {e.task_id for e in eps_a}
    ran_b = {e.task_id for e in eps_b}
    designs: dict[str, Any] = {}
    for label in sorted(set(ga) & set(gb)):
        res = paired_tests(
            gb[label],
            ga[label],
            tasks,
            name_x=name_b,
            name_y=name_a,
            seed=seed,
            n_boot=n_boot,
            alpha=alpha,
        )
        models_a = sorted({s.episode.model for s in ga[label]})
        models_b = sorted({s.episode.model for s in gb[label]})
        designs[label] = {
            "model_a": models_a[0] if len(models_a) == 1 else models_a,
            "model_b": models_b[0] if len(models_b) == 1 else models_b,
            "pairs": res["pairs"],
            "unpaired_a": res["unpaired_y"],
            "unpaired_b": res["unpaired_x"],
            "failures_a": res["failures_y"],
            "failures_b": res["failures_x"],
            "metrics": {
                key: {
                    "n": t["n"],
                    "a": t.get("y"),
                    "b": t.get("x"),
                    "delta": t["difference"],
                    "low": t["low"],
                    "high": t["high"],
                    "p_value": t["p_value"],
                    "method": t["method"],
                    "lower_is_better": t["lower_is_better"],
                    "verdict": t["verdict"],
                }
                for key, t in res["tests"].items()
            },
        }
    return {
        "a": {"dir": str(dir_a), "episodes": len(eps_a)},
        "b": {"dir": str(dir_b), "episodes": len(eps_b)},
        "paired_by": "design and model" if by_model else "design",
        "suites": {"a": suites_a, "b": suites_b, "same": same},
        "delta": "B - A",
        "alpha": alpha,
        "tasks": {
            "shared": len(ran_a & ran_b),
            "only_a": sorted(ran_a - ran_b),
            "only_b": sorted(ran_b - ran_a),
            "definition_differs": differ,
        },
        "only_a": sorted(set(ga) - set(gb)),
        "only_b": sorted(set(gb) - set(ga)),
        "designs": designs,
    }
