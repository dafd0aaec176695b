"""The four designs on a real model: a fixed 40-instance stratified slice of the ToolMaze suite.

The simulated model's tables illustrate the metrics; a comparison of designs needs a real model.
This script runs ``react``, ``plan_conditioned``, ``dual_loop`` and ``replanner_loop`` on the
same 40 instances (2 per level x mode cell: C1-C4 x NP, P1-P4, the suite's default stratified
subset with ``per_cell=2``), one seed, and prints each design's TSR, PRR, TER and AUC-PEC with
95% intervals, the share of runs that made no tool call, and how many of the model's plans and
tool calls were usable (plans that parse as a DAG; calls that name a listed tool with an
argument object). Offline, with SmolLM2-135M through llama.cpp (grammar-constrained decoding):

    .venv/bin/python benchmarks/bench_real_model.py

The same script, unchanged, against any OpenAI-compatible endpoint (vLLM, llama.cpp server, a
hosted API; the key comes from ``OPENAI_API_KEY``):

    .venv/bin/python benchmarks/bench_real_model.py --model openai:NAME --base-url URL

Whatever the table shows is reported as it is. On two shared CPU cores SmolLM2 takes minutes
per episode; ``--per-cell 1`` halves the slice (20 instances), ``--filter NP`` keeps one mode,
and ``--workers 2`` runs two instances at once, each process with its own copy of the model.
The run goes instance by instance (all four designs on one instance, then the next), through
the cells in turn, so a run stopped part way is a smaller stratified slice with every design on
the same instances; rerunning continues it, and ``--table-only`` prints what is stored so far.
Measured 2026-12-01 on 2 cores: llama.cpp evaluates SmolLM2's prompt at about 160 tokens/s and
writes about 35 tokens/s under a grammar; on a C1 instance a ReAct turn is about 1,850 prompt
tokens (17 s), a plan 2,100 + 500 (34 s; 1,150-1,220 written, 84-86 s, since a plan node carries
every required argument of its tool, 2026-12-02), a Dual-Loop revision 5,400 + 470 (86 s).
Dual-Loop's revision conversation keeps every plan and every finding, so on larger instances it
can pass SmolLM2's 8,192-token window and the episode ends as ``model_error`` (counted as failed).
Results go to ``--out`` (resumable: a rerun skips the episodes already stored) and, for the
default SmolLM2 slice, to ``benchmarks/results/smollm2-slice.jsonl`` (``--archive``): every
finished episode is appended there before it is stored, and a run in a checkout without the
store takes the archived episodes instead of running them (:mod:`replan.runner.archive`). The
slice takes 12+ hours on two cores, longer than any one machine here lives, so its episodes
travel in the repository: ``--table-only`` in a fresh clone prints the table from them.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from replan.core.trace import FAILURE_END_REASONS
from replan.report.summary import summarize
from replan.runner.experiment import (
    DEFAULT_DESIGNS,
    RunConfig,
    arun,
    make_jobs,
    select_tasks,
    suite_options,
)
from replan.runner.preflight import PreflightError, check_model
from replan.runner.process_backend import ProcessBackend
from replan.runner.store import ResultsStore, StoreBusy, StoreError
from replan.suites import load_suite

# The slice was run on the step-list queries (toolmaze v2, now the suite ``toolmaze-guided``
# v2, digest aa36ad3d, kept loadable as its version 2): its archive is comparable only there.
# A new slice on another suite or version is a new archive.
SLICE_SUITE = "toolmaze-guided"
SLICE_OPTIONS = {"version": "2"}

METRICS = ("TSR", "PRR", "TER", "AUC-PEC", "0-call")


def usable(episodes: list[Any], tools_of: dict[str, list[str]]) -> dict[str, dict[str, Any]]:
    """Per design: plans that parse / plans written, well-formed tool calls / tool calls."""
    out: dict[str, dict[str, Any]] = {}
    for ep in episodes:
        row = out.setdefault(ep.design, {"plans": 0, "parsed": 0, "calls": 0, "formed": 0})
        row["plans"] += len(ep.plans)
        row["parsed"] += sum(pv.parse_ok for pv in ep.plans)
        listed = set(tools_of.get(ep.task_id, []))
        for s in ep.steps:
            row["calls"] += 1
            row["formed"] += s.call.tool in listed and isinstance(s.call.args, dict)
    return out


def _fmt(est: Any) -> str:
    if not isinstance(est, dict) or est.get("value") is None:
        return "–"
    text = f"{est['value']:.2f}"
    if est.get("low") is not None and est.get("high") is not None:
        text += f" [{est['low']:.2f}, {est['high']:.2f}]"
    return text


def _share(num: int, den: int) -> str:
    return f"{num}/{den} ({num / den:.0%})" if den else "–"


def table(summary: dict[str, dict], rates: dict[str, dict[str, Any]], model: str) -> str:
    lines = [
        f"model {model}; value [95% interval]",
        "",
        "| design | episodes | "
        + " | ".join(METRICS)
        + " | plans parsed | calls well-formed | failed |",
        "|---|" + "---|" * (len(METRICS) + 4),
    ]
    for design, row in summary.items():
        key = design.split(" · ")[0]
        r = rates.get(key, {"plans": 0, "parsed": 0, "calls": 0, "formed": 0})
        cells = [_fmt(row.get(m)) for m in METRICS]
        lines.append(
            f"| {design} | {row.get('episodes', 0)} | "
            + " | ".join(cells)
            + f" | {_share(r['parsed'], r['plans'])} | {_share(r['formed'], r['calls'])} | "
            + f"{row.get('failures', 0)} |"
        )
    return "\n".join(lines)


def slice_config(
    model: str,
    *,
    base_url: str | None = None,
    per_cell: int = 2,
    filter: list[str] | None = None,
    concurrency: int = 1,
    tasks: list[Any] | None = None,
) -> tuple[RunConfig, list[str]]:
    """The run's configuration and the store keys of its episodes.

    The slice is the suite's stratified subset (``per_cell`` instances of each level x mode
    cell) taken cell by cell in turn (``--limit`` order), and the run goes instance by instance:
    a run stopped part way has all four designs on the same instances, and (without a
    ``filter``) its first 20 instances are one per cell (the ``--per-cell 1`` slice)."""
    base = RunConfig(
        suite=SLICE_SUITE,
        suite_options=dict(SLICE_OPTIONS),
        per_cell=per_cell,
        filter=list(filter or []),
    )
    pool = tasks if tasks is not None else load_suite(base.suite, **suite_options(base))
    size = len(select_tasks(pool, base))
    cfg = RunConfig(
        suite=SLICE_SUITE,
        suite_options=dict(SLICE_OPTIONS),
        agents=list(DEFAULT_DESIGNS),
        models=[model],
        limit=size,  # the same instances as per_cell, in round-robin order of the cells
        filter=list(filter or []),
        concurrency=concurrency,
        base_url=base_url,
        episode_timeout_s=None,  # a CPU model is slow, not stuck; model requests time out
    )
    if tasks is None and suite_options(cfg) != suite_options(base):
        pool = load_suite(cfg.suite, **suite_options(cfg))
    return cfg, [j.key for j in make_jobs(select_tasks(pool, cfg), cfg)]


class NothingRun:
    """A backend that runs nothing: ``--table-only`` stores what the archive holds, no more."""

    async def run(self, jobs: Any, cfg: Any, agent: Any, on_done: Any) -> None:
        return None


def run_slice(
    cfg: RunConfig,
    out: Path,
    tasks: list[Any] | None = None,
    workers: int = 1,
    *,
    archive: Path | None = None,
    run: bool = True,
) -> tuple[int, float]:
    """Run (or resume) the slice into ``out``; (episodes run now, seconds). ``workers`` other
    than 1 runs it on that many processes (0: one per core), one instance (its four designs) at
    a time each: a CPU model's own copy per process, its reply written on one core. With an
    ``archive``, the episodes it holds are stored from it and every episode run is appended to
    it (:mod:`replan.runner.archive`); ``run=False`` only stores what the archive holds."""
    t0 = time.perf_counter()
    # a local model is deterministic: its failed runs (a prompt past the context window) come
    # back the same, so a resume keeps every stored failure (main checks the model can load
    # before anything runs); an endpoint's failures may be transient and run again
    local = cfg.models[0].startswith("local:")
    if not run and archive is None:
        return 0, 0.0
    backend: Any = None  # arun's own: one process
    if not run:
        backend = NothingRun()
    elif workers != 1:
        backend = ProcessBackend(workers, batch_size=len(cfg.agents))
    cfg = cfg.model_copy(update={"retry_failed": not local, "archive": archive})
    outcome = asyncio.run(arun(cfg, out, tasks=tasks, backend=backend))
    ran = outcome.ran if run else 0
    return ran, time.perf_counter() - t0


def stored_table(out: Path, keys: list[str], model: str) -> tuple[str, dict[str, dict[str, Any]]]:
    """The table of the slice's instances that have all four designs stored in ``out`` so far
    (an instance still in progress is left out, so every row covers the same instances), and
    the usable shares."""
    with ResultsStore(out) as store:
        stored = store.episodes_by_key(keys)
        tools_of = {t.task_id: list(t.tools) for t in store.tasks().values()}
    per_task = Counter(ep.task_id for ep in stored.values())
    whole = {t for t, n in per_task.items() if n == len(DEFAULT_DESIGNS)}
    used = {k: ep for k, ep in stored.items() if ep.task_id in whole}
    episodes = list(used.values())
    rates = usable(episodes, tools_of)
    selected = len(keys) // len(DEFAULT_DESIGNS)
    text = table(summarize(out, list(used)), rates, model) if used else "nothing complete yet"
    in_progress = len(stored) - len(used)
    text += (
        f"\n\n{len(whole)} of the slice's {selected} instances have all four designs stored "
        "(failed runs included); the table covers them"
    )
    if in_progress:
        text += f", not the {in_progress} episode(s) of an instance in progress"
    text += "."
    ended: dict[str, Counter] = {}
    for ep in episodes:
        ended.setdefault(ep.design, Counter())[ep.end_reason.value] += 1
    if ended:
        text += "\nHow the runs ended:\n" + "\n".join(
            f"- {d}: " + ", ".join(f"{n} {why}" for why, n in c.most_common())
            for d, c in sorted(ended.items())
        )
    failed = Counter(
        (ep.design, ep.end_reason.value, next(iter((ep.error or "").splitlines()), "")[:100])
        for ep in episodes
        if ep.end_reason.value in FAILURE_END_REASONS
    )
    if failed:
        text += (
            "\nFailed runs are left out of the metrics and counted under 'failed':\n"
            + "\n".join(f"- {d}: {n} x {why}: {err}" for (d, why, err), n in sorted(failed.items()))
        )
    return text, rates


ROOT = Path(__file__).resolve().parents[1]
#: the committed episodes of the SmolLM2 slice (symmetric decoding, begun 2026-12-02): a
#: checkout resumes the slice from them instead of running its instances again
DEFAULT_ARCHIVE = ROOT / "benchmarks" / "results" / "smollm2-slice.jsonl"


def archive_path(value: str, model: str, per_cell: int, filter: list[str]) -> Path | None:
    """``--archive``: a path, 'none', or 'auto' (the committed archive for the default SmolLM2
    slice only: another model or another slice would mix its episodes into it)."""
    if value == "none":
        return None
    if value != "auto":
        return Path(value)
    default_slice = model == "local:smollm2" and per_cell == 2 and not filter
    return DEFAULT_ARCHIVE if default_slice else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="local:smollm2")
    ap.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint")
    ap.add_argument("--per-cell", type=int, default=2, help="instances per level x mode cell")
    ap.add_argument("--filter", default="", help="levels and/or modes, e.g. 'NP' or 'C1,C2'")
    ap.add_argument("--concurrency", type=int, default=None)
    ap.add_argument(
        "--workers",
        type=int,
        default=1,
        help="processes, each with its own copy of a local model (0: one per core)",
    )
    ap.add_argument("--out", type=Path, default=Path("replan-results-real-model"))
    ap.add_argument(
        "--archive",
        default="auto",
        help="Episode JSON Lines file the run appends to and resumes from ('auto': "
        f"{DEFAULT_ARCHIVE.relative_to(ROOT)} for the default SmolLM2 slice, none otherwise; "
        "'none': no archive)",
    )
    ap.add_argument("--md", type=Path, default=None, help="also write the table to this file")
    ap.add_argument(
        "--table-only", action="store_true", help="print the table of what is stored; run nothing"
    )
    ns = ap.parse_args()
    conc = ns.concurrency or (1 if ns.model.startswith("local:") else 4)
    filt = [x.strip() for x in ns.filter.split(",") if x.strip()]
    cfg, keys = slice_config(
        ns.model, base_url=ns.base_url, per_cell=ns.per_cell, filter=filt, concurrency=conc
    )
    ran_note = ""
    archive = archive_path(ns.archive, ns.model, ns.per_cell, filt)
    if ns.table_only:
        if archive is not None and archive.exists():
            try:  # the archive's episodes into the store (a fresh checkout has no store yet)
                run_slice(cfg, ns.out, archive=archive, run=False)
            except StoreBusy:  # a bench is running into this store: show the store as it is
                print(
                    f"({ns.out} is being written by a running bench; its archive is not read now)",
                    file=sys.stderr,
                )
            except StoreError as exc:  # another suite version, a corrupt store, no archive
                sys.exit(f"bench_real_model: {exc}")
        if not (ns.out / "results.sqlite").exists():
            sys.exit(f"bench_real_model: no results store in {ns.out}")
    else:
        try:
            check_model(ns.model, base_url=ns.base_url)
        except PreflightError as exc:
            sys.exit(f"bench_real_model: {exc}")
        try:
            ran, wall = run_slice(cfg, ns.out, workers=ns.workers, archive=archive)
        except StoreError as exc:  # the store or the archive refused: nothing was run
            sys.exit(f"bench_real_model: {exc}")
        ran_note = (
            f"\n{ran} episodes run now in {wall:.0f} s ({wall / max(ran, 1):.0f} s per episode); "
            f"episodes already stored in {ns.out} were not rerun."
        )
    text, rates = stored_table(ns.out, keys, ns.model)
    text += ran_note
    print(text)
    if ns.md:
        ns.md.write_text(text + "\n", encoding="utf-8")
    formed = sum(r["formed"] for r in rates.values())
    calls = sum(r["calls"] for r in rates.values())
    parsed = sum(r["parsed"] for r in rates.values())
    plans = sum(r["plans"] for r in rates.values())
    print(
        f"usable overall: plans {_share(parsed, plans)}, tool calls {_share(formed, calls)}",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
