"""The perturbation engine: activation by group, transient vs permanent, explicit vs implicit."""

from __future__ import annotations

from typing import Any

import pytest

from replan.core.task import PerturbationProfile, Task
from replan.core.tools import ToolSpec
from replan.core.trace import Call
from replan.env.perturb import (
    EXPLICIT_KINDS,
    ImplicitSpec,
    Perturber,
    corrupt,
    explicit_observation,
    injector_for,
    plan_implicit,
)
from replan.env.world import World


def _tool(name: str, group: str | None = None) -> ToolSpec:
    return ToolSpec(
        name=name,
        parameters={"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]},
        returns={
            "type": "object",
            "properties": {
                "price": {"type": "number", "minimum": 0},
                "stock": {"type": "integer"},
                "day": {"type": "string", "format": "date"},
            },
            "required": ["price", "stock", "day"],
        },
        group=group,
        implementation=lambda args, ctx: {"price": 12.5, "stock": args["x"], "day": "2026-12-03"},
    )


A, B, C = _tool("a", "g"), _tool("b", "g"), _tool("c")
TOOLS = {t.name: t for t in (A, B, C)}


def _world(profile: PerturbationProfile, group_tools=(), implicit=None) -> World:
    return World(TOOLS, faults=Perturber(profile, group_tools=group_tools, implicit=implicit))


def _calls(world: World, names: list[str]) -> list[Any]:
    return [world.execute(Call(tool=n, args={"x": 3}, node_id=str(i))) for i, n in enumerate(names)]


def test_explicit_transient_hits_only_the_first_invocation():
    w = _world(PerturbationProfile(mode="P1", victim="c", kind="http_503"))
    res = _calls(w, ["c", "c", "c"])
    assert [r.perturbation is not None for r in res] == [True, False, False]
    assert res[0].ok  # an injected fault is not a verdict against the agent
    assert res[0].observation["status"] == 503
    assert res[1].observation == {"price": 12.5, "stock": 3, "day": "2026-12-03"}


def test_explicit_permanent_hits_every_invocation_and_changes_no_state():
    w = _world(PerturbationProfile(mode="P2", victim="c", kind="timeout"))
    before = w.state
    res = _calls(w, ["c", "c"])
    assert all(r.perturbation is not None and r.perturbation.permanent for r in res)
    assert [r.perturbation.invocation for r in res] == [1, 2]
    assert res[1].observation["error"] == "timeout"
    assert w.state is before


def test_group_activation_first_called_tool_is_the_victim_and_no_other():
    prof = PerturbationProfile(mode="P2", victim="a", group="g", kind="http_404")
    # the agent calls b first: b becomes the victim, a (the named one) is never perturbed
    w = _world(prof, group_tools=["a", "b"])
    res = _calls(w, ["c", "b", "a", "b", "a"])
    hit = [r.perturbation.victim if r.perturbation else None for r in res]
    assert hit == [None, "b", None, "b", None]


def test_implicit_fault_is_schema_valid_and_carries_the_sentinel():
    spec = ImplicitSpec(field="price", kind="value_x1000", value=12500.37)
    prof = PerturbationProfile(
        mode="P3", victim="c", kind=spec.kind, field="price", sentinel=spec.value
    )
    w = _world(prof, implicit={"c": spec})
    first, second = _calls(w, ["c", "c"])
    assert first.observation["price"] == 12500.37
    assert first.perturbation.sentinel == 12500.37 and not first.perturbation.explicit
    assert C.check_output(first.observation).ok
    assert first.output["price"] == 12.5  # the clean output is kept beside the lie
    assert second.perturbation is None and second.observation["price"] == 12.5


def test_plan_implicit_prefers_the_given_field_and_stays_valid():
    out = {"price": 12.5, "stock": 4, "day": "2026-12-03"}
    for field in ("price", "stock", "day"):
        spec = plan_implicit(C, out, salt=7, preferred=[field])
        assert spec is not None and spec.field == field
        bad = corrupt(out, spec)
        assert bad[field] != out[field] and C.check_output(bad).ok
    day = plan_implicit(C, out, salt=7, preferred=["day"])
    assert abs(int(day.value[:4]) - 2026) >= 50  # decades away
    stock = plan_implicit(C, out, salt=7, preferred=["stock"])
    assert stock.value < 0  # a negative stock (the schema allows negatives)
    price = plan_implicit(C, out, salt=7, preferred=["price"])
    assert price.value >= 12.5 * 1000  # the schema forbids negatives: price x1000
    assert out == {"price": 12.5, "stock": 4, "day": "2026-12-03"}  # input untouched


def test_explicit_observations_are_machine_readable():
    for kind in EXPLICIT_KINDS:
        obs = explicit_observation(kind, "c")
        assert obs == {} if kind == "empty" else obs["error"] == kind
    with pytest.raises(ValueError, match="unknown explicit fault kind"):
        explicit_observation("http_418", "c")


def test_injector_for_np_is_none_and_group_needs_tools():
    t = Task(task_id="t", suite="s", query="q", tools=["c"], mode="NP")
    assert injector_for(t) is None
    with pytest.raises(ValueError, match="no group tools"):
        Perturber(PerturbationProfile(mode="P1", victim="a", group="g", kind="http_404"))


def test_same_task_same_faults_whatever_the_agent_does():
    """Two agents that call different things still see identical injected responses."""
    spec = ImplicitSpec(field="price", kind="value_x1000", value=999.5)
    prof = PerturbationProfile(mode="P4", victim="a", group="g", kind="value_x1000")
    w1 = _world(prof, group_tools=["a", "b"], implicit={"a": spec, "b": spec})
    w2 = _world(prof, group_tools=["a", "b"], implicit={"a": spec, "b": spec})
    r1 = _calls(w1, ["c", "a"])[-1]
    r2 = _calls(w2, ["a"])[-1]
    assert r1.observation == r2.observation and r1.perturbation == r2.perturbation
