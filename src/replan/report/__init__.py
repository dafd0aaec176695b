"""The HTML report of a results directory, and comparisons between two of them.

``write_report(out_dir)`` reads ``out_dir/results.sqlite`` and writes ``out_dir/report.html``: one
self-contained page (inline CSS, plots as base64 SVG, heatmaps as coloured tables, nothing fetched) with the
summary per agent (95% intervals), PEC and conditional-PEC curves, TSR / PRR / RC heatmaps over
levels × perturbation modes, first-error types, paired comparisons between designs in words,
and a drill-down to every episode's trace (stored compressed, opened per task by a few lines
of inline script). The plots are also written beside it as
``report-<name>.svg``. ``compare_dirs(a, b)`` gives paired deltas between two directories.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from replan.lazy import lazy_exports

REPORT_FILE = "report.html"

#: loaded on first use: ``replan run`` reuses a summary and a report without loading the
#: scoring or plotting code
_LAZY = {
    "ALPHA": ("replan.report.data", "ALPHA"),
    "ReportData": ("replan.report.data", "ReportData"),
    "collect": ("replan.report.data", "collect"),
    "compare_dirs": ("replan.report.data", "compare_dirs"),
    "open_store": ("replan.report.data", "open_store"),
    "PLOTS": ("replan.report.figures", "PLOTS"),
    "plot_file": ("replan.report.figures", "plot_file"),
    "MAX_EPISODES": ("replan.report.html", "MAX_EPISODES"),
    "find_chromium": ("replan.report.html", "find_chromium"),
    "render": ("replan.report.html", "render"),
    "screenshot": ("replan.report.html", "screenshot"),
    "OLD_PLOTS": ("replan.report.write", "OLD_PLOTS"),
    "STATE_META": ("replan.report.write", "STATE_META"),
    "make_plots": ("replan.report.figures", "make_plots"),
    "report_state": ("replan.report.write", "report_state"),
    "write_report": ("replan.report.write", "write_report"),
}


__getattr__ = lazy_exports(__name__, _LAZY)


def code_stamp() -> list[Any]:
    """The size and mtime of every file of the code a summary or a report is computed by
    (``core``, ``env``, ``evaluators``, ``report``) and the plugins in reach
    (:func:`~replan.core.registry.plugin_stamp`), so that nothing cached from a report (a
    summary, a page) is shown after that code changed (an upgrade, an edit, another plugin);
    read without loading that code."""
    from replan.core.registry import plugin_stamp

    root = Path(__file__).resolve().parents[1]
    files = sorted(
        f
        for part in ("core", "env", "evaluators", "report")
        for f in (root / part).rglob("*")
        if f.is_file() and "__pycache__" not in f.parts and f.suffix != ".pyc"
    )
    return [
        plugin_stamp(),
        *([str(f.relative_to(root)), f.stat().st_size, f.stat().st_mtime_ns] for f in files),
    ]


__all__ = ["REPORT_FILE", "code_stamp", *_LAZY]
