"""Loader for the ParaRecover benchmark files (LEVEL-1 real / augmented, LEVEL-2 real).

The three upstream files differ: ``tool_list``, ``plan`` and (augmented) ``fun_call`` are JSON
*strings* in some files and native values in others; ``round_gt`` / ``funcall_times_gt`` may be
strings, integers or null; LEVEL-2 carries ``tag_1..tag_3`` instead of ``tag``; tags are Chinese
in the real rollouts and English in the augmented file; ``fun_call[].arguments`` may be a list
and ``results`` may be empty. :func:`iter_instances` reads all of them and reports a malformed
line with its file and line number instead of stopping.

Replay (below the loader): :func:`start_from_instance` / :func:`start_from_task` give the
replanner's starting state (query, tools, previous plan, the last wave's results, the rounds and
calls already run, G); :func:`continue_plan` executes the replanner's plan to the response node
through a tool simulator — :class:`DeterministicSimulator` (default; validates calls against the
tool list, schema-shaped seeded outputs), :class:`LLMToolSimulator` (a chat model plays the tools,
as in the paper) or :class:`WorldSimulator` (real deterministic tools, for ``pararecover-synth``)
— so that E5 (S·min(1, G/T)), Pass@1 and tool-use efficiency can be computed.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

import networkx as nx
from pydantic import BaseModel, ConfigDict, Field

from replan.core.jsonl import LineError, iter_json
from replan.core.jsonl import loads as json_loads
from replan.core.plan import RESPONSE, ParseFailure, Plan
from replan.core.task import Task
from replan.core.taxonomy import ErrorType, VerdictCode, error_types_for_tag
from replan.core.tools import ToolSpec
from replan.core.trace import Call, EndReason, Episode, PlanVersion, Step, Usage, Verdict


class FunCall(BaseModel):
    """One executed call of the last wave, as the dataset records it."""

    name: str
    arguments: Any = None
    results: Any = None


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

_FAILED_TEXT = re.compile(
    r"^\s*(?:error|exception|failed|failure|invalid|missing|timeout|timed out|错误|失败|异常|超时)"
    r"|\berror\b[:：]|parameter (?:format )?error|not recognized|is required|timed out",
    re.I,
)


def result_failed(result: Any) -> bool:
    """Whether a recorded tool result reads as a failure (an error text, empty, a timeout)."""
    if result in (None, "", [], {}):
        return True
    if isinstance(result, Mapping) and ("error" in result or "Error" in result):
        return True
    text = result if isinstance(result, str) else ""
    return bool(text and _FAILED_TEXT.search(text))


def _done_waves(plan: Plan) -> list[list[str]]:
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


def _match_last_wave(plan: Plan, fun_call: Sequence[FunCall]) -> dict[str, FunCall]:
    """Pending call nodes of ``plan`` that the last wave's calls ran (by tool, in id order)."""
    pending = [n for n in plan.call_nodes if n.status != "done"]
    frontier = set(plan.frontier())
    pending.sort(key=lambda n: (n.id not in frontier, plan.ids.index(n.id)))
    out: dict[str, FunCall] = {}
    for c in fun_call:
        node = next((n for n in pending if n.tool == c.name and n.id not in out), None)
        if node is not None:
            out[node.id] = c
    return out


