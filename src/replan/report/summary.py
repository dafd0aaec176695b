"""The comparison table a run ends with: per design (and model), every headline metric with its
95% interval. The numbers are the report's own (:mod:`replan.report.data`), so the terminal and
the HTML never disagree."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

from replan.evaluators.metric import Column, columns
from replan.evaluators.stats import has_interval
from replan.report.data import build_units, open_store, stored_scores


def table_columns(summary: dict[str, dict[str, Any]]) -> list[Column]:
    """The columns of the terminal table (keys of the report's summary row), from the metric
    registry (:func:`replan.evaluators.metric.columns`): every always-shown column, then each
    optional one that some row has a value for."""
    return [
        c
        for c in columns()
        if not c.optional or any(r.get(c.label) is not None for r in summary.values())
    ]


def column_notes(summary: dict[str, dict[str, Any]]) -> list[str]:
    """What the columns cover, in words (printed under the table): which runs the prefix
    figures are on, how PRR/RC average, and whose formula a metric is."""
    rows = list(summary.values())
    out = []
    if any(r.get("PRR") for r in rows):
        out.append(
            "TSR, PRR, RC, Avg: ToolMaze (seed 002 §3.5, §4.2), each C × P cell first, then the "
            "mean over the cells: every cell for TSR (a run that failed for the infrastructure "
            "counts as failed in its cell), the P1–P4 cells for PRR and RC (Avg: (TSR + PRR + 1 "
            "− RC) / 3 over the cells)."
        )
    if any(r.get("prefix_scope") == "NP" for r in rows):
        out.append(
            "TER, 0-call, AUC-PEC, RR: NP runs only (under P1–P4 a call that carried an injected "
            "corrupted value would count as the agent's invalid call); per mode in the report."
        )
    if any(r.get("prefix_scope") == "all runs" and r.get("PRR") for r in rows):
        out.append(
            "TER, 0-call, AUC-PEC, RR: pooled over every run, P1–P4 included (no NP run to lead "
            "with): a call that carried an injected corrupted value counts as an invalid call."
        )
    out.append(
        "0-call: share of runs with no tool call (left out of TER and AUC-PEC: no call, no evidence)."
    )
    if any(r.get("not exposed") for r in rows):
        out.append("not exposed: perturbed runs that never reached the fault (no PRR, no cost).")
    if any("tool-use eff." in r for r in rows):
        out.append(
            "tool-use eff.: replan's own formula S·min(1, gt calls / actual calls) (seed 001 "
            "names the metric but does not define it)."
        )
    return out


def summarize(
    out_dir: str | Path, keys: Collection[str] | None = None
) -> dict[str, dict[str, Any]]:
    """``{label: {metric: estimate, "failures": n, ...}}``; label is the design (or
    ``design · model`` when the store holds several models). ``keys`` keeps only those episodes
    (a run's own selection; default: every episode in the store). The numbers come from the
    scores stored with the episodes (:func:`~replan.report.data.stored_scores`)."""
    with open_store(out_dir) as store:
        scored = stored_scores(store, store.tasks(), keys, slim=True)
    units, _ = build_units(scored)
    return {u.label: u.row for u in units}


def fmt_estimate(est: Any, sep: str = " ") -> str:
    """``0.74 [0.68, 0.80]`` (or the bare value / '–'); ``sep="\\n"`` stacks the parts, as
    the terminal table does to stay narrow. An estimate on too few independent runs for an
    interval (:data:`~replan.evaluators.stats.MIN_UNITS`) shows its n instead: ``0.50 n=1``."""
    if not isinstance(est, dict) or est.get("value") is None:
        return "–"
    v = est["value"]
    text = f"{v:.2f}" if isinstance(v, float) else str(v)
    if has_interval(est):
        text += f"{sep}[{est['low']:.2f}, {est['high']:.2f}]"
    if est.get("eligible") is not None:
        text += f"{sep}n={est['eligible']}"
    elif not has_interval(est) and "low" in est and est.get("n") is not None:
        text += f"{sep}n={est['n']}"  # too few independent runs for an interval
    return text
