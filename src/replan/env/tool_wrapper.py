"""The one tool wrapper: every tool call an agent makes — in our designs and in yours — is
recorded, judged and fault-injected here (:class:`FaultSession`).

A session judges and injects in one of two ways, and records the same way for both:

- **your tools** (any LangChain ``BaseTool``): a call is judged against the tool's own args
  schema and meets the faults of a seeded :class:`~replan.env.tool_faults.FaultSchedule`; the
  tool itself runs;
- **world tools** (a :class:`WorldCalls` given to the session: replan's suites, for our designs
  and for a user's graph run on them): the :class:`~replan.env.world.World` judges the call in
  the session's state (schema, references, preconditions), draws its fault from the world's
  injector and runs it (``World.execute``), so a design and a user graph meet the same world.
  Tools with no code behind them (ParaRecover's tool lists) are world tools too: their world is
  a :class:`~replan.env.simulators.SimulatedWorld`, whose tool simulator judges and plays each
  call.

The ways in are thin: :class:`InstrumentedTool` (:func:`wrap_tools`, for a hand-built
``StateGraph`` + ``ToolNode`` or any code that calls tools; :func:`replan.nodes.tools.world_tools`
for world tools), :class:`~replan.inplace.middleware.FaultInjectionMiddleware` (``create_agent``'s
``wrap_tool_call`` / ``awrap_tool_call``), and our own graphs' tool nodes, which call
:meth:`FaultSession.step` for each tool call of the model (unknown names and unreadable
arguments included, so their verdicts are recorded too).

**Validity** of a call to one of your tools (the prefix metrics' "executable"): a call to an
unknown tool, arguments that the tool's pydantic args schema rejects (a ``ValidationError``:
missing, wrong type, a value out of range; extra names where the model forbids them) or, for a
JSON-Schema ``args_schema``, that the schema rejects (unknown names included), and a call for
which the tool itself reports an error (it raises, or returns an error ``ToolMessage``) are
*invalid*. Injected faults are never verdicts against the agent: a valid call that meets a 429
is executable. As in the world, an invalid call never activates or consumes a fault.

**Recording**: each call becomes a :class:`~replan.core.trace.Step` (the Episode contract every
evaluator reads): the call, its verdict, what the agent saw (a plain-text output is recorded as
``{"text": ..., "values": [numbers and dates in it]}`` so later use of a value can be found), and
the perturbation, with its sentinel, when a fault shaped it.

A session is found through a context variable (:func:`activate`), so one compiled agent serves
every episode and mode of an evaluation; outside an activated session, wrapped tools and the
middleware use their own session (built from their schedule).
"""

from __future__ import annotations

import inspect
import json
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from pydantic import BaseModel, ConfigDict, ValidationError

from replan.core import linre
from replan.core.taxonomy import VerdictCode
from replan.core.tools import ToolSpec
from replan.core.trace import Call, Perturbation, Step, Verdict
from replan.env.tool_faults import (
    EpisodeFaults,
    FaultSchedule,
    InjectedFault,
    explicit_fault_observation,
    fault_exception,
    inline_refs,
)
from replan.env.world import RAW_ARGS_KEY, ExecResult, World, WorldState

# -- validity ---------------------------------------------------------------------------------------
_TYPE_ERRORS = linre.compile(r"(_type|_parsing|^model_attributes_type|^is_instance_of)$")


def _pydantic_verdict(tool: str, exc: ValidationError) -> Verdict:
    err = exc.errors()[0]
    loc = ".".join(str(x) for x in err.get("loc", ()))
    param = str(err["loc"][0]) if err.get("loc") else None
    etype = str(err.get("type", ""))
    if etype == "missing":
        code = VerdictCode.MISSING_PARAM
    elif etype == "extra_forbidden":
        code = VerdictCode.UNKNOWN_PARAM
    elif _TYPE_ERRORS.search(etype):
        code = VerdictCode.TYPE_MISMATCH
    else:
        code = VerdictCode.INVALID_VALUE
    return Verdict(code=code, param=param, message=f"{tool}.{loc or 'args'}: {err.get('msg')}")


