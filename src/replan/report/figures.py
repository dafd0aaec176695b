"""The report's plots: what each shows, as plain data (:func:`plot_inputs`), drawn as SVG
(:mod:`replan.report.plots`) into the page and beside it as ``report-<name>.svg``.

Drawing both costs milliseconds, so a plot is drawn with its page, every time; a report of an
unchanged store is not written again at all (:func:`replan.report.write.report_state`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from replan.report.data import ReportData

#: the plots a report draws, in page order
PLOTS = ("pec", "errors")


def plot_file(name: str) -> str:
    """The file name of plot ``name`` beside the report's HTML."""
    return f"report-{name}.svg"


def pec_kmax(curves: Sequence[Sequence[Mapping[str, Any]]], share: float = 0.05) -> int:
    """The last k worth plotting: where at least ``share`` of some agent's runs (and 3 runs)
    still have k calls (beyond it cPEC rests on a handful of runs and PEC is flat at ~0)."""
    best = 1
    for rows in curves:
        if not rows:
            continue
        total = rows[0]["pec"]["n"]
        need = min(total, max(3, math.ceil(share * total)))
        reach = [r["k"] for r in rows if r["reached"] >= need]
        best = max(best, max(reach, default=1))
    return best


def plot_inputs(data: ReportData) -> dict[str, Any]:
    """What each plot of :data:`PLOTS` shows, as JSON-able data (``None``: nothing to draw).

    ``pec``: ``[(unit label, PEC rows up to :func:`pec_kmax`)]``; ``errors``: first-error
    type -> unit label -> share, for the types some unit met."""
    if not data.episodes:
        return {}
    curves = [(u.label, (u.aggregate or {}).get("prefix.pec") or []) for u in data.units]
    curves = [(label, rows) for label, rows in curves if rows]
    kmax = pec_kmax([rows for _, rows in curves])
    pec = [(label, [r for r in rows if r["k"] <= kmax]) for label, rows in curves]
    shares = {
        t: {label: cell["share"]["value"] for label, cell in row.items()}
        for t, row in data.errors.items()
        if any(c["count"] for c in row.values())
    }
    return {"pec": pec or None, "errors": shares or None}


def draw(name: str, shown: Any) -> str:
    """Plot ``name`` showing ``shown`` (:func:`plot_inputs`), as an SVG document."""
    from replan.report import plots

    if name == "pec":
        return plots.pec_curves(shown)
    return plots.first_errors(shown)


def make_plots(data: ReportData) -> dict[str, str | None]:
    """Every plot of the report as SVG text (``None`` where there is nothing to draw)."""
    return {
        name: None if shown is None else draw(name, shown)
        for name, shown in plot_inputs(data).items()
    }
