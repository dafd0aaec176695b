"""Tool simulators: what runs a plan's calls when a task's tools have no implementation.

ParaRecover instances list tools with no code behind them. From a replan point their calls run
through one of these: :class:`DeterministicSimulator` (the default: validates every call against
the tool list with :func:`check_call` and returns seeded, schema-shaped outputs),
:class:`LLMToolSimulator` (a chat model plays the tools after the same validation, as in the
paper). Each runs one wave of :class:`PendingCall` s given the outputs of the nodes that ran
cleanly. :class:`SimulatedWorld` is the world such a task runs in: every agent graph calls its
tools as it calls any world's (``pararecover-synth``'s tools have implementations and run in
the world after the instance's history instead).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from pydantic import BaseModel, Field

from replan.core import linre
from replan.core.plan import exact_reference, iter_references
from replan.core.taxonomy import VerdictCode
from replan.core.tools import ToolSpec
from replan.core.trace import Call, Verdict
from replan.env.verifier import reference_token, textual_references
from replan.env.world import (
    MISSING,
    RAW_ARGS_KEY,
    ExecResult,
    UnresolvedReference,
    World,
    WorldState,
    lookup_path,
    resolve_references,
    stable_seed,
)

_FAILED_TEXT = linre.compile(
    r"^\s*(?:error|exception|failed|failure|invalid|missing|timeout|timed out|错误|失败|异常|超时)"
    r"|\berror\b[:：]|parameter (?:format )?error|not recognized|is required|timed out"
    r"|\btool call failed\b|调用失败",
    linre.I,
)


def result_failed(result: Any) -> bool:
    """Whether a recorded tool result reads as a failure: empty, an object with an ``error``
    key (also as JSON text, ``'{"error": ...}'``), or an error text ("Error: ...", "Tool call
    failed. ...", a timeout)."""
    if result in (None, "", [], {}):
        return True
    if isinstance(result, str) and result.lstrip().startswith("{"):
        try:
            decoded = json.loads(result)
        except ValueError:
            decoded = None
        if isinstance(decoded, Mapping):
            result = decoded
    if isinstance(result, Mapping) and ("error" in result or "Error" in result):
        return True
    text = result if isinstance(result, str) else ""
    return bool(text and _FAILED_TEXT.search(text))


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
    known = list(executed) if executed is not None else []
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
                and lookup_path(executed[exact.node], exact.path) is MISSING
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
        spec = self.tools[call.tool]
        rng = random.Random(stable_seed("sim", self.seed, call.tool, call.args))
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


_NUMBER = linre.compile(r"\d+(?:\.\d+)?", not_after=r"\w.", followed_by=r"[^\w.]|$")


def _id_like(value: Any) -> list[str]:
    """Numeric ids a text may mention (so a reference to a node that never ran is caught)."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return _NUMBER.findall(text)


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
        # late: the deterministic world never loads LangChain; only this simulator needs it
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
    out = {}
    for k, v in args.items():
        try:
            out[k] = resolve_references(v, executed, k)
        except UnresolvedReference:
            out[k] = v
    return out


def _read_array(text: str) -> list[Any] | None:
    m = linre.search(r"```(?:json)?\s*(.*?)```", text, linre.S)
    body = m.group(1) if m else text
    start = body.find("[")
    if start < 0:
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(body[start:])
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, list) else None


class SimulatedWorld(World):
    """A world whose tools have no implementation (ParaRecover's tool lists): a tool simulator
    judges and plays every call (default: a :class:`DeterministicSimulator` seeded with the
    world's seed), so the agent graphs run such a task as they run any other world.

    The verdict is the simulator's (:func:`check_call`, given the nodes that ran cleanly: the
    call's ``bindings``), so execution and verdict agree; no state ever changes, and no fault is
    injected (the simulator's failures are the tools' own).
    """

    binds_positional = False  # a bare argument list is judged as the dataset's agent does

    def __init__(
        self,
        tools: Iterable[ToolSpec] | Mapping[str, ToolSpec],
        seed: int = 0,
        simulator: ToolSimulator | None = None,
    ):
        super().__init__(tools, None, seed)
        self.simulator = simulator or DeterministicSimulator(self.tools.values(), seed)

    def fork(self, faults: Any = None) -> World:
        """The same simulated world (it has no state to fork and takes no faults)."""
        return SimulatedWorld(self.tools, self.seed, self.simulator)

    @staticmethod
    def pending(call: Call) -> PendingCall:
        """The call as a simulator takes it (a bare argument list under ``RAW_ARGS_KEY``)."""
        args = dict(call.args)
        positional = args.pop(RAW_ARGS_KEY, None)
        if positional is not None and not isinstance(positional, list):
            positional = [positional]
        return PendingCall(
            node=call.node_id or "", tool=call.tool, args=args, positional=positional
        )

    def check(
        self, call: Call, bindings: Mapping[str, Any] | None = None, state: WorldState | None = None
    ) -> tuple[Verdict, dict[str, Any] | None]:
        p = self.pending(call)
        v = check_call(self.tools, p.tool, p.args, dict(bindings or {}), p.node, p.positional)
        return v, (dict(call.args) if v.ok else None)

    def execute(
        self,
        call: Call,
        bindings: Mapping[str, Any] | None = None,
        *,
        state: WorldState | None = None,
        commit: bool = True,
    ) -> ExecResult:
        (r,) = self.simulator.run([self.pending(call)], dict(bindings or {}))
        verdict = r.verdict or self.check(call, bindings)[0]
        return ExecResult(
            verdict=verdict,
            observation=r.result,
            state=self.state if state is None else state,
            resolved_args=dict(call.args),
            output=r.result if verdict.ok else None,
        )
