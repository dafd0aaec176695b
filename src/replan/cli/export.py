"""``replan export sft|dpo DIR``: training data from scored runs (ParaRecover RQ4).

``sft`` writes the well-scored replanning steps as chat-format JSONL; ``dpo`` writes preference
pairs from trajectories of the same task. Scores are the SDE items in the results store (see
:mod:`replan.runner.export` for the exact rules). The output says how many steps had which
items; a missing item is never read as 0.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import NoReturn

import typer
from rich.console import Console
from rich.table import Table

from replan.cli.terminal import labelled, plain_console
from replan.runner.export import (
    DEFAULT_MIN_AVG,
    DEFAULT_MIN_GAP,
    DEFAULT_MIN_SCORE,
    EmptyExport,
    ExportSummary,
)

export_app = typer.Typer(
    help="Export scored runs as training data (SFT examples, DPO preference pairs).",
    no_args_is_help=True,
)

_DIR = typer.Argument(
    ..., file_okay=False, metavar="DIR", help="results directory (holds results.sqlite)"
)
_OUT = typer.Option(None, "--out", dir_okay=False, help="JSONL file (default DIR/<kind>.jsonl)")
_MIN_ITEMS = typer.Option(
    None,
    "--min-items",
    min=1,
    max=15,
    help="SDE items (of 15) a step must have scored to count [default: the number most steps "
    "have: 15 with a judge, 7-8 without]",
    show_default=False,
)
_AUTO = typer.Option(
    True,
    "--use-auto/--judged-only",
    help="fill items the judge did not score with their scripted estimates (sde.auto.*: S2, "
    "S3, S4, E1, E3, D4) [default: --use-auto]",
    show_default=False,
)
_META = typer.Option(
    False, "--with-meta", help="add a 'metadata' key naming the source runs", show_default=False
)
_FORCE = typer.Option(
    False,
    "--force",
    help="replace a non-empty output file even when nothing was selected",
    show_default=False,
)
_JSON = typer.Option(False, "--json", help="print one JSON object on stdout", show_default=False)


def _print(summary: ExportSummary, as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(summary.to_dict(), ensure_ascii=False))
        return
    out = plain_console()
    d = summary.to_dict()
    out.print(
        f"{summary.written} {'example(s)' if summary.kind == 'sft' else 'pair(s)'} -> "
        f"{summary.out}",
        highlight=False,
    )
    out.print(
        f"{summary.episodes} episode(s), {summary.steps} with a scored replanning step, "
        f"{summary.complete} with all 15 SDE items, {summary.eligible} usable "
        f"(thresholds: {', '.join(f'{k}={v}' for k, v in summary.thresholds.items())})",
        highlight=False,
    )
    table = Table(title="steps scored on each SDE item")
    for item in summary.item_counts:
        table.add_column(item, justify="right")
    table.add_row(*(str(v) for v in summary.item_counts.values()))
    out.print(table)
    for reason, n in sorted(summary.excluded.items()):
        out.print(f"  left out: {n} step(s): {reason}", highlight=False)
    for key in (
        "not_above_min_avg",
        "duplicates",
        "below_min_score",
        "tasks_with_several_requests",
    ):
        if d.get(key):
            out.print(f"  {key.replace('_', ' ')}: {d[key]}", highlight=False)
    if summary.written == 0:
        explain_empty(summary, plain_console(stderr=True))


def explain_empty(summary: ExportSummary, err: Console) -> None:
    """Why nothing was selected: each filter and how many steps it removed."""
    unit = "pairs" if summary.kind == "dpo" else "examples"
    err.print(
        labelled(
            f"no {unit} selected",
            f"from {summary.episodes} episode(s); removed by:",
            "yellow",
            sep=" ",
        ),
        highlight=False,
    )
    for reason, n in summary.funnel:
        if n:
            err.print(f"  {n:>5}  {reason}", highlight=False, markup=False)
    if summary.kind == "dpo" and summary.eligible:
        gap = summary.details.get("largest_gap")
        min_gap = summary.thresholds.get("min_gap")
        if gap is None:
            hint = (
                "no request got two different responses: run more seeds (--seeds 4) on a suite "
                "whose instances start at one replan point (pararecover, pararecover-synth), "
                "with a model whose answers vary across seeds"
            )
        else:
            hint = (
                f"the largest score gap between different responses to one request was {gap:g}"
                f" (pairs need more than --min-gap {min_gap:g}): lower --min-gap, or run more "
                "seeds or a model whose answers vary more"
            )
        err.print(f"  {hint}", highlight=False, markup=False)


def _refuse(exc: EmptyExport) -> NoReturn:
    err = plain_console(stderr=True)
    if exc.summary is not None:
        explain_empty(exc.summary, err)
    err.print(labelled("error", exc), highlight=False)
    raise typer.Exit(1) from exc


@export_app.command("sft")
def sft_command(
    out_dir: Path = _DIR,
    min_avg: float = typer.Option(
        DEFAULT_MIN_AVG,
        "--min-avg",
        help="keep steps whose SDE score (15-point scale) is greater than this",
    ),
    out: Path | None = _OUT,
    min_items: int = _MIN_ITEMS,
    use_auto: bool = _AUTO,
    with_meta: bool = _META,
    force: bool = _FORCE,
    as_json: bool = _JSON,
) -> None:
    """Well-scored replanning steps as chat-format SFT JSONL.

    Each line holds a "messages" list (system, user, assistant turns): the replanner request
    and the plan the agent wrote."""
    from replan.runner.export import export_sft

    try:
        summary = export_sft(
            out_dir,
            out,
            min_avg=min_avg,
            min_items=min_items,
            use_auto=use_auto,
            with_meta=with_meta,
            force=force,
        )
    except EmptyExport as exc:
        _refuse(exc)
    except (FileNotFoundError, ValueError) as exc:
        plain_console(stderr=True).print(labelled("error", exc), highlight=False)
        raise typer.Exit(1) from exc
    _print(summary, as_json)


@export_app.command("dpo")
def dpo_command(
    out_dir: Path = _DIR,
    min_score: float = typer.Option(
        DEFAULT_MIN_SCORE, "--min-score", help="both trajectories must score at least this"
    ),
    min_gap: float = typer.Option(
        DEFAULT_MIN_GAP, "--min-gap", help="chosen minus rejected score must exceed this"
    ),
    out: Path | None = _OUT,
    min_items: int = _MIN_ITEMS,
    use_auto: bool = _AUTO,
    with_meta: bool = _META,
    force: bool = _FORCE,
    as_json: bool = _JSON,
) -> None:
    """Preference pairs from trajectories of the same task as DPO JSONL.

    Each line holds "prompt", "chosen" and "rejected" message lists (TRL's conversational
    layout); the trajectory with the higher SDE score is chosen."""
    from replan.runner.export import export_dpo

    try:
        summary = export_dpo(
            out_dir,
            out,
            min_score=min_score,
            min_gap=min_gap,
            min_items=min_items,
            use_auto=use_auto,
            with_meta=with_meta,
            force=force,
        )
    except EmptyExport as exc:
        _refuse(exc)
    except (FileNotFoundError, ValueError) as exc:
        plain_console(stderr=True).print(labelled("error", exc), highlight=False)
        raise typer.Exit(1) from exc
    _print(summary, as_json)


@export_app.command("episodes")
def episodes_command(
    out_dir: Path = _DIR,
    out: Path | None = typer.Option(
        None, "--out", dir_okay=False, help="Episode JSONL [default: DIR/episodes.jsonl]"
    ),
    tasks: Path | None = typer.Option(
        None, "--tasks", dir_okay=False, help="Task JSONL [default: tasks.jsonl beside --out]"
    ),
    force: bool = _FORCE,
    as_json: bool = _JSON,
) -> None:
    """Every stored episode as Episode JSON lines, and their tasks as Task JSON lines.

    Score them elsewhere with: replan score episodes.jsonl --tasks tasks.jsonl"""
    from replan.runner.export import export_episodes

    try:
        res = export_episodes(out_dir, out, tasks, force=force)
    except EmptyExport as exc:
        _refuse(exc)
    except (FileNotFoundError, ValueError) as exc:
        plain_console(stderr=True).print(labelled("error", exc), highlight=False)
        raise typer.Exit(1) from exc
    if as_json:
        typer.echo(json.dumps(res))
        return
    plain_console().print(
        f"{res['episodes']} episode(s) -> {res['out']}, {res['tasks']} task(s) -> "
        f"{res['tasks_out']}\nscore them: replan score {res['out']} --tasks {res['tasks_out']}",
        highlight=False,
    )


def register(app: typer.Typer) -> None:
    app.add_typer(export_app, name="export")
