"""Loader for the ParaRecover benchmark files (LEVEL-1 real / augmented, LEVEL-2 real).

The three upstream files differ: ``tool_list``, ``plan`` and (augmented) ``fun_call`` are JSON
*strings* in some files and native values in others; ``round_gt`` / ``funcall_times_gt`` may be
strings, integers or null; LEVEL-2 carries ``tag_1..tag_3`` instead of ``tag``; tags are Chinese
in the real rollouts and English in the augmented file; ``fun_call[].arguments`` may be a list
and ``results`` may be empty. :func:`iter_instances` reads all of them and reports a malformed
line with its file and line number instead of stopping.

Replan point (below the loader): :func:`point_from_instance` gives an instance's typed start
state (:class:`~replan.core.task.ReplanPoint`: the previous plan, the last wave's results, the
outputs of what ran cleanly, the rounds and calls already run). The run from there — the
replanner's reply executed to the response node, so that E5 (S·min(1, G/T)), Pass@1 and
tool-use efficiency can be computed — is the ``replanner_loop`` design entered at its replanner
(:func:`replan.graphs.run_episode`), under the suite's protocol budgets
(:data:`PROTOCOL_BUDGETS`); the tools, which have no implementation, run in a simulated world
(:class:`~replan.env.simulators.SimulatedWorld`).
"""

from __future__ import annotations

import ast
import json
import warnings
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from replan.core.jsonl import LineError, iter_json
from replan.core.jsonl import loads as json_loads
from replan.core.plan import ParseFailure, Plan
from replan.core.task import ReplanPoint, Task, WaveCall
from replan.core.taxonomy import ErrorType, error_types_for_tag
from replan.core.tools import ToolSpec
from replan.env.simulators import (
    check_call,
    result_failed,
)
from replan.suites.suite import StatsTable, csv_option, suite

#: one executed call of the last wave, as the dataset records it (``name``, ``arguments``,
#: ``results``): the task's typed replan point holds the same objects
FunCall = WaveCall


class LoadError(BaseModel):
    """A line that could not be read; the rest of the file still is."""

    file: str
    line: int
    message: str
    duplicate_of: int | None = None  # the line whose id this line repeats (it is skipped)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


