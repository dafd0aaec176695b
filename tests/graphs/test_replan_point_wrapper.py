"""The run from a replan point (ParaRecover) is the replanner_loop design's own graph, entered
at its replanner, and executes its calls through the one tool wrapper: a simulated world judges
and plays each call, and the steps after the replan point are exactly what the wrapper recorded,
as a ReAct tool node's are. There is one replanner graph."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
from replay_models import Echo

import replan
from replan.core.tools import ToolSpec
from replan.core.trace import Call, EndReason, Step
from replan.env import replan_point_world
from replan.env.simulators import SimulatedWorld
from replan.env.tool_wrapper import FaultSession, StepBudgetExceeded, WorldCalls
from replan.graphs import build_graph
from replan.graphs.episode import graph_input
from replan.nodes.config import AgentConfig
from replan.samples import PARARECOVER_SAMPLE
from replan.suites import pararecover as pr

TOOLS = [
    ToolSpec(
        name="fetch",
        parameters={"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]},
        returns={"type": "object", "properties": {"value": {"type": "number"}}},
    ),
]


def _sample_task(iid: int):
    good, _ = pr.load_instances(PARARECOVER_SAMPLE / "LEVEL-1/LEVEL-1_real_rollout.jsonl")
    inst = next(i for i in good if i.id == iid)
    return inst, pr.instance_to_task(inst)


def test_a_replan_point_run_goes_through_the_replanner_loop_graph(monkeypatch):
    """A ParaRecover task run with design replanner_loop is that design's compiled graph,
    entered at its replanner: the node names in the stream say so (no planner), and every call
    after the replan point is a step of the one tool wrapper (``FaultSession.step``)."""
    inst, task = _sample_task(16)  # its own plan again: three waves, the last rejected
    model = Echo(texts=[inst.plan_text])
    world = replan_point_world(task)
    graph = build_graph("replanner_loop", model, world, AgentConfig(**pr.PROTOCOL_BUDGETS))
    assert graph.name == "replanner_loop"
    recorded: list[Step] = []
    step = FaultSession.step

    def spy(self, call):
        out = step(self, call)
        recorded.append(out)
        return out

    monkeypatch.setattr(FaultSession, "step", spy)
    nodes: list[str] = []
    final: dict = {}
    inputs = {**graph_input(task.query, world), "replan_point": task.replan_point}
    for mode, chunk in graph.stream(inputs, stream_mode=["updates", "values"]):
        if mode == "updates":
            nodes += list(chunk)
        else:
            final = chunk
    assert nodes[:3] == ["start", "replan_point", "replanner"] and "planner" not in nodes
    assert nodes.count("replanner") == 4  # the one replan, then a pass per wave (no model)
    assert nodes.count("tool_agent") == 3 and "respond" not in nodes
    k = task.replan_point.rounds_executed
    given = len(task.replan_point.last_wave)
    steps = final["steps"]
    assert [s.round for s in steps[:given]] == [k] * given  # the replan point's wave
    ran = steps[given:]
    assert [s.verdict.ok for s in ran] == [True, True, False]
    assert [s.round for s in ran] == [k + 1, k + 2, k + 3]
    assert ran == sorted(recorded, key=lambda s: s.index)  # exactly what the wrapper recorded
    assert final["end_reason"] is EndReason.CALL_FAILED
    assert len(model.received) == 1  # one replan: the model is never asked again


def test_there_is_one_replanner_graph():
    """The replanner → parse → wave loop is built once: by the replanner_loop design, from the
    nodes of ``replan.nodes.frontier``; the replan-point graph of old is gone, and no graph
    module reads a suite."""
    assert importlib.util.find_spec("replan.graphs.replan_point") is None
    src = Path(replan.__file__).parent
    builders = []
    for path in src.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if re.search(r"add_node\(\s*[\"']replanner[\"']", text) or "make_replanner_node(" in text:
            builders.append(path.relative_to(src).as_posix())
    assert sorted(builders) == ["graphs/replanner_loop.py", "nodes/frontier.py"]
    frontier = (src / "nodes/frontier.py").read_text(encoding="utf-8")
    assert "StateGraph(" not in frontier  # the nodes only; the graph is the design's
    for path in (src / "graphs").rglob("*.py"):
        assert "replan.suites" not in path.read_text(encoding="utf-8"), path.name
    runner = (src / "runner/experiment.py").read_text(encoding="utf-8")
    assert "replay_task" not in runner and 'start == "replan_point"' not in runner


def test_a_simulated_world_judges_numbers_reports_and_budgets():
    """Tools with no implementation are world tools of a SimulatedWorld: the session numbers,
    judges (the simulator's ``check_call`` verdict), reports and budgets their calls as it does
    any world's; a call whose verdict is not ok does not run."""
    events = []
    world = SimulatedWorld(TOOLS)
    session = FaultSession(
        world=WorldCalls(world, bindings={}),
        first_index=3,
        round=2,
        observe=lambda event, **f: events.append((event, f["index"], f["node"])),
    )
    good = session.step(Call(tool="fetch", args={"x": 1}, node_id="1"))
    bad = session.step(Call(tool="fetch", args={}, node_id="2"))  # x is required
    assert [(s.index, s.round, s.call.node_id) for s in session.steps] == [(3, 2, "1"), (4, 2, "2")]
    assert good.verdict.ok and isinstance(good.observation["value"], float)
    assert bad.verdict.code.value == "missing_param" and bad.verdict.param == "x"
    assert bad.observation.startswith("Error:")
    assert events == [("call", 3, "1"), ("verdict", 3, "1"), ("call", 4, "2"), ("verdict", 4, "2")]
    # the same call gives the same output (a seeded simulator), and nothing changes state
    again = FaultSession(world=WorldCalls(world, bindings={})).step(
        Call(tool="fetch", args={"x": 1}, node_id="1")
    )
    assert again.observation == good.observation and world.state == world.initial_state
    unknown = FaultSession(world=WorldCalls(world)).step(Call(tool="fetch_all", args={}))
    assert unknown.verdict.code.value == "unknown_tool"
    capped = FaultSession(world=WorldCalls(world), max_steps=1)
    capped.step(Call(tool="fetch", args={"x": 1}))
    with pytest.raises(StepBudgetExceeded):
        capped.step(Call(tool="fetch", args={"x": 2}))
    assert capped.budget_hit and len(capped.steps) == 1