class ReplanStart(BaseModel):
    """What a replanner is given: the query, the tools, the previous plan, the last wave's
    results — plus what the continuation needs (what ran cleanly, rounds and calls so far, G)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    key: str
    level: str = "LEVEL-1"
    query: str
    tools: list[ToolSpec]
    plan_text: str
    plan: Plan | ParseFailure
    last_wave: list[FunCall] = Field(default_factory=list)
    rounds_executed: int = 0
    calls_executed: int = 0
    round_gt: int | None = None
    funcall_times_gt: int | None = None
    error_types: list[ErrorType] = Field(default_factory=list)
    executed: dict[str, Any] = Field(default_factory=dict)  # node id -> output (ran cleanly)
    executed_tools: dict[str, str] = Field(default_factory=dict)  # node id -> tool it ran
    task: Any = None  # the Task when the instance runs in the real world (pararecover-synth)

    def observations(self) -> list[dict[str, Any]]:
        """The last wave as the replanner prompt shows it (one dict per call)."""
        return [{"tool": c.name, "args": c.arguments, "result": c.results} for c in self.last_wave]


def start_from_instance(inst: ParaRecoverInstance) -> ReplanStart:
    """The replanner's starting state for a dataset instance."""
    executed: dict[str, Any] = {}
    executed_tools: dict[str, str] = {}
    calls_executed = len(inst.fun_call)
    if isinstance(inst.plan, Plan):
        for n in inst.plan.call_nodes:
            if n.status == "done":
                executed[n.id] = n.desc  # the dataset keeps no output for older waves
                executed_tools[n.id] = n.tool or ""
        matched = _match_last_wave(inst.plan, inst.fun_call)
        for nid, c in matched.items():
            if not result_failed(c.results):
                executed[nid] = c.results
                executed_tools[nid] = c.name
        done_tools = [inst.plan.node(i).tool for w in _done_waves(inst.plan) for i in w]
        extra = [c for c in inst.fun_call if c.name not in done_tools]
        calls_executed = len(done_tools) + len(extra)
        rounds = count_rounds_executed(inst.plan, inst.fun_call)
    else:
        rounds = 1 if inst.fun_call else 0
    return ReplanStart(
        key=inst.key,
        level=inst.level,
        query=inst.query,
        tools=inst.tools,
        plan_text=inst.plan_text,
        plan=inst.plan,
        last_wave=inst.fun_call,
        rounds_executed=rounds,
        calls_executed=calls_executed,
        round_gt=inst.round_gt,
        funcall_times_gt=inst.funcall_times_gt,
        error_types=inst.error_types,
        executed=executed,
        executed_tools=executed_tools,
    )


def start_from_task(task: Task, corpus: Any = None) -> ReplanStart:
    """The starting state of a ``pararecover`` or ``pararecover-synth`` task."""
    meta = task.metadata
    if "plan" not in meta:
        raise ValueError(
            f"task {task.task_id} ({task.suite}) has no instance plan: only pararecover and "
            "pararecover-synth tasks start from a replan point"
        )
    plan_raw = meta["plan"]
    plan_text = plan_raw if isinstance(plan_raw, str) else json.dumps(plan_raw, ensure_ascii=False)
    plan = Plan.parse(plan_text)
    calls = [
        FunCall(name=str(c["name"]), arguments=c.get("arguments"), results=c.get("results"))
        for c in meta.get("fun_call") or []
    ]
    error_types = [ErrorType(e) for e in meta.get("error_types") or []]
    if task.suite == "pararecover":
        inst = ParaRecoverInstance(
            id=meta.get("id", task.task_id),
            query=task.query,
            tools=ToolSpec.from_pararecover(meta.get("tool_list") or []),
            plan_text=plan_text,
            plan=plan,
            funcall_times_gt=meta.get("funcall_times_gt"),
            round_gt=meta.get("round_gt"),
            error_types=error_types,
            fun_call=calls,
            level=task.level or "LEVEL-1",
            source=str(meta.get("source", "")),
        )
        return start_from_instance(inst)
    if corpus is None:
        from replan.env.corpus import load_corpus

        corpus = load_corpus()
    ok = meta.get("executed_ok") or {}
    bindings = meta.get("bindings") or {}
    executed = {n: bindings.get(n) for n, good in ok.items() if good}
    executed_tools = {}
    if isinstance(plan, Plan):
        executed_tools = {n: plan.node(n).tool or "" for n in executed if plan.get(n) is not None}
    return ReplanStart(
        key=task.task_id,
        level=task.level or "LEVEL-1",
        query=task.query,
        tools=[corpus.tools[t] for t in task.tools if t in corpus.tools],
        plan_text=plan_text,
        plan=plan,
        last_wave=calls,
        rounds_executed=int(meta.get("rounds_executed", 0)),
        calls_executed=len(ok),
        round_gt=task.optimal_rounds,
        funcall_times_gt=task.min_calls,
        error_types=error_types,
        executed=executed,
        executed_tools=executed_tools,
        task=task,
    )


# ---------------------------------------------------------------------------------------------
# tool simulators
class PendingCall(BaseModel):
    node: str
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    positional: list[Any] | None = None  # a bare argument list, as some plans write it
    desc: str = ""


class SimResult(BaseModel):
    ok: bool
    result: Any = None
    verdict: Verdict | None = None  # the agent's side of the call (``None``: not checked)


