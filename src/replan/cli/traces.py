"""``replan score --traces TRANSCRIPTS.jsonl --tools TOOLS.json``: production traces, nothing run.

Reads one conversation per line (LangChain message dicts or OpenAI chat format) and the tools'
JSON schemas, and prints FED, PEC(k), TER, first-error types, the tool-error rate, how many
results each rule classified, and success over the traces that carry a reference or their own
outcome (``n/a`` when none does; see :mod:`replan.inplace.traces`). ``--is-error module:name``
loads a per-tool error predicate, ``--empty-is-error TOOL`` counts a tool's empty results as
errors. A line that is not a conversation is reported (file and line) and the rest is scored;
``--json`` prints exactly one JSON object on stdout.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NoReturn

import typer
from rich.table import Table

from replan.cli.terminal import labelled, plain_console


def _fmt(est: Any) -> str:
    if not isinstance(est, dict) or est.get("value") is None:
        return "-"
    v = est["value"]
    text = f"{v:.3f}" if isinstance(v, float) else str(v)
    if est.get("low") is not None and est.get("high") is not None:
        text += f" [{est['low']:.3f}, {est['high']:.3f}]"
    return text


def traces_command(
    traces: Path,
    tools: Path | None,
    *,
    as_json: bool,
    seed: int,
    n_boot: int,
    is_error: str | None = None,
    empty_is_error: list[str] | None = None,
) -> None:
    """Score ``traces`` against ``tools``; one clear line and exit 1 when it cannot."""
    from replan.inplace.traces import RESULT_RULES, TraceError, score_traces
    from replan.runner.preflight import PreflightError, import_spec

    err = plain_console(stderr=True)

    def fail(msg: str) -> NoReturn:
        err.print(labelled("error", msg), highlight=False, soft_wrap=True)
        raise typer.Exit(1)

    if tools is None:
        fail("--traces needs --tools TOOLS.json (the tools' JSON schemas)")
    for p, what in ((traces, "--traces"), (tools, "--tools")):
        if not p.is_file():
            fail(f"{what} {p}: no such file")
    predicate = None
    if is_error:
        try:
            predicate = import_spec(is_error, "--is-error", "my_rules:IS_ERROR")
        except PreflightError as exc:
            fail(str(exc))
        if predicate is None:
            fail(f"--is-error {is_error}: the module has no {is_error.partition(':')[2]!r}")
    empty: bool | list[str] = list(empty_is_error or [])
    try:
        result = score_traces(
            traces, tools, is_error=predicate, empty_is_error=empty, seed=seed, n_boot=n_boot
        )
    except TraceError as exc:
        fail(str(exc))
    for msg in result["input_errors"]:
        err.print(labelled("skipped", msg, "yellow", sep=" "), highlight=False, soft_wrap=True)
    if as_json:
        typer.echo(json.dumps(result, ensure_ascii=False, default=str))
        return
    out = plain_console()
    table = Table(title=f"{traces.name}: {result['traces']} conversations (nothing run)")
    for col in ("metric", "value [95% interval]", "n"):
        table.add_column(col, justify="left" if col == "metric" else "right")
    for key, label in (
        ("prefix.ter", "TER"),
        ("prefix.auc_pec", "AUC-PEC"),
        ("prefix.fed_mean", "FED (mean, runs with an error)"),
        ("tool_error_rate", "tool-error rate (per call)"),
        ("prefix.success", "success (traces with a reference or their own outcome)"),
    ):
        est = result.get(key)
        if isinstance(est, dict):
            value = "n/a" if key == "prefix.success" and not est.get("n") else _fmt(est)
            table.add_row(label, value, str(est.get("n", "")))
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
    rules = result["result_rules"]
    t3 = Table(title="tool results, by the rule that classified them")
    for col in ("rule", "error", "not an error"):
        t3.add_column(col, justify="left" if col == "rule" else "right")
    for rule in RESULT_RULES:
        n_err, n_ok = rules["error"].get(rule, 0), rules["not_error"].get(rule, 0)
        if n_err or n_ok:
            t3.add_row(rule, str(n_err), str(n_ok))
    if rules["no_result"]:
        t3.add_row("no result in the trace", "-", str(rules["no_result"]))
    out.print(t3)
