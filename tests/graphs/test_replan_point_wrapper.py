"""The replan-point run (ParaRecover) executes its calls through the one tool wrapper: the
session's simulator side judges, runs and records each call of a wave, and the episode's steps
after the replan point are exactly what the sessions recorded, as a ReAct tool node's are."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage

from replan.core.tools import ToolSpec
from replan.env.simulators import DeterministicSimulator, PendingCall, SimResult
from replan.env.tool_wrapper import FaultSession, SimulatorCalls, StepBudgetExceeded
from replan.graphs import replan_point as rp
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


class _Echo:
    """A replanner that hands back a fixed text."""

    def __init__(self, text: str):
        self.text = text

    def invoke(self, messages):
        return AIMessage(content=self.text)


class _Counting:
    """A simulator that passes each wave to ``inner`` and keeps what it was asked and answered."""

    def __init__(self, inner):
        self.inner = inner
        self.waves: list[list[tuple[PendingCall, SimResult]]] = []

    def run(self, calls, executed):
        out = self.inner.run(calls, executed)
        self.waves.append(list(zip(calls, out, strict=True)))
        return out


def test_a_replan_point_episode_records_its_calls_through_the_wrapper(monkeypatch):
    good, _ = pr.load_instances(PARARECOVER_SAMPLE / "LEVEL-1/LEVEL-1_real_rollout.jsonl")
    inst = next(i for i in good if i.id == 16)  # its own plan again: three waves, the last rejected
    task = pr.instance_to_task(inst)
    start = pr.start_from_task(task)
    sessions: list[FaultSession] = []
    wave = FaultSession.wave

    def spy(self, calls, executed):
        sessions.append(self)
        return wave(self, calls, executed)

    monkeypatch.setattr(FaultSession, "wave", spy)
    sim = _Counting(pr.default_simulator(start))
    ep = rp.replay_task(task, _Echo(inst.plan_text), simulator=sim)

    given = len(start.last_wave)
    assert [s.round for s in ep.steps[:given]] == [1] * given  # the replan point's wave
    ran = ep.steps[given:]
    assert len(sim.waves) == 3 and [s.verdict.ok for s in ran] == [True, True, False]
    # every call the simulator ran went through a session, one session per wave, and the
    # episode records exactly what the sessions recorded
    assert len(sessions) == len(sim.waves)
    assert all(s.simulator is not None and s.simulator.simulator is sim for s in sessions)
    assert ran == [step for s in sessions for step in s.steps]
    asked = [(w, c, r) for w, calls in enumerate(sim.waves) for c, r in calls]
    assert len(ran) == len(asked)
    for i, (step, (w, c, r)) in enumerate(zip(ran, asked, strict=True)):
        assert step.index == given + i and step.round == 2 + w
        assert (step.call.tool, step.call.node_id, step.call.args) == (c.tool, c.node, c.args)
        assert step.observation == r.result and step.verdict == r.verdict
    assert ep.usage.tool_calls == len(ep.steps)


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