def _var_args_only(tool: BaseTool) -> bool:
    """A tool whose arguments nobody declared: no args_schema and a ``_run(*args, **kwargs)``."""
    if tool.args_schema is not None:
        return False
    func = getattr(tool, "func", None) or getattr(tool, "coroutine", None) or tool._run
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return True
    kinds = {p.kind for p in params if p.name not in ("self", "run_manager", "callbacks")}
    return bool(kinds) and kinds <= {
        inspect.Parameter.VAR_POSITIONAL,
        inspect.Parameter.VAR_KEYWORD,
    }


_WARNED: set[str] = set()


def schema_problem(tool: BaseTool) -> str | None:
    """Why the validity of ``tool``'s calls cannot be judged from a schema, or ``None``."""
    if _var_args_only(tool):
        return (
            f"tool {tool.name!r} ({type(tool).__name__}) declares no args schema (args_schema is "
            "None and it takes *args/**kwargs): its calls are judged only by whether the tool "
            "reports an error; give it an args_schema to have its arguments checked"
        )
    return None


def spec_from_tool(tool: BaseTool) -> ToolSpec:
    """The :class:`~replan.core.tools.ToolSpec` of a LangChain tool (name, description and the
    JSON Schema of the arguments a model may pass, injected arguments excluded)."""
    schema = tool.tool_call_schema
    if isinstance(schema, Mapping):
        params = dict(schema)
    else:
        params = inline_refs(schema.model_json_schema())
    return ToolSpec(
        name=tool.name,
        description=tool.description or "",
        parameters={
            "type": "object",
            "properties": dict(params.get("properties") or {}),
            "required": list(params.get("required") or []),
        },
        returns={},
    )


def check_call(tool: BaseTool | None, name: str, args: Any) -> Verdict:
    """The verdict on a call before it runs (see the module docstring)."""
    if tool is None:
        return Verdict(code=VerdictCode.UNKNOWN_TOOL, message=f"no tool named {name!r}")
    if not isinstance(args, Mapping):
        return Verdict(
            code=VerdictCode.TYPE_MISMATCH,
            message=f"arguments of {name} must be an object, got {type(args).__name__}",
        )
    problem = schema_problem(tool)
    if problem is not None:
        if tool.name not in _WARNED:
            _WARNED.add(tool.name)
            warnings.warn(problem, stacklevel=3)
        return Verdict.okay()
    schema = tool.tool_call_schema
    if isinstance(schema, Mapping):
        res = spec_from_tool(tool).check_args(args)
        if res.ok:
            return Verdict.okay()
        return Verdict(code=res.code, param=res.param, message=res.message)
    try:
        schema.model_validate(dict(args))
    except ValidationError as exc:
        return _pydantic_verdict(name, exc)
    return Verdict.okay()


# -- what the agent saw -----------------------------------------------------------------------------
_VALUE_IN_TEXT = linre.compile(r"\d{4}-\d{2}-\d{2}|-?\d+(?:[.,]\d+)*")


def _jsonable(value: Any) -> Any:
    try:
        return json.loads(json.dumps(value, default=str))
    except (TypeError, ValueError):
        return str(value)


def observed(output: Any) -> Any:
    """The JSON form of what the agent saw (see the module docstring)."""
    if isinstance(output, ToolMessage):
        output = output.content
    elif isinstance(output, tuple) and len(output) == 2:
        output = output[0]
    if isinstance(output, BaseModel):
        return output.model_dump(mode="json")
    if isinstance(output, str):
        text = output.strip()
        if text[:1] in "{[":
            try:
                return json.loads(text)
            except ValueError:
                pass
        values: list[Any] = []
        for m in _VALUE_IN_TEXT.finditer(output):
            raw = m.group()
            if "-" in raw[1:]:
                values.append(raw)
                continue
            try:
                num = float(raw.replace(",", ""))
            except ValueError:
                continue
            values.append(int(num) if num.is_integer() and "." not in raw else num)
        return {"text": output, "values": values}
    return _jsonable(output)


