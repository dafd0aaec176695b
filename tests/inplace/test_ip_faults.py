"""Seeded fault schedules and output corruption on a user's own tools."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import ToolMessage
from pydantic import BaseModel, Field

from replan.env.tool_faults import (
    ANY_TOOL,
    FaultSchedule,
    InjectedTimeout,
    InjectedToolError,
    corrupt_output,
    fault_exception,
)

TOOLS = ("a", "b", "c")


def test_explicit_kind_and_salt_depend_only_on_task_mode_seed() -> None:
    s = FaultSchedule(mode="P1", target="a", tools=TOOLS, seed=7)
    kinds = {s.for_episode("t1", k).profile.kind for k in range(20)}
    assert len(kinds) > 1  # the draw varies with the seed index ...
    for k in range(5):  # ... and is the same every time it is asked (every design meets it)
        assert s.for_episode("t1", k).profile.kind == s.for_episode("t1", k).profile.kind
        assert s.for_episode("t1", k).salt == s.for_episode("t1", k).salt
    assert s.for_episode("t1", 0).salt != s.for_episode("t2", 0).salt


def test_transient_fires_once_permanent_always() -> None:
    for mode, expect in (("P1", [True, False, False]), ("P2", [True, True, True])):
        f = FaultSchedule(mode=mode, target="a", tools=TOOLS, kind="http_503").for_episode()
        assert [f.intercept("a", {}) is not None for _ in range(3)] == expect
        assert f.intercept("b", {}) is None  # never a tool other than the victim


def test_group_activation_first_member_called_is_the_victim() -> None:
    s = FaultSchedule(mode="P2", target="rates", groups={"rates": ["b", "c"]}, tools=TOOLS)
    f = s.for_episode()
    assert f.intercept("a", {}) is None  # not in the group
    p = f.intercept("c", {})
    assert p is not None and p.victim == "c" and p.group == "rates"
    assert f.intercept("b", {}) is None  # the other member is the alternative: never faulted
    assert f.intercept("c", {}) is not None


def test_no_target_means_the_first_tool_called() -> None:
    f = FaultSchedule(mode="P1", tools=TOOLS, kind="timeout").for_episode()
    assert f.profile.group == ANY_TOOL
    assert f.intercept("b", {}).victim == "b"
    assert f.intercept("a", {}) is None


def test_bad_schedules_name_the_problem() -> None:
    with pytest.raises(ValueError, match="unknown mode 'P9'"):
        FaultSchedule(mode="P9")
    with pytest.raises(ValueError, match="unknown explicit kind"):
        FaultSchedule(kind="http_418")
    with pytest.raises(ValueError, match="neither a tool"):
        FaultSchedule(target="zzz", tools=TOOLS).victims()
    with pytest.raises(ValueError, match="must list its tools"):
        FaultSchedule(groups={"g": "a"})


def test_explicit_exceptions_are_tool_exceptions() -> None:
    from langchain_core.tools import ToolException

    e = fault_exception("http_429", "a")
    assert isinstance(e, InjectedToolError) and isinstance(e, ToolException)
    assert e.status == 429 and "429" in str(e)
    t = fault_exception("timeout", "a")
    assert isinstance(t, InjectedTimeout) and isinstance(t, TimeoutError)
    assert fault_exception("error", "a").status == 500


def test_corrupt_dict_prefers_the_named_field_and_keeps_the_rest() -> None:
    out = {"id": "C-1", "total": 182.65, "count": 2}
    got = corrupt_output(out, salt=5, field="total")
    assert got.field == "total" and got.output["total"] == got.sentinel != 182.65
    assert got.output["id"] == "C-1" and got.output["count"] == 2
    assert out["total"] == 182.65  # the clean output is not mutated


def test_corrupt_json_string_text_and_numbers() -> None:
    got = corrupt_output(json.dumps({"price": 12.5}), salt=3)
    assert json.loads(got.output)["price"] == got.sentinel != 12.5
    text = corrupt_output("Shipped on 2026-03-14, 3 parcels", salt=3)
    assert text.kind == "date_decades_away" and str(text.sentinel) in text.output
    assert "2026-03-14" not in text.output and text.output.endswith(", 3 parcels")
    num = corrupt_output("The rate is 1.0842 today", salt=3)
    assert str(num.sentinel) in num.output and "1.0842" not in num.output
    assert corrupt_output("no digits here", salt=3) is None
    assert corrupt_output(41, salt=3).sentinel != 41


class Quote(BaseModel):
    sku: str
    price: float = Field(ge=0)


def test_corrupt_pydantic_stays_schema_valid() -> None:
    got = corrupt_output(Quote(sku="X-1", price=9.99), salt=11)
    assert isinstance(got.output, Quote)
    assert got.output.price >= 0  # a negative price would violate ge=0: not chosen
    assert got.output.model_dump() != {"sku": "X-1", "price": 9.99}


def test_corrupt_tool_message_content_only() -> None:
    msg = ToolMessage(content='{"total": 5.5}', tool_call_id="c1", name="a")
    got = corrupt_output(msg, salt=1)
    assert isinstance(got.output, ToolMessage) and got.output.tool_call_id == "c1"
    assert json.loads(got.output.content)["total"] == got.sentinel
