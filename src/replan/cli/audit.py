"""``replan audit pararecover FILE [--json]``: parse and verify every instance of a file."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

audit_app = typer.Typer(help="Audit benchmark data against the verifier.", no_args_is_help=True)


@audit_app.command("pararecover")
def audit_pararecover(
    path: Path = typer.Argument(..., exists=True, dir_okay=False, help="a ParaRecover .jsonl file"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
) -> None:
    """Per tag: instances, parse failures, and how often the verifier raises the tagged type."""
    from replan.suites.audit import audit_file

    report = audit_file(path)
    err = Console(stderr=True)
    for e in report["line_errors"]:
        err.print(f"[yellow]skipped[/] {e['file']}:{e['line']}: {e['message']}")
    if as_json:
        typer.echo(json.dumps(report, ensure_ascii=False))
        return
    table = Table(
        title=f"{path.name}: {report['instances']} instances, {report['parse_errors']} parse errors"
    )
    for col in ("tag", "n", "detected", "share", "parse errors", "false alarms elsewhere"):
        table.add_column(col, justify="left" if col == "tag" else "right")
    for tag, row in report["by_tag"].items():
        fa = [report["false_alarm_rate"].get(t) for t in tag.split("|")]
        fa_text = "/".join(f"{x:.0%}" for x in fa if x is not None) or "-"
        table.add_row(
            tag,
            str(row["n"]),
            str(row["detected"]),
            f"{row['detected'] / row['n']:.0%}",
            str(row["parse_errors"]),
            fa_text,
        )
    Console().print(table)


def register(app: typer.Typer) -> None:
    app.add_typer(audit_app, name="audit")