#: How a tool that returns instead of raising says it did not do what was asked: text that
#: opens like a rejection or an error ("Error: no such column", "Invalid new flight ID
#: provided.", "Not permitted to reschedule ..."), an HTTP error status line ("404 Not Found"),
#: or a one-liner saying "not found" ("No user found with id 7" does not; "User 7 not found"
#: does); a JSON object that sets ``error``, or is only a report with an error ``status`` or
#: ``success``/``ok`` false (:func:`error_field`).
#: One set of rules for a live call (:func:`rejection`) and a recorded one
#: (``replan.inplace.traces.classify_result``).
REJECTION = linre.compile(
    r"\s*(error|exception|traceback|invalid|not permitted|not allowed|forbidden|"
    r"unauthori[sz]ed|permission denied|access denied|cannot|unable to|failed|denied|rejected)\b",
    linre.I,
)
_HTTP_STATUS = linre.compile(
    r"\s*(?:(?i:HTTP)(?:/[\d.]+)?\s+[45]\d\d\b|[45]\d\d\s+(?:Bad|Not|Unauthori[sz]ed|Forbidden|"
    r"Payment|Proxy|Request|Conflict|Gone|Length|Precondition|Payload|URI|Unsupported|Range|"
    r"Expectation|Misdirected|Unprocessable|Locked|Failed|Too|Internal|Service|Gateway|"
    r"Insufficient|Loop|Network|Method)\b)"
)
_NOT_FOUND = linre.compile(r"\bnot found\b", linre.I)


#: the fields an error report carries besides its status; an object with any other field is
#: data (a payment whose ``status`` is "failed", a health check's ``ok: false``), not a rejection
_REPORT_FIELDS = frozenset(
    {"status", "success", "ok", "message", "detail", "details", "code", "reason", "type", "title"}
)


def error_field(obj: Mapping[str, Any]) -> str | None:
    """The error a JSON object reports: ``error``/``errors`` set, or, in an object that is only a
    report (:data:`_REPORT_FIELDS`), an error ``status`` or ``success``/``ok`` false."""
    detail = obj.get("message") or obj.get("detail")
    for key in ("error", "errors"):
        if obj.get(key):
            return str(detail or obj[key])
    if not set(obj) <= _REPORT_FIELDS:
        return None
    status = obj.get("status")
    if isinstance(status, str) and status.lower() in ("error", "failed", "failure"):
        return str(detail or status)
    for key in ("success", "ok"):
        if obj.get(key) is False:
            return str(detail or f"{key}: false")
    return None


def error_text(text: str) -> bool:
    """Text that opens like a rejection or an HTTP error, or a one-liner saying "not found"."""
    if REJECTION.match(text) or _HTTP_STATUS.match(text):
        return True
    line = text.strip()
    return len(line) <= 200 and "\n" not in line and bool(_NOT_FOUND.search(line))


def rejection(output: Any) -> str | None:
    """Why ``output`` is the tool rejecting its call (see ``REJECTION``), or ``None``.

    An empty result is not a rejection (a search may rightly find nothing)."""
    if isinstance(output, ToolMessage):
        if output.status == "error":
            return _content(output)[:300] or "error ToolMessage"
        output = output.content
    elif isinstance(output, tuple) and len(output) == 2:
        output = output[0]
    if isinstance(output, str):
        with suppress(ValueError):
            output = json.loads(output)  # as a trace is read: a JSON string is its text
        if isinstance(output, str):
            text = output.strip()
            return text.splitlines()[0][:300] if error_text(text) else None
    if isinstance(output, Mapping):
        reported = error_field(output)
        return reported[:300] if reported is not None else None
    return None


def is_error_output(output: Any) -> bool:
    """A tool output that reports an error (an error ``ToolMessage``, or a returned rejection:
    :func:`rejection`)."""
    return rejection(output) is not None


def _content(output: Any) -> str:
    if isinstance(output, ToolMessage):
        return output.text if hasattr(output, "text") else str(output.content)
    return str(output)


# -- the session --------------------------------------------------------------------------------------


def observation_text(observation: Any) -> str:
    """The tool-message content of a world tool's observation: ``json.dumps`` of it."""
    return json.dumps(observation, ensure_ascii=False, default=str)


class StepBudgetExceeded(Exception):
    """A call came after the session's step budget was spent (nothing ran)."""


