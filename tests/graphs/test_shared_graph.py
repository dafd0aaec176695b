"""A built-in design's graph is compiled once and shared by episodes running at the same time.

The expected episodes come from the other route: each episode's own graph, compiled for its
model and world (``build_graph``, what every episode did before graphs were shared), run one at
a time.
"""

from __future__ import annotations

import asyncio
import functools

import pytest

import replan.graphs.episode as graphs
from replan.env import task_world
from replan.graphs import (
    arun_episode,
    build_graph,
    graph_input,
    run_episode,
    runnable_config,
    shared_graph,
)
from replan.models import make_model
from replan.nodes.config import AgentConfig
from replan.runner.experiment import fault_injector
from replan.suites import load_suite

DESIGNS = ("react", "plan_conditioned", "dual_loop", "replanner_loop")
TIMINGS = {"wall_time_s", "duration_s", "started_at", "episode_id"}


@functools.cache  # the suite is read once for the module's tests (they only read the tasks)
def _tasks() -> tuple:
    tasks = load_suite("toolmaze")
    # faulty and fault-free instances, a few levels: each mode's first two
    out = []
    for mode in ("NP", "P1", "P2", "P3", "P4"):
        out += [t for t in tasks if t.mode == mode][:2]
    return tuple(out)


def _plain(ep) -> dict:
    def clean(x):
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items() if k not in TIMINGS}
        if isinstance(x, list):
            return [clean(v) for v in x]
        return x

    data = clean(ep.model_dump(mode="json"))
    data["metadata"].pop("thread_id", None)
    return data


def _episode(design, task):
    """One episode of ``design`` on ``task`` as the runner plays it (a coroutine)."""
    model = make_model("simulated:competent", task=task, seed=0)
    return arun_episode(design, model, task, faults=fault_injector(task), config=AgentConfig())


async def _all_at_once(tasks) -> list:
    return await asyncio.gather(*[_episode(d, t) for d in DESIGNS for t in tasks])


def test_concurrent_episodes_through_shared_graphs_equal_their_own_graphs(monkeypatch):
    tasks = _tasks()
    graphs._SHARED.clear()
    together = asyncio.run(_all_at_once(tasks))
    # one compiled graph per design served all of them
    assert sorted(k[0] for k in graphs._SHARED) == sorted(DESIGNS)

    monkeypatch.setattr(graphs, "shared_graph", lambda *a, **k: None)  # each its own graph
    alone = [asyncio.run(_episode(d, t)) for d in DESIGNS for t in tasks]
    assert len(together) == len(alone) == len(DESIGNS) * len(tasks)
    assert sum(len(e.steps) for e in alone) > 0
    for a, b in zip(together, alone, strict=True):
        assert _plain(a) == _plain(b), (a.design, a.task_id)


def test_a_graph_is_shared_by_design_and_configuration():
    graphs._SHARED.clear()
    cfg = AgentConfig()
    assert shared_graph("react", cfg) is shared_graph("react", AgentConfig())
    assert shared_graph("react", cfg) is not shared_graph("dual_loop", cfg)
    assert shared_graph("react", cfg) is not shared_graph("react", AgentConfig(max_steps=3))


@pytest.mark.parametrize("design", DESIGNS)
def test_a_model_without_tool_calling_fails_before_any_call(design):
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    task = _tasks()[0]
    model = FakeListChatModel(responses=["never asked"])
    with pytest.raises(TypeError, match="does not support tool calling"):
        run_episode(design, model, task)
    with pytest.raises(TypeError, match="does not support tool calling"):
        build_graph(design, model, task_world(task))  # one episode's graph, as before
    assert model.i == 0  # no model call was made


def test_a_shared_graph_run_without_its_episode_says_how_to_run_it():
    task = _tasks()[0]
    graph = shared_graph("react", AgentConfig())
    w = task_world(task)
    with pytest.raises(RuntimeError, match="compiled once for many episodes"):
        graph.invoke(graph_input(task.query, w), runnable_config(AgentConfig()))


def test_a_plugin_design_is_compiled_for_each_episode():
    from replan.graphs.registry import DESIGN_REGISTRY, design

    @design("test_closes_over_its_inputs")
    def build(model, tools, config=None, *, checkpointer=None):
        return build_graph("react", model, tools, config, checkpointer=checkpointer)

    try:
        assert shared_graph("test_closes_over_its_inputs") is None
    finally:
        DESIGN_REGISTRY.unregister("test_closes_over_its_inputs")
