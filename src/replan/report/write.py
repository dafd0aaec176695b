"""Writing the report of a results directory: its HTML page and its SVG plots beside it, skipped
when nothing changed (:func:`report_state`)."""

from __future__ import annotations

import gc
import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from replan.core import linre
from replan.evaluators.stats import N_BOOT
from replan.report import REPORT_FILE, code_stamp
from replan.report.data import ALPHA, ReportData, collect, open_store
from replan.report.figures import PLOTS, make_plots, plot_file
from replan.report.html import MAX_EPISODES, render
from replan.runner.export import write_atomic

#: plot files earlier versions drew beside the report: the PNGs (the plots are SVG now, the
#: C × P heatmaps HTML tables)
OLD_PLOTS = tuple(f"report-{n}.png" for n in ("tsr", "prr", "rc", *PLOTS))
#: the page's ``<meta>`` that records the store state and options it was written from
STATE_META = "replan-report-state"


def report_state(out_dir: str | Path, **options: Any) -> str:
    """Digest of what a report of ``out_dir`` shows: the store's contents
    (:meth:`~replan.runner.store.ResultsStore.fingerprint`), the code that computes and draws
    it, and the report's ``options``."""
    with open_store(out_dir) as store:
        state = store.fingerprint()
    text = json.dumps([state, code_stamp(), sorted(options.items())], default=str)
    return hashlib.sha256(text.encode()).hexdigest()


@contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """Python's cycle collector paused: reading and aggregating a store builds hundreds of
    thousands of objects that live until the page is written, and the collector would walk them
    again and again for nothing (about a tenth of a cold report's CPU). Cycles made meanwhile
    are collected once it runs again."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _up_to_date(target: Path, state: str) -> bool:
    """Whether ``target`` is a report written from ``state`` whose plot files beside it are all
    there as it wrote them."""
    try:
        with target.open("rb") as fh:
            head = fh.read(4096).decode("utf-8", "replace")
    except OSError:
        return False
    m = linre.search(rf'<meta name="{STATE_META}" content="([0-9a-f]+);([a-z0-9,:]*)">', head)
    if m is None or m.group(1) != state:
        return False
    for item in filter(None, m.group(2).split(",")):
        name, _, digest = item.partition(":")
        try:
            text = (target.parent / plot_file(name)).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return False
        if _digest(text) != digest:
            return False
    return True


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
    """Write the report of ``out_dir`` (default ``out_dir/report.html``) and its SVG plots beside
    it (:mod:`replan.report.figures`), every file replaced atomically; returns the HTML path. When the page there was written from the same
    store contents, code and options (:func:`report_state`) and its plots are whole, nothing is
    read or written again. Raises ``FileNotFoundError`` when ``out_dir`` holds no store.
    ``data``: the store's :func:`collect` already computed (with these ``seed``, ``n_boot`` and
    ``alpha``), so as not to read the store again."""
    target = Path(path) if path is not None else Path(out_dir) / REPORT_FILE
    options = {"seed": seed, "n_boot": n_boot, "alpha": alpha, "max_episodes": max_episodes}
    state = report_state(out_dir, **options)
    if data is None:
        if _up_to_date(target, state):  # nothing changed since this page was written
            return target
        with _no_cycle_collection():
            data = collect(out_dir, seed=seed, n_boot=n_boot, alpha=alpha)
        state = report_state(out_dir, **options)  # reading may have stored missing scores
    target.parent.mkdir(parents=True, exist_ok=True)
    plots = make_plots(data)
    for name, svg in plots.items():
        file = target.parent / plot_file(name)
        if not svg:  # nothing to draw now: an earlier report's plot would contradict this one
            file.unlink(missing_ok=True)
        elif not (file.is_file() and file.read_bytes() == svg.encode("utf-8")):
            write_atomic(file, [svg.encode("utf-8")])
    for name in OLD_PLOTS:
        (target.parent / name).unlink(missing_ok=True)
    drawn = ",".join(f"{n}:{_digest(svg)}" for n in PLOTS if (svg := plots.get(n)))
    meta = f'<meta name="{STATE_META}" content="{state};{drawn}">'
    with _no_cycle_collection():
        page = render(data, plots, max_episodes=max_episodes, head=meta)
    write_atomic(target, [page.encode("utf-8")])
    return target


__all__ = ["OLD_PLOTS", "STATE_META", "report_state", "write_report"]
