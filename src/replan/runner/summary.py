"""The comparison table a run ends with: per design (and model), every headline metric with its
95% interval. The numbers are the report's own (:mod:`replan.report.data`), so the terminal and
the HTML never disagree."""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: (column title, key of the report's summary row) of the terminal table
HEADLINE: tuple[str, ...] = ("TSR", "PRR", "RC", "TER", "AUC-PEC", "RR", "E5", "calls")


def summarize(out_dir: str | Path) -> dict[str, dict[str, Any]]:
    """``{label: {metric: estimate, "failures": n, ...}}``; label is the design (or
    ``design · model`` when the store holds several models)."""
    from replan.report.data import build_units, open_store

    with open_store(out_dir) as store:
        units, _ = build_units(store.episodes(), store.tasks())
    return {u.label: u.row for u in units}


def fmt_estimate(est: Any) -> str:
    """``0.74 [0.68, 0.80]`` (or the bare value / '–')."""
    if not isinstance(est, dict) or est.get("value") is None:
        return "–"
    v = est["value"]
    text = f"{v:.2f}" if isinstance(v, float) else str(v)
    if est.get("low") is not None and est.get("high") is not None:
        text += f" [{est['low']:.2f}, {est['high']:.2f}]"
    if est.get("eligible") is not None:
        text += f" n={est['eligible']}"
    return text
