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
    """Per error type: tagged instances, detection, false alarms, and whether it is decided
    statically (a rate on fewer than ``MIN_TAGGED`` instances is marked as too few; a type the
    plan alone cannot decide reads "not statically decidable" instead of a rate)."""
    from replan.suites.audit import MIN_TAGGED

    table = Table(title=title)
    for col in ("type", "tagged", "detected", "detection", "false alarms", "static"):
        table.add_column(col, justify="left" if col in ("type", "static") else "right")
    for name, row in report["by_type"].items():
        det = _pct(row["detection"])
        if not row["static"]:
            det = "not statically decidable"  # a rate here would be a guess (see below)
        elif row["tagged"] and row["few"]:
            det += f" (n<{MIN_TAGGED})"
        table.add_row(
            name,
            str(row["tagged"]),
            str(row["detected"]),
            det,
            f"{row['false_alarms']}/{row['others']} = {_pct(row['false_alarm_rate'])}",
            "yes" if row["static"] else "no",
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
    from replan.suites.audit import audit_file, merge_reports

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
        "A false alarm is a finding of a type on an instance tagged with another type; real "
        "instances often hold more errors than their one tag, so it is an upper bound."
    )


def register(app: typer.Typer) -> None:
    app.add_typer(audit_app, name="audit")
