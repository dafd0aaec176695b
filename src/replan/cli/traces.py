"""``replan score --traces TRANSCRIPTS.jsonl --tools TOOLS.json``: production traces, nothing run.

Reads one conversation per line (LangChain message dicts or OpenAI chat format) and the tools'
JSON schemas, and prints FED, PEC(k), TER, first-error types and the tool-error rate (see
:mod:`replan.inplace.traces`). A line that is not a conversation is reported (file and line)
and the rest is scored; ``--json`` prints exactly one JSON object on stdout.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table


def _fmt(est: Any) -> str:
    if not isinstance(est, dict) or est.get("value") is None:
        return "-"
    v = est["value"]
    text = f"{v:.3f}" if isinstance(v, float) else str(v)
    if est.get("low") is not None and est.get("high") is not None:
        text += f" [{est['low']:.3f}, {est['high']:.3f}]"
    return text


def traces_command(
    traces: Path, tools: Path | None, *, as_json: bool, seed: int, n_boot: int
) -> None:
    """Score ``traces`` against ``tools``; one clear line and exit 1 when it cannot."""
    from replan.inplace.traces import TraceError, score_traces

    err = Console(stderr=True)
    if tools is None:
        err.print("[red]error[/]: --traces needs --tools TOOLS.json (the tools' JSON schemas)")
        raise typer.Exit(1)
    for p, what in ((traces, "--traces"), (tools, "--tools")):
        if not p.is_file():
            err.print(f"[red]error[/]: {what} {p}: no such file")
            raise typer.Exit(1)
    try:
        result = score_traces(traces, tools, seed=seed, n_boot=n_boot)
    except TraceError as exc:
        err.print(f"[red]error[/]: {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(1) from exc
    for msg in result["input_errors"]:
        err.print(f"[yellow]skipped[/] {msg}", highlight=False, soft_wrap=True)
    if as_json:
        typer.echo(json.dumps(result, ensure_ascii=False, default=str))
        return
    out = Console()
    table = Table(title=f"{traces.name}: {result['traces']} conversations (nothing run)")
    for col in ("metric", "value [95% interval]", "n"):
        table.add_column(col, justify="left" if col == "metric" else "right")
    for key, label in (
        ("prefix.ter", "TER"),
        ("prefix.auc_pec", "AUC-PEC"),
        ("prefix.fed_mean", "FED (mean, runs with an error)"),
        ("tool_error_rate", "tool-error rate (per call)"),
        ("prefix.success", "success (where a reference is given)"),
    ):
        est = result.get(key)
        if isinstance(est, dict):
            table.add_row(label, _fmt(est), str(est.get("n", "")))
    for row in result["prefix.pec"]:
        table.add_row(f"PEC({row['k']})", _fmt(row["pec"]), str(row["pec"]["n"]))
    out.print(table)
    types = result.get("prefix.first_error_types") or {}
    if types:
        t2 = Table(title="first error, by ParaRecover type")
        for col in ("type", "conversations", "share"):
            t2.add_column(col, justify="left" if col == "type" else "right")
        for name, row in types.items():
            t2.add_row(name, str(row["count"]), _fmt(row["share"]))
        out.print(t2)
