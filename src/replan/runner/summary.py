"""The comparison table a run ends with: per design (and model), every headline metric with its
95% interval, computed by the evaluators from the results store."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from replan.runner.store import FAILURE_END_REASONS, ResultsStore

#: (column title, metric key in ``replan.evaluators.score``) of the terminal table
HEADLINE: tuple[tuple[str, str], ...] = (
    ("TSR", "toolmaze.tsr"),
    ("PRR", "toolmaze.prr"),
    ("RC", "toolmaze.rc"),
    ("TER", "prefix.ter"),
    ("AUC-PEC", "prefix.auc_pec"),
    ("RR", "prefix.rr"),
    ("E5", "sde.E5"),
    ("calls", "prefix.calls"),
)


def summarize(store: ResultsStore, experiment_id: str | None = None) -> dict[str, Any]:
    """``{label: {metric: estimate}}`` where label is ``design`` (or ``design @ model``)."""
    from replan.evaluators import score

    episodes = store.episodes(experiment_id)
    tasks = store.tasks()
    models = {e.model for e in episodes}
    parts: dict[str, list[Any]] = defaultdict(list)
    for e in episodes:
        label = e.design if len(models) <= 1 else f"{e.design} @ {e.model}"
        parts[label].append(e)
    out: dict[str, Any] = {}
    for label in sorted(parts):
        eps = parts[label]
        agg = score(eps, tasks)
        agg.pop("tables", None)
        agg["failures"] = sum(e.end_reason.value in FAILURE_END_REASONS for e in eps)
        agg["failure_reasons"] = dict(
            sorted(
                {r: sum(e.end_reason.value == r for e in eps) for r in FAILURE_END_REASONS}.items()
            )
        )
        out[label] = agg
    return out


def fmt_estimate(est: Any) -> str:
    """``0.74 [0.68, 0.80]`` (or the bare value / '–')."""
    if not isinstance(est, dict) or est.get("value") is None:
        return "–"
    v = est["value"]
    text = f"{v:.2f}" if isinstance(v, float) else str(v)
    if est.get("low") is not None and est.get("high") is not None:
        text += f" [{est['low']:.2f}, {est['high']:.2f}]"
    return text
