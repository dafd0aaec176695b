"""``replan run``: the main job — agent designs × models on a suite, scored, stored, reported."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from replan.cli.terminal import labelled, plain_console
from replan.runner.options import RunOptions, parse_pairs


def _csv(values: list[str] | None) -> list[str]:
    out: list[str] = []
    for v in values or []:
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return out


def opt(name: str, *decls: str, **kw: Any) -> Any:
    """The flag of run option ``name``: its default, help text and lower bound from
    :class:`~replan.runner.options.RunOptions` (the one declaration), unless given here; the
    options are validated by ``RunOptions`` itself (a choice, a type)."""
    field = RunOptions.model_fields[name]
    kw.setdefault("help", field.description)
    for rule in field.metadata:
        if getattr(rule, "ge", None) is not None:
            kw.setdefault("min", rule.ge)
    default = kw.pop("default", ...)
    if default is ...:
        default = field.get_default(call_default_factory=True)
    return typer.Option(default, *decls, **kw)


def run_command(
    suite: str = opt("suite"),
    agents: str = opt(
        "agents",
        default=None,
        show_default=False,
        help="designs, comma separated [default: the suite's designs, see `replan suites list`]",
    ),
    model: list[str] = opt(
        "models",
        "--model",
        "-m",
        default=None,
        show_default=False,
        help="model spec, repeatable [default: simulated:competent]",
    ),
    profile: str = typer.Option(None, help="shorthand for --model simulated:PROFILE"),
    profile_set: list[str] = typer.Option(
        None,
        "--profile-set",
        help="vary one simulated-profile parameter, KEY=VALUE, repeatable (verifier_uptake=1.0,"
        " on_fault.retry=0, error_rates.Type_Error=0.1, error_scale=0); applies to every "
        "simulated model of the run and shows in its model label",
    ),
    prompt: str = opt("prompt"),
    seeds: int = opt("seeds"),
    limit: int = opt("limit"),
    filter: str = opt("filter", "--filter", default="", help="levels and/or modes, e.g. 'C2,P3'"),
    per_cell: int = opt("per_cell"),
    suite_option: list[str] = opt(
        "suite_options",
        "--suite-option",
        "-S",
        default=None,
        show_default=False,
        metavar="KEY=VALUE",
    ),
    suite_path: Path = typer.Option(None, "--path", help="shorthand for -S path=FILE_OR_DIR"),
    budget: list[str] = opt(
        "budgets", "--budget", "-B", default=None, show_default=False, metavar="KEY=VALUE"
    ),
    concurrency: int = opt("concurrency"),
    max_in_flight: int = opt("max_in_flight"),
    rpm: float = opt("requests_per_minute", "--rpm"),
    tpm: float = opt("tokens_per_minute", "--tpm"),
    workers: int = opt("workers"),
    backend: str = opt("backend"),
    address: str = opt("address"),
    out: Path = opt("out"),
    archive: Path = opt("archive", "--archive"),
    resume: bool = opt("resume", "--resume/--fresh", show_default=False),
    retry_failed: bool = opt(
        "retry_failed", "--retry-failed/--no-retry-failed", show_default=False
    ),
    agent: str = opt("agent_factory", "--agent"),
    base_url: str = opt("base_url"),
    episode_timeout: float = opt(
        "episode_timeout_s", "--episode-timeout", envvar="REPLAN_EPISODE_TIMEOUT"
    ),
    model_timeout: float = opt("model_timeout_s", "--model-timeout", show_default=False),
    langsmith: bool = typer.Option(
        False, "--langsmith", help="also log experiments to LangSmith", show_default=False
    ),
    as_json: bool = typer.Option(
        False, "--json", help="print the summary as one JSON object", show_default=False
    ),
) -> None:
    """Run designs on a suite, score every episode, store it, and print the comparison."""
    from replan.runner.preflight import PreflightError, check_profile
    from replan.runner.safety import exit_hard_if_threads_hang

    err = plain_console(stderr=True)
    try:
        if profile:
            try:
                check_profile(profile)
            except PreflightError as exc:
                raise PreflightError(f"--profile {profile}: {exc}") from None
        models = list(model or []) + ([f"simulated:{profile}"] if profile else [])
        if profile_set:
            from replan.models.simulated.profiles import spec_with_overrides

            try:
                default = RunOptions.model_fields["models"].get_default(call_default_factory=True)
                models = [spec_with_overrides(m, profile_set) for m in (models or default)]
            except ValueError as exc:
                raise PreflightError(str(exc)) from None
        suite_options = parse_pairs(suite_option, "-S")
        if suite_path is not None:
            suite_options["path"] = str(suite_path)
        # one line per option of the run (RunOptions), as replan.run takes them
        options: dict[str, Any] = {
            "suite": suite,
            "agents": _csv([agents]) if agents is not None else [],
            "seeds": seeds,
            "limit": limit,
            "filter": _csv([filter]),
            "per_cell": per_cell,
            "prompt": prompt,
            "suite_options": suite_options,
            "budgets": parse_pairs(budget, "-B"),
            "base_url": base_url,
            "agent_factory": agent,
            "concurrency": concurrency,
            "episode_timeout_s": episode_timeout,
            "model_timeout_s": model_timeout,
            "max_in_flight": max_in_flight,
            "requests_per_minute": rpm,
            "tokens_per_minute": tpm,
            "out": out,
            "backend": backend,
            "workers": workers,
            "address": address,
            "archive": archive,
            "resume": resume,
            "retry_failed": retry_failed,
        }
        if models:
            options["models"] = models
    except (PreflightError, ValueError) as exc:
        fail(err, str(exc))
    results = execute(options, progress_console=err)
    summary = finish(out, results.outcome, as_json=as_json, console=err, cfg=results.options)
    if as_json:
        typer.echo(json.dumps(summary, default=str))
    if langsmith:  # after the local results, summary and report: an upload failure loses nothing
        from replan.runner.langsmith import log_to_langsmith

        err.print(log_to_langsmith(out), highlight=False, soft_wrap=True)
    failed = nothing_ran(results.outcome)
    if failed:
        err.print(labelled("error", failed), highlight=False, soft_wrap=True)
    exit_hard_if_threads_hang(1 if failed else 0)
    if failed:
        raise typer.Exit(1)


def interrupted(err: Console, out: Path) -> NoReturn:
    """Ctrl-C: say what is kept and how to go on, exit 130 at once (abandoned threads or not)."""
    from replan.runner.safety import exit_hard_if_threads_hang
    from replan.runner.store import ResultsStore

    try:
        with ResultsStore(out) as store:
            kept = f"{len(store.done_keys())} finished episode(s) are stored in {out}"
    except Exception:  # the message must still come out
        kept = f"finished episodes are stored in {out}"
    err.print(
        f"interrupted: {kept}; rerun the same command to resume", highlight=False, soft_wrap=True
    )
    exit_hard_if_threads_hang(130)
    raise typer.Exit(130)


def fail(err: Console, message: str, code: int = 2) -> NoReturn:
    """One line on stderr naming the problem and its fix, then exit ``code`` (2: bad input)."""
    # as it is, on any console: no markup (a path with brackets), no emoji ("openai:x: no key")
    err.print(labelled("error", message), highlight=False, soft_wrap=True)
    raise typer.Exit(code)


#: seconds between two progress lines when stderr is not a terminal ($REPLAN_PROGRESS_EVERY)
PROGRESS_EVERY_S = 60.0


def progress_every() -> float:
    """Seconds between two plain progress lines: ``$REPLAN_PROGRESS_EVERY`` or 60."""
    try:
        return float(os.environ.get("REPLAN_PROGRESS_EVERY", PROGRESS_EVERY_S))
    except ValueError:
        return PROGRESS_EVERY_S


#: run options whose flag is not ``--`` + the field's name with dashes
FLAGS = {
    "models": "--model",
    "requests_per_minute": "--rpm",
    "tokens_per_minute": "--tpm",
    "agent_factory": "--agent",
    "episode_timeout_s": "--episode-timeout",
    "model_timeout_s": "--model-timeout",
    "suite_options": "-S",
    "budgets": "-B",
    "resume": "--resume/--fresh",
}


def _option_error(exc: Any) -> str:
    """A ``RunOptions`` validation error as one line naming the flag, the value and the fix."""
    first = exc.errors()[0]
    name = str(first["loc"][0]) if first["loc"] else "options"
    flag = FLAGS.get(name, "--" + name.replace("_", "-"))
    expected = (first.get("ctx") or {}).get("expected")
    fix = f"use {expected.replace(chr(39), '')}" if expected else first["msg"]
    return f"{flag} {first.get('input')!r}: {fix}"


def execute(options: dict[str, Any], *, progress_console: Console | None = None) -> Any:
    """``replan.run(**options)`` with a progress bar on a terminal (a plain line every
    :func:`progress_every` seconds without one), Ctrl-C cancelling it cleanly; a mistake in the
    options, or a store that cannot be written, is one line and exit 2."""
    from pydantic import ValidationError

    from replan.api import run
    from replan.runner.preflight import PreflightError
    from replan.runner.store import StoreError

    console = progress_console or plain_console(stderr=True)
    out = Path(options.get("out") or RunOptions.model_fields["out"].default)
    hooks: dict[str, Any] = {
        "warn": lambda text: console.print(text, highlight=False, soft_wrap=True),
        "interruptible": True,
    }
    try:
        with progress_display(console) as progress:
            return run(**options, progress=progress, **hooks)
    except ValidationError as exc:
        fail(console, _option_error(exc))
    except (PreflightError, StoreError) as exc:
        fail(console, str(exc))
    except KeyboardInterrupt:
        interrupted(console, out)


@contextlib.contextmanager
def progress_display(console: Console) -> Iterator[Callable[..., None]]:
    """A ``progress(done, total, failures, calls)`` callback for the run: a bar on a terminal;
    without one (a CI log, nohup) a plain line every :func:`progress_every` seconds, also while
    no episode ends (a paused endpoint, slow calls), so that a stall shows as one."""
    interactive = console.is_terminal and not os.environ.get("CI")
    t0 = time.perf_counter()
    first: list[int] = []  # episodes already stored at the start do not count toward the rate
    stats: list[Callable[[], dict[str, int]]] = []  # the run's call counts, once it started

    def rate_of(done: int) -> float:
        if not first:
            first.append(done)
        return (done - first[0]) / max(time.perf_counter() - t0, 1e-9)

    def calls() -> str:
        """Model calls now in flight, failed calls (each retried or final) and calls that
        waited for a slot (the run's limits, or a server's Retry-After), over every endpoint."""
        total = stats[-1]() if stats else {}
        parts = [f"{total['workers']} workers"] if "workers" in total else []
        if "in_flight" in total:
            parts.append(
                f"model calls in flight {total['in_flight']} · failed calls "
                f"{total['failed_calls']} · waited for a slot {total['waits']}"
            )
        return " · ".join(parts)

    if interactive:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        with Progress(
            TextColumn("episodes"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]:.1f}/s"),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("failures: {task.fields[failures]}"),
            TextColumn("{task.fields[calls]}"),
            console=console,
        ) as bar:
            tid = bar.add_task("run", total=None, rate=0.0, failures=0, calls="")

            def progress(done: int, total: int, failures: int, call_stats: Any = None) -> None:
                if call_stats is not None and not stats:
                    stats.append(call_stats)
                if not first:  # the episodes stored before are no speed: start the ETA here
                    bar.reset(tid, completed=done, total=total)
                rate = rate_of(done)
                bar.update(
                    tid, completed=done, total=total, rate=rate, failures=failures, calls=calls()
                )

            yield progress
        return
    every = progress_every()
    state = {"last": t0, "done": 0, "total": 0, "failures": 0}
    lock = threading.Lock()

    def line() -> None:
        done, total = state["done"], state["total"]
        rate = rate_of(done)
        eta = f"{(total - done) / rate / 60:.1f} min" if rate > 0 else "unknown"
        extra = calls()
        console.print(
            f"progress: {done}/{total} episodes · {rate:.1f}/s · ETA {eta} · failures "
            f"{state['failures']}" + (f" · {extra}" if extra else ""),
            highlight=False,
            soft_wrap=True,
        )

    def log_progress(done: int, total: int, failures: int, call_stats: Any = None) -> None:
        if call_stats is not None and not stats:
            stats.append(call_stats)
        rate_of(done)  # the first call fixes where this run's rate starts
        with lock:
            state.update(done=done, total=total, failures=failures)
            now = time.perf_counter()
            if now - state["last"] < every or done >= total or done == first[0]:
                return
            state["last"] = now
            line()

    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(max(every, 1.0)):
            with lock:
                if state["total"] and time.perf_counter() - state["last"] >= every:
                    state["last"] = time.perf_counter()
                    line()

    ticker = threading.Thread(target=tick, name="replan-progress", daemon=True)
    ticker.start()
    try:
        yield log_progress
    finally:
        stop.set()


def finish(
    out: Path,
    outcome: Any,
    *,
    as_json: bool,
    console: Console,
    cfg: RunOptions | None = None,
) -> dict[str, Any]:
    """Summarise this run's episodes, write the report, print the table (or return the JSON
    summary). When the run ran nothing and the store is as the last report saw it, the report
    and the summary are reused (a rerun with nothing to do takes about a second)."""
    from replan.report import REPORT_FILE

    keys = outcome.keys or None
    read: dict[str, Any] = {}
    summary, table, fresh = cached_summary(out, keys, lambda: summary_and_data(out, keys, read))
    report_path: Path | None = out / REPORT_FILE
    if fresh or not report_path.is_file():  # type: ignore[union-attr]
        try:
            from replan.report import write_report

            report_path = write_report(out, data=read.get("data"))
        except Exception as exc:  # the results are stored; a report failure must not hide them
            report_path = None
            console.print(
                Text(
                    f"the report could not be written ({type(exc).__name__}: {exc}); "
                    f"the results are in {out}, try `replan report {out}`",
                    style="yellow",
                )
            )
    retried = f", {outcome.retried} of them retried failures" if outcome.retried else ""
    restored = getattr(outcome, "restored", 0)
    archived = f", {restored} of them from the archive" if restored else ""
    console.print(
        f"{outcome.total} episodes ({outcome.skipped} already done{archived}, {outcome.ran} "
        f"run{retried}, "
        f"{outcome.failures} failed) in {outcome.wall_s:.1f} s -> {out}",
        highlight=False,
    )
    reasons = failure_reasons(out, outcome)
    for reason, n in reasons:  # each cause once, with its count: a failure always says why
        console.print(labelled(f"  {n} failed", reason, "yellow"), highlight=False, soft_wrap=True)
    cells = getattr(outcome, "cells", None) or {}
    if cfg is not None and cfg.limit is not None and cells:
        console.print(
            f"--limit {cfg.limit} covers {len(cells)} level/mode cell(s), tasks per cell: "
            + ", ".join(f"{k} {v}" for k, v in cells.items()),
            highlight=False,
            soft_wrap=True,
        )
    if as_json:
        return {
            "experiment": outcome.experiment_id,
            "suite": getattr(outcome, "suite", None) or None,
            "out": str(out),
            "report": str(report_path) if report_path else None,
            "designs": summary,
            "notes": _notes(cfg),
            "failures": [{"reason": r, "episodes": n} for r, n in reasons],
        }
    header = run_header(cfg, outcome)
    print_table(table, header, plain_console(file=sys.stdout))
    if cfg is not None:  # what a simulated table can show, and any design-sensitive knob set
        from replan.models.simulated.profiles import model_notes

        stdout = plain_console(file=sys.stdout)
        for note in model_notes(cfg.models):  # wrapped to the terminal, like the table
            stdout.print(note, highlight=False, markup=False)
    if report_path:
        console.print(f"report: {report_path}", highlight=False)
    return {}


def failure_reasons(out: Path, outcome: Any) -> list[tuple[str, int]]:
    """``(reason, episodes)`` of the run's infrastructure failures, most frequent first
    (:meth:`~replan.runner.store.ResultsStore.failure_reasons`); none when nothing failed."""
    from replan.runner.store import ResultsStore, StoreError

    if not outcome.failures:
        return []
    try:
        with ResultsStore(out) as store:
            return store.failure_reasons(outcome.keys or None)
    except StoreError:  # the count is printed; the store's own error shows on the next read
        return []


def nothing_ran(outcome: Any) -> str:
    """The one-line error of a run whose every episode failed for the infrastructure (a
    factory that raises, an unreachable endpoint); ``""`` when one ran to a verdict or none
    was run."""
    if not outcome.ran or outcome.failures < outcome.ran:
        return ""
    return (
        f"none of the {outcome.ran} episode(s) run reached a verdict: every one failed for the "
        "reason(s) above; fix that and rerun the same command (failed episodes run again)"
    )


def _notes(cfg: RunOptions | None) -> list[str]:
    from replan.models.simulated.profiles import model_notes

    return model_notes(cfg.models) if cfg is not None else []


#: the cached terminal summary of the last run (beside the store)
SUMMARY_CACHE = ".replan-summary.json"


def summary_and_data(out: Path, keys: list[str] | None, read: dict[str, Any]) -> dict[str, Any]:
    """The summary of ``keys``' episodes, computed from the report's data (left in
    ``read["data"]`` for the report) when they are the whole store: one read of the store for
    both; otherwise (or when the report's data cannot be computed) on its own."""
    from replan.report.data import collect, key_of
    from replan.report.summary import summarize

    try:
        data = collect(out)
    except Exception:  # the report says why when it is written; the summary must come out
        return summarize(out, keys)
    read["data"] = data
    if keys is None or set(keys) == {key_of(e) for e in data.episodes}:
        return {u.label: u.row for u in data.units}
    return summarize(out, keys)


def cached_summary(
    out: Path,
    keys: list[str] | None,
    compute: Callable[[], dict[str, Any]] | None = None,
) -> tuple[dict[str, Any], dict[str, Any], bool]:
    """``(summary, table, recomputed)``: the summary of ``keys``' episodes and its table
    (:func:`summary_table`), read from the cache when neither the store, the selection nor the
    code changed since it was written (else ``compute()``, by default
    :func:`~replan.report.summary.summarize`): a rerun with nothing to do loads no scoring code."""
    import hashlib

    from replan.runner.store import ResultsStore

    with ResultsStore(out) as store:
        state = store.fingerprint()
    ident = hashlib.sha256(
        json.dumps([state, sorted(keys or []), scoring_code_stamp()]).encode()
    ).hexdigest()
    cache = out / SUMMARY_CACHE
    try:
        saved = json.loads(cache.read_text(encoding="utf-8"))
        if saved.get("ident") == ident:
            return saved["summary"], saved["table"], False
    except (OSError, ValueError, KeyError, AttributeError, TypeError):
        pass
    if compute is None:
        from replan.report.summary import summarize

        summary = summarize(out, keys)
    else:
        summary = compute()
    summary = json.loads(json.dumps(summary, default=str))
    table = summary_table(summary)
    tmp = cache.with_name(cache.name + f".{os.getpid()}.tmp")
    tmp.write_text(
        json.dumps({"ident": ident, "summary": summary, "table": table}), encoding="utf-8"
    )
    tmp.replace(cache)
    return summary, table, True


def scoring_code_stamp() -> list[Any]:
    """The scoring and report code's stamp (:func:`replan.report.code_stamp`): a cached summary
    is never shown after that code changed."""
    from replan.report import code_stamp

    return code_stamp()


def run_header(cfg: RunOptions | None, outcome: Any) -> str:
    """``suite toolmaze v2 (aa36ad3d) · model simulated:competent · experiment 1a2b… · 240
    episodes``: the suite with its version and short digest, when the run recorded them."""
    from replan.suites.versions import identity_label

    parts = []
    suite = getattr(outcome, "suite", None)
    if suite:
        parts.append(f"suite {identity_label(suite)}")
    elif cfg is not None:
        parts.append(f"suite {cfg.suite}")
    if cfg is not None:
        parts.append(("models " if len(cfg.models) > 1 else "model ") + ", ".join(cfg.models))
        if cfg.prompt != "standard":
            parts.append(f"prompt {cfg.prompt}")
    parts.append(f"experiment {outcome.experiment_id}")
    parts.append(f"{outcome.total} episodes")
    return " · ".join(parts)


def summary_table(summary: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The designs-compared table of a summary as plain data (columns from the metric registry,
    each with the way that is better, the formatted cells, the notes): what
    :func:`print_table` prints, cached with the summary."""
    from replan.report.summary import column_notes, fmt_estimate, table_columns

    metric_columns = table_columns(summary)  # from the metric registry
    columns = [c.label for c in metric_columns]
    cells = {
        label: {c: fmt_estimate(row.get(c), sep="\n") for c in columns}
        | {"failed": str(row.get("failures", 0))}
        for label, row in summary.items()
    }
    arrows = {c.label: " ↓" if c.lower_is_better else " ↑" for c in metric_columns}
    return {
        "columns": [*columns, "failed"],
        "arrows": {**arrows, "failed": ""},
        "cells": cells,
        "notes": list(column_notes(summary)),
    }


def print_summary(summary: dict[str, dict[str, Any]], header: str, out: Console) -> None:
    """The designs-compared table of ``summary`` (see :func:`print_table`)."""
    print_table(summary_table(summary), header, out)


def print_table(table: dict[str, Any], header: str, out: Console) -> None:
    """The designs-compared table, split into as many tables as the terminal width needs, each
    column marked with the way that is better, and a legend."""
    columns, arrow, cells = table["columns"], table["arrows"], table["cells"]

    def width(c: str) -> int:
        lines = [ln for r in cells.values() for ln in r[c].splitlines()] + [c + arrow[c]]
        return max(len(x) for x in lines) + 3  # padding and border

    label_w = max([len(x) for x in cells] + [6]) + 4
    groups: list[list[str]] = [[]]
    used = label_w
    for c in columns:
        w = width(c)
        if groups[-1] and used + w > out.width:
            groups.append([])
            used = label_w
        groups[-1].append(c)
        used += w
    out.print(header, highlight=False)
    for i, group in enumerate(groups):
        title = "designs compared (95% intervals)"
        if len(groups) > 1:
            title += f" — part {i + 1} of {len(groups)}"
        rich_table = Table(title=title, show_lines=True)
        rich_table.add_column("design", no_wrap=True)
        for c in group:
            rich_table.add_column(c + arrow[c], justify="right", no_wrap=True)
        for label, row in cells.items():
            rich_table.add_row(label, *(row[c] for c in group))
        out.print(rich_table)
    higher = [c for c in columns if arrow[c] == " ↑"]
    lower = [c for c in columns if arrow[c] == " ↓"]
    out.print(
        f"↑ higher is better: {', '.join(higher)}; ↓ lower is better: {', '.join(lower)}. "
        "[low, high]: 95% interval; n: runs the rate is conditional on (alone: too few "
        "independent runs for an interval); failed: "
        "infrastructure failures (model error, crash, timeout).",
        highlight=False,
        markup=False,
    )
    for note in table["notes"]:
        out.print(note, highlight=False, markup=False)


def _interactive() -> bool:
    """Whether a person can answer a question (stdin is a terminal)."""
    return sys.stdin.isatty()


def clear_command(
    out_dir: Path = typer.Argument(
        ..., file_okay=False, metavar="DIR", help="results directory to empty"
    ),
    yes: bool = typer.Option(
        False, "--yes", "-y", help="do not ask (needed when not on a terminal)", show_default=False
    ),
) -> None:
    """Delete every stored episode, experiment and score in DIR (asks first).

    `replan run --fresh` reruns only the selected episodes; this empties the whole store."""
    from replan.runner.store import ResultsStore, StoreError, writer_lock

    err = plain_console(stderr=True)
    if not (out_dir / ResultsStore.FILENAME).is_file():
        fail(err, f"{out_dir}: no {ResultsStore.FILENAME} here, nothing to clear", code=1)
    try:
        with writer_lock(out_dir), ResultsStore(out_dir) as store:
            n_eps = len(store.done_keys())
            n_exp = len(store.experiments())
            what = (
                f"{n_eps} episode(s) of {n_exp} experiment(s) in {out_dir / ResultsStore.FILENAME}"
            )
            if not yes:
                if not _interactive():
                    fail(err, f"refusing to delete {what} without confirmation; add --yes")
                if not typer.confirm(f"delete {what}?", default=False, err=True):
                    err.print("nothing deleted", highlight=False)
                    raise typer.Exit(1)
            counts = store.clear()
    except StoreError as exc:
        fail(err, str(exc))
    (out_dir / SUMMARY_CACHE).unlink(missing_ok=True)
    err.print(
        f"deleted {counts['episodes']} episode(s), {counts['experiments']} experiment(s) from "
        f"{out_dir}",
        highlight=False,
    )


def register(app: typer.Typer) -> None:
    app.command("run")(run_command)
    app.command("clear")(clear_command)