def check_call(
    tools: Mapping[str, ToolSpec],
    tool: str,
    args: Any,
    executed: Mapping[str, Any] | None = None,
    node: str = "",
    positional: list[Any] | None = None,
) -> Verdict:
    """The verdict of one call of a replayed plan (what the simulators execute by, and the
    verdict its step records, so that the two agree).

    The tool exists; the arguments are an object keyed by parameter name (a bare list is a
    ``unknown_param``, as the dataset's tool agent rejects it); names fit; every value fits its
    parameter's schema. A reference in words (``"task3 result"``, ``"2的结果"``) is text and fits
    only a parameter that takes text; an exact ``${node.field}`` reference is the referenced
    output, taken as given (dataset outputs are free text), and so is a structured value with
    ``${...}`` inside; text with an embedded ``${...}`` is text. With ``executed`` (node id ->
    output of the nodes that ran cleanly), every node a value refers to must have run, and an
    exact reference's field must exist in a structured output.
    """
    from replan.core.plan import exact_reference, iter_references
    from replan.env.verifier import reference_token, textual_references
    from replan.env.world import _MISSING, lookup_path

    spec = tools.get(tool)
    if spec is None:
        return Verdict(
            code=VerdictCode.UNKNOWN_TOOL,
            message=f"tool {tool!r} is not in the available tool list",
        )
    if isinstance(args, list) and positional is None:
        if args and all(isinstance(a, Mapping) for a in args):  # [{"a": 1}, {"b": 2}]
            args = {k: v for a in args for k, v in a.items()}
        else:
            positional, args = args, {}
    if positional:
        return Verdict(
            code=VerdictCode.UNKNOWN_PARAM,
            message=f"the arguments of {tool} are a bare list ({_short_json(positional)}); "
            f"give them as an object keyed by parameter name ({list(spec.param_names)})",
        )
    names = spec.check_names(args if args is not None else {})
    if not names.ok:
        return Verdict(code=names.code, param=names.param, message=names.message)
    known = list(executed) if executed is not None else None
    for k, v in (args or {}).items():
        refs = list(iter_references(v, known))
        exact = exact_reference(v, known)
        if executed is not None:
            for r in refs:
                if r.node not in executed:
                    return Verdict(
                        code=VerdictCode.UNBOUND_REFERENCE,
                        param=k,
                        message=f"{tool}.{k} uses the output of {r.node}, which has not run",
                    )
            if (
                exact is not None
                and exact.path
                and isinstance(executed[exact.node], Mapping)
                and lookup_path(executed[exact.node], exact.path) is _MISSING
            ):
                return Verdict(
                    code=VerdictCode.UNBOUND_REFERENCE,
                    param=k,
                    message=f"{tool}.{k}: {exact} has no such field",
                )
            words = textual_references(v, [*known, *_id_like(v)]) - {node}  # type: ignore[misc]
            for w in sorted(words):
                if w not in executed:
                    return Verdict(
                        code=VerdictCode.UNBOUND_REFERENCE,
                        param=k,
                        message=f"{tool}.{k} needs the result of task {w}, which has not run",
                    )
        if exact is not None or reference_token(v, known) is not None:
            continue  # the referenced output itself: its type is known only when it runs
        if refs and not isinstance(v, str):
            continue  # a structure with references inside: resolved when it runs
        res = spec.check_value(k, v)
        if not res.ok:
            return Verdict(code=res.code, param=res.param, message=res.message)
    return Verdict(code=VerdictCode.OK)


def _short_json(value: Any, limit: int = 80) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ToolSimulator(Protocol):
    """Runs one wave of calls; ``executed`` maps node ids that ran cleanly to their outputs."""

    def run(self, calls: Sequence[PendingCall], executed: Mapping[str, Any]) -> list[SimResult]: ...


def _fake(schema: Any, rng: Any, label: str, depth: int = 0) -> Any:
    """A deterministic value that fits ``schema`` (drawn from ``rng``)."""
    if not isinstance(schema, Mapping) or depth > 4:
        return f"{label}-{rng.randrange(16**6):06x}"
    if schema.get("enum"):
        return schema["enum"][rng.randrange(len(schema["enum"]))]
    if "const" in schema:
        return schema["const"]
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), "string")
    if t == "object" or (t is None and isinstance(schema.get("properties"), Mapping)):
        props = schema.get("properties") or {}
        return {k: _fake(v, rng, k, depth + 1) for k, v in props.items()} or {
            "value": f"{label}-{rng.randrange(16**6):06x}"
        }
    if t == "array":
        n = max(1, int(schema.get("minItems", 1)))
        n = min(n + rng.randrange(2), int(schema.get("maxItems", n + 1)))
        return [_fake(schema.get("items"), rng, label, depth + 1) for _ in range(max(n, 1))]
    if t == "integer":
        lo = int(schema.get("minimum", 1))
        hi = int(schema.get("maximum", lo + 99))
        return rng.randint(lo, max(lo, hi))
    if t == "number":
        lo = float(schema.get("minimum", 1.0))
        hi = float(schema.get("maximum", lo + 999.0))
        return round(lo + (hi - lo) * rng.random(), 2)
    if t == "boolean":
        return bool(rng.randrange(2))
    fmt = schema.get("format")
    if fmt == "date":
        return f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    if fmt == "date-time":
        return f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:00:00Z"
    if fmt == "email":
        return f"user{rng.randrange(1000)}@example.com"
    return f"{label}-{rng.randrange(16**6):06x}"


