"""Executing calls against a World and recording them as Steps; LangChain tools bound to a World.

One function runs a call and builds its Step (:func:`run_call`); the graph nodes use it
against the state's world snapshot, and :func:`world_tools` wraps it as LangChain tools for any
agent (``create_agent``, the user's own graph). Validation happens in the world, never in
LangChain: the tools carry a permissive JSON-Schema ``args_schema`` (LangChain does not
validate dict schemas), so a call with an unknown parameter or a wrong type reaches the world
and its verdict is recorded, exactly like a valid call.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

from langchain_core.messages import ToolCall
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from pydantic import ConfigDict

from replan.core.tools import ToolSpec
from replan.core.trace import Call, Step
from replan.env.world import ExecResult, World, WorldState
from replan.nodes.events import emit

#: Key under which arguments that were not a JSON object are passed to the world, so the call
#: is still judged (an unknown parameter) and recorded instead of silently dropped.
RAW_ARGS_KEY = "__raw_arguments__"


def observation_text(observation: Any) -> str:
    """The ToolMessage content of an observation: ``json.dumps`` of it."""
    return json.dumps(observation, ensure_ascii=False, default=str)


def strip_extensions(schema: Any) -> Any:
    """A JSON Schema without ``x-`` keys (our annotations), at every depth."""
    if isinstance(schema, Mapping):
        return {k: strip_extensions(v) for k, v in schema.items() if not str(k).startswith("x-")}
    if isinstance(schema, list):
        return [strip_extensions(v) for v in schema]
    return schema


def tool_args_schema(spec: ToolSpec) -> dict[str, Any]:
    """The parameters schema a model sees for ``spec`` (the tool's JSON Schema, no ``x-`` keys)."""
    return strip_extensions(spec.parameters)


def step_from_result(
    call: Call, result: ExecResult, *, index: int, round: int, duration_s: float
) -> Step:
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


def run_call(
    world: World,
    call: Call,
    *,
    bindings: Mapping[str, Any] | None = None,
    state: WorldState | None = None,
    commit: bool = False,
    index: int = 0,
    round: int = 0,
) -> tuple[Step, ExecResult]:
    """Execute ``call`` in ``state`` (default: the world's) and record it as a Step.

    Emits ``call`` and ``verdict`` progress events.
    """
    emit("call", round=round, index=index, tool=call.tool, node=call.node_id, args=call.args)
    t0 = time.perf_counter()
    result = world.execute(call, bindings, state=state, commit=commit)
    step = step_from_result(
        call, result, index=index, round=round, duration_s=time.perf_counter() - t0
    )
    emit(
        "verdict",
        round=round,
        index=index,
        tool=call.tool,
        node=call.node_id,
        code=step.verdict.code.value,
        ok=step.verdict.ok,
        perturbation=step.perturbation.kind if step.perturbation else None,
    )
    return step, result


def call_from_tool_call(tool_call: Mapping[str, Any], *, node_id: str | None = None) -> Call:
    """A Call from a LangChain tool call (``invalid_tool_calls`` included: raw args kept)."""
    args = tool_call.get("args")
    if isinstance(args, str):
        try:
            parsed = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError:
            parsed = None
        args = parsed if isinstance(parsed, dict) else {RAW_ARGS_KEY: args}
    elif args is None:
        args = {}
    elif not isinstance(args, Mapping):
        args = {RAW_ARGS_KEY: args}
    return Call(
        tool=str(tool_call.get("name") or ""),
        args=dict(args),
        node_id=node_id,
        call_id=tool_call.get("id"),
    )


class StepBudgetExceeded(Exception):
    """A world tool was called after the episode's step budget was spent (nothing ran)."""


class Recorder:
    """Thread-safe record of the Steps that world tools execute for one episode.

    Calls run one at a time under the recorder's lock (execution and recording together), so
    the recorded order is the order in which the world changed and a replay reproduces it,
    even when an agent runs tool calls in parallel threads. ``round`` is the round index given
    to new steps (callers that know their rounds set it; see ``graphs.custom``).
    """

    def __init__(self, max_steps: int | None = None) -> None:
        self.steps: list[Step] = []
        self.round = 0
        self.max_steps = max_steps
        self.budget_hit = False
        self._lock = threading.RLock()

    def execute(self, world: World, call: Call) -> Step:
        """Execute and record ``call``; raises :class:`StepBudgetExceeded` past ``max_steps``."""
        with self._lock:
            if self.max_steps is not None and len(self.steps) >= self.max_steps:
                self.budget_hit = True
                raise StepBudgetExceeded(
                    f"step budget of {self.max_steps} tool calls spent; {call.tool} not executed"
                )
            step, _ = run_call(world, call, commit=True, index=len(self.steps), round=self.round)
            self.steps.append(step)
            return step

    def __len__(self) -> int:
        return len(self.steps)


_CALL_ID: ContextVar[str | None] = ContextVar("replan_tool_call_id", default=None)


class WorldTool(BaseTool):
    """A LangChain tool that executes its calls in a World and records them in a Recorder."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    world: World
    recorder: Recorder

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        token = _CALL_ID.set(_tool_call_id(input))
        try:
            return super().invoke(input, config, **kwargs)
        finally:
            _CALL_ID.reset(token)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        token = _CALL_ID.set(_tool_call_id(input))
        try:
            return await super().ainvoke(input, config, **kwargs)
        finally:
            _CALL_ID.reset(token)

    def _run(self, /, *args: Any, **kwargs: Any) -> str:
        if args:  # a bare string input: still a call, judged by the world
            kwargs = {RAW_ARGS_KEY: args[0] if len(args) == 1 else list(args), **kwargs}
        call = Call(tool=self.name, args=kwargs, call_id=_CALL_ID.get())
        step = self.recorder.execute(self.world, call)
        return observation_text(step.observation)

    async def _arun(self, /, *args: Any, **kwargs: Any) -> str:
        return await asyncio.to_thread(self._run, *args, **kwargs)


def _tool_call_id(input: Any) -> str | None:
    if isinstance(input, Mapping) and input.get("type") == "tool_call":
        value = input.get("id")
        return str(value) if value is not None else None
    return None


def world_tools(world: World, recorder: Recorder) -> list[BaseTool]:
    """One LangChain tool per ToolSpec of ``world``; each call runs in the world and is recorded.

    Tools return ``json.dumps(observation)`` (a tool output, an ``{"error": code, ...}`` for a
    call the world rejects, or an injected fault) and never raise for a bad call, so an agent
    sees its mistakes as tool messages. Safe for parallel calls.
    """
    return [
        WorldTool(
            name=spec.name,
            description=spec.description or spec.name,
            args_schema=tool_args_schema(spec),
            world=world,
            recorder=recorder,
        )
        for spec in world.tools.values()
    ]


def as_tool_call(call: Call, args: Mapping[str, Any] | None = None) -> ToolCall:
    """A LangChain ToolCall for a recorded call (used to show executed calls to a model)."""
    return ToolCall(
        name=call.tool,
        args=dict(call.args if args is None else args),
        id=call.call_id or f"call_{call.node_id}",
    )


__all__ = [
    "RAW_ARGS_KEY",
    "Recorder",
    "StepBudgetExceeded",
    "WorldTool",
    "as_tool_call",
    "call_from_tool_call",
    "observation_text",
    "run_call",
    "step_from_result",
    "strip_extensions",
    "tool_args_schema",
    "world_tools",
]
