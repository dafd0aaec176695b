"""Run a user's own agent — ``langchain.agents.create_agent`` or any compiled graph with a
``messages`` state — on a task and get a scored Episode, with no change to the user's graph.

The user's factory ``make_agent(tools, model)`` receives the episode's world tools
(:func:`replan.nodes.tools.world_tools`); every call the agent makes through them runs through
the one tool wrapper's session — judged by the world, fault-injected, executed and recorded —
exactly as our own designs' calls do. After the run, the agent's messages supply
what the tools cannot see: the round of each call (the model turn that issued it), calls to
tools that do not exist (a ``ToolNode`` answers those itself; they are recorded with verdict
``unknown_tool``) and calls whose arguments were not valid JSON.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tools import BaseTool
from langgraph.errors import GraphRecursionError

from replan.core.task import Task
from replan.core.trace import EndReason, Episode, Step, Usage
from replan.env import task_world
from replan.env.world import FaultInjector, World
from replan.graphs.episode import EventHandler, episode_from_state
from replan.nodes.config import AgentConfig
from replan.nodes.executor import text_of
from replan.nodes.llm import describe_error, model_label, usage_of
from replan.nodes.state import add_usage
from replan.nodes.tools import call_from_tool_call, world_session, world_tools

AgentFactory = Callable[[list[BaseTool], BaseChatModel], Any]


def _calls_by_turn(messages: Sequence[BaseMessage]) -> list[list[tuple[dict[str, Any], bool]]]:
    """Tool calls (and malformed ones) of each model turn that made any, in message order."""
    turns = []
    for m in messages:
        if isinstance(m, AIMessage):
            calls = [(dict(tc), False) for tc in m.tool_calls]
            calls += [(dict(tc), True) for tc in m.invalid_tool_calls]
            if calls:
                turns.append(calls)
    return turns


def reconcile_trace(
    recorded: Sequence[Step], messages: Sequence[BaseMessage], world: World
) -> list[Step]:
    """The recorded steps with rounds from the messages, plus the calls no tool ever saw.

    Recorded steps keep their execution order (the order the world changed in, which a replay
    follows). A call to an unknown tool name or with unreadable arguments never reached a tool;
    it is judged by the world (``World.check``: it changes nothing) and inserted at its place in
    its turn. Calls to real tools that never ran (the run stopped first) are not invented.
    """
    where: dict[str, tuple[int, int]] = {}
    unseen: list[tuple[tuple[int, int], Step]] = []
    executed = {s.call.call_id for s in recorded if s.call.call_id}
    for turn, calls in enumerate(_calls_by_turn(messages), start=1):
        for pos, (tc, malformed) in enumerate(calls):
            call = call_from_tool_call(tc)
            if call.call_id:
                where[call.call_id] = (turn, pos)
            if call.call_id in executed or (not malformed and call.tool in world.tools):
                continue
            verdict, resolved = world.check(call)
            unseen.append(
                (
                    (turn, pos),
                    Step(
                        index=0,
                        round=turn,
                        call=call,
                        resolved_args=resolved,
                        verdict=verdict,
                        observation={"error": verdict.code.value, "message": verdict.message},
                    ),
                )
            )
    unseen.sort(key=lambda item: item[0])
    out: list[Step] = []
    last_round = 0
    for step in recorded:
        key = where.get(step.call.call_id or "")
        if key is not None:
            while unseen and unseen[0][0] < key:
                out.append(unseen.pop(0)[1])
            last_round = key[0]
        out.append(step.model_copy(update={"round": last_round}))
    out += [s for _, s in unseen]
    return [s.model_copy(update={"index": i}) for i, s in enumerate(out)]


def _final_answer(messages: Sequence[BaseMessage]) -> str | None:
    for m in reversed(messages):
        if isinstance(m, AIMessage):
            if m.tool_calls or m.invalid_tool_calls:
                return None
            return text_of(m) or None
    return None


def _usage(messages: Sequence[BaseMessage]) -> Usage:
    total = Usage()
    for m in messages:
        if isinstance(m, AIMessage):
            total = add_usage(total, usage_of(m))
    return total


def run_compiled_agent(
    make_agent: AgentFactory,
    model: BaseChatModel,
    task: Task,
    *,
    faults: FaultInjector | None = None,
    config: AgentConfig | None = None,
    seed: int = 0,
    world: World | None = None,
    design: str = "custom",
    episode_id: str | None = None,
    on_event: EventHandler | None = None,
) -> Episode:
    """Run the agent ``make_agent(tools, model)`` builds on ``task``; return the scored Episode.

    The agent is invoked with ``{"messages": [HumanMessage(task.query)]}``; its final answer is
    the text of its last AI message without tool calls. The step budget (``max_steps`` tool
    calls) is kept by the tools: a call past it is not executed and stops the agent (the tool
    raises), ending the episode with ``step_budget`` — also when the agent's own tool error
    handling swallows that and it loops on until LangGraph's recursion limit.
    A crash of the agent ends with ``crashed`` and keeps every call recorded until then.
    """
    cfg = config or AgentConfig()
    if world is None:
        world = task_world(task, faults)
    elif faults is not None:
        raise ValueError("give the faults to the World you pass (World(..., faults=...))")
    session = world_session(world, commit=True, max_steps=cfg.max_steps)
    tools = world_tools(world, session)
    messages: list[BaseMessage] = []
    reason: EndReason | None = None
    error: str | None = None
    t0 = time.perf_counter()
    try:
        agent = make_agent(tools, model)
        for mode, chunk in agent.stream(
            {"messages": [HumanMessage(content=task.query)]},
            {"recursion_limit": cfg.recursion_limit()},
            stream_mode=["values", "custom"],
        ):
            if mode == "values" and isinstance(chunk, dict):
                messages = list(chunk.get("messages") or messages)
            elif mode == "custom" and on_event is not None and isinstance(chunk, dict):
                on_event(chunk)
    except GraphRecursionError as exc:
        reason, error = EndReason.STEP_BUDGET, str(exc)
    except Exception as exc:
        reason, error = EndReason.CRASHED, describe_error(exc)
    if session.budget_hit:
        reason = EndReason.STEP_BUDGET
        error = f"step budget of {cfg.max_steps} tool calls spent"
    wall = time.perf_counter() - t0
    answer = _final_answer(messages) if reason is None else None
    if reason is None:
        reason = EndReason.ANSWERED if answer else EndReason.GAVE_UP
        if answer is None:
            error = "the agent ended without a final answer"
    values = {
        "steps": reconcile_trace(session.steps, messages, world),
        "final_answer": answer,
        "usage": _usage(messages),
        "world": world.state,
        "end_reason": reason,
        "error": error,
    }
    return episode_from_state(
        values,
        task=task,
        world=world,
        design=design,
        model=model_label(model),
        seed=seed,
        cfg=cfg,
        wall_s=wall,
        episode_id=episode_id or uuid.uuid4().hex,
    )


__all__ = ["AgentFactory", "reconcile_trace", "run_compiled_agent"]
