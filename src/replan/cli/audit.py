"""``replan audit pararecover FILE... [--json]``: parse and verify every instance of a file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from replan.cli.terminal import labelled, plain_console

audit_app = typer.Typer(help="Audit benchmark data against the verifier.", no_args_is_help=True)


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.0%}"


def type_table(title: str, report: dict[str, Any]) -> Table:
    """Per error type: detected/tagged; detected/decidable (the tagged instances the plan alone
    can decide; a rate on fewer than ``MIN_TAGGED`` of them is starred as too few); how many
    tagged instances need the task's meaning; false alarms. A type no plan-only rule decides
    reads "not static" instead of a rate."""

    table = Table(title=title)
    for col in ("type", "detected", "decidable", "needs meaning", "false alarms"):
        table.add_column(col, justify="left" if col == "type" else "right", no_wrap=True)
    for name, row in report["by_type"].items():
        dec, meaning = "not static", "-"  # a rate here would be a guess (see the note below)
        if row["static"]:
            dec = f"{row['detected_decidable']}/{row['decidable']}"
            if row["decidable"]:
                dec += f" {_pct(row['detection_decidable'])}" + ("*" if row["few"] else "")
            meaning = str(row["needs_meaning"])
        table.add_row(
            name,
            f"{row['detected']}/{row['tagged']}",
            dec,
            meaning,
            f"{row['false_alarms']}/{row['others']} {_pct(row['false_alarm_rate'])}",
        )
    return table


@audit_app.command("pararecover")
def audit_pararecover(
    paths: list[Path] = typer.Argument(
        ..., exists=True, dir_okay=False, help="ParaRecover .jsonl file(s)"
    ),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
) -> None:
    """Per error type: how often the verifier raises it on instances tagged with it
    (detection) and on instances tagged otherwise (false alarms); per tag: parse failures."""
    from replan.suites.audit import MIN_TAGGED, audit_file, merge_reports

    reports = [audit_file(p) for p in paths]
    err = plain_console(stderr=True)
    for rep in reports:
        for e in rep["line_errors"]:
            err.print(
                labelled("skipped", f"{e['file']}:{e['line']}: {e['message']}", "yellow", sep=" ")
            )
    pooled = merge_reports(reports) if len(reports) > 1 else None
    if as_json:
        out = reports[0] if pooled is None else {"reports": reports, "pooled": pooled}
        typer.echo(json.dumps(out, ensure_ascii=False))
        return
    console = plain_console()
    for path, rep in zip(paths, reports, strict=True):
        console.print(
            type_table(
                f"{path.name}: {rep['instances']} instances, {rep['parse_errors']} parse errors",
                rep,
            )
        )
    by_level: dict[str, list[dict[str, Any]]] = {}
    for rep in reports:
        by_level.setdefault(rep["level"] or "?", []).append(rep)
    if len(by_level) > 1:  # each level pooled on its own: rules read on one, measured on another
        for level, reps in sorted(by_level.items()):
            if len(reps) > 1:
                lv = merge_reports(reps)
                console.print(
                    type_table(f"{level}, {len(reps)} files: {lv['instances']} instances", lv)
                )
    if pooled is not None:
        console.print(
            type_table(
                f"all {len(reports)} files: {pooled['instances']} instances, "
                f"{pooled['parse_errors']} parse errors",
                pooled,
            )
        )
    console.print("Not decided statically (no plan-only rule can tell them):")
    for name, why in reports[0]["not_static"].items():
        console.print(f"  {name}: {why}")
    console.print(
        "detected: raised on d of the t tagged instances. decidable: the same on the tagged "
        "instances the plan alone can decide (* fewer than "
        f"{MIN_TAGGED}); needs meaning: tagged instances it cannot (every call done, no "
        "unfinished call showing what it takes, no tool called twice, no unfinished call "
        "waiting for another: replan.suites.audit.undecidable), listed here:"
    )
    for rep in reports:
        for x in rep["needs_meaning"]:
            console.print(f"  {Path(rep['file']).name}:{x['id']} {x['type']}: {x['why']}")
    console.print(
        "A false alarm is a finding of a type on an instance tagged with another type; real "
        "instances often hold more errors than their one tag, so it is an upper bound."
    )


def register(app: typer.Typer) -> None:
    app.add_typer(audit_app, name="audit")
