"""What a ToolMaze checker pins (issue 29 §3: a run that skips a step must not pass).

Hand-built path runs, so every expected value is read off the outputs written below, not
computed by the code under test. The shape is goal C1-008 of ``toolmaze`` v3: ``buy_now``
returns the order's total, and ``get_order_status`` (a final call without effects) returns
the same total plus facts of its own. Checked by the total alone, a run that leaves
``get_order_status`` out passes.
"""

from __future__ import annotations

from replan.core.plan import RESPONSE, ROOT, Plan, PlanNode
from replan.env.world import WorldState
from replan.suites.toolmaze.derive_checker import derive_checker, yielders
from replan.suites.toolmaze.stages import PathRun

BUY = {"order_id": "ord-1a2b3c4d", "total_usd": 212.97, "status": "placed"}
STATUS = {"order_id": "ord-1a2b3c4d", "total_usd": 212.97, "eta": "2026-12-08"}


def _run(status_out, *, shop_record=None) -> PathRun:
    plan = Plan(
        nodes=[
            PlanNode(id=ROOT),
            PlanNode(id="1", tool="buy_now", args={"sku": "SKU-1"}, deps=[ROOT]),
            PlanNode(
                id="2", tool="get_order_status", args={"order_id": "${1.order_id}"}, deps=["1"]
            ),
            PlanNode(id=RESPONSE, deps=["2"]),
        ]
    )
    state = WorldState(collections={"shop_orders": {"ord-1a2b3c4d": shop_record or {}}})
    return PathRun(
        plan=plan,
        tools=["buy_now", "get_order_status"],
        outputs={"1": BUY, "2": status_out},
        state=state,
        ok=True,
    )


EFFECTS = {"buy_now": True, "get_order_status": False}


def test_yielders_are_the_calls_whose_output_states_the_value():
    run = _run(STATUS)
    assert yielders(run, 212.97) == ["1", "2"]
    assert yielders(run, "2026-12-08") == ["2"]
    assert yielders(run, 99.0) == []


def test_the_final_call_is_checked_by_a_fact_only_it_yields():
    """The total is the higher-ranked candidate (a float), but buy_now states it too: the
    fact required of get_order_status is its own eta."""
    runs = [_run(STATUS), _run(STATUS)]
    checker, facts, problem = derive_checker(runs, WorldState(), {}, EFFECTS)
    assert problem is None and checker is not None
    assert facts[0] == ("2026-12-08", "get_order_status:eta")  # the final call's own fact
    assert "2026-12-08" in checker.required_facts


def test_a_final_call_with_nothing_of_its_own_makes_no_checker():
    """Without the eta, everything get_order_status states, buy_now states too: no checker
    can tell a run without it, so the task is regenerated."""
    status = {k: v for k, v in STATUS.items() if k != "eta"}
    checker, _, problem = derive_checker([_run(status)], WorldState(), {}, EFFECTS)
    assert checker is None
    assert problem and "only it yields" in problem


def test_a_list_field_of_a_record_is_checked():
    """A reaction stored as a list on the message record (guided C1-008's add_slack_reaction)
    was dropped from the required fields, so a run without the reaction passed."""
    rec = {"text": "Dentist appointment", "reactions": [{"name": "white_check_mark"}]}
    runs = [_run(STATUS, shop_record=rec)]
    checker, _, problem = derive_checker(runs, WorldState(), {}, EFFECTS)
    assert problem is None and checker is not None
    (required,) = checker.required_records
    assert required.where["reactions"] == [{"name": "white_check_mark"}]
