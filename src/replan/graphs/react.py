"""ReAct: the model with the world's tools bound ⇄ a tool node, until an answer or the step
budget (``AgentConfig.max_steps``, default 25)."""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel
from langgraph.graph import START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Checkpointer

from replan.graphs.inputs import input_source
from replan.graphs.registry import design
from replan.nodes.config import AgentConfig
from replan.nodes.executor import add_executor
from replan.nodes.state import AgentState, make_start_node
from replan.nodes.tools import ToolsLike


@design("react", order=10, compiled_once=True)
def build_react(
    model: str | BaseChatModel,
    tools: ToolsLike,
    config: AgentConfig | None = None,
    *,
    checkpointer: Checkpointer = None,
) -> CompiledStateGraph:
    """``start → executor → agent ⇄ tools``; input ``{"query"}`` (and ``"world"``, a state).

    ``model`` and ``tools`` as ``create_agent`` takes them (see :mod:`replan.graphs.inputs`).
    """
    inputs = input_source(model, tools)
    cfg = config or AgentConfig()
    builder = StateGraph(AgentState)
    builder.add_node("start", make_start_node(inputs))
    add_executor(builder, inputs, cfg)
    builder.add_edge(START, "start")
    builder.add_edge("start", "executor")
    return builder.compile(checkpointer=checkpointer, name="react")
