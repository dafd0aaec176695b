"""``replan suites list`` and ``replan suites stats NAME [--json]``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from replan.cli.terminal import plain_console

suites_app = typer.Typer(
    help="Benchmark suites: what exists and what is in them.", no_args_is_help=True
)


@suites_app.command("list")
def suites_list(
    as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
) -> None:
    """The suites `replan run --suite` and `replan.load_suite` accept."""
    from replan.suites import list_suites

    rows = list_suites()
    if as_json:
        typer.echo(json.dumps({"suites": rows}, ensure_ascii=False))
        return
    table = Table(title="replan suites")
    table.add_column("name", no_wrap=True)
    for col in ("description", "options", "needs"):
        table.add_column(col)
    for r in rows:
        table.add_row(r["name"], r["description"], ", ".join(r["options"]), r["requires"] or "-")
    console = plain_console()
    console.print(table)
    for r in rows:  # what `replan run --suite NAME` runs without --agents, and where it starts
        where = "at a replan point" if r["start"] == "replan_point" else "fresh"
        designs = ", ".join(r["designs"]) or "every registered design"
        console.print(f"{r['name']}: starts {where}; default designs {designs}", highlight=False)


def _draw(view: list[Any], console: Console) -> None:
    """A suite's statistics view: tables (:class:`~replan.suites.StatsTable`) and lines."""
    from replan.suites import StatsTable

    for part in view:
        if isinstance(part, StatsTable):
            table = Table(title=part.title)
            for i, col in enumerate(part.columns):
                table.add_column(col, justify="left" if i == 0 else "right")
            for row in part.rows:
                table.add_row(*row)
            console.print(table)
        else:
            console.print(str(part))


def _with_progress(compute: Any) -> dict[str, Any]:
    """Run ``compute(progress)`` under a progress bar on stderr (``progress(label, done,
    total)``; total 0: unknown)."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = (
        TextColumn("{task.fields[label]}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=plain_console(stderr=True), transient=True) as bar:
        tid = bar.add_task("stats", total=None, label="")

        def progress(label: str, done: int, total: int) -> None:
            bar.update(tid, completed=done, total=total or None, label=label)

        return compute(progress)


@suites_app.command("stats")
def suites_stats(
    name: str = typer.Argument(..., help="a suite name (see `replan suites list`)"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
    seed: int = typer.Option(0, help="generation seed (generated suites)"),
    path: Path = typer.Option(None, "--path", help="data file or directory (pararecover)"),
) -> None:
    """Per level: ToolMaze Table 1 figures (toolmaze), error-type balance (pararecover*)."""
    from replan.cli.run import fail
    from replan.runner.preflight import PreflightError, check_suite
    from replan.suites import SUITES, get_suite

    err = plain_console(stderr=True)
    try:
        check_suite(name, {"path": path} if path is not None else None)
        suite = get_suite(name)
        if suite.stats is None:
            with_stats = [n for n, s in SUITES.items() if s.stats is not None]
            raise PreflightError(f"no statistics for suite {name!r}; try {', '.join(with_stats)}")
        given = {"seed": seed, "path": path}
        opts = {k: given[k] for k in suite.stats_options if given.get(k) is not None}
        stats = suite.stats
        report = _with_progress(lambda progress: stats(progress=progress, **opts))
    except (PreflightError, ValueError) as exc:
        fail(err, str(exc))
    if as_json:
        typer.echo(json.dumps(report, ensure_ascii=False))
        return
    _draw(suite.stats_view(report) if suite.stats_view else [json.dumps(report)], plain_console())


def register(app: typer.Typer) -> None:
    app.add_typer(suites_app, name="suites")
