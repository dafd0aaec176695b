"""Plan-conditioned ReAct: a planner writes a plan first; nothing checks it; the ReAct
executor runs with the plan in its instructions (the parsed DAG, or the raw text when the plan
does not parse — its parse verdict is still recorded)."""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Checkpointer

from replan.graphs.inputs import input_source
from replan.graphs.registry import design
from replan.nodes.config import AgentConfig
from replan.nodes.executor import add_executor
from replan.nodes.planner import make_planner_node
from replan.nodes.state import AgentState, ended, make_start_node
from replan.nodes.tools import ToolsLike


def _after_planner(state: AgentState) -> str:
    return END if ended(state) else "executor"


@design("plan_conditioned", order=20, compiled_once=True)
def build_plan_conditioned(
    model: str | BaseChatModel,
    tools: ToolsLike,
    config: AgentConfig | None = None,
    *,
    checkpointer: Checkpointer = None,
) -> CompiledStateGraph:
    """``start → planner → executor → agent ⇄ tools``; input ``{"query"}`` (and ``"world"``).

    ``model`` and ``tools`` as ``create_agent`` takes them (see :mod:`replan.graphs.inputs`).
    """
    inputs = input_source(model, tools)
    cfg = config or AgentConfig()
    builder = StateGraph(AgentState)
    builder.add_node("start", make_start_node(inputs))
    builder.add_node("planner", make_planner_node(inputs, cfg))
    add_executor(builder, inputs, cfg)
    builder.add_edge(START, "start")
    builder.add_edge("start", "planner")
    builder.add_conditional_edges("planner", _after_planner, ["executor", END])
    return builder.compile(checkpointer=checkpointer, name="plan_conditioned")
