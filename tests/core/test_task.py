"""Task: what travels between layers has typed fields; old stored tasks (metadata keys) load
into them, and suite-internal notes stay in metadata."""

from __future__ import annotations

import json

from replan.core.task import Task


def _stored(**meta: object) -> dict:
    return {
        "task_id": "t-P3",
        "suite": "toolmaze",
        "query": "q",
        "tools": [],
        "metadata": meta,
    }


def test_legacy_ground_truth_keys_load_into_the_fields():
    t = Task.model_validate(_stored(round_gt="7", funcall_times_gt=6, plan="{}"))
    assert (t.optimal_rounds, t.min_calls) == (7, 6)
    assert t.metadata == {"plan": "{}"}
    assert "round_gt" not in t.model_dump_json()


def test_the_field_wins_over_a_legacy_key():
    t = Task.model_validate({**_stored(round_gt=9), "optimal_rounds": 4})
    assert t.optimal_rounds == 4 and t.min_calls is None and t.metadata == {}


def test_an_old_toolmaze_task_loads_into_the_typed_fields():
    implicit = {"tax": {"field": "income_tax", "kind": "value_x1000", "value": 78020.46}}
    paths = [{"tools": ["a", "tax"], "plan": {"tasks": []}}, {"tools": ["b"], "plan": {}}]
    t = Task.model_validate(
        _stored(
            base_id="t",
            victim_tools=["tax", "tax2"],
            implicit=implicit,
            min_calls_after_fault=3,
            min_calls_after_fault_by_victim={"tax": 3, "tax2": 2},
            rounds_counting="tool-call waves (no response round)",
            paths=paths,
            victim_node="n2",
        )
    )
    assert t.base_id == "t"
    assert t.faults.victim_tools == ["tax", "tax2"]
    assert t.faults.implicit == implicit
    assert t.faults.min_calls_after_fault == 3
    assert t.faults.min_calls_after_fault_by_victim == {"tax": 3, "tax2": 2}
    assert t.valid_paths == [["a", "tax"], ["b"]]  # the paths' tool sequences, when unset
    assert t.rounds_include_response is False and t.replan_point is None
    # the suite's own notes stay; nothing moved is kept twice
    assert t.metadata == {"paths": paths, "victim_node": "n2"}
    assert Task.model_validate(t.model_dump()) == t


def test_an_old_pararecover_task_loads_into_the_typed_fields():
    tools = [{"name": "measure", "description": "d", "parameters": {}, "required": []}]
    t = Task.model_validate(
        {
            **_stored(
                rounds_executed=2,
                calls_executed=5,
                rounds_include_response=True,
                rounds_counting="tool-call waves + 1 response round (upstream round_gt)",
                tool_list=tools,
                plan="{}",
            ),
            "suite": "pararecover",
        }
    )
    assert t.replan_point is not None
    assert (t.replan_point.rounds_executed, t.replan_point.calls_executed) == (2, 5)
    assert t.rounds_include_response is True
    assert t.tool_specs == tools
    assert t.base_id == "t-P3"  # no stored base id: the task id
    # no last wave stored: a plan note, not a start state (a start state has both)
    assert t.metadata == {"plan": "{}"} and not t.replan_point.starts_mid_run


def test_an_old_synth_task_loads_its_start_state_into_the_replan_point():
    # worked out by hand from the stored keys: node 1 ran cleanly, node 2 failed in the last
    # wave; only node 1's output is one a later reference may bind to
    t = Task.model_validate(
        {
            **_stored(),
            "suite": "pararecover-synth",
            "replan_point": {"rounds_executed": 2},
            "metadata": {
                "plan": {"tasks": [{"id": "root"}]},
                "fun_call": [{"name": "b", "arguments": {"x": 1}, "results": "Error: no"}],
                "bindings": {"1": {"v": 3}, "2": "Error: no"},
                "executed_ok": {"1": True, "2": False},
                "state_after_history": {"collections": {}, "version": 4},
                "error_types": ["Parameter_Error"],
            },
        }
    )
    p = t.replan_point
    assert p is not None and p.rounds_executed == 2 and p.calls_executed == 2
    assert json.loads(p.plan) == {"tasks": [{"id": "root"}]}
    assert [(c.name, c.results) for c in p.last_wave] == [("b", "Error: no")]
    assert p.outputs == {"1": {"v": 3}}
    assert p.state == {"collections": {}, "version": 4}
    assert t.metadata == {"error_types": ["Parameter_Error"]}
    assert Task.model_validate(t.model_dump()) == t


def test_a_task_without_legacy_keys_is_untouched():
    data = {**_stored(plan="x"), "optimal_rounds": 3, "min_calls": 2, "base_id": "b"}
    t = Task.model_validate(data)
    assert t.model_dump(include={"optimal_rounds", "min_calls", "base_id", "metadata"}) == {
        "optimal_rounds": 3,
        "min_calls": 2,
        "base_id": "b",
        "metadata": {"plan": "x"},
    }
    assert t.faults.victim_tools == [] and t.faults.implicit == {} and t.tool_specs == []
