"""Dual-Loop: planner → verifier (the deterministic ``replan.env.verifier.verify``) → planner
revises after findings, within ``AgentConfig.max_plan_iterations`` verifier passes (default 3)
→ the approved plan, or the last one when the passes run out, conditions the ReAct executor,
which alone makes real tool calls. Every pass is recorded on its plan version
(``PlanVersion.findings``, ``PlanVersion.approved``)."""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Checkpointer

from replan.graphs.inputs import input_source
from replan.graphs.registry import design
from replan.nodes.config import AgentConfig
from replan.nodes.executor import add_executor
from replan.nodes.planner import (
    make_planner_node,
    make_reviser_node,
    make_verifier_node,
    route_after_verifier,
)
from replan.nodes.state import AgentState, ended, make_start_node
from replan.nodes.tools import ToolsLike


def _after_plan(state: AgentState) -> str:
    return END if ended(state) else "verifier"


@design("dual_loop", order=30, compiled_once=True)
def build_dual_loop(
    model: str | BaseChatModel,
    tools: ToolsLike,
    config: AgentConfig | None = None,
    *,
    checkpointer: Checkpointer = None,
) -> CompiledStateGraph:
    """``start → planner → verifier ⇄ revise → executor → agent ⇄ tools``.

    ``model`` and ``tools`` as ``create_agent`` takes them (see :mod:`replan.graphs.inputs`).
    """
    inputs = input_source(model, tools)
    cfg = config or AgentConfig()
    builder = StateGraph(AgentState)
    builder.add_node("start", make_start_node(inputs))
    builder.add_node("planner", make_planner_node(inputs, cfg))
    builder.add_node("verifier", make_verifier_node(inputs, cfg))
    builder.add_node("revise", make_reviser_node(inputs, cfg))
    add_executor(builder, inputs, cfg)
    builder.add_edge(START, "start")
    builder.add_edge("start", "planner")
    builder.add_conditional_edges("planner", _after_plan, ["verifier", END])
    builder.add_conditional_edges("revise", _after_plan, ["verifier", END])
    builder.add_conditional_edges(
        "verifier", route_after_verifier(cfg), ["executor", "revise", END]
    )
    return builder.compile(checkpointer=checkpointer, name="dual_loop")
