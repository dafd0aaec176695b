"""What a node reads of its episode (the chat model and the World), and where it reads it from.

A graph compiled for one episode reads the inputs it was built with (:func:`fixed`). A built-in
design's graph is compiled once per design and configuration in a process
(:func:`replan.graphs.shared_graph`) and reads the inputs of the episode running now (:data:`running`), which :func:`episode_inputs` sets
around the run. LangGraph copies the caller's context into every node's thread, so episodes
that run at the same time through one compiled graph each see their own model and world.

Why: compiling a design's graph (LangGraph inspects every node function and the state schema)
cost about a quarter of a simulated episode's CPU, and about a third of a ReAct episode's
against an OpenAI-compatible server; the graph's shape never depends on the episode.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel

from replan.env.world import World

T = TypeVar("T")


class EpisodeInputs:
    """One episode's model and world, and what nodes derive from them once per episode (the
    model with the world's tools bound, the wave-ordered view of the world)."""

    def __init__(self, model: BaseChatModel, world: World):
        self.model = model
        self.world = world
        self._derived: dict[str, Any] = {}
        self._lock = threading.Lock()

    def once(self, key: str, make: Callable[[], T]) -> T:
        """``make()`` the first time ``key`` is asked for in this episode, then the same value
        (a wave's parallel nodes ask at once: they must share one ordered view)."""
        with self._lock:
            if key not in self._derived:
                self._derived[key] = make()
            return self._derived[key]


#: where a node gets its episode's inputs: called each time the node runs
InputSource = Callable[[], EpisodeInputs]

_RUNNING: ContextVar[EpisodeInputs | None] = ContextVar("replan_episode_inputs", default=None)


def fixed(model: BaseChatModel, world: World) -> InputSource:
    """The source of a graph compiled for one episode: always these inputs."""
    inputs = EpisodeInputs(model, world)
    return lambda: inputs


def running() -> EpisodeInputs:
    """The inputs of the episode running now (a graph compiled once per run reads these)."""
    inputs = _RUNNING.get()
    if inputs is None:
        raise RuntimeError(
            "this graph was compiled once for many episodes and needs the episode's model and "
            "world: run it through replan.graphs.run_episode, or compile it for one episode "
            "with build_graph(design, model, tools)"
        )
    return inputs


@contextmanager
def episode_inputs(inputs: EpisodeInputs) -> Iterator[EpisodeInputs]:
    """Run a shared graph inside this block to give its nodes these inputs."""
    token = _RUNNING.set(inputs)
    try:
        yield inputs
    finally:
        _RUNNING.reset(token)


class _Running:
    """The marker a builder gets for ``model`` and ``tools`` when its graph is compiled once
    per run (see :func:`replan.graphs.inputs.input_source`)."""

    def __repr__(self) -> str:
        return "RUNNING_EPISODE"


#: passed as both ``model`` and ``tools`` to a builder compiling a graph shared by episodes
RUNNING_EPISODE: Any = _Running()


__all__ = [
    "RUNNING_EPISODE",
    "EpisodeInputs",
    "InputSource",
    "episode_inputs",
    "fixed",
    "running",
]
