"""No design reads what the fault injector recorded: it reacts only to what the tool returned.

Every ``Step.perturbation`` (the injector's record: which fault, explicit or not, its sentinel)
is scrambled right after the tool returns — a faulted step gets the opposite record, a clean
one gets a fake explicit fault. The runs must not change: same calls, verdicts, observations,
plans, answer and end reason. (Scoring reads the record, so success is not compared.)
"""

from __future__ import annotations

from typing import Any

import pytest

from replan.core.trace import Episode, Perturbation, Step
from replan.env import tool_wrapper
from replan.env.perturb import injector_for
from replan.graphs import DESIGNS, run_episode
from replan.models import make_model
from replan.suites import load_suite


def _scrambled(step: Step) -> Step:
    p = step.perturbation
    if p is None:
        fake = Perturbation(
            mode="P2",
            explicit=True,
            permanent=True,
            kind="http_503",
            victim=step.call.tool,
            sentinel="scrambled-sentinel",
            invocation=7,
        )
    else:
        fake = Perturbation(
            mode="P3" if p.explicit else "P1",
            explicit=not p.explicit,
            permanent=not p.permanent,
            kind="scrambled",
            victim="no_such_tool",
            group=None,
            sentinel=None,
            invocation=p.invocation + 5,
        )
    return step.model_copy(update={"perturbation": fake})


def _run(design: str, task: Any) -> Episode:
    model = make_model("simulated:novice", task=task, seed=1)
    return run_episode(design, model, task, faults=injector_for(task), seed=1)


def _trace(ep: Episode) -> dict[str, Any]:
    return {
        "steps": [
            (
                s.round,
                s.call.tool,
                s.call.args,
                s.call.node_id,
                s.verdict.code.value,
                s.observation,
            )
            for s in ep.steps
        ],
        "plans": [(p.source, p.round, p.text) for p in ep.plans],
        "answer": ep.final_answer,
        "end": ep.end_reason,
    }


def _tasks() -> list[Any]:
    tasks = load_suite("toolmaze")
    out = []
    for level in ("C1", "C2", "C3", "C4"):
        bases = sorted({t.base_id for t in tasks if t.level == level})[:1]
        out += [t for t in tasks if t.base_id in bases and t.mode in ("P1", "P2", "P3", "P4")]
    return out


@pytest.mark.parametrize("design", DESIGNS)
def test_runs_do_not_change_when_the_injection_record_is_scrambled(
    design: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    tasks = _tasks()
    assert {t.mode for t in tasks} == {"P1", "P2", "P3", "P4"}
    plain = [_trace(_run(design, t)) for t in tasks]
    real_world_step = tool_wrapper._world_step
    real_record = tool_wrapper.FaultSession._record

    def world_step(*args: Any, **kw: Any) -> Step:
        return _scrambled(real_world_step(*args, **kw))

    def record(self: Any, pending: Any, verdict: Any, observation: Any, pert: Any) -> None:
        real_record(self, pending, verdict, observation, pert)
        with self._lock:
            self.steps[-1] = _scrambled(self.steps[-1])

    monkeypatch.setattr(tool_wrapper, "_world_step", world_step)
    monkeypatch.setattr(tool_wrapper.FaultSession, "_record", record)
    scrambled_eps = [_run(design, t) for t in tasks]
    # the patch took effect: every recorded step carries a scrambled record
    assert all(s.perturbation is not None for ep in scrambled_eps for s in ep.steps)
    assert any(s.perturbation.kind == "scrambled" for ep in scrambled_eps for s in ep.steps)
    for task, before, ep in zip(tasks, plain, scrambled_eps, strict=True):
        assert _trace(ep) == before, f"{design} on {task.task_id} read the injection record"
