"""Task: G and c* have one name each, the typed fields; old stored tasks load into them."""

from __future__ import annotations

from replan.core.task import Task


def _stored(**meta: object) -> dict:
    return {
        "task_id": "t",
        "suite": "pararecover-synth",
        "query": "q",
        "tools": [],
        "metadata": meta,
    }


def test_legacy_metadata_keys_load_into_the_fields():
    t = Task.model_validate(_stored(round_gt="7", funcall_times_gt=6, rounds_executed=2))
    assert (t.optimal_rounds, t.min_calls) == (7, 6)
    assert t.metadata == {"rounds_executed": 2}
    assert "round_gt" not in t.model_dump_json()


def test_the_field_wins_over_a_legacy_key():
    t = Task.model_validate({**_stored(round_gt=9), "optimal_rounds": 4})
    assert t.optimal_rounds == 4 and t.min_calls is None and t.metadata == {}


def test_a_task_without_legacy_keys_is_untouched():
    data = {**_stored(rounds_executed=1), "optimal_rounds": 3, "min_calls": 2}
    assert Task.model_validate(data).model_dump(
        include={"optimal_rounds", "min_calls", "metadata"}
    ) == {
        "optimal_rounds": 3,
        "min_calls": 2,
        "metadata": {"rounds_executed": 1},
    }
