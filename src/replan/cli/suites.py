"""``replan suites list`` and ``replan suites stats NAME [--json]``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

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
    for col in ("name", "description", "options", "needs"):
        table.add_column(col)
    for r in rows:
        table.add_row(r["name"], r["description"], ", ".join(r["options"]), r["requires"] or "-")
    Console().print(table)


def _toolmaze_stats(seed: int) -> dict[str, Any]:
    """Generate the whole suite (a minute or so) with a progress bar on stderr."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from replan.suites import toolmaze

    columns = (
        TextColumn("generating toolmaze {task.fields[level]}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    total = len(toolmaze.LEVELS) * toolmaze.PER_LEVEL
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        tid = bar.add_task("generate", total=total, level="")
        done_before: dict[str, int] = {}

        def tick(level: str, done: int, n: int) -> None:
            done_before[level] = done
            bar.update(tid, completed=sum(done_before.values()), level=level)

        toolmaze.ON_BASE_TASK = tick
        try:
            tasks = toolmaze.generate(seed=seed)
        finally:
            toolmaze.ON_BASE_TASK = None
    return {"suite": "toolmaze", "seed": seed, **toolmaze.stats(tasks)}


def _synth_stats(seed: int) -> dict[str, Any]:
    from replan.suites.pararecover_synth import generate_synth, synth_stats

    return {"suite": "pararecover-synth", "seed": seed, **synth_stats(generate_synth(seed=seed))}


def _pararecover_stats(path: Path) -> dict[str, Any]:
    from collections import Counter

    from replan.suites.pararecover import load_tasks

    tasks = load_tasks(path)
    out: dict[str, Any] = {"suite": "pararecover", "path": str(path), "levels": {}}
    for level in sorted({t.level or "?" for t in tasks}):
        ts = [t for t in tasks if t.level == level]
        tags = Counter(e for t in ts for e in t.metadata.get("error_types") or [])
        g = [t.optimal_rounds for t in ts if t.optimal_rounds is not None]
        c = [t.min_calls for t in ts if t.min_calls is not None]
        out["levels"][level] = {
            "instances": len(ts),
            "error_types": dict(sorted(tags.items())),
            "mean_round_gt": round(sum(g) / len(g), 2) if g else None,
            "mean_funcall_times_gt": round(sum(c) / len(c), 2) if c else None,
            "mean_rounds_executed": round(
                sum(t.metadata.get("rounds_executed", 0) for t in ts) / len(ts), 2
            ),
        }
    return out


@suites_app.command("stats")
def suites_stats(
    name: str = typer.Argument(..., help="toolmaze | pararecover | pararecover-synth"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
    seed: int = typer.Option(0, help="generation seed (generated suites)"),
    path: Path = typer.Option(None, "--path", help="data file or directory (pararecover)"),
) -> None:
    """Per level: ToolMaze Table 1 figures (toolmaze), error-type balance (pararecover*)."""
    err = Console(stderr=True)
    if name == "toolmaze":
        report = _toolmaze_stats(seed)
    elif name == "pararecover-synth":
        err.print("generating the pararecover-synth suite ...")
        report = _synth_stats(seed)
    elif name == "pararecover":
        from replan.cli.run import fail
        from replan.runner.preflight import PreflightError, check_suite

        try:
            check_suite(name, path)
            report = _pararecover_stats(path)  # type: ignore[arg-type]
        except (PreflightError, ValueError) as exc:
            fail(err, str(exc))
    else:
        from replan.cli.run import fail
        from replan.runner.preflight import PreflightError, check_suite

        try:
            check_suite(name)
        except PreflightError as exc:
            fail(err, str(exc))
        fail(
            err, f"no statistics for suite {name!r}; try toolmaze, pararecover or pararecover-synth"
        )
    if as_json:
        typer.echo(json.dumps(report, ensure_ascii=False))
        return
    console = Console()
    if name == "toolmaze":
        levels = report["levels"]
        table = Table(title="toolmaze: ToolMaze Table 1 figures per level")
        table.add_column("metric")
        for lv in levels:
            table.add_column(lv, justify="right")
        doms = next(iter(levels.values()))["domain_involvement"] if levels else {}
        for d in doms:
            table.add_row(
                f"domain: {d}", *[str(levels[lv]["domain_involvement"][d]) for lv in levels]
            )
        table.add_row("mean Jaccard", *[f"{levels[lv]['mean_jaccard']:.3f}" for lv in levels])
        table.add_row("avg length", *[f"{levels[lv]['avg_length']:.2f}" for lv in levels])
        table.add_row(
            "length min/max",
            *[f"{levels[lv]['min_length']}/{levels[lv]['max_length']}" for lv in levels],
        )
        table.add_row("valid paths", *[str(levels[lv]["valid_paths"]) for lv in levels])
        table.add_row("base tasks", *[str(levels[lv]["tasks"]) for lv in levels])
        console.print(table)
        console.print(
            "instances per mode: " + ", ".join(f"{m} {n}" for m, n in report["modes"].items())
        )
        return
    body = (
        report["levels"]
        if name == "pararecover"
        else {k: v for k, v in report.items() if k.startswith("LEVEL")}
    )
    for level, row in body.items():
        table = Table(title=f"{name} {level}: {row['instances']} instances")
        table.add_column("error type")
        cols = [k for k in row if isinstance(row[k], dict)]
        for c in cols:
            table.add_column(c, justify="right")
        types = sorted({t for c in cols for t in row[c]})
        for t in types:
            table.add_row(t, *[str(row[c].get(t, 0)) for c in cols])
        console.print(table)
        console.print(
            f"mean round_gt {row.get('mean_round_gt')}, mean funcall_times_gt "
            f"{row.get('mean_funcall_times_gt')}, mean rounds executed {row.get('mean_rounds_executed')}"
        )


def register(app: typer.Typer) -> None:
    app.add_typer(suites_app, name="suites")
