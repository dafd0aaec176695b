"""The agent designs as compiled LangGraph graphs, and running one episode of one design.

One builder per design (:mod:`.react`, :mod:`.plan_conditioned`, :mod:`.dual_loop`,
:mod:`.replanner_loop`), registered by name (:mod:`.registry`); running one episode of a design
(:mod:`.episode`: :func:`run_episode` / :func:`arun_episode`); running a user's own compiled
agent on a task (:mod:`.custom`).
"""

from __future__ import annotations

from typing import Any

from replan.graphs.custom import run_compiled_agent
from replan.graphs.dual_loop import build_dual_loop
from replan.graphs.episode import (
    EventHandler,
    arun_episode,
    build_graph,
    episode_from_state,
    graph_input,
    run_episode,
    runnable_config,
    shared_graph,
)
from replan.graphs.plan_conditioned import build_plan_conditioned
from replan.graphs.react import build_react
from replan.graphs.registry import DESIGN_REGISTRY, Design, design, design_names, get_design
from replan.graphs.replanner_loop import build_replanner_loop
from replan.nodes.config import AgentConfig, RetrySettings


def __getattr__(name: str) -> Any:
    """``DESIGNS``: the registered designs' names when asked (plugins included), kept for
    ``from replan.graphs import DESIGNS``; :func:`design_names` is the call."""
    if name == "DESIGNS":
        return tuple(design_names())
    raise AttributeError(f"module 'replan.graphs' has no attribute {name!r}")


__all__ = [
    "DESIGNS",
    "DESIGN_REGISTRY",
    "AgentConfig",
    "Design",
    "EventHandler",
    "RetrySettings",
    "arun_episode",
    "build_dual_loop",
    "build_graph",
    "build_plan_conditioned",
    "build_react",
    "build_replanner_loop",
    "design",
    "design_names",
    "episode_from_state",
    "get_design",
    "graph_input",
    "run_compiled_agent",
    "run_episode",
    "runnable_config",
    "shared_graph",
]