@dataclass
class WorldCalls:
    """The world side of a session: world tools' calls are judged, fault-injected and run by
    ``world`` (``World.execute``: its checks, its injector) in ``state`` with ``bindings`` (the
    outputs ``${node}`` references may use).

    ``state`` moves on with every call (the next call runs in the state the last one left;
    ``None``: start from the world's own state); ``commit`` also moves the world itself.
    """

    world: World
    state: WorldState | None = None
    bindings: Mapping[str, Any] | None = None
    commit: bool = False


#: ``observe(event, **fields)``: progress events (``call`` before a call runs, ``verdict`` after).
Observer = Callable[..., None]


@dataclass
class _Pending:
    call: Call
    verdict: Verdict
    perturbation: Perturbation | None
    round: int
    t0: float


class FaultSession:
    """The record and faults of one episode, or of one part of it (thread-safe).

    ``faults`` is the injector of your tools' calls (``None``: record only); ``world`` makes
    the session run world tools (:class:`WorldCalls`), judged and injected by the world;
    Steps are numbered from ``first_index``; ``round`` (when given) is the round of every call,
    else a call takes the round its caller names or the last one recorded. ``max_steps`` caps
    the calls (a call past it raises :class:`StepBudgetExceeded`, ``budget_hit`` says so).
    ``observe`` receives the ``call`` / ``verdict`` progress events of world calls. ``notes``
    collects what could not be done (an implicit fault on an output with nothing to corrupt),
    keyed by tool.
    """

    def __init__(
        self,
        faults: EpisodeFaults | None = None,
        *,
        deliver: str | None = None,
        world: WorldCalls | None = None,
        first_index: int = 0,
        round: int | None = None,
        max_steps: int | None = None,
        observe: Observer | None = None,
    ):
        self.faults = faults
        self.deliver = deliver or (faults.deliver if faults is not None else "raise")
        self.world = world
        self.first_index = first_index
        self.round = round
        self.max_steps = max_steps
        self.budget_hit = False
        self.observe = observe
        self.steps: list[Step] = []
        self.notes: dict[str, str] = {}
        self._lock = threading.RLock()

    @classmethod
    def from_schedule(
        cls, schedule: FaultSchedule | None, task_id: str = "default", seed: int = 0
    ) -> FaultSession:
        if schedule is None:
            return cls(None)
        return cls(schedule.for_episode(task_id, seed), deliver=schedule.deliver)

    # -- world tools -----------------------------------------------------------------------------
    def step(self, call: Call) -> Step:
        """Run ``call`` in the session's world and record it (one call at a time, so the record
        is the order in which the world changed and a replay reproduces it)."""
        if self.world is None:
            raise TypeError("this session has no world (FaultSession(world=WorldCalls(...)))")
        w = self.world
        with self._lock:
            self._spend(call)
            index, rnd = self.first_index + len(self.steps), self._round()
            self._emit(
                "call", round=rnd, index=index, tool=call.tool, node=call.node_id, args=call.args
            )
            t0 = time.perf_counter()
            result = w.world.execute(call, w.bindings, state=w.state, commit=w.commit)
            if w.state is not None or not w.commit:
                w.state = result.state
            step = _world_step(call, result, index, rnd, time.perf_counter() - t0)
            self.steps.append(step)
        self._emit(
            "verdict",
            round=rnd,
            index=index,
            tool=call.tool,
            node=call.node_id,
            code=step.verdict.code.value,
            ok=step.verdict.ok,
            perturbation=step.perturbation.kind if step.perturbation else None,
        )
        return step

    @property
    def state(self) -> WorldState:
        """The world state after the calls so far (world sessions)."""
        if self.world is None:
            raise TypeError("this session has no world")
        return self.world.state if self.world.state is not None else self.world.world.state

    def _spend(self, call: Call) -> None:
        if self.max_steps is not None and len(self.steps) >= self.max_steps:
            self.budget_hit = True
            raise StepBudgetExceeded(
                f"step budget of {self.max_steps} tool calls spent; {call.tool} not executed"
            )

    def _emit(self, event: str, **fields: Any) -> None:
        if self.observe is not None:
            self.observe(event, **fields)

    # -- the three moments of a call -------------------------------------------------------------
    def begin(self, tool: BaseTool | None, call: Call, round: int | None = None) -> _Pending:
        """Judge the call and draw its fault (before anything runs)."""
        verdict = check_call(tool, call.tool, call.args)
        pert = None
        with self._lock:
            if verdict.ok and self.faults is not None:
                pert = self.faults.intercept(call.tool, call.args)
            r = round if round is not None else self._round()
        return _Pending(call, verdict, pert, r, time.perf_counter())

    def explicit(self, pending: _Pending, tool: BaseTool | None, tool_call_id: str | None) -> Any:
        """Record and deliver an explicit fault: raise it, or return it as the tool's output."""
        pert = pending.perturbation
        assert pert is not None and pert.explicit
        obs = explicit_fault_observation(pert.kind, pending.call.tool)
        self._record(pending, pending.verdict, obs, pert)
        if pert.kind == "empty":
            return _as_output("{}", tool_call_id, pending.call.tool, "success")
        exc = fault_exception(pert.kind, pending.call.tool)
        handler = getattr(tool, "handle_tool_error", None) if tool is not None else None
        if handler:  # the tool handles its own ToolExceptions: it would have said this instead
            return _as_output(_handled(exc, handler), tool_call_id, pending.call.tool, "error")
        if self.deliver == "message":
            return _as_output(json.dumps(obs), tool_call_id, pending.call.tool, "error")
        raise exc

    def finish(self, pending: _Pending, output: Any) -> Any:
        """Record a call that returned; corrupt its output under an implicit fault."""
        verdict = pending.verdict
        pert = pending.perturbation
        rejected = rejection(output)
        if rejected is not None:
            if verdict.ok:
                verdict = Verdict(
                    code=VerdictCode.INVALID_VALUE,
                    message=f"{pending.call.tool} rejected the call: {rejected}",
                )
            pert = None  # a rejected call meets no fault (nothing was perturbed)
        elif pert is not None and not pert.explicit and self.faults is not None:
            got = self.faults.corrupt(output, pending.call.tool)
            if got is None:
                named = self.faults.field
                self.notes[pending.call.tool] = (
                    f"implicit fault on {pending.call.tool}: its output "
                    f"({type(output).__name__}) has "
                    + (f"no field {named!r}" if named else "no field, number or date")
                    + " to corrupt"
                )
                pert = None
            else:
                output = got.output
                pert = pert.model_copy(
                    update={
                        "kind": got.kind,
                        "sentinel": got.sentinel,
                        "corrupted": [c.to_dict() for c in got.corrupted],
                        "aim": got.aim,
                    }
                )
        self._record(pending, verdict, observed(output), pert)
        return output

    def failed(self, pending: _Pending, exc: BaseException) -> None:
        """Record a call whose tool raised (the tool's own error: an invalid call)."""
        verdict = pending.verdict
        if verdict.ok:
            if isinstance(exc, ValidationError):
                verdict = _pydantic_verdict(pending.call.tool, exc)
            else:
                verdict = Verdict(
                    code=VerdictCode.INVALID_VALUE,
                    message=f"{pending.call.tool} raised {type(exc).__name__}: {str(exc)[:300]}",
                )
        obs = {"error": type(exc).__name__, "message": str(exc)[:1000]}
        self._record(pending, verdict, obs, None)

    # -- running a call end to end ---------------------------------------------------------------
    def run(
        self,
        tool: BaseTool | None,
        call: Call,
        execute: Callable[[], Any],
        *,
        round: int | None = None,
    ) -> Any:
        """Judge, inject, execute (``execute()`` runs the real tool) and record one call.

        In a world session the world runs the call (``execute`` is not used) and the output is
        its observation as text (a ``ToolMessage`` for a call with an id)."""
        if self.world is not None:
            step = self.step(call)
            return _as_output(
                observation_text(step.observation), call.call_id, call.tool, "success"
            )
        pending = self.begin(tool, call, round)
        if pending.perturbation is not None and pending.perturbation.explicit:
            return self.explicit(pending, tool, call.call_id)
        try:
            output = execute()
        except Exception as exc:
            if not _control_flow(exc):
                self.failed(pending, exc)
            raise
        return self.finish(pending, output)

    async def arun(
        self,
        tool: BaseTool | None,
        call: Call,
        execute: Callable[[], Any],
        *,
        round: int | None = None,
    ) -> Any:
        """:meth:`run` for an awaitable ``execute()``."""
        if self.world is not None:
            return self.run(tool, call, execute, round=round)
        pending = self.begin(tool, call, round)
        if pending.perturbation is not None and pending.perturbation.explicit:
            return self.explicit(pending, tool, call.call_id)
        try:
            output = await execute()
        except Exception as exc:
            if not _control_flow(exc):
                self.failed(pending, exc)
            raise
        return self.finish(pending, output)

    # -- internals -------------------------------------------------------------------------------
    def _round(self) -> int:
        if self.round is not None:
            return self.round
        return self.steps[-1].round if self.steps else 0

    def _record(
        self, pending: _Pending, verdict: Verdict, observation: Any, pert: Perturbation | None
    ) -> None:
        with self._lock:
            self.steps.append(
                Step(
                    index=self.first_index + len(self.steps),
                    round=pending.round,
                    call=pending.call,
                    verdict=verdict,
                    observation=observation,
                    perturbation=pert,
                    duration_s=time.perf_counter() - pending.t0,
                )
            )

    @property
    def perturbations(self) -> list[Perturbation]:
        return [s.perturbation for s in self.steps if s.perturbation is not None]

    @property
    def exposed(self) -> bool:
        """Whether a fault reached the agent in this session."""
        return any(s.perturbation is not None for s in self.steps)


