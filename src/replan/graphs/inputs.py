"""What a design builder is given, as LangChain's ``create_agent`` takes it: a model (a chat model
or a spec string) and tools (a World, ToolSpecs, or LangChain tools and plain functions).

``build_react(model, tools)`` and the other builders call :func:`agent_inputs` first, so
``build_react("openai:gpt-4o-mini", [get_rate, convert])`` and the older
``build_react(chat_model, world)`` compile the same kind of graph. Every call the graph makes runs
through the one tool wrapper (:func:`replan.nodes.tools.world_session`).
"""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel

from replan.env.world import World
from replan.models import make_model
from replan.nodes.episode import RUNNING_EPISODE, InputSource, fixed, running
from replan.nodes.tools import ToolsLike, world_of


def agent_inputs(model: str | BaseChatModel, tools: ToolsLike) -> tuple[BaseChatModel, World]:
    """The chat model (a spec string goes through :func:`replan.models.make_model`) and the
    World the design runs in (:func:`replan.nodes.tools.world_of`)."""
    if not isinstance(model, (str, BaseChatModel)):
        raise TypeError(
            f"model must be a chat model or a model spec string such as 'openai:gpt-4o-mini', "
            f"got {type(model).__name__}"
        )
    return make_model(model), world_of(tools)


def input_source(model: str | BaseChatModel, tools: ToolsLike) -> InputSource:
    """Where a builder's nodes read the model and world: these (:func:`agent_inputs`), or the
    running episode's when the graph is compiled once per run (both given as
    :data:`~replan.nodes.episode.RUNNING_EPISODE`, see :func:`replan.graphs.shared_graph`)."""
    if model is RUNNING_EPISODE and tools is RUNNING_EPISODE:
        return running
    return fixed(*agent_inputs(model, tools))


__all__ = ["agent_inputs", "input_source"]
