"""The report as one self-contained HTML page: inline CSS, plots as base64 SVG, the C × P
heatmaps as coloured tables, no network.
The per-episode drill-down is stored gzip-compressed (base64) and opened per task by a few lines
of inline script (the browser's ``DecompressionStream``), which keeps the page light. Also :func:`screenshot`, which renders a page in headless Chromium (for review and for
the render test).
"""

from __future__ import annotations

import base64
import gzip
import html
import json
import os
import shutil
import signal
import subprocess
import tempfile
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from replan.core.trace import Episode, PlanVersion, Step
from replan.evaluators import EpisodeScore
from replan.evaluators.metric import columns as metric_columns
from replan.evaluators.stats import has_interval
from replan.report.data import (
    ALPHA,
    PAIRED_METRICS,
    ReportData,
    Unit,
    cell_grid,
    fmt_p,
    key_of,
    open_store,
    suite_ids,
    suites_line,
)

#: episodes shown in the drill-down by default (the rest are counted, not shown)
MAX_EPISODES = 1000
#: tasks whose traces the drill-down reads from the store at once
TRACE_PAGE = 50
#: characters of an observation or argument shown in the drill-down
MAX_VALUE_CHARS = 300

CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d1d1f;
       margin: 0 auto; max-width: 1280px; padding: 16px 24px 48px; background: #fff; }