def _world_step(call: Call, result: ExecResult, index: int, round: int, duration_s: float) -> Step:
    return Step(
        index=index,
        round=round,
        call=call,
        resolved_args=result.resolved_args,
        verdict=result.verdict,
        observation=result.observation,
        perturbation=result.perturbation,
        duration_s=duration_s,
    )


def _control_flow(exc: BaseException) -> bool:
    """LangGraph's interrupts and parent commands pass through untouched (not tool errors).

    Recognised by class (``langgraph.errors.GraphBubbleUp`` in the exception's MRO) without
    importing LangGraph: ``env`` never loads it."""
    return any(
        c.__name__ == "GraphBubbleUp" and c.__module__.startswith("langgraph")
        for c in type(exc).__mro__
    )


def _handled(exc: ToolException, flag: Any) -> str:
    """What a tool with ``handle_tool_error = flag`` returns for ``exc`` (LangChain's rule)."""
    if flag is True:
        return exc.args[0] if exc.args else "Tool execution error"
    if isinstance(flag, str):
        return flag
    if callable(flag):
        return str(flag(exc))
    return str(exc)


def _as_output(content: str, tool_call_id: str | None, name: str, status: str) -> Any:
    if tool_call_id is None:
        return content
    return ToolMessage(content=content, tool_call_id=tool_call_id, name=name, status=status)


