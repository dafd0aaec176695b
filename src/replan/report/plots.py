"""The report's plots, drawn with matplotlib's Agg canvas (no display, no pyplot state).

Each function returns PNG bytes (or ``None`` when there is nothing to draw); the report embeds
them as base64 and also writes them beside the HTML.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib import colormaps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from replan.report.data import Unit, cell_grid

DPI = 100
#: width (px) the report gives a plot (its 1280 px column less padding); a wider PNG is scaled
#: down by the browser, and its text with it
CONTENT_PX = 1232
#: font size (pt) of heatmap labels: cell values, ticks; titles are 2 pt larger
LABEL_PT = 11
#: heatmaps per row (four units side by side made 1,900 px wide PNGs, their labels ~6 px tall)
HEATMAP_COLUMNS = 2
#: metric -> (title, cell key, lower is better)
HEATMAP_METRICS: dict[str, tuple[str, str, bool]] = {
    "tsr": ("TSR (task success rate)", "tsr", False),
    "prr": ("PRR (perturbation recovery rate)", "prr", False),
    "rc": ("RC (recovery cost)", "rc", True),
}


def _png(fig: Figure) -> bytes:
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return buf.getvalue()


def _num(x: Any) -> float:
    return math.nan if x is None else float(x)


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


def pec_curves(units: Sequence[Unit]) -> bytes | None:
    """PEC(k) and conditional PEC(k) per unit, with their 95% Wilson bands."""
    curves = [(u.label, (u.aggregate or {}).get("prefix.pec") or []) for u in units]
    curves = [(label, rows) for label, rows in curves if rows]
    if not curves:
        return None
    kmax = pec_kmax([rows for _, rows in curves])
    curves = [(label, [r for r in rows if r["k"] <= kmax]) for label, rows in curves]
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


def heatmap(units: Sequence[Unit], metric: str) -> bytes | None:
    """One C × P heatmap per unit for ``metric`` (tsr, prr or rc); undefined cells grey."""
    title, key, lower_better = HEATMAP_METRICS[metric]
    grids = [(u, *cell_grid(u)) for u in units]
    grids = [g for g in grids if g[3]]
    if not grids:
        return None
    ncols = min(len(grids), HEATMAP_COLUMNS)
    nrows = math.ceil(len(grids) / ncols)
    width = max(len(g[2]) for g in grids)
    height = max(len(g[1]) for g in grids)
    fig = Figure(
        figsize=(ncols * (0.9 * width + 1.2) + 0.9, nrows * (0.75 * height + 1.2) + 0.4),
        layout="constrained",
    )
    axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel()
    base = colormaps["RdYlGn_r" if lower_better else "RdYlGn"]
    cmap = ListedColormap(base(np.linspace(0.1, 0.9, 256))).with_extremes(bad="#dddddd")
    image = None
    for ax, (unit, levels, modes, cells) in zip(axes, grids, strict=False):
        z = np.full((len(levels), len(modes)), np.nan)
        notes = {}
        for i, lvl in enumerate(levels):
            for j, mode in enumerate(modes):
                cell = cells.get(f"{lvl}/{mode}")
                if cell is None:
                    continue
                est = cell[key]
                v = est.get("value")
                count = est.get("exposed", cell["runs"]) if key == "prr" else cell["runs"]
                if v is not None:
                    z[i, j] = v
                notes[(i, j)] = ("–" if v is None else f"{v:.2f}") + f"\nn={count}"
        image = ax.imshow(np.ma.masked_invalid(z), cmap=cmap, vmin=0, vmax=1, aspect="auto")
        for (i, j), text in notes.items():
            ax.text(j, i, text, ha="center", va="center", fontsize=LABEL_PT)
        ax.set_xticks(range(len(modes)), modes, fontsize=LABEL_PT)
        ax.set_yticks(range(len(levels)), levels, fontsize=LABEL_PT)
        ax.set_title(unit.label, fontsize=LABEL_PT + 2)
    for ax in axes[len(grids) :]:
        ax.set_visible(False)
    if image is not None:
        bar = fig.colorbar(image, ax=list(axes[: len(grids)]), shrink=0.8)
        bar.ax.tick_params(labelsize=LABEL_PT)
    fig.suptitle(title + (" — lower is better" if lower_better else ""), fontsize=LABEL_PT + 2)
    return _png(fig)


def first_errors(
    units: Sequence[Unit], table: Mapping[str, Mapping[str, Mapping[str, Any]]]
) -> bytes | None:
    """Share of each first-error type among a unit's runs with an error (grouped bars)."""
    types = [t for t, row in table.items() if any(c["count"] for c in row.values())]
    if not types:
        return None
    labels = [u.label for u in units]
    fig = Figure(figsize=(10, 0.45 * len(types) * max(1, len(labels) / 2) + 1.5))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    h = 0.8 / len(labels)
    y = np.arange(len(types))
    for i, label in enumerate(labels):
        shares = [_num(table[t][label]["share"]["value"]) for t in types]
        ax.barh(y - 0.4 + h * (i + 0.5), np.nan_to_num(shares), height=h, label=label)
    ax.set_yticks(y, types)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of the runs with an error whose first error has this type")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return _png(fig)
