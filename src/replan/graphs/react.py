"""ReAct: the model with the world's tools bound ⇄ a tool node, until an answer or the step
budget (``AgentConfig.max_steps``, default 25)."""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel
from langgraph.graph import START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Checkpointer

from replan.env.world import World
from replan.graphs.registry import design
from replan.nodes.config import AgentConfig
from replan.nodes.executor import add_executor
from replan.nodes.state import AgentState, make_start_node


@design("react")
def build_react(
    model: BaseChatModel,
    world: World,
    config: AgentConfig | None = None,
    *,
    checkpointer: Checkpointer = None,
) -> CompiledStateGraph:
    """``start → executor → agent ⇄ tools``; input ``{"query", "world"}``."""
    cfg = config or AgentConfig()
    builder = StateGraph(AgentState)
    builder.add_node("start", make_start_node(world))
    add_executor(builder, model, world, cfg)
    builder.add_edge(START, "start")
    builder.add_edge("start", "executor")
    return builder.compile(checkpointer=checkpointer, name="react")