class ParaRecoverInstance(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    id: int | str
    query_id: int | str | None = None
    query: str
    tools: list[ToolSpec]
    plan_text: str
    plan: Plan | ParseFailure
    error_reason: str | None = None
    funcall_times_gt: int | None = None
    round_gt: int | None = None
    tags: list[str] = Field(default_factory=list)
    error_types: list[ErrorType] = Field(default_factory=list)
    fun_call: list[FunCall] = Field(default_factory=list)
    level: str = "LEVEL-1"
    source: str = ""
    line: int = 0

    @property
    def key(self) -> str:
        return f"{self.level}:{Path(self.source).stem}:{self.id}"


def _maybe_json(value: Any, what: str) -> Any:
    """A field that may hold JSON text: parsed. Real rollout lines sometimes carry a Python
    literal instead (``[{'name': 'x', ...}]``: single quotes, ``True``/``None``); it is read with
    :func:`ast.literal_eval`, which evaluates literals only, never code."""
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        try:
            return json_loads(text)
        except ValueError as exc:
            try:
                return ast.literal_eval(text)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                raise ValueError(
                    f"field {what!r} is a string that is neither JSON nor a Python literal: {exc}"
                ) from exc
    return value


def _opt_int(value: Any, what: str) -> int | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        return int(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"field {what!r} is not an integer: {value!r}") from exc


def _level_of(path: Path, record: dict[str, Any]) -> str:
    if "tag_1" in record:
        return "LEVEL-2"
    name = path.as_posix().upper()
    return "LEVEL-2" if "LEVEL-2" in name or "LEVEL_2" in name else "LEVEL-1"


def parse_record(
    record: dict[str, Any], source: str = "", line: int = 0, level: str | None = None
) -> ParaRecoverInstance:
    """One dataset record -> instance; raises ``ValueError`` naming the bad field."""
    if not isinstance(record, dict):
        raise ValueError(f"a line must hold a JSON object, got {type(record).__name__}")
    for required in ("id", "query", "tool_list", "plan"):
        if required not in record:
            raise ValueError(f"missing field {required!r}")
    tools = ToolSpec.from_pararecover(_maybe_json(record["tool_list"], "tool_list") or [])
    plan_raw = record["plan"]
    plan_text = plan_raw if isinstance(plan_raw, str) else json.dumps(plan_raw, ensure_ascii=False)
    tags = [record[k] for k in ("tag", "tag_1", "tag_2", "tag_3") if record.get(k)]
    types: list[ErrorType] = []
    for t in tags:
        for et in error_types_for_tag(t):
            if et not in types:
                types.append(et)
    calls_raw = _maybe_json(record.get("fun_call"), "fun_call") or []
    if isinstance(calls_raw, dict):
        calls_raw = [calls_raw]
    if not isinstance(calls_raw, list):
        raise ValueError(f"field 'fun_call' must be a list, got {type(calls_raw).__name__}")
    calls = []
    for i, c in enumerate(calls_raw):
        if not isinstance(c, dict) or "name" not in c:
            raise ValueError(f"fun_call[{i}] has no tool name")
        calls.append(
            FunCall(name=str(c["name"]), arguments=c.get("arguments"), results=c.get("results"))
        )
    return ParaRecoverInstance(
        id=record["id"],
        query_id=record.get("query_id"),
        query=str(record["query"]),
        tools=tools,
        plan_text=plan_text,
        plan=Plan.parse(plan_text),
        error_reason=record.get("error_reason"),
        funcall_times_gt=_opt_int(record.get("funcall_times_gt"), "funcall_times_gt"),
        round_gt=_opt_int(record.get("round_gt"), "round_gt"),
        tags=[str(t) for t in tags],
        error_types=types,
        fun_call=calls,
        level=level or "LEVEL-1",
        source=source,
        line=line,
    )


def iter_instances(path: str | Path) -> Iterator[ParaRecoverInstance | LoadError]:
    """Every line of a ParaRecover ``.jsonl`` file: an instance, or a :class:`LoadError`."""
    p = Path(path)
    first_line: dict[str, int] = {}  # id -> the line that holds it: a repeat is an error
    for lineno, record in iter_json(p):  # not UTF-8, not JSON, too deep: that line only
        if isinstance(record, LineError):
            yield LoadError(file=str(p), line=lineno, message=record.message)
            continue
        try:
            inst = parse_record(
                record,
                str(p),
                lineno,
                _level_of(p, record) if isinstance(record, dict) else None,
            )
        except (ValueError, TypeError, RecursionError) as exc:
            yield LoadError(file=str(p), line=lineno, message=str(exc) or type(exc).__name__)
            continue
        key = str(inst.id)
        if key in first_line:
            yield LoadError(
                file=str(p),
                line=lineno,
                message=f"duplicate id {inst.id!r} (first on line {first_line[key]}); skipped",
                duplicate_of=first_line[key],
            )
            continue
        first_line[key] = lineno
        yield inst


def load_instances(path: str | Path) -> tuple[list[ParaRecoverInstance], list[LoadError]]:
    """All readable instances of a file and the errors of the lines that were not."""
    good: list[ParaRecoverInstance] = []
    bad: list[LoadError] = []
    for item in iter_instances(path):
        (bad if isinstance(item, LoadError) else good).append(item)  # type: ignore[arg-type]
    return good, bad


# =============================================================================================
# Replay: an instance as the replanner's starting state, and execution after the replan
# =============================================================================================
#
# Counting conventions (decided here, tested in tests/suites):
# - A *round* is one wave of tool calls. ``rounds_executed`` = the topological waves of the
#   plan's ``done`` call nodes, plus one when the last wave (``fun_call``) holds calls that are
#   not ``done`` nodes of the plan (the usual case: the wave just ran and the plan has not been
#   updated yet).
# - The response node's turn counts as one more round, as in the upstream ``round_gt`` (a chain
#   of six calls has ``round_gt`` 7); so after a replan T = rounds_executed + waves run + 1.
# - A node counts as executed only if its call ran cleanly: whatever statuses a replanner writes,
#   a node that did not run (or failed) runs again if the new plan still holds it.


def _done_waves(plan: Plan) -> list[list[str]]:
    import networkx as nx  # late: 0.1 s to import, and loading a suite never needs it

    done = [n for n in plan.call_nodes if n.status == "done"]
    ids = {n.id for n in done}
    g = nx.DiGraph()
    g.add_nodes_from(ids)
    for n in done:
        g.add_edges_from((d, n.id) for d in n.deps if d in ids)
    try:
        return [sorted(layer) for layer in nx.topological_generations(g)]
    except nx.NetworkXUnfeasible:  # a cyclic plan: count each node as its own wave
        return [[i] for i in sorted(ids)]


def count_rounds_executed(plan: Plan, fun_call: Sequence[FunCall]) -> int:
    """Rounds already run in an instance: waves of ``done`` call nodes (+1 for the last wave
    when its calls are not ``done`` nodes of the plan)."""
    waves = _done_waves(plan)
    rounds = len(waves)
    if fun_call:
        last = {plan.node(i).tool for i in waves[-1]} if waves else set()
        if any(c.name not in last for c in fun_call):
            rounds += 1
    return rounds


def match_last_wave(plan: Plan, fun_call: Sequence[FunCall]) -> dict[str, FunCall]:
    """Pending call nodes of ``plan`` that the last wave's calls ran (:meth:`Plan.nodes_run_by`)."""
    nodes = plan.nodes_run_by([c.name for c in fun_call])
    return {n: c for n, c in zip(nodes, fun_call, strict=True) if n is not None}


def point_from_instance(inst: ParaRecoverInstance) -> ReplanPoint:
    """A dataset instance's replan point: the plan and the last wave as given, the outputs of
    the call nodes that ran cleanly, and the rounds and calls already run (see above)."""
    outputs: dict[str, Any] = {}
    calls_executed = len(inst.fun_call)
    if isinstance(inst.plan, Plan):
        for n in inst.plan.call_nodes:
            if n.status == "done":
                outputs[n.id] = n.desc  # the dataset keeps no output for older waves
        tools = {t.name: t for t in inst.tools}
        for nid, c in match_last_wave(inst.plan, inst.fun_call).items():
            # done only if the call was valid (its verdict, as a replayed step records it) and
            # its result does not read as a failure
            if check_call(tools, c.name, c.arguments).ok and not result_failed(c.results):
                outputs[nid] = c.results
        done_tools = [inst.plan.node(i).tool for w in _done_waves(inst.plan) for i in w]
        extra = [c for c in inst.fun_call if c.name not in done_tools]
        calls_executed = len(done_tools) + len(extra)
        rounds = count_rounds_executed(inst.plan, inst.fun_call)
    else:
        rounds = 1 if inst.fun_call else 0
    return ReplanPoint(
        rounds_executed=rounds,
        calls_executed=calls_executed,
        plan=inst.plan_text,
        last_wave=inst.fun_call,
        outputs=outputs,
    )


# ---------------------------------------------------------------------------------------------
# instances as tasks
def instance_to_task(inst: ParaRecoverInstance) -> Task:
    """A dataset instance as a :class:`~replan.core.task.Task` of suite ``pararecover``.

    The tools have no implementation: a run from the instance's replan point calls them in a
    simulated world (:func:`replan.env.replan_point_world`).
    """
    return Task(
        task_id=f"pararecover-{inst.level}-{Path(inst.source).stem}-{inst.id}",
        suite="pararecover",
        query=inst.query,
        tools=[t.name for t in inst.tools],
        level=inst.level,
        mode="NP",
        optimal_rounds=inst.round_gt,
        rounds_include_response=True,
        min_calls=inst.funcall_times_gt,
        replan_point=point_from_instance(inst),
        tool_specs=[
            {
                "name": t.name,
                "description": t.description,
                "parameters": t.parameters["properties"],
                "required": list(t.parameters["required"]),
            }
            for t in inst.tools
        ],
        metadata={
            "id": inst.id,
            "query_id": inst.query_id,
            "source": inst.source,
            "line": inst.line,
            "tags": inst.tags,
            "error_types": [e.value for e in inst.error_types],
            "error_reason": inst.error_reason,
        },
    )


def load_tasks(
    path: str | Path, levels: Iterable[str] | None = None, *, strict: bool = False
) -> list[Task]:
    """Tasks from a ParaRecover ``.jsonl`` file or a directory of them (searched recursively).

    A line that cannot be read is skipped with a warning naming its file and line (the rest of
    the file still loads); with ``strict`` it raises ``ValueError`` instead.
    """

    p = Path(path)
    if not p.exists():
        raise ValueError(f"pararecover: no such file or directory: {p}")
    files = sorted(p.rglob("*.jsonl")) if p.is_dir() else [p]
    if not files:
        raise ValueError(f"pararecover: no .jsonl files under {p}")
    wanted = {lv.upper() for lv in levels} if levels else None
    out: list[Task] = []
    for f in files:
        good, bad = load_instances(f)
        if bad and strict:
            raise ValueError(f"pararecover: {bad[0]} ({len(bad)} unreadable line(s) in {f})")
        for e in bad:
            warnings.warn(f"pararecover: skipped {e}", stacklevel=2)
        for inst in good:
            if wanted is None or inst.level.upper() in wanted:
                out.append(instance_to_task(inst))
    return out


# ---------------------------------------------------------------------------------------------
# the suite as replan run, replan suites and load_suite see it

#: ParaRecover's protocol from a replan point, as agent budgets: one replan, then the waves to
#: the end (a failed call ends the run); at most 40 rounds in all (Appendix H), the response's
#: round included, so 39 waves, counting those run before the replan point
PROTOCOL_BUDGETS: dict[str, Any] = {"max_replans": 1, "max_rounds": 39}


def error_type_views(name: str, body: dict[str, dict[str, Any]]) -> list[StatsTable | str]:
    """Per level: a table of error types × counts (per round for LEVEL-2), then a line of mean
    G, gt calls and rounds executed (the ParaRecover suites' ``replan suites stats`` view)."""
    out: list[StatsTable | str] = []
    for level, row in body.items():
        cols = [k for k in row if isinstance(row[k], dict)]
        types = sorted({t for c in cols for t in row[c]})
        rows = tuple((t, *[str(row[c].get(t, 0)) for c in cols]) for t in types)
        out.append(
            StatsTable(f"{name} {level}: {row['instances']} instances", ("error type", *cols), rows)
        )
        out.append(
            f"mean round_gt {row.get('mean_round_gt')}, mean funcall_times_gt "
            f"{row.get('mean_funcall_times_gt')}, mean rounds executed {row.get('mean_rounds_executed')}"
        )
    return out


def _stats(*, path: str | Path, progress: Any = None) -> dict[str, Any]:
    """Per level: instances, error-type counts, mean G, gt calls and rounds already executed."""
    tasks = load_tasks(path)
    out: dict[str, Any] = {"suite": "pararecover", "path": str(path), "levels": {}}
    for level in sorted({t.level or "?" for t in tasks}):
        ts = [t for t in tasks if t.level == level]
        tags = Counter(e for t in ts for e in t.metadata.get("error_types") or [])
        g = [t.optimal_rounds for t in ts if t.optimal_rounds is not None]
        c = [t.min_calls for t in ts if t.min_calls is not None]
        out["levels"][level] = {
            "instances": len(ts),
            "error_types": dict(sorted(tags.items())),
            "mean_round_gt": round(sum(g) / len(g), 2) if g else None,
            "mean_funcall_times_gt": round(sum(c) / len(c), 2) if c else None,
            "mean_rounds_executed": round(
                sum(t.replan_point.rounds_executed if t.replan_point else 0 for t in ts) / len(ts),
                2,
            ),
        }
    return out


@suite(
    "pararecover",
    description="ParaRecover LEVEL-1 / LEVEL-2 instances from the upstream .jsonl files",
    requires_help="a ParaRecover .jsonl file or directory; the bundled sample is "
    "src/replan/samples/pararecover-sample, or fetch the data with "
    "`replan data pararecover --dest DIR`",
    start="replan_point",
    default_designs=("replanner_loop",),
    stats=_stats,
    stats_view=lambda report: error_type_views("pararecover", report["levels"]),
    budgets=PROTOCOL_BUDGETS,
)
def load(
    *, path: str | Path, levels: Iterable[str] | str | None = None, limit: int | None = None
) -> list[Task]:
    """The ``pararecover`` suite: :func:`load_tasks` of ``path``, the first ``limit``."""
    tasks = load_tasks(path, csv_option(levels))
    return tasks[: int(limit)] if limit is not None else tasks
