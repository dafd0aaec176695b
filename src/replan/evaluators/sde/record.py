"""What one episode contributes (:class:`SDERecord`, its feedback) and the aggregates over
runs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from replan.core.plan import Plan
from replan.core.task import Task
from replan.core.trace import Episode
from replan.evaluators.metric import OMIT, Column, EpisodeContext, Paired, metric, n_note
from replan.evaluators.sde.auto import sde_auto
from replan.evaluators.sde.context import (
    is_replanner_output,
    parse_version,
    replan_context,
)
from replan.evaluators.sde.items import (
    AUTO_ITEMS,
    DIMENSIONS,
    ITEMS,
    JUDGED_ITEMS,
    SCRIPT_ITEMS,
)
from replan.evaluators.sde.judge import JudgeResult, SDEJudge
from replan.evaluators.sde.script import e5_score, tool_use_efficiency
from replan.evaluators.stats import (
    N_BOOT,
    Feedback,
    bootstrap_mean,
    estimate_from_samples,
    resample_sums,
    rng_for,
    wilson,
)


# ----------------------------------------------------------------------------------------------
# per-run record
@dataclass
class SDERecord:
    """What one episode contributes to the ParaRecover metrics."""

    episode_id: str
    success: bool | None
    plan_index: int | None = None
    replans: int = 0
    invalid_replans: int = 0
    script: dict[str, float | None] = field(default_factory=dict)  # S5, E5
    script_reasons: dict[str, str] = field(default_factory=dict)
    tool_use_efficiency: float | None = None
    auto: dict[str, float | None] = field(default_factory=dict)
    auto_reasons: dict[str, str] = field(default_factory=dict)
    judge: JudgeResult | None = None

    def items(self) -> dict[str, float | None]:
        """The rubric items for the dimensions: judged items plus the script items."""
        out: dict[str, float | None] = {i: None for i in ITEMS}
        if self.judge is not None:
            out.update({k: v for k, v in self.judge.scores.items() if k in out})
        out.update({k: v for k, v in self.script.items() if k in out})
        return out

    def dimensions(self) -> dict[str, float | None]:
        """SI, DR, ES (× 100) and Avg; ``None`` without the judge or when all items missing."""
        if self.judge is None:
            return {"SI": None, "DR": None, "ES": None, "Avg": None}
        items = self.items()
        out: dict[str, float | None] = {}
        for dim, names in DIMENSIONS.items():
            vals = [items[i] for i in names if items[i] is not None]
            out[dim] = 100 * sum(vals) / len(vals) if vals else None  # type: ignore[arg-type]
        dims = [v for v in out.values() if v is not None]
        out["Avg"] = sum(dims) / len(dims) if dims else None
        return out

    @property
    def missing_items(self) -> int:
        if self.judge is None:
            return 0
        return sum(1 for i in JUDGED_ITEMS if self.judge.scores.get(i) is None)


def sde_record(
    episode: Episode,
    task: Task | None = None,
    *,
    success: bool | None = None,
    judge: SDEJudge | None = None,
    auto: bool = True,
    plan_index: int | None = None,
) -> SDERecord:
    """Score one episode: script items, execution metrics, sde-auto and (optionally) the judge."""
    succ = episode.success if success is None else success
    replans = [pv for pv in episode.plans if is_replanner_output(episode, pv)]
    invalid = sum(1 for pv in replans if not isinstance(parse_version(pv), Plan))
    rec = SDERecord(
        episode_id=episode.episode_id,
        success=succ,
        replans=len(replans),
        invalid_replans=invalid,
    )
    ctx = replan_context(episode, task, plan_index)
    s5: float | None = None
    if ctx is not None:
        rec.plan_index = episode.plans.index(ctx.target)
        s5 = 1.0 if isinstance(ctx.parsed, Plan) else 0.0
        rec.script["S5"] = s5
        rec.script_reasons["S5"] = (
            "parses: acyclic, unique ids, deps exist, root and response present"
            if s5
            else f"{ctx.parsed.code}: {ctx.parsed.reason}"  # type: ignore[union-attr]
        )
    e5, why = e5_score(episode, task, s5, succ)
    rec.script["E5"] = e5
    rec.script_reasons["E5"] = why
    rec.tool_use_efficiency, _ = tool_use_efficiency(episode, task, succ)
    if ctx is not None and auto:
        for item, (score, reason) in sde_auto(ctx).items():
            rec.auto[item] = score
            rec.auto_reasons[item] = reason
    if ctx is not None and judge is not None:
        rec.judge = judge.judge(ctx)
    return rec


def sde_feedback(rec: SDERecord) -> list[Feedback]:
    """Per-run feedback: ``sde.S5``, ``sde.E5``, ``sde.tool_use_efficiency``,
    ``sde.invalid_dags``, ``sde.auto.<item>``, and with the judge ``sde.<item>`` and
    ``sde.SI`` / ``sde.DR`` / ``sde.ES`` / ``sde.Avg``."""
    out: list[Feedback] = []
    for item in SCRIPT_ITEMS:
        if rec.script.get(item) is not None:
            out.append(Feedback(f"sde.{item}", rec.script[item], rec.script_reasons.get(item, "")))
    if rec.tool_use_efficiency is not None:
        out.append(
            Feedback("sde.tool_use_efficiency", rec.tool_use_efficiency, "S·min(1, gt/actual)")
        )
    if rec.replans:
        out.append(
            Feedback(
                "sde.invalid_dags",
                float(rec.invalid_replans),
                f"{rec.invalid_replans} of {rec.replans} replanner outputs fail S5",
            )
        )
    for item, score in rec.auto.items():
        out.append(Feedback(f"sde.auto.{item}", score, rec.auto_reasons.get(item, "")))
    if rec.judge is not None:
        for item in JUDGED_ITEMS:
            out.append(
                Feedback(f"sde.{item}", rec.judge.scores.get(item), rec.judge.reasons.get(item, ""))
            )
        for dim, v in rec.dimensions().items():
            out.append(Feedback(f"sde.{dim}", v, f"{rec.missing_items} judged item(s) missing"))
    return out


# ----------------------------------------------------------------------------------------------
# aggregation
def _agreement(pairs: Sequence[tuple[float, float]], key: str, seed: int, n_boot: int) -> dict:
    ema = wilson(sum(1 for a, b in pairs if a == b), len(pairs)).to_dict()
    mae = bootstrap_mean(
        [abs(a - b) for a, b in pairs], key=key, seed=seed, n_boot=n_boot
    ).to_dict()
    return {"n": len(pairs), "ema": ema, "mae": mae}


def summarize_sde(
    records: Sequence[SDERecord], *, seed: int = 0, n_boot: int = N_BOOT
) -> dict[str, Any]:
    """Aggregates over runs (keys ``sde.pass@1``, ``sde.invalid_dag_rate``, ``sde.E5``,
    ``sde.tool_use_efficiency``, ``sde.auto.<item>``, and with the judge ``sde.<item>``,
    ``sde.SI`` / ``sde.DR`` / ``sde.ES`` / ``sde.Avg`` and ``sde.agreement.<item>``)."""
    out: dict[str, Any] = {}
    n = len(records)
    out["sde.pass@1"] = wilson(sum(1 for r in records if r.success), n).to_dict()
    out["sde.invalid_dag_rate"] = wilson(
        sum(r.invalid_replans for r in records), sum(r.replans for r in records)
    ).to_dict()
    for key, vals in (
        ("sde.S5", [r.script.get("S5") for r in records]),
        ("sde.E5", [r.script.get("E5") for r in records]),
        ("sde.tool_use_efficiency", [r.tool_use_efficiency for r in records]),
    ):
        got = [v for v in vals if v is not None]
        if got:
            out[key] = bootstrap_mean(got, key=key, seed=seed, n_boot=n_boot).to_dict()
    for item in AUTO_ITEMS:
        got = [r.auto[item] for r in records if r.auto.get(item) is not None]
        if got:
            out[f"sde.auto.{item}"] = bootstrap_mean(
                got, key=f"sde.auto.{item}", seed=seed, n_boot=n_boot
            ).to_dict()
    judged = [r for r in records if r.judge is not None]
    if not judged:
        return out
    for item in JUDGED_ITEMS:
        got = [r.judge.scores[item] for r in judged if r.judge.scores.get(item) is not None]  # type: ignore[union-attr]
        est = bootstrap_mean(got, key=f"sde.{item}", seed=seed, n_boot=n_boot).to_dict()
        est["missing"] = len(judged) - len(got)
        out[f"sde.{item}"] = est
    dims = [r.dimensions() for r in judged]
    rows = np.zeros((len(judged), 6))
    for i, d in enumerate(dims):
        for j, name in enumerate(("SI", "DR", "ES")):
            v = d[name]
            rows[i, 2 * j] = 0.0 if v is None else v
            rows[i, 2 * j + 1] = 0.0 if v is None else 1.0
    point: list[float] = []
    for name in ("SI", "DR", "ES"):
        got = [d[name] for d in dims if d[name] is not None]
        est = bootstrap_mean(got, key=f"sde.{name}", seed=seed, n_boot=n_boot).to_dict()
        out[f"sde.{name}"] = est
        if est["value"] is not None:
            point.append(est["value"])
    avg = sum(point) / len(point) if point else None
    sums, _ = resample_sums(rows, n_boot, rng_for(seed, "sde.Avg"))
    with np.errstate(invalid="ignore", divide="ignore"):
        per_dim = np.stack(
            [
                np.where(sums[:, 2 * j + 1] > 0, sums[:, 2 * j] / sums[:, 2 * j + 1], np.nan)
                for j in range(3)
            ],
            axis=1,
        )
    defined = ~np.isnan(per_dim)
    samples = np.where(
        defined.any(axis=1),
        np.nansum(per_dim, axis=1) / np.maximum(defined.sum(axis=1), 1),
        np.nan,
    )
    out["sde.Avg"] = estimate_from_samples(avg, samples, len(judged)).to_dict()
    out["sde.Avg"]["missing_items"] = sum(r.missing_items for r in judged)
    for item in AUTO_ITEMS:
        pairs = [
            (r.judge.scores[item], r.auto[item])  # type: ignore[union-attr]
            for r in judged
            if r.judge.scores.get(item) is not None and r.auto.get(item) is not None  # type: ignore[union-attr]
        ]
        if pairs:
            out[f"sde.agreement.{item}"] = _agreement(
                pairs,
                f"sde.agreement.{item}",
                seed,
                n_boot,  # type: ignore[arg-type]
            )
    return out


# ----------------------------------------------------------------------------------------------
# the metric family as the registry sees it
def _summarize(
    records: Sequence[SDERecord], *, seed: int = 0, n_boot: int = N_BOOT, failures: int = 0
) -> dict[str, Any]:
    """:func:`summarize_sde`; with infrastructure failures, ``sde.pass@1`` counts them as
    failed runs (a run that failed for the infrastructure did not succeed)."""
    out = summarize_sde(records, seed=seed, n_boot=n_boot)
    if failures:
        rate = wilson(sum(bool(r.success) for r in records), len(records) + failures)
        out["sde.pass@1"] = rate.to_dict() | {"failures": failures}
    return out


def _load(data: dict[str, Any]) -> SDERecord:
    data = dict(data)
    judge = data.pop("judge", None)
    return SDERecord(**data, judge=None if judge is None else JudgeResult(**judge))


def _from_replan_point(s: Any) -> bool:
    """Whether a scored run started mid-run at the replanner (its task has a replan point, or
    the replan-point graph recorded the rounds it found executed)."""
    task = getattr(s, "task", None)
    return (task is not None and task.replan_point is not None) or (
        "rounds_executed" in s.episode.metadata
    )


def _replan_point_only(key: str) -> Any:
    """A ParaRecover figure (recovery from a replan point), left out for a unit none of whose
    runs started at one -- by what the runs are, not by the suite's name."""

    def value(u: Any) -> Any:
        if not any(_from_replan_point(s) for s in u.scores):
            return OMIT
        return u.aggregate.get(key)

    return value