class DeterministicSimulator:
    """The default tool simulator: validates every call against the tool list and returns a
    seeded, schema-shaped output (the same call always gives the same output).

    Validation is :func:`check_call`, the same check that gives a replayed step its verdict, so
    execution and verdict agree: a call whose verdict is not ``ok`` does not run. Failures
    return ``"Error: ..."`` texts, as the dataset's tool agent does.
    """

    def __init__(self, tools: Iterable[ToolSpec], seed: int = 0):
        self.tools = {t.name: t for t in tools}
        self.seed = seed

    def check(self, call: PendingCall, executed: Mapping[str, Any]) -> Verdict:
        """The verdict of ``call`` given the nodes that ran cleanly (see :func:`check_call`)."""
        return check_call(self.tools, call.tool, call.args, executed, call.node, call.positional)

    def validate(self, call: PendingCall, executed: Mapping[str, Any]) -> str | None:
        """The error text for an invalid call, else ``None``."""
        v = self.check(call, executed)
        return None if v.ok else f"Error: {v.message}"

    def output(self, call: PendingCall) -> Any:
        import random as _random

        from replan.env.world import stable_seed

        spec = self.tools[call.tool]
        rng = _random.Random(stable_seed("sim", self.seed, call.tool, call.args))
        if isinstance(spec.returns.get("properties"), Mapping) and spec.returns["properties"]:
            return _fake(spec.returns, rng, call.tool)
        return {
            "status": "success",
            "result": f"{call.tool} completed ({spec.description[:60]})".strip(),
            "id": f"{call.tool}-{rng.randrange(16**8):08x}",
        }

    def run(self, calls: Sequence[PendingCall], executed: Mapping[str, Any]) -> list[SimResult]:
        out = []
        for c in calls:
            v = self.check(c, executed)
            out.append(
                SimResult(ok=False, result=f"Error: {v.message}", verdict=v)
                if not v.ok
                else SimResult(ok=True, result=self.output(c), verdict=v)
            )
        return out


