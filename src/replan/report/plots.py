"""The report's plots, drawn with matplotlib's Agg canvas (no display, no pyplot state).

Each function draws what :func:`replan.report.figures.plot_inputs` says the plot shows and returns
PNG bytes; :mod:`replan.report.figures` imports this module (and matplotlib) only when a plot
is not already drawn beside the report. The C × P heatmaps are HTML tables
(:func:`replan.report.html.heatmap_section`), not images.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

DPI = 100


def _png(fig: Figure) -> bytes:
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return buf.getvalue()


def _num(x: Any) -> float:
    return math.nan if x is None else float(x)


def pec_curves(curves: Sequence[tuple[str, Sequence[Mapping[str, Any]]]]) -> bytes:
    """PEC(k) and conditional PEC(k) per unit (``(label, rows)``), with their 95% Wilson bands."""
    fig = Figure(figsize=(11, 4.2), layout="constrained")
    axes = fig.subplots(1, 2, sharey=True)
    for ax, name, title in (
        (axes[0], "pec", "PEC(k): share of all runs valid through call k"),
        (axes[1], "cpec", "conditional PEC(k): among runs with ≥ k calls"),
    ):
        for label, rows in curves:
            k = np.array([r["k"] for r in rows])
            v = np.array([_num(r[name]["value"]) for r in rows])
            lo = np.array([_num(r[name]["low"]) for r in rows])
            hi = np.array([_num(r[name]["high"]) for r in rows])
            (line,) = ax.plot(k, v, marker="o", markersize=3, label=label)
            ax.fill_between(k, lo, hi, color=line.get_color(), alpha=0.15, linewidth=0)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("k (call index)")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("share of runs")
    axes[0].legend(fontsize=8, loc="lower left")
    return _png(fig)


def first_errors(shares: Mapping[str, Mapping[str, float | None]]) -> bytes:
    """Share of each first-error type (``type -> unit label -> share``) among a unit's runs
    with an error (grouped bars)."""
    types = list(shares)
    labels = list(next(iter(shares.values())))
    fig = Figure(figsize=(10, 0.45 * len(types) * max(1, len(labels) / 2) + 1.5))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    h = 0.8 / len(labels)
    y = np.arange(len(types))
    for i, label in enumerate(labels):
        values = [_num(shares[t][label]) for t in types]
        ax.barh(y - 0.4 + h * (i + 0.5), np.nan_to_num(values), height=h, label=label)
    ax.set_yticks(y, types)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of the runs with an error whose first error has this type")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return _png(fig)