_ACTIVE: ContextVar[FaultSession | None] = ContextVar("replan_inplace_session", default=None)


def current_session() -> FaultSession | None:
    """The session activated for the running episode, if any."""
    return _ACTIVE.get()


@contextmanager
def activate(session: FaultSession) -> Iterator[FaultSession]:
    """Make ``session`` the one every wrapped tool and middleware records into (this context)."""
    token = _ACTIVE.set(session)
    try:
        yield session
    finally:
        _ACTIVE.reset(token)


# -- the tool wrapper ---------------------------------------------------------------------------------
def round_of(messages: Sequence[Any] | None) -> int | None:
    """The model turn a tool call belongs to: the number of AI messages so far."""
    if not messages:
        return None
    return sum(1 for m in messages if isinstance(m, AIMessage))


def call_of(name: str, input: Any) -> Call:
    """A :class:`Call` from a tool's input (a ``ToolCall`` dict, an args dict or a string)."""
    if isinstance(input, Mapping) and input.get("type") == "tool_call":
        args = input.get("args")
        call_id = input.get("id")
        return Call(
            tool=name,
            args=dict(args) if isinstance(args, Mapping) else {RAW_ARGS_KEY: args},
            call_id=None if call_id is None else str(call_id),
        )
    if isinstance(input, Mapping):
        return Call(tool=name, args=dict(input))
    return Call(tool=name, args={RAW_ARGS_KEY: input})


