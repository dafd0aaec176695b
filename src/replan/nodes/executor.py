"""The ReAct executor: a model with the world's tools bound ⇄ a tool node, within a step budget.

Shared by ``react`` (no plan), ``plan_conditioned`` and ``dual_loop`` (a plan in the system
message). The tool node executes every tool call of the model's last message in order, through
the one tool wrapper's session (:func:`replan.nodes.tools.world_session`) over the state's world
snapshot — unknown tool names and malformed arguments included, so their verdicts are recorded
— and returns each observation as a tool message. Nothing a tool does raises out of the graph:
a rejected call is an ``{"error": ...}`` observation.

Budget: ``max_steps`` counts tool calls (Steps). Calls beyond it are not executed, and a model
that asks for a call when the budget is spent ends the episode with ``step_budget``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langgraph.graph import END, StateGraph

from replan.core.trace import EndReason
from replan.env.world import World
from replan.nodes.config import AgentConfig
from replan.nodes.episode import EpisodeInputs, InputSource, running
from replan.nodes.events import emit
from replan.nodes.llm import ModelCallError, call_model
from replan.nodes.prompts import executor_messages
from replan.nodes.state import AgentState, Node, ended, finish, out_of_time
from replan.nodes.tools import (
    RAW_ARGS_KEY,
    call_from_tool_call,
    observation_text,
    openai_tools,
    world_session,
    world_tools,
)


def text_of(message: Any) -> str:
    """The plain text of a model reply (string or content blocks)."""
    if isinstance(message, BaseMessage):
        return str(message.text).strip()
    return str(message or "").strip()


def bind_world_tools(model: BaseChatModel, world: World) -> tuple[Runnable, list[BaseTool]]:
    """``model.bind_tools`` with the world's tools; a clear error for a model that cannot."""
    tools = world_tools(world)
    return _bind(model, tools), tools


def _bind(model: BaseChatModel, tools: Sequence[Any]) -> Runnable:
    try:
        return model.bind_tools(tools)
    except NotImplementedError as exc:
        raise TypeError(
            f"model {type(model).__name__} does not support tool calling (bind_tools); the "
            "executor needs a chat model with tool calling"
        ) from exc


def bound_model(inputs: EpisodeInputs) -> Runnable:
    """The episode's model with its world's tools bound (bound once per episode, to the tool
    schemas converted once per run, :func:`~replan.nodes.tools.openai_tools`)."""
    return inputs.once("bound_model", lambda: _bind(inputs.model, openai_tools(inputs.world)))


def bind_now(inputs: InputSource) -> None:
    """Bind while compiling a graph for one episode, so a model without tool calling fails
    there, before any call is made (episodes of a shared graph bind in
    :func:`replan.graphs.run_episode`, before the run)."""
    if inputs is not running:
        bound_model(inputs())


def _pending_calls(message: AIMessage) -> list[tuple[dict[str, Any], bool]]:
    calls: list[tuple[dict[str, Any], bool]] = [(dict(tc), False) for tc in message.tool_calls]
    calls += [(dict(tc), True) for tc in getattr(message, "invalid_tool_calls", None) or []]
    return calls


def make_executor_start(cfg: AgentConfig) -> Node:
    """Node: open the executor's conversation (the plan, if any, goes in its instructions)."""

    def executor(state: AgentState) -> dict[str, Any]:
        msgs = executor_messages(state["query"], state.get("plan_text"), hint=cfg.hint)
        return {"messages": msgs}

    return executor


def make_agent_node(inputs: InputSource, cfg: AgentConfig) -> Node:
    """Node: one model turn — tool calls, a final answer, or the end of the episode."""

    def agent(state: AgentState) -> dict[str, Any]:
        if late := out_of_time(state, cfg):
            return late
        try:
            reply = call_model(bound_model(inputs()), state["messages"], retry=cfg.retry)
        except ModelCallError as exc:
            return finish(EndReason.MODEL_ERROR, error=exc.message)
        message = reply.output
        if not isinstance(message, AIMessage):
            message = AIMessage(content=text_of(message))
        update: dict[str, Any] = {"messages": [message], "usage": reply.usage}
        if _pending_calls(message):
            if len(state.get("steps") or []) >= cfg.max_steps:
                update.update(
                    finish(
                        EndReason.STEP_BUDGET,
                        error=f"step budget of {cfg.max_steps} tool calls spent",
                    )
                )
            return update
        answer = text_of(message)
        if not answer:
            update.update(
                finish(EndReason.GAVE_UP, error="the model returned neither a tool call nor text")
            )
            return update
        emit("answer", source="model")
        update.update(finish(EndReason.ANSWERED, final_answer=answer))
        return update

    return agent


