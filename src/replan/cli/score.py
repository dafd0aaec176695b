"""``replan score EPISODES.jsonl [--tasks TASKS.jsonl] [--json]``: score saved Episodes.

One Episode JSON per line. The task of an episode comes from ``--tasks`` (one Task JSON per
line, matched by ``task_id``) or from ``episode.metadata["task"]`` when the runner embedded it.
A malformed line is reported (file and line number) on stderr and the rest is scored. With
``--json`` exactly one JSON object, keyed by metric name, goes to stdout.

Infrastructure failures (model error, crash, timeout) are accounted by
:func:`replan.evaluators.score_records`, the same rule the run summary and the report use: failed
runs in TSR / Pass@1, left out of every process metric, counted in ``failures``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from replan.cli.terminal import labelled, plain_console


def _read_jsonl(
    path: Path, cls: Any, what: str, errors: list[dict[str, Any]], key: str
) -> list[tuple[int, Any]]:
    """``(line, object)`` for every valid line; every other line (not UTF-8, not JSON, too
    deep, not a valid ``what``, a repeated ``key``) becomes an error naming file and line."""
    from replan.core.jsonl import LineError, find_duplicates, iter_models

    out: list[tuple[int, Any]] = []
    for ln, item in iter_models(path, cls, what):
        if isinstance(item, LineError):
            errors.append({"file": str(path), "line": ln, "message": item.message})
        else:
            out.append((ln, item))
    kept, dups = find_duplicates(out, lambda obj: getattr(obj, key), path, key)
    errors.extend({"file": e.file, "line": e.line, "message": e.message} for e in dups)
    return kept


def _interval(est: dict[str, Any]) -> str:
    """``[low, high]``; "no interval" for a value on too few independent runs for one."""
    from replan.evaluators.stats import has_interval

    if est.get("value") is not None and not has_interval(est):
        return "no interval"
    return f"[{_fmt(est.get('low'))}, {_fmt(est.get('high'))}]"


def _fmt(x: Any) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.3f}"
    return str(x)


def _rows(result: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    rows = []
    for key, est in result.items():
        if key == "prefix.pec":
            for row in est:
                for name in ("pec", "cpec"):
                    e = row[name]
                    rows.append(
                        (
                            f"prefix.{name}({row['k']})",
                            _fmt(e["value"]),
                            _interval(e),
                            str(e["n"]),
                        )
                    )
            continue
        if not isinstance(est, dict) or "method" not in est:
            continue
        note = "".join(
            f" {k}={est[k]}"
            for k in ("eligible", "exposed", "missing", "rc_unknown", "success_unknown")
            if est.get(k)
        )
        rows.append(
            (
                key,
                _fmt(est["value"]),
                _interval(est),
                f"{est['n']}{note}",
            )
        )
    return rows


def score_command(
    episodes: Annotated[
        Path | None,
        typer.Argument(exists=True, dir_okay=False, help="Episodes, one JSON per line"),
    ] = None,
    tasks: Annotated[
        Path | None,
        typer.Option("--tasks", exists=True, dir_okay=False, help="Tasks, one JSON per line"),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="print one JSON object on stdout")
    ] = False,
    by: Annotated[
        str | None,
        typer.Option("--by", help="also score per value of an Episode field (e.g. design)"),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="bootstrap seed")] = 0,
    n_boot: Annotated[int, typer.Option("--n-boot", min=100, help="bootstrap resamples")] = 2000,
    traces: Annotated[
        Path | None,
        typer.Option("--traces", help="score transcripts (one conversation per line) instead"),
    ] = None,
    tools: Annotated[
        Path | None, typer.Option("--tools", help="the tools' JSON schemas (with --traces)")
    ] = None,
    is_error: Annotated[
        str | None,
        typer.Option(
            "--is-error",
            help="with --traces: module:name of a {tool: predicate} map or one predicate, "
            "given a result, returning True/False/None (None: the default rules decide)",
        ),
    ] = None,
    empty_is_error: Annotated[
        list[str] | None,
        typer.Option(
            "--empty-is-error",
            help="with --traces: count this tool's empty results as errors ('*': every tool); "
            "repeatable",
        ),
    ] = None,
) -> None:
    """Score saved Episodes: prefix executability, ToolMaze recovery, ParaRecover execution
    metrics; every aggregate with its 95% interval. With ``--traces``/``--tools``: production
    transcripts, nothing run (:mod:`replan.cli.traces`)."""
    if traces is not None:
        from replan.cli.traces import traces_command

        traces_command(
            traces,
            tools,
            as_json=as_json,
            seed=seed,
            n_boot=n_boot,
            is_error=is_error,
            empty_is_error=empty_is_error or [],
        )
        return
    if episodes is None:
        plain_console(stderr=True).print(
            labelled("error", "give EPISODES.jsonl (or --traces and --tools)")
        )
        raise typer.Exit(1)
    from replan.core.task import Task
    from replan.core.trace import Episode
    from replan.evaluators import score

    err = plain_console(stderr=True)
    errors: list[dict[str, Any]] = []
    from replan.evaluators import task_of

    task_list = [t for _, t in _read_jsonl(tasks, Task, "Task", errors, "task_id")] if tasks else []
    by_id = {t.task_id: t for t in task_list}
    eps = []
    for ln, ep in _read_jsonl(episodes, Episode, "Episode", errors, "episode_id"):
        try:
            task_of(ep, by_id)  # an invalid embedded task fails this episode, not the file
        except ValueError as exc:
            errors.append({"file": str(episodes), "line": ln, "message": str(exc)[:300]})
            continue
        eps.append(ep)
    errors.sort(key=lambda e: (e["file"], e["line"]))
    for e in errors:
        err.print(
            labelled("skipped", f"{e['file']}:{e['line']}: {e['message']}", "yellow", sep=" "),
            highlight=False,
            soft_wrap=True,
        )
    if not eps:
        err.print(labelled("error", f"no valid episode in {episodes}"))
        raise typer.Exit(1)
    try:
        result = score(eps, task_list, by=by, seed=seed, n_boot=n_boot)
    except ValueError as exc:
        err.print(labelled("error", exc))
        raise typer.Exit(1) from exc
    result["input_errors"] = errors
    if as_json:
        typer.echo(json.dumps(result, ensure_ascii=False, default=str))
        return
    out = plain_console()
    src = ", ".join(f"{k}: {v}" for k, v in result["verdict_sources"].items())
    fails = result.get("failures") or 0
    why = ", ".join(f"{k}: {v}" for k, v in (result.get("failure_reasons") or {}).items())
    note = (
        f"; {fails} infrastructure failure(s) ({why}): failed runs in TSR/Pass@1, left out of "
        "the process metrics"
        if fails
        else ""
    )
    table = Table(
        title=f"{episodes.name}: {result['episodes']} episodes (verdicts from {src}){note}"
    )
    for col in ("metric", "value", "95% interval", "n"):
        table.add_column(col, justify="left" if col == "metric" else "right")
    for row in _rows(result):
        table.add_row(*row)
    out.print(table)
    types = result.get("prefix.first_error_types") or {}
    if types:
        t2 = Table(title="first error, by ParaRecover type")
        for col in ("type", "runs", "share of runs with an error"):
            t2.add_column(col, justify="left" if col == "type" else "right")
        for name, row in types.items():
            t2.add_row(name, str(row["count"]), _fmt(row["share"]["value"]))
        out.print(t2)
    cells = result["tables"].get("toolmaze.by_level_mode") or {}
    if len(cells) > 1:
        t3 = Table(title="ToolMaze by level/mode")
        for col in ("cell", "runs", "TSR", "PRR", "RC"):
            t3.add_column(col, justify="left" if col == "cell" else "right")
        for name, c in cells.items():
            t3.add_row(
                name,
                str(c["runs"]),
                _fmt(c["tsr"]["value"]),
                _fmt(c["prr"]["value"]),
                _fmt(c["rc"]["value"]),
            )
        out.print(t3)
    for name, group in (result.get("groups") or {}).items():
        tg = Table(title=f"{by} = {name}: {group['episodes']} episodes")
        for col in ("metric", "value", "95% interval", "n"):
            tg.add_column(col, justify="left" if col == "metric" else "right")
        for row in _rows(group):
            if not row[0].startswith(("prefix.pec(", "prefix.cpec(")):
                tg.add_row(*row)
        out.print(tg)


def register(app: typer.Typer) -> None:
    app.command("score")(score_command)
