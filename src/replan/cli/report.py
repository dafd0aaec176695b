"""``replan report DIR`` (the HTML report of a results directory) and ``replan compare DIR_A
DIR_B [--json]`` (paired deltas, B − A, between two experiments on the same tasks)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from replan.cli.terminal import labelled, plain_console


def report_command(
    out_dir: Path = typer.Argument(
        ..., file_okay=False, metavar="DIR", help="results directory (holds results.sqlite)"
    ),
    output: Path | None = typer.Option(
        None, "--output", "-o", dir_okay=False, help="HTML file (default DIR/report.html)"
    ),
    max_episodes: int = typer.Option(
        1000, "--max-episodes", min=0, help="episodes listed in the drill-down"
    ),
    shot: bool = typer.Option(
        False, "--screenshot", help="also render it in headless Chromium to report.png"
    ),
    seed: int = typer.Option(0, "--seed", help="bootstrap seed"),
    n_boot: int = typer.Option(2000, "--n-boot", min=100, help="bootstrap resamples"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object on stdout"),
) -> None:
    """Write the self-contained HTML report of a results directory (plots beside it)."""
    from replan.report import screenshot, write_report
    from replan.report.data import stored_suites, suites_line

    err = plain_console(stderr=True)
    try:
        path = write_report(
            out_dir, path=output, seed=seed, n_boot=n_boot, max_episodes=max_episodes
        )
        suites = stored_suites(out_dir)
    except (FileNotFoundError, ValueError) as exc:
        err.print(labelled("error", exc), highlight=False, soft_wrap=True)
        raise typer.Exit(1) from exc
    plots = sorted(str(p) for p in path.parent.glob("report-*.svg"))
    png = None
    if shot:
        try:
            png = screenshot(path, path.with_suffix(".png"))
        except (FileNotFoundError, RuntimeError) as exc:
            err.print(labelled("error", exc), highlight=False, soft_wrap=True)
            raise typer.Exit(1) from exc
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "report": str(path),
                    "plots": plots,
                    "screenshot": str(png) if png else None,
                    "suites": suites,
                }
            )
        )
        return
    err.print(f"report: {path}", highlight=False)
    err.print(suites_line(suites), highlight=False)
    if png:
        err.print(f"screenshot: {png}", highlight=False)


def _fmt(x: Any, signed: bool = False) -> str:
    if x is None:
        return "–"
    return f"{x:+.3f}" if signed else f"{x:.3f}"


def compare_command(
    dir_a: Path = typer.Argument(..., file_okay=False, help="results directory A (baseline)"),
    dir_b: Path = typer.Argument(..., file_okay=False, help="results directory B (the change)"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object on stdout"),
    alpha: float = typer.Option(0.05, "--alpha", min=0.0, max=1.0, help="significance level"),
    seed: int = typer.Option(0, "--seed", help="bootstrap seed"),
    n_boot: int = typer.Option(2000, "--n-boot", min=100, help="bootstrap resamples"),
    allow_suite_mismatch: bool = typer.Option(
        False,
        "--allow-suite-mismatch",
        help="compare even when A and B ran different suite versions (warns)",
    ),
) -> None:
    """Compare two experiments on the same tasks: paired deltas (B − A) per design.

    Each delta comes with its 95% interval, its paired test (McNemar or paired bootstrap) and a
    verdict in words. Directories that ran different suite versions (content digests) are
    refused unless --allow-suite-mismatch."""
    from replan.report import compare_dirs
    from replan.report.data import PAIRED_METRICS, fmt_p, suites_line

    err = plain_console(stderr=True)
    try:
        res = compare_dirs(
            dir_a,
            dir_b,
            seed=seed,
            n_boot=n_boot,
            alpha=alpha,
            allow_suite_mismatch=allow_suite_mismatch,
        )
    except (FileNotFoundError, ValueError) as exc:
        err.print(labelled("error", exc), highlight=False, soft_wrap=True)
        raise typer.Exit(1) from exc
    suites = res["suites"]
    if suites["same"] is False:
        err.print(
            labelled(
                "WARNING",
                f"A and B ran different suites (A: {suites_line(suites['a'])}; "
                f"B: {suites_line(suites['b'])}): the deltas below compare answers to different "
                "tasks",
                "bold red",
            ),
            highlight=False,
            soft_wrap=True,
        )
    elif suites["same"] is None:
        err.print(
            labelled(
                "note",
                "the suite version is not recorded in "
                + " and ".join(side.upper() for side in ("a", "b") if not suites[side])
                + ": cannot check that both ran the same suite",
                "yellow",
            ),
            highlight=False,
            soft_wrap=True,
        )
    if as_json:
        typer.echo(json.dumps(res, ensure_ascii=False))
        return
    out = plain_console()
    t = res["tasks"]
    out.print(
        f"A = {res['a']['dir']} ({res['a']['episodes']} episodes), "
        f"B = {res['b']['dir']} ({res['b']['episodes']} episodes); {t['shared']} shared "
        f"task(s); paired by {res['paired_by']}.",
        highlight=False,
    )
    for what, ids in (
        ("tasks only in A", t["only_a"]),
        ("tasks only in B", t["only_b"]),
        ("tasks defined differently in A and B", t["definition_differs"]),
        ("designs only in A", res["only_a"]),
        ("designs only in B", res["only_b"]),
    ):
        if ids:
            shown = ", ".join(ids[:8]) + (" …" if len(ids) > 8 else "")
            err.print(labelled("note", f"{len(ids)} {what}: {shown}", "yellow"), highlight=False)
    if not res["designs"]:
        err.print(labelled("error", "no design is present in both directories"))
        raise typer.Exit(1)
    words = {k: w for k, w, _ in PAIRED_METRICS}
    for label, d in res["designs"].items():
        title = f"{label}: {d['pairs']} paired runs"
        if d["model_a"] != d["model_b"]:
            title += f" (A: {d['model_a']}, B: {d['model_b']})"
        table = Table(title=title)
        for col in ("metric", "pairs", "A rate", "B rate", "B − A [95% CI]", "p", "test"):
            table.add_column(col, justify="left" if col in ("metric", "test") else "right")
        for key, m in d["metrics"].items():
            delta = _fmt(m["delta"], signed=True)
            if m["low"] is not None and m["high"] is not None:
                delta += f" [{_fmt(m['low'], True)}, {_fmt(m['high'], True)}]"
            table.add_row(
                words[key] + (" ↓" if m["lower_is_better"] else ""),
                str(m["n"]),
                _fmt(m["a"]),
                _fmt(m["b"]),
                delta,
                fmt_p(m["p_value"]),
                m["method"].split(" (")[0],
            )
        out.print(table)
        for m in d["metrics"].values():
            out.print(f"  {label}: {m['verdict']}", highlight=False)
        for side in ("a", "b"):
            if d[f"unpaired_{side}"] or d[f"failures_{side}"]:
                err.print(
                    labelled(
                        "note",
                        f"{label}: {d[f'unpaired_{side}']} run(s) of {side.upper()} without a "
                        f"partner, {d[f'failures_{side}']} failed run(s) left out",
                        "yellow",
                    ),
                    highlight=False,
                )


def register(app: typer.Typer) -> None:
    app.command("report")(report_command)
    app.command("compare")(compare_command)