def make_tools_node(inputs: InputSource, cfg: AgentConfig) -> Node:
    """Node: execute the last message's tool calls in order; observations go back as messages."""

    def tools(state: AgentState) -> dict[str, Any]:
        message = state["messages"][-1]
        assert isinstance(message, AIMessage)
        calls = _pending_calls(message)
        done = len(state.get("steps") or [])
        remaining = cfg.max_steps - done
        rnd = (state.get("round") or 0) + 1
        emit("round_started", round=rnd, calls=len(calls))
        session = world_session(inputs().world, state=state["world"], first_index=done, round=rnd)
        replies: list[ToolMessage] = []
        for i, (tool_call, malformed) in enumerate(calls):
            call_id = tool_call.get("id") or f"call_{rnd}_{i}"
            name = str(tool_call.get("name") or "")
            if i >= remaining:
                replies.append(
                    ToolMessage(
                        content=observation_text(
                            {"error": "not_executed", "message": "the step budget is spent"}
                        ),
                        tool_call_id=call_id,
                        name=name,
                        status="error",
                    )
                )
                continue
            step = session.step(call_from_tool_call({**tool_call, "id": call_id}))
            if malformed and RAW_ARGS_KEY in step.call.args and not step.verdict.ok:
                why = tool_call.get("error") or "not a JSON object"
                step = session.steps[-1] = step.model_copy(
                    update={
                        "observation": {
                            "error": step.verdict.code.value,
                            "message": f"the arguments of {name or 'this call'} could not be "
                            f"read ({why}); send them as a JSON object",
                        }
                    }
                )
            replies.append(
                ToolMessage(
                    content=observation_text(step.observation),
                    tool_call_id=call_id,
                    name=name,
                    status="success" if step.verdict.ok else "error",
                )
            )
        update: dict[str, Any] = {
            "messages": replies,
            "steps": session.steps,
            "world": session.state,
            "round": rnd,
        }
        if len(calls) > remaining:
            update.update(
                finish(
                    EndReason.STEP_BUDGET,
                    error=f"step budget of {cfg.max_steps} tool calls spent "
                    f"({len(calls) - remaining} call(s) of the last turn not executed)",
                )
            )
        return update

    return tools


def route_after_agent(state: AgentState) -> str:
    if ended(state):
        return END
    last = state["messages"][-1]
    return "tools" if isinstance(last, AIMessage) and _pending_calls(last) else END


def route_after_tools(state: AgentState) -> str:
    return END if ended(state) else "agent"


def add_executor(builder: StateGraph, inputs: InputSource, cfg: AgentConfig) -> Sequence[str]:
    """Add the ReAct executor to ``builder``: ``executor`` (entry) → ``agent`` ⇄ ``tools``.

    The episode's model is bound to its world's LangChain tools
    (:func:`replan.nodes.tools.world_tools`); the tool node executes the model's calls through
    the same wrapper session those tools use, against the graph state's world snapshot.
    Returns the node names.
    """
    bind_now(inputs)
    builder.add_node("executor", make_executor_start(cfg))
    builder.add_node("agent", make_agent_node(inputs, cfg))
    builder.add_node("tools", make_tools_node(inputs, cfg))
    builder.add_edge("executor", "agent")
    builder.add_conditional_edges("agent", route_after_agent, ["tools", END])
    builder.add_conditional_edges("tools", route_after_tools, ["agent", END])
    return ("executor", "agent", "tools")


__all__ = [
    "add_executor",
    "bind_now",
    "bind_world_tools",
    "bound_model",
    "make_agent_node",
    "make_executor_start",
    "make_tools_node",
    "route_after_agent",
    "route_after_tools",
    "text_of",
]