h1 { font-size: 24px; margin: 8px 0 4px; } h2 { font-size: 19px; margin: 32px 0 8px;
     border-bottom: 1px solid #ccc; padding-bottom: 4px; } h3 { font-size: 15px; margin: 18px 0 6px; }
nav a { margin-right: 14px; color: #333; } .muted { color: #666; } .small { font-size: 12px; }
table { border-collapse: collapse; margin: 6px 0 12px; font-size: 13px; }
th, td { border: 1px solid #d0d0d0; padding: 3px 7px; text-align: right; vertical-align: top; }
th { background: #f2f2f2; } td.l, th.l { text-align: left; }
.ci { color: #666; font-size: 11px; white-space: nowrap; } .v { font-weight: 600; }
img { max-width: 100%; border: 1px solid #e4e4e4; margin: 6px 0; }
details { margin: 4px 0; } summary { cursor: pointer; }
details.task { border: 1px solid #ddd; padding: 4px 8px; margin: 6px 0; }
details.episode { margin-left: 14px; border-left: 3px solid #ccc; padding-left: 8px; }
details.episode.ok { border-left-color: #6a9f6a; } details.episode.fail { border-left-color: #b55; }
details.episode.infra { border-left-color: #999; }
tr.bad td { background: #fbeaea; } tr.fault td { background: #fff6e0; } tr.fed td { font-weight: 600; }
pre { background: #f7f7f7; padding: 6px 8px; overflow-x: auto; white-space: pre-wrap;
      word-break: break-word; font-size: 12px; margin: 4px 0; }
code { font-size: 12px; } ul.verdicts li { margin: 2px 0; }
.sig { font-weight: 600; }
.heatmaps { display: flex; flex-wrap: wrap; gap: 4px 28px; }
table.heat caption { font-weight: 600; padding: 2px; }
table.heat td { text-align: center; min-width: 64px; padding: 4px 6px; border-color: #fff; }
table.heat td .v { font-size: 14px; } table.heat td .n { font-size: 11px; }
table.heat th { background: none; border: none; }
.scale { display: flex; align-items: center; gap: 6px; margin: 2px 0 4px; }
.scale .bar { display: inline-block; width: 160px; height: 10px; border: 1px solid #ccc; }
"""


def esc(x: Any) -> str:
    return html.escape("" if x is None else str(x), quote=True)


def fmt_value(v: Any, digits: int = 2) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def fmt_estimate(est: Mapping[str, Any] | None, digits: int = 2) -> str:
    """``0.75 [0.41, 0.93]`` (value and its 95% interval), ``–`` when undefined."""
    if not est or est.get("value") is None:
        return "–"
    text = fmt_value(est["value"], digits)
    if has_interval(est):
        text += f" [{est['low']:.{digits}f}, {est['high']:.{digits}f}]"
    elif "low" in est and est.get("n") is not None:
        text += f" (n={est['n']}, no interval)"
    return text


def _cell(est: Mapping[str, Any] | None, metric: str, digits: int = 2, note: str = "") -> str:
    if not est or est.get("value") is None:
        body = '<span class="v">–</span>'
    else:
        body = f'<span class="v">{fmt_value(est["value"], digits)}</span>'
        if has_interval(est):
            body += f' <span class="ci">[{est["low"]:.{digits}f}, {est["high"]:.{digits}f}]</span>'
        elif "low" in est and est.get("n") is not None:  # too few independent runs for one
            body += f' <span class="ci">n={est["n"]}, no interval</span>'
    if note:
        body += f'<br><span class="ci">{esc(note)}</span>'
    return f'<td data-metric="{esc(metric)}">{body}</td>'


def _img(svg: str | None, alt: str) -> str:
    if not svg:
        return f'<p class="muted">({esc(alt)}: nothing to plot)</p>'
    data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    return f'<img alt="{esc(alt)}" src="data:image/svg+xml;base64,{data}">'


def _short(value: Any, limit: int = MAX_VALUE_CHARS) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- sections ----------------------------------------------------------------------------------
def summary_section(data: ReportData) -> str:
    # the metric registry's columns; an optional one only when some unit has a value
    columns = [
        c for c in metric_columns() if not c.optional or any(u.row.get(c.label) for u in data.units)
    ]
    head = "".join(f'<th title="{esc(c.description)}">{esc(c.label)}</th>' for c in columns)
    rows = []
    for u in data.units:
        r = u.row
        cells = []
        for c in columns:
            est = r.get(c.label)
            note = c.note(est, r) if c.note is not None else ""
            cells.append(_cell(est, c.label, c.digits, note))
        reasons = ", ".join(f"{k}: {v}" for k, v in r["failure_reasons"].items())
        rows.append(
            f'<tr data-unit="{esc(u.label)}"><td class="l">{esc(u.label)}</td>'
            f'<td data-metric="runs">{r["episodes"]}</td>{"".join(cells)}'
            f'<td data-metric="failures" title="{esc(reasons)}">{r["failures"]}'
            + (f'<br><span class="ci">{esc(reasons)}</span>' if reasons else "")
            + "</td></tr>"
        )
    passk = [
        f"{esc(u.label)}: pass^{u.row['pass^k']['k']} = {fmt_estimate(u.row['pass^k'])}"
        for u in data.units
        if u.row.get("pass^k")
    ]
    return (
        '<h2 id="summary">Summary per agent</h2>'
        '<p class="muted small">Value and 95% interval (Wilson for rates, bootstrap for means; '
        "<em>no interval</em> where too few independent runs leave nothing to resample). "
        "Runs that failed for a reason outside the agent (model error, crash, timeout) are "
        "counted under <em>failures</em> and left out of every metric.</p>"
        f'<table class="summary"><tr><th class="l">agent</th><th>runs</th>{head}'
        f"<th>failures</th></tr>{''.join(rows)}</table>"
        + (f'<p class="small">{"; ".join(passk)}</p>' if passk else "")
    )


def pec_section(data: ReportData, svg: str | None) -> str:
    rows = []
    for u in data.units:
        curve = (u.aggregate or {}).get("prefix.pec") or []
        if not curve:
            continue
        cells = " ".join(
            f"k={r['k']}: {fmt_value(r['pec']['value'])} / {fmt_value(r['cpec']['value'])}"
            for r in curve
        )
        rows.append(f'<tr><td class="l">{esc(u.label)}</td><td class="l small">{cells}</td></tr>')
    table = (
        '<details><summary>PEC(k) / cPEC(k) values</summary><table><tr><th class="l">agent</th>'
        f'<th class="l">PEC / cPEC by k</th></tr>{"".join(rows)}</table></details>'
        if rows
        else ""
    )
    return (
        '<h2 id="pec">Prefix executability</h2>'
        '<p class="muted small">PEC(k): runs whose first k calls were all executable and that '
        "made at least k calls, over all runs. cPEC(k): the same over runs with at least k calls. "
        "Bands: 95% Wilson intervals. The plot stops where fewer than 5% of an agent's runs (or "
        "3 runs) are still that long; the table below has every k.</p>"
        + _img(svg, "PEC and conditional PEC curves")
        + table
    )


def _cxp_table(unit: Unit) -> str:
    levels, modes, cells = cell_grid(unit)
    if not cells:
        return ""
    head = "".join(f"<th>{esc(m)}</th>" for m in modes)
    rows = []
    for lvl in levels:
        tds = []
        for m in modes:
            c = cells.get(f"{lvl}/{m}")
            if c is None:
                tds.append('<td class="muted">·</td>')
                continue
            tds.append(
                f'<td data-cell="{esc(lvl)}/{esc(m)}">TSR {fmt_estimate(c["tsr"])}<br>'
                f"PRR {fmt_estimate(c['prr'])} <span class='ci'>(exposed {c['prr']['exposed']})"
                f"</span><br>RC {fmt_estimate(c['rc'])}<br>"
                f'<span class="ci">runs {c["runs"]}</span></td>'
            )
        rows.append(f"<tr><th>{esc(lvl)}</th>{''.join(tds)}</tr>")
    return (
        f"<details><summary>{esc(unit.label)}: C × P cells</summary>"
        f'<table class="cxp" data-unit="{esc(unit.label)}"><tr><th>level</th>{head}</tr>'
        f"{''.join(rows)}</table></details>"
    )


#: metric -> (title, cell key, lower is better): the C × P heatmaps
HEATMAP_METRICS: dict[str, tuple[str, str, bool]] = {
    "tsr": ("TSR (task success rate)", "tsr", False),
    "prr": ("PRR (perturbation recovery rate)", "prr", False),
    "rc": ("RC (recovery cost)", "rc", True),
}
#: ColorBrewer's RdYlGn (11 classes), red to green: the heatmaps' colour scale
RDYLGN = (
    "#a50026", "#d73027", "#f46d43", "#fdae61", "#fee08b", "#ffffbf",
    "#d9ef8b", "#a6d96a", "#66bd63", "#1a9850", "#006837",
)  # fmt: skip
#: the part of the scale a value in [0, 1] maps onto (the darkest ends would hide the text)
SCALE_SPAN = (0.1, 0.9)
#: an undefined cell (no exposed run, no run)
UNDEFINED_COLOUR = "#dddddd"


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    return int(hex_colour[1:3], 16), int(hex_colour[3:5], 16), int(hex_colour[5:7], 16)


def scale_colour(value: float, lower_better: bool = False) -> str:
    """The heatmap colour of ``value`` in [0, 1]: green is good, red bad (reversed when lower
    is better), interpolated on :data:`RDYLGN` within :data:`SCALE_SPAN`."""
    v = min(1.0, max(0.0, value))
    v = 1.0 - v if lower_better else v
    x = (SCALE_SPAN[0] + v * (SCALE_SPAN[1] - SCALE_SPAN[0])) * (len(RDYLGN) - 1)
    i = min(int(x), len(RDYLGN) - 2)
    a, b = _rgb(RDYLGN[i]), _rgb(RDYLGN[i + 1])
    return "#" + "".join(f"{round(p + (q - p) * (x - i)):02x}" for p, q in zip(a, b, strict=True))


def text_colour(background: str) -> str:
    """Black or white, whichever reads better on ``background`` (WCAG relative luminance)."""

    def lin(c: int) -> float:
        s = c / 255
        return s / 12.92 if s <= 0.03928 else ((s + 0.055) / 1.055) ** 2.4

    r, g, b = (lin(c) for c in _rgb(background))
    lum = 0.2126 * r + 0.7152 * g + 0.0722 * b
    return "#000" if (lum + 0.05) / 0.05 >= 1.05 / (lum + 0.05) else "#fff"


def heatmap_table(unit: Unit, metric: str) -> str:
    """One unit's C × P heatmap of ``metric`` as a table: each cell's value and sample size
    (runs; exposed runs for PRR), coloured by the value; grey where undefined."""
    _, key, lower_better = HEATMAP_METRICS[metric]
    levels, modes, cells = cell_grid(unit)
    head = "".join(f'<th scope="col">{esc(m)}</th>' for m in modes)
    rows = []
    for lvl in levels:
        tds = []
        for m in modes:
            cell = cells.get(f"{lvl}/{m}")
            if cell is None:
                tds.append(f'<td class="undef" style="background:{UNDEFINED_COLOUR}"></td>')
                continue
            est = cell[key]
            count = est.get("exposed", cell["runs"]) if key == "prr" else cell["runs"]
            v = est.get("value")
            bg = UNDEFINED_COLOUR if v is None else scale_colour(v, lower_better)
            tds.append(
                f'<td data-cell="{esc(lvl)}/{esc(m)}" style="background:{bg};'
                f'color:{text_colour(bg)}" title="{esc(metric.upper())} {esc(fmt_estimate(est))}">'
                f'<span class="v">{fmt_value(v)}</span><br><span class="n">n={count}</span></td>'
            )
        rows.append(f'<tr><th scope="row">{esc(lvl)}</th>{"".join(tds)}</tr>')
    return (
        f'<table class="heat" data-unit="{esc(unit.label)}" data-metric="{esc(metric)}">'
        f"<caption>{esc(unit.label)}</caption><tr><th></th>{head}</tr>{''.join(rows)}</table>"
    )


def _scale_legend(lower_better: bool) -> str:
    stops = ", ".join(scale_colour(i / 10, lower_better) for i in range(11))
    return (
        '<div class="scale small"><span>0</span><span class="bar" style="background:'
        f'linear-gradient(to right, {stops})"></span><span>1</span>'
        f'<span class="muted">{"lower" if lower_better else "higher"} is better; grey: undefined'
        "</span></div>"
    )


def heatmap_section(data: ReportData) -> str:
    parts = [
        '<h2 id="cxp">Recovery over complexity × perturbation</h2>',
        '<p class="muted small">Levels C1–C4 (rows) × modes NP, P1–P4 (columns): P1 explicit '
        "transient, P2 explicit permanent, P3 implicit transient, P4 implicit permanent. Each "
        "cell shows the value and its sample size (runs; exposed runs for PRR), its 95% interval "
        "on hover; grey: undefined (no run, or no exposed run).</p>",
    ]
    for metric, (title, _, lower_better) in HEATMAP_METRICS.items():
        tables = [heatmap_table(u, metric) for u in data.units if cell_grid(u)[2]]
        if not tables:
            parts.append(f'<p class="muted">({esc(title)}: nothing to show)</p>')
            continue
        parts.append(
            f'<h3>{esc(title)}</h3>{_scale_legend(lower_better)}<div class="heatmaps">'
            f"{''.join(tables)}</div>"
        )
    parts += [_cxp_table(u) for u in data.units]
    return "".join(parts)


def errors_section(data: ReportData, svg: str | None) -> str:
    labels = [u.label for u in data.units]
    head = "".join(f"<th>{esc(lbl)}</th>" for lbl in labels)
    rows = []
    for t, row in data.errors.items():
        tds = "".join(
            f'<td data-unit="{esc(lbl)}">{row[lbl]["count"]}'
            + (
                f' <span class="ci">{fmt_value(row[lbl]["share"]["value"])}</span>'
                if row[lbl]["count"]
                else ""
            )
            + "</td>"
            for lbl in labels
        )
        rows.append(f'<tr data-type="{esc(t)}"><td class="l">{esc(t)}</td>{tds}</tr>')
    eligible = "".join(
        f"<td>{(u.aggregate or {}).get('prefix.rr', {}).get('eligible', 0)}</td>"
        for u in data.units
    )
    return (
        '<h2 id="errors">First error, by ParaRecover type</h2>'
        '<p class="muted small">The type of each run\'s first non-executable call (counts, and '
        "the share among the agent's runs with an error).</p>"
        + _img(svg, "first error types")
        + f'<table class="errors"><tr><th class="l">type</th>{head}</tr>{"".join(rows)}'
        f'<tr><th class="l">runs with an error</th>{eligible}</tr></table>'
    )


def _words_html(text: str) -> str:
    return f'<span class="sig">{esc(text)}</span>' if " has a " in text else esc(text)


def comparisons_section(data: ReportData) -> str:
    if not data.comparisons:
        return (
            '<h2 id="compare">Paired comparisons</h2>'
            '<p class="muted">One agent only: nothing to compare.</p>'
        )
    words = {k: w for k, w, _ in PAIRED_METRICS}
    items, rows = [], []
    for c in data.comparisons:
        sub = []
        for key, t in c["tests"].items():
            sub.append(f"<li>{_words_html(t['verdict'])}</li>")
            diff = (
                "–"
                if t["difference"] is None
                else f"{t['difference']:+.3f}"
                + (
                    f" [{t['low']:+.3f}, {t['high']:+.3f}]"
                    if t.get("low") is not None and t.get("high") is not None
                    else ""
                )
            )
            rows.append(
                f'<tr data-pair="{esc(c["x"])} vs {esc(c["y"])}" data-metric="{esc(key)}">'
                f'<td class="l">{esc(c["x"])} − {esc(c["y"])}</td><td class="l">{esc(words[key])}'
                f"</td><td>{t['n']}</td><td>{fmt_value(t.get('x'))}</td>"
                f"<td>{fmt_value(t.get('y'))}</td><td>{esc(diff)}</td>"
                f'<td>{esc(fmt_p(t["p_value"]))}</td><td class="l small">{esc(t["method"])}</td>'
                "</tr>"
            )
        extra = []
        if c["unpaired_x"] or c["unpaired_y"]:
            extra.append(
                f"{c['unpaired_x']} run(s) of {c['x']} and {c['unpaired_y']} of {c['y']} had no "
                "partner on the same (task, seed) and were left out"
            )
        if c["failures_x"] or c["failures_y"]:
            extra.append(
                f"failed runs left out: {c['failures_x']} of {c['x']}, {c['failures_y']} of {c['y']}"
            )
        if extra:
            sub.append(f'<li class="muted small">{esc("; ".join(extra))}</li>')
        items.append(
            f"<li><strong>{esc(c['x'])} vs {esc(c['y'])}</strong> ({c['pairs']} paired runs)"
            f"<ul>{''.join(sub)}</ul></li>"
        )
    return (
        '<h2 id="compare">Paired comparisons</h2>'
        f'<p class="muted small">Same tasks and seeds; McNemar for rates, paired bootstrap for '
        f"scores; significant at p &lt; {ALPHA} (not adjusted for multiple comparisons). "
        "Differences are row agent minus column agent, with 95% intervals.</p>"
        f'<ul class="verdicts">{"".join(items)}</ul>'
        '<details><summary>All paired tests</summary><table class="pairs"><tr>'
        '<th class="l">pair</th><th class="l">metric</th><th>pairs</th><th>first</th>'
        '<th>second</th><th>difference [95% CI]</th><th>p</th><th class="l">test</th></tr>'
        f"{''.join(rows)}</table></details>"
    )


def _step_row(step: Step, fed_index: int | None, position: int) -> str:
    v = step.verdict
    cls = []
    if not v.ok:
        cls.append("bad")
    if step.perturbation is not None:
        cls.append("fault")
    if fed_index is not None and position == fed_index:
        cls.append("fed")
    p = step.perturbation
    fault = (
        f"{p.mode} {p.kind} on {p.victim}"
        + (f" (sentinel {_short(p.sentinel, 40)})" if p.sentinel is not None else "")
        if p is not None
        else ""
    )
    verdict = v.code.value + (f": {v.message}" if v.message else "")
    if fed_index is not None and position == fed_index:
        verdict += " ← first error (FED)"
    return (
        f'<tr class="{" ".join(cls)}" data-verdict="{esc(v.code.value)}">'
        f"<td>{position}</td><td>{step.round}</td><td>{esc(step.call.node_id or '')}</td>"
        f'<td class="l"><code>{esc(step.call.tool)}</code></td>'
        f'<td class="l"><code>{esc(_short(step.call.args))}</code></td>'
        f'<td class="l">{esc(verdict)}</td><td class="l">{esc(fault)}</td>'
        f'<td class="l"><code>{esc(_short(step.observation))}</code></td></tr>'
    )


def _plan_block(pv: PlanVersion) -> str:
    status = "parses" if pv.parse_ok else f"does not parse: {pv.parse_error}"
    if pv.approved is not None:
        status += "; approved" if pv.approved else "; not approved"
    findings = "".join(
        f"<li>{esc(f.severity)} at node {esc(f.node)}: {esc(f.code.value)} — {esc(f.message)}</li>"
        for f in pv.findings
    )
    return (
        f'<details class="plan"><summary>plan {pv.index} ({esc(pv.source)}, round {pv.round}): '
        f"{esc(status)}{f', {len(pv.findings)} finding(s)' if pv.findings else ''}</summary>"
        + (f"<p><em>thought:</em> {esc(pv.thought)}</p>" if pv.thought else "")
        + (f"<ul>{findings}</ul>" if findings else "")
        + f"<pre>{esc(pv.text or json.dumps(pv.plan, ensure_ascii=False))}</pre></details>"
    )


def _episode_block(ep: Episode, score: EpisodeScore | None, show_model: bool) -> str:
    infra = score is None
    if infra:
        outcome, cls = f"failed ({ep.end_reason.value})", "infra"
    else:
        outcome = "success" if score.prefix.success else "no success"
        cls = "ok" if score.prefix.success else "fail"
    fed = None if score is None else score.prefix.fed
    fed_text = (
        ""
        if score is None
        else "no tool call"
        if not ep.steps
        else ("clean" if fed is None else f"FED {fed}")
    )
    who = ep.design + (f" · {ep.model}" if show_model else "")
    summary = (
        f"{esc(who)} · seed {ep.seed} — {esc(outcome)} — {esc(ep.end_reason.value)} — "
        f"{len(ep.steps)} call(s){' — ' + esc(fed_text) if fed_text else ''}"
    )
    if score is not None and score.recovery.exposed:
        summary += f" — fault {'recovered' if score.recovery.recovered else 'not recovered'}"
    elif score is not None and score.recovery.mode in ("P1", "P2", "P3", "P4"):
        summary += " — fault not exposed"
    rows = "".join(_step_row(s, fed, i) for i, s in enumerate(ep.steps, start=1))
    steps = (
        '<table class="steps"><tr><th>#</th><th>round</th><th>node</th><th class="l">tool</th>'
        '<th class="l">args</th><th class="l">verdict</th><th class="l">injected fault</th>'
        f'<th class="l">observation</th></tr>{rows}</table>'
        if rows
        else '<p class="muted">no tool calls</p>'
    )
    plans = "".join(_plan_block(pv) for pv in ep.plans)
    tail = []
    if score is not None and score.recovery.exposed:
        rec = score.recovery
        tail.append(f"recovery: {rec.verdict + ' — ' if rec.verdict else ''}{rec.reason}")
        for e in rec.evidence:  # where a corrupted value propagated, and in which form
            tail.append(f"propagated to the {e['where']}: {e['form']}")
    if ep.error:
        tail.append(f"error: {ep.error}")
    return (
        f'<details class="episode {cls}" data-key="{esc(key_of(ep))}"><summary>{summary}</summary>'
        f"{steps}{plans}"
        + f"<p><em>answer:</em> {esc(ep.final_answer) if ep.final_answer else '(none)'}</p>"
        + "".join(f'<pre class="small">{esc(t)}</pre>' for t in tail)
        + "</details>"
    )


def _task_blocks(
    data: ReportData, chosen: list[tuple[str, list[Episode]]], show_model: bool, first: bool
) -> list[str]:
    """The drill-down blocks of ``chosen`` tasks; slim data reads these tasks' traces from the
    store here, a page of tasks at a time, so the report never holds every trace it shows."""
    if data.slim:
        with open_store(data.out_dir) as store:
            full = store.episodes_by_key(key_of(e) for _, eps in chosen for e in eps)
        chosen = [(t, [full.get(key_of(e), e) for e in eps]) for t, eps in chosen]
    blocks = []
    for task_id, eps in chosen:
        task = data.tasks.get(task_id)
        where = "/".join(x for x in ((task.level if task else None), eps[0].mode) if x)
        scored = [data.scores.get(key_of(e)) for e in eps]
        ok = sum(1 for s in scored if s is not None and s.prefix.success)
        query = task.query if task else eps[0].query
        inner = "".join(_episode_block(e, s, show_model) for e, s in zip(eps, scored, strict=True))
        blocks.append(
            f'<details class="task" data-task="{esc(task_id)}"{" open" if first else ""}>'
            f"<summary><code>{esc(task_id)}</code> {esc(where)} — {len(eps)} run(s), {ok} succeeded — "
            f'<span class="muted">{esc(_short(query, 160))}</span></summary>'
            f'<div class="lazy" data-gz="{pack(inner)}"></div></details>'
        )
        first = False
    return blocks


def episodes_section(data: ReportData, max_episodes: int = MAX_EPISODES) -> str:
    by_task: dict[str, list[Episode]] = defaultdict(list)
    for ep in data.episodes:
        by_task[ep.task_id].append(ep)
    show_model = len({e.model for e in data.episodes}) > 1
    shown = 0
    chosen: list[tuple[str, list[Episode]]] = []
    for task_id in sorted(by_task):
        if shown >= max_episodes:
            break
        eps = sorted(by_task[task_id], key=lambda e: (e.design, e.model, e.seed))
        eps = eps[: max_episodes - shown]
        shown += len(eps)
        chosen.append((task_id, eps))
    blocks: list[str] = []
    for at in range(0, len(chosen), TRACE_PAGE):
        blocks.extend(_task_blocks(data, chosen[at : at + TRACE_PAGE], show_model, not blocks))
    more = len(data.episodes) - shown
    note = (
        f'<p class="muted">{more} more episode(s) not shown (raise --max-episodes, or read '
        "results.sqlite).</p>"
        if more > 0
        else ""
    )
    return (
        '<h2 id="episodes">Episodes</h2>'
        '<p class="muted small">Grouped by task. Each run lists its calls in execution order with '
        "the verdict the environment recorded (the first not executable one is marked FED), the "
        "injected faults, and every plan version.</p>"
        '<noscript><p class="muted">The episode details are stored compressed in this page and '
        "need JavaScript to open; without it, read them with <code>replan export episodes "
        "DIR</code>.</p></noscript>" + "".join(blocks) + note + f"<script>{UNPACK_JS}</script>"
    )


#: opens a task's compressed drill-down when its ``<details>`` is opened (gzip, base64)
UNPACK_JS = (
    "(function(){async function unpack(el){var b=Uint8Array.from(atob(el.dataset.gz),"
    "function(c){return c.charCodeAt(0);});el.removeAttribute('data-gz');var s=new Blob([b])"
    ".stream().pipeThrough(new DecompressionStream('gzip'));el.innerHTML=await new Response(s)"
    ".text();}document.querySelectorAll('details.task').forEach(function(d){function f(){var "
    "el=d.querySelector('div.lazy[data-gz]');if(d.open&&el)unpack(el);}d.addEventListener("
    "'toggle',f);f();});})();"
)


def pack(fragment: str) -> str:
    """An HTML fragment gzip-compressed and base64-encoded, for :data:`UNPACK_JS` (a 240-episode
    drill-down shrinks about tenfold; the page's summary stays plain HTML)."""
    return base64.b64encode(
        gzip.compress(fragment.encode("utf-8"), compresslevel=6, mtime=0)
    ).decode("ascii")


def unpack(encoded: str) -> str:
    """The HTML fragment of :func:`pack` (for tests and tools reading a report)."""
    return gzip.decompress(base64.b64decode(encoded)).decode("utf-8")


def experiments_section(data: ReportData) -> str:
    items = "".join(
        f"<details><summary>experiment <code>{esc(eid)}</code></summary>"
        f"<pre>{esc(json.dumps(cfg, indent=2, sort_keys=True, default=str))}</pre></details>"
        for eid, cfg in data.experiments
    )
    return '<h2 id="experiments">Experiments</h2>' + (items or '<p class="muted">none</p>')


def render(
    data: ReportData,
    plots: Mapping[str, str | None],
    *,
    max_episodes: int = MAX_EPISODES,
    title: str | None = None,
    head: str = "",
) -> str:
    """The whole page as a string (``head``: more markup for its ``<head>``)."""
    title = title or f"replan report — {data.out_dir.name or data.out_dir}"
    failures = sum(u.row["failures"] for u in data.units)
    designs = sorted({u.design for u in data.units})
    models = sorted({u.model for u in data.units})
    intro = (
        f"<p>{len(data.episodes)} episode(s) ({failures} failed) on {len(data.tasks)} task(s); "
        f"designs: {esc(', '.join(designs) or '–')}; models: {esc(', '.join(models) or '–')}; "
        f"{esc(suites_line(suite_ids(data.experiments)))}. "
        f'<span class="muted">From <code>{esc(data.out_dir)}/results.sqlite</code>.</span></p>'
    )
    from replan.models.simulated.profiles import model_notes

    intro += "".join(f'<p class="note">{esc(n)}</p>' for n in model_notes(models))
    if not data.episodes:
        body = intro + '<p class="muted">No episodes yet: nothing to report.</p>'
    else:
        body = (
            intro
            + '<nav><a href="#summary">summary</a><a href="#pec">PEC</a><a href="#cxp">C × P</a>'
            '<a href="#errors">first errors</a><a href="#compare">comparisons</a>'
            '<a href="#episodes">episodes</a><a href="#experiments">experiments</a></nav>'
            + summary_section(data)
            + pec_section(data, plots.get("pec"))
            + heatmap_section(data)
            + errors_section(data, plots.get("errors"))
            + comparisons_section(data)
            + episodes_section(data, max_episodes)
            + experiments_section(data)
        )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"{head}"
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
        f"<h1>{esc(title)}</h1>{body}</body></html>\n"
    )


# -- headless rendering -------------------------------------------------------------------------
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str | None:
    """Path of a Chromium/Chrome executable, or ``None``."""
    for name in CHROMIUM_NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


def screenshot(
    page: str | Path,
    png: str | Path,
    *,
    chromium: str | None = None,
    size: tuple[int, int] = (1280, 3000),
    timeout_s: float = 120,
) -> Path:
    """Render ``page`` in headless Chromium (no network, throwaway profile) into ``png``.

    Raises ``FileNotFoundError`` when no Chromium is installed and ``RuntimeError`` (with
    Chromium's output) when it writes no screenshot.
    """
    exe = chromium or find_chromium()
    if exe is None:
        raise FileNotFoundError(
            "no Chromium found (looked for " + ", ".join(CHROMIUM_NAMES) + "); on Debian: "
            "apt-get install -y chromium"
        )
    page, png = Path(page).resolve(), Path(png).resolve()
    png.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="replan-chromium-") as profile:
        cmd = [
            exe,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",
            f"--window-size={size[0]},{size[1]}",
            f"--screenshot={png}",
            page.as_uri(),
        ]
        # its own session, so that a hung browser is ended with all its helper processes
        proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            out, err = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise RuntimeError(f"Chromium did not finish {page} within {timeout_s:g} s") from None
    if not png.is_file() or png.stat().st_size == 0:
        raise RuntimeError(
            f"Chromium wrote no screenshot of {page} (exit {proc.returncode}): "
            f"{(err or out)[-2000:]}"
        )
    return png
