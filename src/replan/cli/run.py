"""``replan run``: the main job — agent designs × models on a suite, scored, stored, reported."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.table import Table

from replan.runner.core import (
    DEFAULT_DESIGNS,
    DEFAULT_EPISODE_TIMEOUT_S,
    DEFAULT_MODEL,
    REPLAN_POINT_SUITES,
    RunConfig,
)
from replan.runner.safety import exit_hard_if_threads_hang, run_interruptibly
from replan.runner.store import StoreError, WriterLock


def _csv(values: list[str] | None) -> list[str]:
    out: list[str] = []
    for v in values or []:
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return out


def run_command(
    suite: str = typer.Option("toolmaze", help="suite name (see `replan suites list`)"),
    agents: str = typer.Option(",".join(DEFAULT_DESIGNS), help="designs, comma separated"),
    model: list[str] = typer.Option(None, "--model", "-m", help="model spec, repeatable"),
    profile: str = typer.Option(None, help="shorthand for --model simulated:PROFILE"),
    prompt: str = typer.Option("standard", help="standard | hint (failure-aware prompt)"),
    seeds: int = typer.Option(1, min=1, help="seeds per task"),
    limit: int = typer.Option(None, min=1, help="at most N tasks (after --filter)"),
    filter: str = typer.Option("", "--filter", help="levels and/or modes, e.g. 'C2,P3'"),
    per_cell: int = typer.Option(3, help="tasks per C x P cell in the default subset"),
    concurrency: int = typer.Option(4, min=1, help="episodes in flight"),
    backend: str = typer.Option("local", help="local | ray"),
    address: str = typer.Option(None, help="Ray address (with --backend ray)"),
    out: Path = typer.Option(Path("replan-results"), help="output directory (results store)"),
    resume: bool = typer.Option(True, "--resume/--fresh", help="skip finished episodes (default)"),
    agent: str = typer.Option(
        None, help="your agent factory, module:function (make_agent(tools, model))"
    ),
    base_url: str = typer.Option(None, help="OpenAI-compatible endpoint for provider models"),
    suite_path: Path = typer.Option(None, "--path", help="data file for suites that need one"),
    langsmith: bool = typer.Option(False, "--langsmith", help="also log experiments to LangSmith"),
    as_json: bool = typer.Option(False, "--json", help="print the summary as one JSON object"),
    episode_timeout: float = typer.Option(
        DEFAULT_EPISODE_TIMEOUT_S,
        "--episode-timeout",
        min=0,
        envvar="REPLAN_EPISODE_TIMEOUT",
        help="seconds an episode (agent code included) may take; past it the episode is "
        "recorded as timeout and the run goes on (0: no limit)",
    ),
    model_timeout: float = typer.Option(
        None,
        "--model-timeout",
        min=0,
        help="seconds per model request (default $REPLAN_MODEL_TIMEOUT, else 60)",
        show_default=False,
    ),
) -> None:
    """Run designs on a suite, score every episode, store it, and print the comparison."""
    err = Console(stderr=True)
    if prompt not in ("standard", "hint"):
        raise typer.BadParameter("--prompt must be standard or hint")
    models = list(model or []) + ([f"simulated:{profile}"] if profile else [])
    cfg = RunConfig(
        suite=suite,
        agents=[agent.rsplit(":", 1)[-1]]
        if agent
        else ["replanner_loop"]
        if suite in REPLAN_POINT_SUITES and agents == ",".join(DEFAULT_DESIGNS)
        else _csv([agents]),
        models=models or [DEFAULT_MODEL],
        seeds=seeds,
        limit=limit,
        filter=_csv([filter]),
        per_cell=per_cell,
        prompt=prompt,
        suite_options={"path": str(suite_path)} if suite_path else {},
        concurrency=concurrency,
        base_url=base_url,
        agent_factory=agent,
        episode_timeout_s=episode_timeout or None,
        model_timeout_s=model_timeout or None,
    )
    try:
        with WriterLock(out):  # --fresh deletes only what no other process is writing
            if not resume and out.exists():
                store_file = out / "results.sqlite"
                for f in (store_file, Path(f"{store_file}-wal"), Path(f"{store_file}-shm")):
                    f.unlink(missing_ok=True)
            outcome = execute(cfg, out, backend=backend, address=address, progress_console=err)
    except StoreError as exc:
        err.print(f"[red]error[/]: {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        interrupted(err, out)
    summary = finish(out, outcome, as_json=as_json, console=err)
    if as_json:
        typer.echo(json.dumps(summary, default=str))
    if langsmith:  # after the local results, summary and report: an upload failure loses nothing
        from replan.runner.langsmith import log_to_langsmith

        err.print(log_to_langsmith(out), highlight=False, soft_wrap=True)
    exit_hard_if_threads_hang(0)


def interrupted(err: Console, out: Path) -> NoReturn:
    """Ctrl-C: say what is kept and how to go on, exit 130 at once (abandoned threads or not)."""
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


def execute(
    cfg: RunConfig,
    out: Path,
    *,
    backend: str = "local",
    address: str | None = None,
    progress_console: Console | None = None,
) -> Any:
    from replan.runner.core import LocalBackend, arun

    be: Any
    if backend == "ray":
        from replan.runner.ray_backend import RayBackend

        be = RayBackend(address=address, concurrency=cfg.concurrency)
    elif backend == "local":
        be = LocalBackend(cfg.concurrency)
    else:
        raise typer.BadParameter("--backend must be local or ray")
    console = progress_console or Console(stderr=True)
    interactive = console.is_terminal and not os.environ.get("CI")
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
            TimeRemainingColumn(),
            TextColumn("failures: {task.fields[failures]}"),
            console=console,
        ) as bar:
            tid = bar.add_task("run", total=None, rate=0.0, failures=0)
            t0 = time.perf_counter()

            def progress(done: int, total: int, failures: int) -> None:
                rate = done / max(time.perf_counter() - t0, 1e-9)
                bar.update(tid, completed=done, total=total, rate=rate, failures=failures)

            return run_interruptibly(arun(cfg, out, backend=be, progress=progress))
    return run_interruptibly(arun(cfg, out, backend=be))


def finish(out: Path, outcome: Any, *, as_json: bool, console: Console) -> dict[str, Any]:
    """Summarise, write the report, print the table (or return the JSON summary)."""
    from replan.runner.summary import HEADLINE, fmt_estimate, summarize

    summary = summarize(out)
    report_path = None
    try:
        from replan.report import write_report

        report_path = write_report(out)
    except Exception as exc:  # the results are stored; a report failure must not hide them
        console.print(
            f"[yellow]the report could not be written ({type(exc).__name__}: {exc}); "
            f"the results are in {out}, try `replan report {out}`[/]"
        )
    console.print(
        f"{outcome.total} episodes ({outcome.skipped} already done, {outcome.ran} run, "
        f"{outcome.failures} failed) in {outcome.wall_s:.1f} s -> {out}"
    )
    if as_json:
        return {
            "experiment": outcome.experiment_id,
            "out": str(out),
            "report": str(report_path) if report_path else None,
            "designs": summary,
        }
    table = Table(title="replan: designs compared (95% intervals)")
    table.add_column("design")
    for title in HEADLINE:
        table.add_column(title, justify="right")
    table.add_column("failed", justify="right")
    for label, row in summary.items():
        table.add_row(
            label, *(fmt_estimate(row.get(t)) for t in HEADLINE), str(row.get("failures", 0))
        )
    Console(file=sys.stdout, width=200).print(table)
    if report_path:
        console.print(f"report: {report_path}")
    return {}


def register(app: typer.Typer) -> None:
    app.command("run")(run_command)
