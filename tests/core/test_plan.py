import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replan.core.plan import ParseFailure, Plan, exact_reference, split_reference


def _dag(*nodes):
    return json.dumps({"tasks": list(nodes)})


ROOT = {"id": "root", "desc": "q", "dep": [], "status": True}
RESP = {"id": "response", "desc": "answer", "dep": ["1"], "status": False}
N1 = {
    "id": "1",
    "name": "search_flights",
    "para": {"origin": "LIS"},
    "dep": ["root"],
    "status": False,
}


def test_parses_every_plan_in_the_sample(sample_files):
    n = 0
    for path in sample_files:
        for line in path.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            plan = Plan.parse(rec["plan"])
            assert isinstance(plan, Plan), (path.name, rec["id"], plan)
            assert plan.get("root") is not None and plan.get("response") is not None
            n += 1
    assert n == 85


@pytest.mark.parametrize(
    "text",
    [
        "<thought>first search</thought>\n```json\n" + _dag(ROOT, N1, RESP) + "\n```",
        "Thought: I will search.\n" + _dag(ROOT, N1, RESP),
        _dag(ROOT, N1, RESP).replace("]}", ",]}"),  # trailing comma
    ],
)
def test_accepts_what_models_write(text):
    plan = Plan.parse(text)
    assert isinstance(plan, Plan)
    assert plan.node("1").args == {"origin": "LIS"}
    assert plan.node("1").tool == "search_flights"


def test_thought_is_kept():
    plan = Plan.parse("<thought>check stock first</thought>" + _dag(ROOT, N1, RESP))
    assert plan.thought == "check stock first"


def test_para_shapes():
    as_list_of_json = dict(N1, para=['{"origin": "LIS", "date": "2026-12-03"}'])
    positional = dict(N1, para=["LIS", "KIX"])
    empty = dict(N1, para="")
    for node, args, pos in [
        (as_list_of_json, {"origin": "LIS", "date": "2026-12-03"}, None),
        (positional, {}, ["LIS", "KIX"]),
        (empty, {}, None),
    ]:
        plan = Plan.parse(_dag(ROOT, node, RESP))
        assert plan.node("1").args == args
        assert plan.node("1").positional == pos


@pytest.mark.parametrize(
    ("nodes", "code"),
    [
        ([ROOT, dict(N1, dep=["2"]), {"id": "2", "name": "x", "dep": ["1"]}, RESP], "cycle"),
        ([ROOT, N1, N1, RESP], "duplicate_id"),
        ([ROOT, dict(N1, dep=["9"]), RESP], "unknown_dep"),
        ([ROOT, dict(N1, name="a"), dict(N1, id="2", name="b")], "no_response"),
        ([], "no_tasks"),
    ],
)
def test_rejects_with_reason(nodes, code):
    res = Plan.parse(_dag(*nodes))
    assert isinstance(res, ParseFailure)
    assert res.code == code
    assert res.reason


def test_only_root_and_response_is_no_tasks():
    res = Plan.parse(_dag(ROOT, dict(RESP, dep=["root"])))
    assert isinstance(res, ParseFailure) and res.code == "no_tasks"


@given(st.text(max_size=300))
def test_never_raises(text):
    res = Plan.parse(text)
    assert isinstance(res, (Plan, ParseFailure))


def test_unnamed_final_node_becomes_response():
    nodes = [ROOT, N1, {"id": "6", "name": "", "para": {}, "desc": "reply", "dep": ["1"]}]
    plan = Plan.parse(_dag(*nodes))
    assert isinstance(plan, Plan)
    assert plan.node("response").deps == ["1"]


def test_frontier_layers_depth():
    nodes = [
        ROOT,
        {"id": "1", "name": "a", "dep": ["root"]},
        {"id": "2", "name": "b", "dep": ["root"]},
        {"id": "2.1", "name": "c", "dep": ["2"]},
        {"id": "3", "name": "d", "dep": ["1", "2.1"]},
        {"id": "response", "dep": ["3"]},
    ]
    plan = Plan.parse(_dag(*nodes))
    assert plan.frontier() == ["1", "2"]
    assert plan.frontier(done={"1", "2"}) == ["2.1"]
    assert plan.call_layers() == [["1", "2"], ["2.1"], ["3"]]
    assert plan.depth == 3


def test_references_with_dotted_ids():
    assert split_reference("2.1.quote_id", ["2", "2.1"]).node == "2.1"
    ref = exact_reference("${2.1.items.0.sku}", ["2.1"])
    assert ref.node == "2.1" and ref.path == ["items", "0", "sku"]
    assert exact_reference("price is ${1.total}", ["1"]) is None


def test_round_trip_to_text():
    plan = Plan.parse(_dag(ROOT, N1, RESP))
    again = Plan.parse(plan.to_text())
    assert again.model_dump() == plan.model_dump()
