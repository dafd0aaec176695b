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
from replan.core.trace import EndReason, Step
from replan.env import replan_point_world
from replan.env.simulators import DeterministicSimulator, PendingCall, SimResult
from replan.env.tool_wrapper import FaultSession, SimulatorCalls, StepBudgetExceeded
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
BY_NAME = {t.name: t for t in TOOLS}


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


def test_the_simulator_side_numbers_judges_reports_and_budgets():
    events = []
    session = FaultSession(
        simulator=SimulatorCalls(DeterministicSimulator(TOOLS), BY_NAME),
        first_index=3,
        round=2,
        observe=lambda event, **f: events.append((event, f["index"], f["node"])),
    )
    calls = [
        PendingCall(node="1", tool="fetch", args={"x": 1}),
        PendingCall(node="2", tool="fetch", args={}),  # x is required
    ]
    results = session.wave(calls, {})
    assert [r.ok for r in results] == [True, False]
    assert [(s.index, s.round, s.call.node_id) for s in session.steps] == [(3, 2, "1"), (4, 2, "2")]
    assert session.steps[0].verdict.ok and isinstance(session.steps[0].observation["value"], float)
    bad = session.steps[1]
    assert bad.verdict.code.value == "missing_param" and bad.verdict.param == "x"
    assert bad.observation.startswith("Error:")
    assert events == [("call", 3, "1"), ("call", 4, "2"), ("verdict", 3, "1"), ("verdict", 4, "2")]

    class Silent:  # a simulator that gives no verdict: the tool list judges the call
        def run(self, calls, executed):
            return [SimResult(ok=True, result={"value": 1.0}) for _ in calls]

    quiet = FaultSession(simulator=SimulatorCalls(Silent(), BY_NAME))
    got = quiet.wave([PendingCall(node="1", tool="fetch_all", args={})], {})
    assert quiet.steps[0].verdict.code.value == "unknown_tool"
    assert got[0].verdict == quiet.steps[0].verdict

    capped = FaultSession(simulator=SimulatorCalls(Silent(), BY_NAME), max_steps=1)
    with pytest.raises(StepBudgetExceeded):
        capped.wave(calls, {})
    assert capped.budget_hit and capped.steps == []
    with pytest.raises(TypeError, match="no simulator"):
        FaultSession().wave(calls, {})