def _id_like(value: Any) -> list[str]:
    """Numeric ids a text may mention (so a reference to a node that never ran is caught)."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])", text)


TOOL_SIMULATOR_PROMPT = """You simulate the tools of an agent (ParaRecover's tool agent). For each
call below, return a plausible, realistic result consistent with the user's task, the tool's
description and the arguments: exact numbers for calculators, short summaries for searches.
Invented but plausible values are fine. Answer with a JSON array only, one object per call, in the
same order: [{"name": <tool>, "arguments": {...}, "results": <result>}, ...]

User task: {query}

Tools (one JSON per line):
{tools}

Calls to simulate (one JSON per line):
{calls}"""


class LLMToolSimulator:
    """A chat model plays the tools (ParaRecover's setting), after the same validation as the
    deterministic simulator: invalid calls get the validation error, valid ones the model's
    result. One model call per wave; a reply that cannot be read gives every call of the wave an
    error result (the wave fails; nothing is invented)."""

    def __init__(self, model: Any, tools: Iterable[ToolSpec], query: str, seed: int = 0):
        self.model = model
        self.query = query
        self.check = DeterministicSimulator(tools, seed)

    def run(self, calls: Sequence[PendingCall], executed: Mapping[str, Any]) -> list[SimResult]:
        from langchain_core.messages import HumanMessage

        results: list[SimResult | None] = []
        valid: list[PendingCall] = []
        verdicts: list[Verdict] = []
        for c in calls:
            v = self.check.check(c, executed)
            verdicts.append(v)
            results.append(
                None if v.ok else SimResult(ok=False, result=f"Error: {v.message}", verdict=v)
            )
            if v.ok:
                valid.append(c)
        if valid:
            tools_text = "\n".join(
                json.dumps(self.check.tools[c.tool].to_openai()["function"], ensure_ascii=False)
                for c in {c.tool: c for c in valid}.values()
            )
            calls_text = "\n".join(
                json.dumps(
                    {"name": c.tool, "arguments": _resolved(c.args, executed)},
                    ensure_ascii=False,
                    default=str,
                )
                for c in valid
            )
            prompt = (
                TOOL_SIMULATOR_PROMPT.replace("{query}", self.query)
                .replace("{tools}", tools_text)
                .replace("{calls}", calls_text)
            )
            reply = self.model.invoke([HumanMessage(content=prompt)])
            parsed = _read_array(str(getattr(reply, "content", reply)))
            it = iter(range(len(valid)))
            for i, r in enumerate(results):
                if r is not None:
                    continue
                j = next(it)
                if parsed is None or j >= len(parsed) or not isinstance(parsed[j], Mapping):
                    results[i] = SimResult(
                        ok=False,
                        result="Error: the tool simulator gave no result",
                        verdict=verdicts[i],
                    )
                else:
                    res = parsed[j].get("results", parsed[j].get("result"))
                    results[i] = SimResult(
                        ok=not result_failed(res), result=res, verdict=verdicts[i]
                    )
        return [r for r in results if r is not None]


def _resolved(args: Mapping[str, Any], executed: Mapping[str, Any]) -> dict[str, Any]:
    from replan.env.world import UnresolvedReference, resolve_references

    out = {}
    for k, v in args.items():
        try:
            out[k] = resolve_references(v, executed, k)
        except UnresolvedReference:
            out[k] = v
    return out


def _read_array(text: str) -> list[Any] | None:
    m = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    body = m.group(1) if m else text
    start = body.find("[")
    if start < 0:
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(body[start:])
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, list) else None


class WorldSimulator:
    """Runs calls in a real :class:`~replan.env.world.World` (``pararecover-synth`` tasks, whose
    tools all have deterministic implementations)."""

    def __init__(self, world: Any):
        self.world = world

    def run(self, calls: Sequence[PendingCall], executed: Mapping[str, Any]) -> list[SimResult]:
        from replan.core.trace import Call

        out = []
        bindings = dict(executed)
        for c in calls:
            res = self.world.execute(Call(tool=c.tool, args=c.args, node_id=c.node), bindings)
            if res.ok:
                out.append(SimResult(ok=True, result=res.observation, verdict=res.verdict))
            else:
                msg = res.observation
                text = msg.get("message", msg) if isinstance(msg, Mapping) else msg
                out.append(SimResult(ok=False, result=f"Error: {text}", verdict=res.verdict))
        return out


def default_simulator(start: ReplanStart, seed: int = 0) -> ToolSimulator:
    """The world for synth instances, the deterministic simulator for dataset instances."""
    if start.task is not None:
        from replan.env.corpus import load_corpus
        from replan.env.world import World, WorldState

        task, corpus = start.task, load_corpus()
        state = task.metadata.get("state_after_history")
        world = World(
            {t: corpus.tools[t] for t in task.tools},
            WorldState.from_dict(state) if state else corpus.initial_state(task.world_seed),
            seed=task.world_seed,
        )
        return WorldSimulator(world)
    return DeterministicSimulator(start.tools, seed)


# ---------------------------------------------------------------------------------------------
# continuing after the replan
class SimStep(BaseModel):
    round: int
    node: str
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    positional: list[Any] | None = None
    ok: bool
    result: Any = None
    verdict: Verdict | None = None


class Continuation(BaseModel):
    """The run after a replan, to completion or failure (what E5, Pass@1 and tool-use
    efficiency need). ``rounds_total`` is T: rounds already executed + waves run + 1 for the
    response (only when it is reached)."""

    success: bool
    end_reason: Literal[
        "answered", "gave_up", "call_failed", "round_budget", "unparsable_plan", "stuck"
    ]
    rounds_executed: int
    rounds_after: int = 0
    rounds_total: int = 0
    calls_executed: int = 0
    calls_after: int = 0
    round_gt: int | None = None
    funcall_times_gt: int | None = None
    steps: list[SimStep] = Field(default_factory=list)
    replans: int = 0
    error: str | None = None

    @property
    def calls_total(self) -> int:
        return self.calls_executed + self.calls_after


class ReplanState(BaseModel):
    """What a follow-up replanner sees during a continuation (after a failed wave)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    query: str
    tools: list[ToolSpec]
    plan: Plan
    last_wave: list[SimStep]
    round: int


_GIVE_UP = re.compile(
    r"(?:can ?not|can't|could not|couldn't|unable to|impossible to|no way to)\s+"
    r"(?:be\s+)?(?:complete|completed|finish|finished|proceed|continue|fulfil|fulfill|accomplish)"
    r"|\bstop(?:s|ping)? here\b|\bgive up\b|\bgiving up\b|\babort(?:ed|ing)?\b"
    r"|\bterminat(?:e|ed|ing) (?:the )?(?:task|plan|execution)"
    r"|无法(?:完成|继续|执行|满足|实现)|不能(?:完成|继续)|放弃|终止(?:任务|执行|规划)?|停止执行|到此为止",
    re.I,
)


def gives_up(start: ReplanStart, plan: Plan, ran_tools: Iterable[str] = ()) -> str | None:
    """Why a plan that reached its response gave up instead of recovering, else ``None``.

    A replan *gives up* when its response node (its description or arguments) says the task
    cannot be completed ("stop here, cannot be completed", "无法完成", "give up", ...), or when
    its thought says so *and* a tool the previous plan still had to call was never run. Reaching
    the response that way is not a recovery: the run ends ``gave_up`` (Pass@1 = 0, E5 = 0).
    """
    resp = plan.get(RESPONSE)
    said = ""
    if resp is not None:
        text = " ".join(
            [resp.desc, json.dumps([resp.args, resp.positional], ensure_ascii=False, default=str)]
        )
        m = _GIVE_UP.search(text)
        if m:
            said = f"the response says {m.group(0)!r}"
    if not said and plan.thought:
        m = _GIVE_UP.search(plan.thought)
        if m and isinstance(start.plan, Plan):
            ran = set(ran_tools)
            dropped = sorted(
                {n.tool or "" for n in start.plan.call_nodes if n.status != "done"}
                - ran
                - {n.tool for n in plan.call_nodes}
            )
            if dropped:
                said = f"the thought says {m.group(0)!r} and {dropped} never ran"
    return f"the replan gave up: {said}" if said else None


def continue_plan(
    start: ReplanStart,
    new_plan: Plan | str,
    simulator: ToolSimulator | None = None,
    *,
    replan: Any = None,
    max_rounds: int = 40,
) -> Continuation:
    """Execute the replanner's plan from ``start`` to the response node.

    Waves run frontier by frontier through ``simulator`` (default: :func:`default_simulator`).
    A failed call ends the run (``call_failed``) unless ``replan(state: ReplanState) -> str``
    is given, which then writes the next plan. The run fails when T would pass ``max_rounds``
    (40, ParaRecover Appendix H).
    """
    sim = simulator or default_simulator(start)
    base = Continuation(
        success=False,
        end_reason="unparsable_plan",
        rounds_executed=start.rounds_executed,
        calls_executed=start.calls_executed,
        round_gt=start.round_gt,
        funcall_times_gt=start.funcall_times_gt,
    )
    plan = new_plan if isinstance(new_plan, Plan) else Plan.parse(new_plan)
    if not isinstance(plan, Plan):
        return base.model_copy(update={"error": plan.reason})
    executed = dict(start.executed)
    ran_tool = dict(start.executed_tools)
    steps: list[SimStep] = []
    rounds = replans = 0

    def done_ids(p: Plan) -> set[str]:
        return {n.id for n in p.call_nodes if n.id in executed and ran_tool.get(n.id) == n.tool}

    while True:
        done = done_ids(plan)
        frontier = [i for i in plan.frontier(done) if plan.node(i).is_call]
        if not frontier:
            pending = [n.id for n in plan.call_nodes if n.id not in done]
            if pending:
                return base.model_copy(
                    update={
                        "end_reason": "stuck",
                        "rounds_after": rounds,
                        "calls_after": len(steps),
                        "steps": steps,
                        "replans": replans,
                        "error": f"calls {pending} can never run (their dependencies failed)",
                    }
                )
            total = start.rounds_executed + rounds + 1
            ok = total <= max_rounds
            quit_why = gives_up(start, plan, ran_tool.values())
            return base.model_copy(
                update={
                    "success": ok and quit_why is None,
                    "end_reason": "round_budget"
                    if not ok
                    else "gave_up"
                    if quit_why
                    else "answered",
                    "error": quit_why,
                    "rounds_after": rounds,
                    "rounds_total": total,
                    "calls_after": len(steps),
                    "steps": steps,
                    "replans": replans,
                }
            )
        if start.rounds_executed + rounds + 1 >= max_rounds:
            return base.model_copy(
                update={
                    "end_reason": "round_budget",
                    "rounds_after": rounds,
                    "calls_after": len(steps),
                    "steps": steps,
                    "replans": replans,
                }
            )
        rounds += 1
        calls = [
            PendingCall(
                node=i,
                tool=plan.node(i).tool or "",
                args=dict(plan.node(i).args),
                positional=plan.node(i).positional,
                desc=plan.node(i).desc,
            )
            for i in frontier
        ]
        results = sim.run(calls, executed)
        wave = []
        for c, r in zip(calls, results, strict=True):
            st = SimStep(
                round=rounds,
                node=c.node,
                tool=c.tool,
                args=c.args,
                positional=c.positional,
                ok=r.ok,
                result=r.result,
                verdict=r.verdict,
            )
            wave.append(st)
            if r.ok:
                executed[c.node] = r.result
                ran_tool[c.node] = c.tool
        steps.extend(wave)
        failed = [s for s in wave if not s.ok]
        if failed:
            if replan is None:
                return base.model_copy(
                    update={
                        "end_reason": "call_failed",
                        "rounds_after": rounds,
                        "calls_after": len(steps),
                        "steps": steps,
                        "replans": replans,
                        "error": f"{failed[0].tool} (node {failed[0].node}): {failed[0].result}",
                    }
                )
            status = {
                n.id: ("done" if n.id in done_ids(plan) else "pending") for n in plan.call_nodes
            }
            shown = Plan(
                nodes=[
                    n.model_copy(update={"status": status.get(n.id, n.status)}) for n in plan.nodes
                ],
                thought=plan.thought,
            )
            text = replan(
                ReplanState(
                    query=start.query, tools=start.tools, plan=shown, last_wave=wave, round=rounds
                )
            )
            replans += 1
            nxt = Plan.parse(text)
            if not isinstance(nxt, Plan):
                return base.model_copy(
                    update={
                        "end_reason": "unparsable_plan",
                        "rounds_after": rounds,
                        "calls_after": len(steps),
                        "steps": steps,
                        "replans": replans,
                        "error": nxt.reason,
                    }
                )
            plan = nxt


# ---------------------------------------------------------------------------------------------
# instances as tasks
def instance_to_task(inst: ParaRecoverInstance) -> Task:
    """A dataset instance as a :class:`~replan.core.task.Task` of suite ``pararecover``.

    The tools have no implementation: the instance runs from its replan point through a tool
    simulator (:func:`start_from_task`, :func:`continue_plan`).
    """
    start = start_from_instance(inst)
    return Task(
        task_id=f"pararecover-{inst.level}-{Path(inst.source).stem}-{inst.id}",
        suite="pararecover",
        query=inst.query,
        tools=[t.name for t in inst.tools],
        level=inst.level,
        mode="NP",
        optimal_rounds=inst.round_gt,
        min_calls=inst.funcall_times_gt,
        metadata={
            "id": inst.id,
            "query_id": inst.query_id,
            "source": inst.source,
            "line": inst.line,
            "tool_list": [
                {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters["properties"],
                    "required": list(t.parameters["required"]),
                }
                for t in inst.tools
            ],
            "plan": inst.plan_text,
            "fun_call": [c.model_dump() for c in inst.fun_call],
            "tags": inst.tags,
            "error_types": [e.value for e in inst.error_types],
            "error_reason": inst.error_reason,
            "round_gt": inst.round_gt,
            "funcall_times_gt": inst.funcall_times_gt,
            "rounds_executed": start.rounds_executed,
            "calls_executed": start.calls_executed,
            "rounds_counting": "tool-call waves + 1 response round (upstream round_gt)",
            "rounds_include_response": True,
        },
    )


def load_tasks(
    path: str | Path, levels: Iterable[str] | None = None, *, strict: bool = False
) -> list[Task]:
    """Tasks from a ParaRecover ``.jsonl`` file or a directory of them (searched recursively).

    A line that cannot be read is skipped with a warning naming its file and line (the rest of
    the file still loads); with ``strict`` it raises ``ValueError`` instead.
    """
    import warnings

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
# one replanning episode, as the runner records it
def _step_verdict(tools: Mapping[str, ToolSpec], name: str, args: Any) -> Verdict:
    """The agent's side of a recorded call: :func:`check_call` against the instance's tool
    list. A result that failed for another reason (a timeout, an empty response) is the tool's
    fault, not the agent's, and keeps an ``ok`` verdict."""
    return check_call(tools, name, args if args is not None else {})


def replay_task(
    task: Task,
    model: Any,
    *,
    design: str = "replanner_loop",
    seed: int = 0,
    hint: bool = False,
    simulator: ToolSimulator | None = None,
) -> Episode:
    """Run the replanner once on a ParaRecover(-synth) task and continue to the end.

    The model gets the replanner request (the previous plan and the last wave's results); its
    reply is parsed (the parse verdict is the S5 verdict) and executed wave by wave with the
    task's tool simulator. A failed call after the replan ends the run: the follow-up replans of
    a long rollout are not simulated. Steps hold the recorded last wave (round 1) and the calls
    after the replan (rounds 2, 3, ...); ``metadata`` carries the rounds and calls executed
    before the recorded wave, so E5 and tool-use efficiency count the whole trajectory.
    """
    from replan.nodes.llm import model_label
    from replan.nodes.prompts import replanner_messages

    start = start_from_task(task)
    tools = {t.name: t for t in start.tools}
    plan_json = (
        start.plan.to_pararecover() if isinstance(start.plan, Plan) else {"text": start.plan_text}
    )
    messages = replanner_messages(
        start.query,
        start.tools,
        plan_json,
        start.observations(),
        round_index=start.rounds_executed,
        hint=hint,
    )
    usage = Usage()
    error: str | None = None
    try:
        reply = model.invoke(messages)
        usage.model_calls = 1
        text = str(reply.content)
    except Exception as exc:  # the model failed: recorded, not raised
        text, error = "", f"{type(exc).__name__}: {exc}"
    nodes = _match_last_wave(start.plan, start.last_wave) if isinstance(start.plan, Plan) else {}
    node_of = {id(c): n for n, c in nodes.items()}
    steps: list[Step] = []
    for c in start.last_wave:
        args = c.arguments if isinstance(c.arguments, dict) else {"args": c.arguments}
        steps.append(
            Step(
                index=len(steps),
                round=1,
                call=Call(tool=c.name, args=args, node_id=node_of.get(id(c))),
                verdict=_step_verdict(tools, c.name, c.arguments),
                observation=c.results,
            )
        )
    parsed = Plan.parse(text)
    plans = [
        PlanVersion(
            index=0,
            round=1,
            source="planner",
            text=start.plan_text,
            thought=start.plan.thought if isinstance(start.plan, Plan) else "",
            parse_ok=isinstance(start.plan, Plan),
        ),
        PlanVersion(
            index=1,
            round=2,
            source="replanner",
            text=text,
            thought=parsed.thought if isinstance(parsed, Plan) else getattr(parsed, "thought", ""),
            plan=parsed.to_pararecover() if isinstance(parsed, Plan) else None,
            parse_ok=isinstance(parsed, Plan),
            parse_error=None if isinstance(parsed, Plan) else parsed.reason,
        ),
    ]
    if error is not None:
        end, cont = EndReason.MODEL_ERROR, None
    else:
        cont = continue_plan(
            start,
            parsed if isinstance(parsed, Plan) else text,
            simulator or default_simulator(start, seed),
        )
        end = {
            "answered": EndReason.ANSWERED,
            "gave_up": EndReason.GAVE_UP,
            "round_budget": EndReason.ROUND_BUDGET,
            "unparsable_plan": EndReason.UNPARSABLE_PLAN,
        }.get(cont.end_reason, EndReason.GAVE_UP)
        error = cont.error
        for s in cont.steps:
            # the verdict the simulator executed by (so a rejected call is never a clean step)
            v = s.verdict or check_call(tools, s.tool, s.args, None, s.node, s.positional)
            steps.append(
                Step(
                    index=len(steps),
                    round=1 + s.round,
                    call=Call(tool=s.tool, args=s.args, node_id=s.node),
                    verdict=v,
                    observation=s.result,
                )
            )
    wave = 1 if start.last_wave else 0
    usage.tool_calls = len(steps)
    return Episode(
        episode_id=f"{task.task_id}|{design}|{seed}",
        task_id=task.task_id,
        suite=task.suite,
        design=design,
        model=model_label(model),
        seed=seed,
        mode=task.mode,
        query=task.query,
        steps=steps,
        plans=plans,
        final_answer=("completed the plan" if cont is not None and cont.success else None),
        end_reason=end,
        error=error,
        success=bool(cont is not None and cont.success),
        usage=usage,
        metadata={
            "rounds_executed": start.rounds_executed - wave,
            "calls_executed": start.calls_executed - len(start.last_wave),
            "continuation": cont.end_reason if cont is not None else None,
        },
    )
