"""The HTML report of a results directory, and comparisons between two of them.

``write_report(out_dir)`` reads ``out_dir/results.sqlite`` and writes ``out_dir/report.html``: one
self-contained page (inline CSS, plots as base64 PNG, nothing fetched) with the
summary per agent (95% intervals), PEC and conditional-PEC curves, TSR / PRR / RC heatmaps over
levels × perturbation modes, first-error types, paired comparisons between designs in words,
and a drill-down to every episode's trace (stored compressed, opened per task by a few lines
of inline script). The plots are also written beside it as
``report-<name>.png``. ``compare_dirs(a, b)`` gives paired deltas between two directories.
"""

from __future__ import annotations

from pathlib import Path

from replan.evaluators.stats import N_BOOT
from replan.report.data import ALPHA, ReportData, collect, compare_dirs
from replan.report.html import MAX_EPISODES, find_chromium, plot_files, render, screenshot

REPORT_FILE = "report.html"


def make_plots(data: ReportData) -> dict[str, bytes | None]:
    """Every plot of the report as PNG bytes (``None`` where there is nothing to draw)."""
    from replan.report import plots

    if not data.episodes:
        return {}
    return {
        "pec": plots.pec_curves(data.units),
        "tsr": plots.heatmap(data.units, "tsr"),
        "prr": plots.heatmap(data.units, "prr"),
        "rc": plots.heatmap(data.units, "rc"),
        "errors": plots.first_errors(data.units, data.errors),
    }


def write_report(
    out_dir: str | Path,
    *,
    path: str | Path | None = None,
    seed: int = 0,
    n_boot: int = N_BOOT,
    alpha: float = ALPHA,
    max_episodes: int = MAX_EPISODES,
    data: ReportData | None = None,
) -> Path:
    """Write the report of ``out_dir`` (default ``out_dir/report.html``) and its PNG plots beside
    it; returns the HTML path. Raises ``FileNotFoundError`` when ``out_dir`` holds no store.
    ``data``: the store's :func:`collect` already computed (with these ``seed``, ``n_boot`` and
    ``alpha``), so as not to read the store again."""
    if data is None:
        data = collect(out_dir, seed=seed, n_boot=n_boot, alpha=alpha)
    target = Path(path) if path is not None else Path(out_dir) / REPORT_FILE
    target.parent.mkdir(parents=True, exist_ok=True)
    plots = make_plots(data)
    for name, filename in plot_files(plots).items():
        (target.parent / filename).write_bytes(plots[name])  # type: ignore[arg-type]
    target.write_text(render(data, plots, max_episodes=max_episodes), encoding="utf-8")
    return target


__all__ = [
    "REPORT_FILE",
    "ReportData",
    "collect",
    "compare_dirs",
    "find_chromium",
    "make_plots",
    "render",
    "screenshot",
    "write_report",
]
