"""Planner – tool agent – replanner loop with frontier execution of a DAG plan.

``start → planner → dispatch ─Send×frontier→ tool_agent → replanner → dispatch → … → respond``.
A run that starts mid-run (input ``replan_point``, ParaRecover's instances) enters at the
replanner instead: ``start → replan_point → replanner → dispatch → …`` (the given plan, its
clean outputs and the last wave as round ``rounds_executed``); ParaRecover's protocol, one
replan and then the waves to the end, is the budget ``AgentConfig.max_replans=1``.
A round is one frontier wave: ``dispatch`` sends every ready call node to a ``tool_agent`` in
one superstep, LangGraph runs them concurrently, their results merge through the state's
reducers (steps ordered by plan node id), the ``replanner`` writes the updated DAG (an
unparsable replan ends the episode with ``unparsable_plan``), and when only the response node
is left ``respond`` writes the answer. Round budget: ``AgentConfig.max_rounds`` (default 20).
See :mod:`replan.nodes.frontier` for how a wave stays deterministic while it runs in parallel.
"""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Checkpointer

from replan.core.trace import EndReason
from replan.graphs.inputs import input_source
from replan.graphs.registry import design
from replan.nodes.config import AgentConfig
from replan.nodes.executor import bind_now
from replan.nodes.frontier import (
    make_dispatch_node,
    make_replan_point_node,
    make_replanner_node,
    make_responder_node,
    make_tool_agent,
)
from replan.nodes.planner import make_planner_node
from replan.nodes.state import AgentState, make_start_node
from replan.nodes.tools import ToolsLike


def entry(state: AgentState) -> str:
    """Where a run begins: the planner, or the replanner's given plan at a replan point."""
    point = state.get("replan_point")
    return "replan_point" if point is not None and point.starts_mid_run else "planner"


@design(
    "replanner_loop",
    budget_reason=EndReason.ROUND_BUDGET,
    replans=True,
    order=40,
    compiled_once=True,
)
def build_replanner_loop(
    model: str | BaseChatModel,
    tools: ToolsLike,
    config: AgentConfig | None = None,
    *,
    checkpointer: Checkpointer = None,
) -> CompiledStateGraph:
    """The compiled loop; input ``{"query"}`` (and ``"world"``, a state; ``"replan_point"``,
    a :class:`~replan.core.task.ReplanPoint` to start from).

    ``model`` and ``tools`` as ``create_agent`` takes them (see :mod:`replan.graphs.inputs`).
    """
    inputs = input_source(model, tools)
    cfg = config or AgentConfig()
    bind_now(inputs)
    builder = StateGraph(AgentState)
    builder.add_node("start", make_start_node(inputs))
    builder.add_node("planner", make_planner_node(inputs, cfg))
    builder.add_node("replan_point", make_replan_point_node(inputs))
    builder.add_node(
        "dispatch",
        make_dispatch_node(inputs, cfg),
        destinations=("tool_agent", "respond", END),
    )
    builder.add_node("tool_agent", make_tool_agent(inputs))
    builder.add_node("replanner", make_replanner_node(inputs, cfg))
    builder.add_node("respond", make_responder_node(inputs, cfg))
    builder.add_edge(START, "start")
    builder.add_conditional_edges("start", entry, ["planner", "replan_point"])
    builder.add_edge("replan_point", "replanner")
    builder.add_edge("planner", "dispatch")
    builder.add_edge("tool_agent", "replanner")
    builder.add_edge("replanner", "dispatch")
    builder.add_edge("respond", END)
    return builder.compile(checkpointer=checkpointer, name="replanner_loop")