@metric(
    "sde",
    order=30,
    feedback=sde_feedback,
    paired=(
        Paired(
            "sde.E5", "E5 (round efficiency)", lambda r: r.script.get("E5"), boot_key="compare.e5"
        ),
    ),
    summarize=_summarize,
    load=_load,
    keys={
        "sde.S5": "the scored replan parses into a valid DAG",
        "sde.E5": "S·min(1, G/T): problem-solving efficacy in rounds",
        "sde.tool_use_efficiency": "tool-use efficiency, replan's own formula (seed 001 names "
        "it, does not define it): S·min(1, gt calls / actual calls)",
        "sde.invalid_dags": "replanner outputs of this run that fail S5",
        "sde.auto.<item>": "deterministic estimate of an SDE item (S2, S3, S4, E1, E3, D4)",
        "sde.<item>": "LLM-judged SDE item S1-S4, D1-D5, E1-E4 (1 / 0.5 / 0; missing if the "
        "judge failed)",
        "sde.SI|DR|ES|Avg": "SDE dimensions (mean of items x 100) and their mean",
        "sde.pass@1": "success rate",
        "sde.invalid_dag_rate": "share of replanner outputs failing S5",
    },
    columns=(
        Column(
            "E5",
            _replan_point_only("sde.E5"),
            "ParaRecover E5 (round efficiency)",
            optional=True,
            note=n_note,
        ),
        Column(
            "tool-use eff.",
            _replan_point_only("sde.tool_use_efficiency"),
            "tool-use efficiency, replan's own formula S·min(1, gt/actual calls)",
            optional=True,
        ),
    ),
)
def _record(ctx: EpisodeContext) -> SDERecord:
    """The SDE record of one run (judged items with ``ctx.judge``)."""
    return sde_record(ctx.episode, ctx.task, success=ctx.success, judge=ctx.judge)