def async_only(tool: BaseTool) -> bool:
    """A tool with a coroutine and no sync function (it cannot run under ``invoke``)."""
    return isinstance(tool, StructuredTool) and tool.func is None and tool.coroutine is not None


class InstrumentedTool(BaseTool):
    """A ``BaseTool`` that records, judges and fault-injects every call of ``inner``.

    It shows the model exactly ``inner``'s name, description and schema; outside an activated
    session it uses ``session`` (its own), so it also works on its own.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    inner: BaseTool
    session: FaultSession | None = None

    def _session(self) -> FaultSession | None:
        if self.session is not None and self.session.world is not None:
            return self.session  # world tools always run in their own world
        return current_session() or self.session

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        session = self._session()
        if session is None:
            return self.inner.invoke(input, config, **kwargs)
        if async_only(self.inner):
            raise TypeError(
                f"tool {self.name!r} is async-only (it has a coroutine and no sync function): "
                "run the agent with ainvoke/astream (evaluate_in_place does so when any tool is "
                "async-only)"
            )
        return session.run(
            self.inner,
            call_of(self.name, input),
            lambda: self.inner.invoke(input, config, **kwargs),
        )

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        session = self._session()
        if session is None:
            return await self.inner.ainvoke(input, config, **kwargs)
        return await session.arun(
            self.inner,
            call_of(self.name, input),
            lambda: self.inner.ainvoke(input, config, **kwargs),
        )

    def _run(self, *args: Any, **kwargs: Any) -> Any:  # only reached through BaseTool.run
        kwargs.pop("run_manager", None)
        return self.invoke(kwargs if kwargs else (args[0] if args else {}))

    async def _arun(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.pop("run_manager", None)
        return await self.ainvoke(kwargs if kwargs else (args[0] if args else {}))


def as_base_tool(tool: Any, where: str = "tools") -> BaseTool:
    """A ``BaseTool`` from a tool or a plain function (converted with ``@tool``'s rules)."""
    if isinstance(tool, BaseTool):
        return tool
    if callable(tool):
        from langchain_core.tools import tool as make_tool

        return make_tool(tool)
    raise TypeError(
        f"{where}: {tool!r} is not a LangChain tool or a function (give BaseTool instances, "
        "@tool functions or plain functions with type hints)"
    )


def wrap_tool(tool: Any, session: FaultSession | None = None) -> InstrumentedTool:
    """Wrap one tool (idempotent: a wrapped tool is re-wrapped around its inner tool)."""
    base = as_base_tool(tool)
    if isinstance(base, InstrumentedTool):
        base = base.inner
    return InstrumentedTool(
        name=base.name,
        description=base.description,
        args_schema=base.args_schema,
        return_direct=base.return_direct,
        response_format=base.response_format,
        inner=base,
        session=session,
    )


def wrap_tools(
    tools: Sequence[Any],
    schedule: FaultSchedule | None = None,
    *,
    task_id: str = "default",
    seed: int = 0,
) -> list[InstrumentedTool]:
    """Wrap ``tools`` for a hand-built graph (``ToolNode(wrap_tools(tools, schedule))``).

    The wrapped tools share one session built from ``schedule`` (``None``: record only), used
    whenever no session is activated; ``wrapped[0].session.steps`` holds the record. Inside
    :func:`replan.evaluate_in_place` the evaluation's own session per episode takes over.
    """
    base = [as_base_tool(t, f"tools[{i}]") for i, t in enumerate(tools)]
    names = [t.name for t in base]
    if schedule is not None and not schedule.tools:
        import dataclasses

        schedule = dataclasses.replace(schedule, tools=tuple(names))
    session = FaultSession.from_schedule(schedule, task_id, seed)
    return [wrap_tool(t, session) for t in base]


__all__ = [
    "RAW_ARGS_KEY",
    "FaultSession",
    "InjectedFault",
    "InstrumentedTool",
    "Observer",
    "StepBudgetExceeded",
    "WorldCalls",
    "activate",
    "as_base_tool",
    "async_only",
    "call_of",
    "check_call",
    "current_session",
    "observation_text",
    "observed",
    "rejection",
    "round_of",
    "schema_problem",
    "spec_from_tool",
    "wrap_tool",
    "wrap_tools",
]
