"""World tools: the LangChain tools of a World, and the session every design's calls run in.

Every call an agent makes in a world — our designs' tool nodes, a user's graph through
:func:`world_tools` — runs through the one tool wrapper's session
(:class:`~replan.env.tool_wrapper.FaultSession` with :class:`~replan.env.tool_wrapper.WorldCalls`):
the world judges it, injects its fault and runs it, and the session records it as a Step.
:func:`world_session` builds that session with our progress events. Validation happens in the
world, never in LangChain: the tools carry a permissive JSON-Schema ``args_schema`` (LangChain
does not validate dict schemas), so a call with an unknown parameter or a wrong type reaches the
world and its verdict is recorded, exactly like a valid call.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from typing import Any

from langchain_core.messages import ToolCall
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from pydantic import ConfigDict

from replan.core.tools import ToolSpec
from replan.core.trace import Call
from replan.env.tool_wrapper import (
    RAW_ARGS_KEY,
    FaultSession,
    StepBudgetExceeded,
    WorldCalls,
    as_base_tool,
    async_only,
    observation_text,
    observed,
    rejection,
    spec_from_tool,
)
from replan.env.world import InvalidValue, ToolContext, World, WorldState
from replan.nodes.events import emit


def strip_extensions(schema: Any) -> Any:
    """A JSON Schema without ``x-`` keys (our annotations), at every depth. The keys of a
    ``properties`` map are parameter names, not annotations: a parameter called ``x-request-id``
    stays (as :func:`replan.core.wire.render_tools` lists it)."""
    if isinstance(schema, Mapping):
        return {
            k: (
                {name: strip_extensions(sub) for name, sub in v.items()}
                if k == "properties" and isinstance(v, Mapping)
                else strip_extensions(v)
            )
            for k, v in schema.items()
            if not str(k).startswith("x-")
        }
    if isinstance(schema, list):
        return [strip_extensions(v) for v in schema]
    return schema


def tool_args_schema(spec: ToolSpec) -> dict[str, Any]:
    """The parameters schema a model sees for ``spec`` (the tool's JSON Schema, no ``x-`` keys)."""
    return strip_extensions(spec.parameters)


def world_session(
    world: World,
    *,
    state: WorldState | None = None,
    bindings: Mapping[str, Any] | None = None,
    commit: bool = False,
    first_index: int = 0,
    round: int | None = None,
    max_steps: int | None = None,
) -> FaultSession:
    """The wrapper's session for calls in ``world`` (see :class:`WorldCalls`), with our
    ``call`` / ``verdict`` progress events."""
    return FaultSession(
        world=WorldCalls(world, state=state, bindings=bindings, commit=commit),
        first_index=first_index,
        round=round,
        max_steps=max_steps,
        observe=emit,
    )


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


_CALL_ID: ContextVar[str | None] = ContextVar("replan_tool_call_id", default=None)


class WorldTool(BaseTool):
    """A LangChain tool of a World: each call runs through ``session`` (the one tool wrapper),
    which judges it in the world, injects its fault, runs it and records it."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    session: FaultSession

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
        return observation_text(self.session.step(call).observation)

    async def _arun(self, /, *args: Any, **kwargs: Any) -> str:
        return await asyncio.to_thread(self._run, *args, **kwargs)


def _tool_call_id(input: Any) -> str | None:
    if isinstance(input, Mapping) and input.get("type") == "tool_call":
        value = input.get("id")
        return str(value) if value is not None else None
    return None


def world_tools(world: World, session: FaultSession | None = None) -> list[BaseTool]:
    """One LangChain tool per ToolSpec of ``world``; each call runs through ``session``
    (default: a fresh :func:`world_session` that moves the world itself).

    Tools return ``json.dumps(observation)`` (a tool output, an ``{"error": code, ...}`` for a
    call the world rejects, or an injected fault) and never raise for a bad call, so an agent
    sees its mistakes as tool messages. Safe for parallel calls (the session runs one at a
    time); the session's ``steps`` is the record.
    """
    session = session if session is not None else world_session(world, commit=True)
    return [
        WorldTool(
            name=spec.name,
            description=spec.description or spec.name,
            args_schema=tool_args_schema(spec),
            session=session,
        )
        for spec in world.tools.values()
    ]


#: the OpenAI-format schema of each world tool, by its name, description and parameters
_OPENAI_TOOLS: OrderedDict[str, dict[str, Any]] = OrderedDict()
_OPENAI_TOOLS_LOCK = threading.Lock()
_OPENAI_TOOLS_MAX = 4096


def openai_tools(world: World) -> list[dict[str, Any]]:
    """The world's tools as a model binds them: what ``convert_to_openai_tool`` makes of
    :func:`world_tools`, converted once per distinct tool instead of once per episode (a
    pydantic tool object each, about 1 ms of an episode's CPU). Shared: never mutate them."""
    keys = [
        json.dumps([s.name, s.description, s.parameters], sort_keys=True, default=str)
        for s in world.tools.values()
    ]
    with _OPENAI_TOOLS_LOCK:
        found = [_OPENAI_TOOLS.get(k) for k in keys]
    if any(f is None for f in found):
        from langchain_core.utils.function_calling import convert_to_openai_tool

        found = [convert_to_openai_tool(t) for t in world_tools(world)]
        with _OPENAI_TOOLS_LOCK:
            _OPENAI_TOOLS.update(zip(keys, found, strict=True))
            while len(_OPENAI_TOOLS) > _OPENAI_TOOLS_MAX:
                _OPENAI_TOOLS.popitem(last=False)
    return found  # type: ignore[return-value]


#: What a design builder accepts as its tools (as ``create_agent`` takes ``tools``).
ToolsLike = World | Sequence[ToolSpec | BaseTool | Callable[..., Any]]


def _spec_running(tool: BaseTool) -> ToolSpec:
    """``tool`` as a ToolSpec whose implementation invokes it: the world judges the call against
    the tool's JSON schema; an error the tool raises or reports is an ``invalid_value`` verdict
    (as the wrapper judges your tools)."""
    if async_only(tool):
        raise TypeError(
            f"tool {tool.name!r} is async-only (a coroutine and no sync function); our designs "
            "run tools synchronously: give it a sync function"
        )

    def run(args: dict[str, Any], ctx: ToolContext) -> Any:
        try:
            out = tool.invoke(dict(args))
        except Exception as exc:
            raise InvalidValue(None, f"{tool.name} raised {type(exc).__name__}: {exc}") from exc
        rejected = rejection(out)
        if rejected is not None:
            raise InvalidValue(None, f"{tool.name} rejected the call: {rejected}")
        # JSON text and pydantic results as data (so ``${node.field}`` reaches their fields);
        # plain text stays the text the tool returned
        return out if isinstance(out, str) and out.strip()[:1] not in "{[" else observed(out)

    return spec_from_tool(tool).model_copy(update={"implementation": run})


def world_of(tools: ToolsLike) -> World:
    """The World a design runs in, from the ``tools`` its builder was given: a World as is; the
    world tools of one World (:func:`world_tools`) -> that World; ToolSpecs, LangChain tools or
    plain functions -> a World over them (a tool that is not a ToolSpec runs itself, see
    :func:`_spec_running`; it has no state, so no preconditions and no effects)."""
    if isinstance(tools, World):
        return tools
    items = list(tools)
    if not items:
        raise ValueError("no tools given: pass a World, ToolSpecs or LangChain tools")
    worlds = {
        id(t.session.world.world): t.session.world.world
        for t in items
        if isinstance(t, WorldTool) and t.session.world is not None
    }
    if worlds:
        if len(worlds) > 1 or not all(isinstance(t, WorldTool) for t in items):
            raise ValueError(
                "tools mix the world tools of a World with other tools; pass one World's tools, "
                "or ToolSpecs / your own tools"
            )
        return next(iter(worlds.values()))
    specs = [
        t if isinstance(t, ToolSpec) else _spec_running(as_base_tool(t, f"tools[{i}]"))
        for i, t in enumerate(items)
    ]
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise ValueError(f"tool names repeat: {names}")
    return World(specs)


def as_tool_call(call: Call, args: Mapping[str, Any] | None = None) -> ToolCall:
    """A LangChain ToolCall for a recorded call (used to show executed calls to a model)."""
    return ToolCall(
        name=call.tool,
        args=dict(call.args if args is None else args),
        id=call.call_id or f"call_{call.node_id}",
    )


__all__ = [
    "RAW_ARGS_KEY",
    "StepBudgetExceeded",
    "ToolsLike",
    "WorldTool",
    "as_tool_call",
    "call_from_tool_call",
    "observation_text",
    "openai_tools",
    "strip_extensions",
    "tool_args_schema",
    "world_of",
    "world_session",
    "world_tools",
]
