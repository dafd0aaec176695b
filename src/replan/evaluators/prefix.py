"""Prefix executability (seed 003, DESIGN §5): FED, PEC(k), cPEC(k), TER, AUC-PEC, RR.

Per run, the calls c1..cn (execution order) are replayed against the task's world from its
initial state (:func:`replan.env.replay.replay`), so traces from any agent are judged by the same
rules: call k is *executable* iff its verdict is ``ok`` in the state produced by the executable
calls before it. Injected faults are not the agent's invalid calls (a well-formed call that meets
a 404 is executable).

Decisions where the paper leaves a choice:

- **No Task** for an episode (or a task whose tools are not in the corpus, e.g. a ParaRecover
  tool list): the verdicts *recorded in the steps* are used instead; a step counts as not
  executable iff its recorded code blames the agent (``VerdictCode.is_agent_error``). The
  per-run record says which source was used (``source = "replay" | "recorded"``).
- **Success** is the episode's recorded ``success``; when that is ``None`` and a task is
  available, the task's checker decides it on the replayed final state. Still unknown counts
  as not successful (conservative) and is reported as ``success_unknown``.
- **n = 0** (a run with no calls) has no prefix to score: seed 003 (§3, "executable prefixes"
  of the calls a run actually made) scores the prefixes of actual calls, and a run that never
  acted is no evidence of executability. By default such runs are left out of TER and AUC-PEC
  (their denominator is the runs with n ≥ 1) and counted in their own column
  (``prefix.zero_call``: count and share of all runs); they drop off PEC(k) at every k ≥ 1 (their
  length is below k) and are not RR-eligible (no FED). ``summarize_prefix(...,
  zero_calls="clean")`` restores the literal reading (a zero-call run is clean, AUC term 1).
- **Perturbed modes.** Under P1–P4 a call that fails because it carried an injected corrupted
  value counts as the agent's invalid call (the agent trusted it). The evaluators therefore
  report the prefix metrics per mode and the headline on NP (see :mod:`replan.evaluators`),
  and count the runs whose first invalid call came after the first perturbed response
  (``after_fault``).
- PEC(k) and cPEC(k) are reported for every k = 1..max n; cPEC(k) is undefined (``None``) where
  no run reaches length k.

Aggregates take :class:`PrefixRecord` objects or plain ``(fed, n, success)`` tuples and are
vectorised (numpy), so 100,000 runs summarise in milliseconds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from replan.core.task import Task
from replan.core.trace import Episode, Verdict
from replan.env import task_world
from replan.env.checker import check
from replan.env.replay import replay
from replan.env.world import World, WorldState
from replan.evaluators.metric import Column, EpisodeContext, Paired, metric
from replan.evaluators.stats import N_BOOT, Feedback, bootstrap_mean, wilson


@dataclass(slots=True)
class PrefixRecord:
    """What one run contributes to the prefix metrics."""

    n: int
    fed: int | None
    success: bool | None
    first_error_code: str | None = None
    first_error_type: str | None = None
    first_error_message: str = ""
    source: str = "replay"
    after_fault: bool = False  # the first invalid call came after the first perturbed response

    def __post_init__(self) -> None:
        if self.n < 0:
            raise ValueError(f"PrefixRecord: n must be >= 0, got {self.n}")
        if self.fed is not None and not 1 <= self.fed <= self.n:
            raise ValueError(f"PrefixRecord: fed must be in 1..n={self.n}, got {self.fed}")

    @property
    def clean(self) -> bool:
        return self.fed is None

    @property
    def auc_term(self) -> float:
        """This run's (FED − 1)/n; 1 for a clean run (and for n = 0, which the summaries leave
        out of AUC-PEC by default)."""
        return 1.0 if self.fed is None or self.n == 0 else (self.fed - 1) / self.n


def episode_verdicts(
    episode: Episode, task: Task | None = None, world: World | None = None
) -> tuple[list[Verdict], str, WorldState | None]:
    """Verdicts of the episode's calls, their source, and the replayed final state.

    Replays against ``world`` (or the task's world). Without either, or when the task's tools
    are not in the corpus, returns the recorded verdicts with source ``"recorded"``; a recorded
    environment fault (timeout, empty result) counts as executable.
    """

    if world is None and task is not None:
        world = task_world_or_none(task)
    if world is not None:
        try:
            rp = replay(episode, world)
        except RuntimeError as exc:
            raise ValueError(f"episode {episode.episode_id}: replay failed: {exc}") from exc
        return rp.verdicts, "replay", rp.final_state
    verdicts = [
        s.verdict if s.verdict.code.is_agent_error else Verdict.okay() for s in episode.steps
    ]
    return verdicts, "recorded", None


def task_world_or_none(task: Task) -> World | None:
    """The task's world, or ``None`` when its tools are not in the corpus."""

    try:
        return task_world(task)
    except ValueError:
        return None


def resolve_success(
    episode: Episode, task: Task | None, final_state: WorldState | None
) -> bool | None:
    """The recorded success, else the task checker's verdict on the replayed state."""
    if episode.success is not None:
        return episode.success
    if task is None or final_state is None:
        return None
    return check(task, final_state, episode.final_answer, episode).success


def record_from_verdicts(
    verdicts: Sequence[Verdict],
    success: bool | None,
    source: str = "replay",
    fault_at: int | None = None,
) -> PrefixRecord:
    """A :class:`PrefixRecord` from per-call verdicts; ``fault_at`` is the 0-based index of the
    first perturbed response (``None``: the fault never fired)."""
    for i, v in enumerate(verdicts, start=1):
        if not v.ok:
            et = v.code.error_type
            return PrefixRecord(
                n=len(verdicts),
                fed=i,
                success=success,
                first_error_code=v.code.value,
                first_error_type=et.value if et is not None else None,
                first_error_message=v.message,
                source=source,
                after_fault=fault_at is not None and i > fault_at + 1,
            )
    return PrefixRecord(n=len(verdicts), fed=None, success=success, source=source)


def first_perturbed(episode: Episode) -> int | None:
    """0-based index of the episode's first perturbed response, ``None`` when none."""
    return next((i for i, s in enumerate(episode.steps) if s.perturbation is not None), None)


def prefix_record(
    episode: Episode, task: Task | None = None, *, world: World | None = None
) -> PrefixRecord:
    """FED, length, success and first-error type of one run (see the module docstring)."""
    verdicts, source, state = episode_verdicts(episode, task, world)
    return record_from_verdicts(
        verdicts, resolve_success(episode, task, state), source, first_perturbed(episode)
    )


def prefix_feedback(rec: PrefixRecord) -> list[Feedback]:
    """Per-run feedback: ``prefix.fed``, ``prefix.clean``, ``prefix.calls``, ``prefix.auc``,
    ``prefix.first_error_type``."""
    if rec.clean:
        where = (
            f"clean run: all {rec.n} calls executable"
            if rec.n
            else "no tool call: no evidence of executability (left out of TER and AUC-PEC)"
        )
        out = [
            Feedback("prefix.fed", None, where),
            Feedback("prefix.clean", 1.0, where),
        ]
    else:
        where = (
            f"call {rec.fed} of {rec.n} is the first not executable ({rec.first_error_code}: "
            f"{rec.first_error_message})"
        )
        out = [
            Feedback("prefix.fed", float(rec.fed), where),  # type: ignore[arg-type]
            Feedback("prefix.clean", 0.0, where),
        ]
    out.append(Feedback("prefix.calls", float(rec.n), f"verdicts from {rec.source}"))
    out.append(Feedback("prefix.auc", rec.auc_term, "(FED − 1)/n, 1 for a clean run"))
    out.append(
        Feedback(
            "prefix.first_error_type",
            None,
            f"first error code {rec.first_error_code}" if not rec.clean else "no error",
            value=rec.first_error_type or ("none" if rec.clean else "unmapped"),
        )
    )
    return out


# -- aggregation ---------------------------------------------------------------------------
@dataclass
class PrefixArrays:
    """Column view of many runs: ``fed`` (0 = clean), ``n``, ``success`` (−1 = unknown)."""

    fed: np.ndarray
    n: np.ndarray
    success: np.ndarray
    first_error_types: Counter[str]

    @classmethod
    def build(cls, records: Iterable[PrefixRecord | Sequence[Any]]) -> PrefixArrays:
        """From :class:`PrefixRecord` objects or ``(fed, n, success)`` tuples (fed None = clean)."""
        feds: list[int] = []
        ns: list[int] = []
        succ: list[int] = []
        types: Counter[str] = Counter()
        for i, r in enumerate(records):
            if isinstance(r, PrefixRecord):
                fed, n, s = r.fed, r.n, r.success
                if r.fed is not None:
                    types[r.first_error_type or "unmapped"] += 1
            else:
                try:
                    fed, n, s = r[0], r[1], r[2]
                except (TypeError, IndexError) as exc:
                    raise ValueError(
                        f"prefix record {i}: expected (fed, n, success), got {r!r}"
                    ) from exc
                if n is None or int(n) < 0:
                    raise ValueError(f"prefix record {i}: n must be >= 0, got {n!r}")
                if fed is not None and not 1 <= int(fed) <= int(n):
                    raise ValueError(f"prefix record {i}: fed must be in 1..n={n}, got {fed!r}")
            feds.append(0 if fed is None else int(fed))
            ns.append(int(n))
            succ.append(-1 if s is None else int(bool(s)))
        return cls(
            np.asarray(feds, dtype=np.int64),
            np.asarray(ns, dtype=np.int64),
            np.asarray(succ, dtype=np.int64),
            types,
        )

    @property
    def clean(self) -> np.ndarray:
        return self.fed == 0

    @property
    def survived(self) -> np.ndarray:
        """Calls executable before the first error (n for a clean run)."""
        return np.where(self.clean, self.n, self.fed - 1)

    @property
    def auc_terms(self) -> np.ndarray:
        n = np.maximum(self.n, 1)
        return np.where(self.clean | (self.n == 0), 1.0, (self.fed - 1) / n)


def pec_curve(arr: PrefixArrays) -> list[dict[str, Any]]:
    """PEC(k) and cPEC(k) for k = 1..max n, each with its Wilson interval.

    PEC(k) = #(runs valid through k and of length ≥ k) / N; cPEC(k) divides by #(length ≥ k).
    A run is valid through k iff k ≤ survived (= FED − 1, or n when clean).
    """
    total = int(arr.n.size)
    if total == 0:
        return []
    kmax = int(arr.n.max())
    surv_ge = np.cumsum(np.bincount(arr.survived, minlength=kmax + 1)[::-1])[::-1]
    len_ge = np.cumsum(np.bincount(arr.n, minlength=kmax + 1)[::-1])[::-1]
    out = []
    for k in range(1, kmax + 1):
        num, reach = int(surv_ge[k]), int(len_ge[k])
        out.append(
            {
                "k": k,
                "pec": wilson(num, total).to_dict(),
                "cpec": wilson(num, reach).to_dict(),
                "valid": num,
                "reached": reach,
            }
        )
    return out


def summarize_prefix(
    records: Iterable[PrefixRecord | Sequence[Any]] | PrefixArrays,
    *,
    seed: int = 0,
    n_boot: int = N_BOOT,
    zero_calls: str = "exclude",
) -> dict[str, Any]:
    """Aggregates over runs, each with a 95% interval.

    Keys: ``prefix.ter`` and ``prefix.auc_pec`` (over the runs with at least one call; with
    ``zero_calls="clean"`` over all runs, a zero-call run counting as clean),
    ``prefix.zero_call`` (share of all runs with no tool call; ``count`` beside it),
    ``prefix.rr`` (with ``eligible`` = the runs with an invalid call),
    ``prefix.success``, ``prefix.fed_mean`` (mean FED of runs with an error), ``prefix.pec``
    (the curve, with cPEC), ``prefix.first_error_types`` (counts and Wilson shares among runs
    with an error).
    """
    if zero_calls not in ("exclude", "clean"):
        raise ValueError(f"zero_calls must be 'exclude' or 'clean', got {zero_calls!r}")
    arr = records if isinstance(records, PrefixArrays) else PrefixArrays.build(records)
    total = int(arr.n.size)
    clean = arr.clean
    zero = arr.n == 0
    scored = ~zero if zero_calls == "exclude" else np.ones_like(zero)
    n_clean = int(clean.sum())
    eligible = total - n_clean
    succ = arr.success == 1
    rr = wilson(int((succ & ~clean).sum()), eligible).to_dict()
    rr["eligible"] = eligible
    success = wilson(int(succ.sum()), total).to_dict()
    success["success_unknown"] = int((arr.success == -1).sum())
    types = {
        t: {"count": c, "share": wilson(c, eligible).to_dict()}
        for t, c in sorted(arr.first_error_types.items(), key=lambda kv: (-kv[1], kv[0]))
    }
    return {
        "prefix.runs": {"value": total, "n": total},
        "prefix.ter": wilson(int((clean & scored).sum()), int(scored.sum())).to_dict(),
        "prefix.zero_call": {**wilson(int(zero.sum()), total).to_dict(), "count": int(zero.sum())},
        "prefix.auc_pec": bootstrap_mean(
            arr.auc_terms[scored], key="prefix.auc_pec", seed=seed, n_boot=n_boot
        ).to_dict(),
        "prefix.rr": rr,
        "prefix.success": success,
        "prefix.fed_mean": bootstrap_mean(
            arr.fed[~clean].astype(float), key="prefix.fed_mean", seed=seed, n_boot=n_boot
        ).to_dict(),
        "prefix.pec": pec_curve(arr),
        "prefix.first_error_types": types,
    }


# ---------------------------------------------------------------------------------------------
# the metric family as the registry sees it
def _summarize(
    records: Sequence[PrefixRecord], *, seed: int = 0, n_boot: int = N_BOOT, failures: int = 0
) -> dict[str, Any]:
    """:func:`summarize_prefix` (infrastructure failures are left out of process metrics)."""
    return summarize_prefix(records, seed=seed, n_boot=n_boot)


@metric(
    "prefix",
    order=20,
    feedback=prefix_feedback,
    paired=(
        Paired("success", "success rate", lambda r: r.success, "mcnemar"),
        Paired("clean", "clean-run rate", lambda r: r.clean, "mcnemar"),
        Paired("prefix.auc", "AUC-PEC", lambda r: r.auc_term, boot_key="compare.auc"),
    ),
    summarize=_summarize,
    load=lambda data: PrefixRecord(**data),
    keys={
        "prefix.fed": "first error depth: 1-based index of the first non-executable call "
        "(none if clean)",
        "prefix.clean": "1 if every call was executable in the state the earlier calls produced",
        "prefix.calls": "number of tool calls in the run",
        "prefix.auc": "(FED - 1)/n, 1 for a clean run: this run's AUC-PEC term",
        "prefix.first_error_type": "ParaRecover error type of the first non-executable call",
        "prefix.ter": "share of runs with no invalid call (runs with at least one call)",
        "prefix.auc_pec": "mean of (FED - 1)/n, 1 for clean runs (runs with at least one call)",
        "prefix.rr": "success rate among runs with an invalid call (comment: eligible count)",
        "prefix.success": "success rate",
        "prefix.pec.<k>": "share of all runs valid through call k and of length >= k",
        "prefix.cpec.<k>": "the same among runs of length >= k",
    },
    columns=(
        Column(
            "TER",
            lambda u: u.aggregate["prefix.headline"]["prefix.ter"],
            "clean-run rate (no invalid call) among runs with a call; on NP runs when the runs "
            "mix NP and P1–P4",
            note=lambda est, row: "NP runs only" if row.get("prefix_scope") == "NP" else "",
        ),
        Column(
            "0-call",
            lambda u: u.aggregate["prefix.headline"]["prefix.zero_call"],
            "share of runs with no tool call (left out of TER and AUC-PEC: no evidence)",
            lower_is_better=True,
        ),
        Column(
            "AUC-PEC",
            lambda u: u.aggregate["prefix.headline"]["prefix.auc_pec"],
            "area under the PEC curve (same runs as TER)",
        ),
        Column(
            "RR",
            lambda u: u.aggregate["prefix.headline"]["prefix.rr"],
            "success among runs with an invalid call (eligible runs; same runs as TER)",
            note=lambda est, row: f"eligible n = {est.get('eligible', 0)}" if est else "",
        ),
        Column(
            "calls",
            lambda u: bootstrap_mean(
                [s.prefix.n for s in u.scores], key="report.calls", seed=u.seed, n_boot=u.n_boot
            ).to_dict(),
            "mean tool calls per run",
            lower_is_better=True,
            digits=1,
        ),
    ),
)
def _record(ctx: EpisodeContext) -> PrefixRecord:
    """The prefix record of one run from its (replayed or recorded) verdicts."""
    return record_from_verdicts(ctx.verdicts, ctx.success, ctx.source, first_perturbed(ctx.episode))
