"""The audit's rules, each from its ParaRecover Table 12 definition (issue 29 §4).

Every expected value here is worked out by hand from the small plan it checks, or counted from
the dataset's own tags with :mod:`json` (not through replan's loader or audit).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replan.core.plan import Plan
from replan.core.taxonomy import ErrorType as E
from replan.core.tools import ToolSpec
from replan.env.verifier import verify

HELDOUT = Path(__file__).parent / "data" / "pararecover-heldout"
HELDOUT_FILE = HELDOUT / "LEVEL-1_real_rollout.heldout.jsonl"

TOOLS = [
    {
        "name": "book",
        "parameters": {
            "city": {"type": "string", "description": "The city."},
            "date": {"type": "string", "description": "Check-in date in YYYY-MM-DD format."},
            "guests": {"type": "array", "description": "Guest names."},
            "notes": {"type": "array", "description": "Optional notes."},
        },
        "required": ["city", "date", "guests"],
    },
    {
        "name": "water",
        "parameters": {
            "plant": {"type": "object", "description": "The plant."},
            "ml": {"type": "number", "description": "Millilitres."},
        },
        "required": ["plant", "ml"],
    },
    {"name": "count", "parameters": {"n": {"type": "number"}}, "required": ["n"]},
    {"name": "fetch", "parameters": {"q": {"type": "string"}}, "required": ["q"]},
    {
        "name": "download",
        "parameters": {
            "url": {"type": "string", "description": "Where the file is."},
            "save_path": {"type": "string", "description": "Local path to save to."},
            "page": {"type": "string", "description": "The page URL."},
            "mirror": {"type": "string", "format": "uri"},
        },
        "required": ["url"],
    },
    {
        "name": "price",
        "parameters": {"items": {"type": "array"}, "store": {"type": "string"}},
        "required": ["items"],
    },
]


def _plan(*tasks: dict) -> Plan:
    nodes = [{"id": "root", "dep": [], "status": True}, *tasks]
    nodes.append({"id": "response", "dep": [t["id"] for t in tasks]})
    p = Plan.parse(json.dumps({"tasks": nodes}))
    assert isinstance(p, Plan), p
    return p


def _at(plan: Plan, node: str, **kw) -> set[E]:
    specs = ToolSpec.from_pararecover(TOOLS)
    return {f.error_type for f in verify(plan, specs, **kw) if f.node == node}


def _book(**para) -> dict:
    base = {"city": "Tokyo", "date": "2024-03-15", "guests": ["Ann"]}
    return {"id": "1", "name": "book", "para": {**base, **para}, "dep": ["root"]}


# --- Parameter_Invalid: "the correct type but invalid content" ---------------------------------
@pytest.mark.parametrize(
    ("para", "flagged"),
    [
        ({"date": "2026/02/32"}, True),  # Table 12's own example: not YYYY-MM-DD, no such day
        ({"date": "2026-02-30"}, True),  # the stated format, but no calendar day
        ({"date": "2026-02-28"}, False),
        ({"guests": []}, True),  # a required array with nothing in it
        ({"notes": []}, False),  # an optional one may be empty
        ({"city": ""}, True),
        ({"city": "city"}, True),  # the parameter's own name where its value belongs
    ],
)
def test_parameter_invalid_values(para, flagged):
    assert (E.PARAMETER_INVALID in _at(_plan(_book(**para)), "1")) is flagged


def test_parameter_invalid_objects_that_only_describe_a_value():
    w = {"id": "1", "name": "water", "para": {"plant": {"type": "fern"}, "ml": 5}, "dep": ["root"]}
    assert E.PARAMETER_INVALID in _at(_plan(w), "1")
    w["para"]["plant"] = {"name": "fern", "pot": "blue"}
    assert E.PARAMETER_INVALID not in _at(_plan(w), "1")


def test_a_parameter_name_as_value_is_missing_and_invalid():
    # Parameter_Missing ("fail to provide required parameters") and Parameter_Invalid ("correct
    # type but invalid content") both read it; the real files tag it either way
    got = _at(_plan(_book(city="city")), "1")
    assert {E.PARAMETER_MISSING, E.PARAMETER_INVALID} <= got
    assert E.PARAMETER_MISSING not in _at(_plan(_book()), "1")


@pytest.mark.parametrize(
    ("para", "flagged"),
    [
        # a parameter that states it holds a URL (its name, its description, its format) reads
        # like Table 12's date: text no URL syntax can read is invalid content
        ({"url": "下载链接"}, True),  # "download link": words for a link, not one
        ({"url": "task1中输出的视频URL"}, True),
        ({"url": "https://example.org/eye-of-the-tiger.mp3"}, False),
        ({"url": "www.example.org/a.mp3"}, False),
        ({"url": "https://example.org/a", "page": "the home page"}, True),
        ({"url": "https://example.org/a", "page": "https://example.org/"}, False),
        ({"url": "https://example.org/a", "mirror": "mirror site"}, True),
        # a path is not a URL: any text may be one, so nothing is flagged there
        ({"url": "https://example.org/a", "save_path": "本地存储路径/a.mp3"}, False),
        ({"url": "https://example.org/a", "save_path": "task2 output"}, False),
    ],
)
def test_parameter_invalid_a_url_parameter_holding_no_url(para, flagged):
    node = {"id": "1", "name": "download", "para": para, "dep": ["root"]}
    assert (E.PARAMETER_INVALID in _at(_plan(node), "1")) is flagged


# --- Dependence_Null: a value copied from a result the node does not wait for -----------------
def _copied(store: object = "${2}", dep=("2",), items=("carrot",), **over) -> Plan:
    """Node 1 has run and its description carries its result; node 2 has run too; node 3 is
    still to run and holds what node 1 returned."""
    one = {"id": "1", "name": "fetch", "para": {"q": "soup vegetables"}, "dep": ["root"]}
    one |= {"status": True, "desc": "find vegetables. Result: carrot, leek, celery"}
    two = {"id": "2", "name": "fetch", "para": {"q": "shops"}, "dep": ["root"], "status": True}
    two["desc"] = "find a shop. Result: corner shop"
    three = {"id": "3", "name": "price", "para": {"items": list(items), "store": store}}
    three["dep"] = list(dep)
    nodes = [one, two, three, *over.get("extra", [])]
    p = Plan.parse(
        json.dumps(
            {
                "tasks": [
                    {"id": "root", "dep": [], "status": True},
                    *nodes,
                    {"id": "response", "dep": [n["id"] for n in nodes]},
                ]
            }
        )
    )
    assert isinstance(p, Plan), p
    return p


def test_dependence_null_a_value_only_a_result_it_does_not_wait_for_holds():
    # node 3 takes node 2's output by reference and holds "carrot", which only node 1's result
    # holds: it uses node 1's output without depending on it
    assert E.DEPENDENCE_NULL in _at(_copied(), "3", unfinished=True)
    # waiting for both: nothing missing
    assert E.DEPENDENCE_NULL not in _at(_copied(dep=("1", "2")), "3", unfinished=True)
    # the user said "carrot": it came from the request, not from node 1
    got = _at(_copied(), "3", unfinished=True, given="price a carrot")
    assert E.DEPENDENCE_NULL not in got
    # another call is given "carrot" too: an entity passed through the plan
    four = {"id": "4", "name": "fetch", "para": {"q": "carrot"}, "dep": ["root"]}
    assert E.DEPENDENCE_NULL not in _at(_copied(extra=[four]), "3", unfinished=True)
    # two results hold it: which one it came from is not shown
    five = {"id": "5", "name": "fetch", "para": {"q": "roots"}, "dep": ["root"]}
    five |= {"status": True, "desc": "Result: carrot, beet"}
    assert E.DEPENDENCE_NULL not in _at(_copied(extra=[five]), "3", unfinished=True)
    # numbers and dates coincide too easily to tell a copy
    assert E.DEPENDENCE_NULL not in _at(_copied(items=("2026-01-05",)), "3", unfinished=True)
    # the run-time verifier (Dual-Loop) does not read copies: unchanged there
    assert E.DEPENDENCE_NULL not in _at(_copied(), "3")


def test_dependence_error_waits_for_one_node_and_copies_from_another():
    # Table 12's own example: "node 3 should depend on node 2, but is mistakenly represented as
    # depending on node 1". Here node 3 waits for node 2, takes nothing from it, and holds what
    # node 1 returned.
    got = _at(_copied(store="a farm stand"), "3", unfinished=True)
    assert E.DEPENDENCE_ERROR in got and E.DEPENDENCE_NULL not in got


# --- Serial_Error: "no dependency on each other ... represented as sequential" ----------------
def test_serial_two_unfinished_calls_tied_by_nothing_but_the_users_numbers():
    a = {"id": "1", "name": "count", "para": {"n": 5}, "dep": ["root"]}
    b = {"id": "2", "name": "water", "para": {"plant": {"name": "fern"}, "ml": 5}, "dep": ["1"]}
    # 5 is in both calls, and the user said it: it came from the user, not from call 1
    assert E.SERIAL_ERROR in _at(_plan(a, b), "2", given="water my fern with 5 ml")
    # without the request the shared 5 may have been passed along: not flagged
    assert E.SERIAL_ERROR not in _at(_plan(a, b), "2")
    # a name the user gave still ties two calls on the same thing (its state may order them)
    c = {"id": "1", "name": "fetch", "para": {"q": "fern"}, "dep": ["root"]}
    assert E.SERIAL_ERROR not in _at(_plan(c, b), "2", given="water my fern with 5 ml")


def test_serial_a_wait_on_a_call_that_has_run_delays_nothing():
    a = {"id": "1", "name": "count", "para": {"n": 7}, "dep": ["root"]}
    b = {"id": "2", "name": "fetch", "para": {"q": "news"}, "dep": ["1"]}
    assert E.SERIAL_ERROR in _at(_plan(a, b), "2", unfinished=True)
    assert E.SERIAL_ERROR not in _at(_plan(dict(a, status=True), b), "2", unfinished=True)
    # without ``unfinished`` (the Dual-Loop verifier) the wait is still reported
    assert E.SERIAL_ERROR in _at(_plan(dict(a, status=True), b), "2")


# --- Parallelism_Error: "two nodes that should be executed sequentially are treated as parallel"
def test_parallelism_a_retry_side_by_side_with_what_it_retries():
    a = {"id": "1", "name": "fetch", "para": {"q": "news"}, "dep": ["root"]}
    again = dict(a, id="2")
    assert E.PARALLELISM_ERROR in _at(_plan(a, again), "2")
    assert E.TOOLCALL_REDUNDANCY in _at(_plan(a, again), "2")
    waits = dict(again, dep=["1"])  # a retry after the first attempt: sequential
    assert E.PARALLELISM_ERROR not in _at(_plan(a, waits), "2")
    other = dict(again, para={"q": "weather"})
    assert not {E.PARALLELISM_ERROR, E.TOOLCALL_REDUNDANCY} & _at(_plan(a, other), "2")


def test_parallelism_two_retries_of_a_call_that_ran_side_by_side():
    ran = {"id": "1", "name": "fetch", "para": {"q": "news"}, "dep": ["root"], "status": True}
    r1 = {"id": "2", "name": "fetch", "para": {"q": "news"}, "dep": ["1"]}
    r2 = dict(r1, id="3")
    # node 3 repeats node 2, a pending attempt, without waiting for it
    assert {E.PARALLELISM_ERROR, E.TOOLCALL_REDUNDANCY} <= _at(_plan(ran, r1, r2), "3")
    # the first repeat is only redundant: the call it repeats has run
    assert E.PARALLELISM_ERROR not in _at(_plan(ran, r1, r2), "2")
    # one after the other: sequential
    assert E.PARALLELISM_ERROR not in _at(_plan(ran, r1, dict(r2, dep=["2"])), "3")


# --- the audit: parse failures, the unfinished part, the tags ---------------------------------
def _line(tasks: list[dict], tag: str, **extra) -> dict:
    nodes = [{"id": "root", "dep": [], "status": True}, *tasks]
    nodes.append({"id": "response", "dep": [t["id"] for t in tasks]})
    return {
        "id": extra.pop("id", 1),
        "query": extra.pop("query", "book a room in Tokyo"),
        "tool_list": json.dumps(TOOLS),
        "plan": json.dumps({"tasks": nodes}),
        "tag": tag,
        "fun_call": [],
        **extra,
    }


def _audit(tmp_path, *lines: dict) -> list[dict]:
    from replan.suites.audit import audit_instance
    from replan.suites.pararecover import iter_instances

    f = tmp_path / "x.jsonl"
    f.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), "utf-8")
    return [audit_instance(i) for i in iter_instances(f)]


def test_dependence_error_a_dependency_on_no_node_or_on_itself(tmp_path):
    ok = _book()
    dangling = dict(ok, dep=["9"])
    selfdep = dict(ok, dep=["1"])
    got = _audit(
        tmp_path,
        _line([dangling], "依赖关系错误", id=1),
        _line([selfdep], "依赖关系错误", id=2),
        _line([ok], "依赖关系错误", id=3),
    )
    assert [r["detected"] for r in got] == [True, True, False]
    assert got[0]["parse_error"] and got[1]["parse_error"] and got[2]["parse_error"] is None


def test_only_the_unfinished_part_counts_for_plan_errors(tmp_path):
    # Table 12 places every plan error "in the unfinished tasks of the updated DAG"
    bad = _book(date="2026/02/32")
    got = _audit(
        tmp_path,
        _line([bad], "参数值非法", id=1),
        _line([dict(bad, status=True)], "参数值非法", id=2),
    )
    assert [r["detected"] for r in got] == [True, False]


# --- what the plan alone can decide (needs meaning otherwise) ----------------------------------
#: the ten plan-error types, written out here (not read from replan's taxonomy)
PLAN_TYPES = {
    "Type_Error",
    "Parameter_Error",
    "Parameter_Missing",
    "Tool_name_Error",
    "Parameter_Invalid",
    "Dependence_Error",
    "Dependence_Null",
    "Parallelism_Error",
    "Serial_Error",
    "Toolcall_Redundancy",
}
DEPENDENCY = {"Dependence_Error", "Dependence_Null", "Parallelism_Error"}


def _fetch(nid: str, q: str, dep: list[str], **kw) -> dict:
    return {"id": nid, "name": "fetch", "para": {"q": q}, "dep": dep, **kw}


def test_undecidable_when_every_call_has_run(tmp_path):
    # Table 12 places every plan error in "the unfinished tasks": there are none
    (got,) = _audit(tmp_path, _line([dict(_book(), status=True)], "参数值非法"))
    assert set(got["undecidable"]) == PLAN_TYPES


def test_dependency_types_need_meaning_when_no_call_shows_what_it_takes(tmp_path):
    literal = [_book(), _fetch("2", "Tokyo weather", ["1"])]
    words = [_book(), _fetch("2", "task1 result", ["1"])]  # a reference in words
    token = [_book(), _fetch("2", "output_of_task1", ["1"])]
    orphan = [_book(), _fetch("2", "Tokyo weather", [])]  # depends on nothing
    got = _audit(
        tmp_path,
        *(_line(t, "依赖关系错误", id=i) for i, t in enumerate([literal, words, token, orphan])),
    )
    # literal values only, dependencies well formed: what must wait for what is the task's
    assert set(got[0]["undecidable"]) >= DEPENDENCY
    for r in got[1:]:
        assert not DEPENDENCY & set(r["undecidable"]), r["undecidable"]
    # 2 waits for 1, both unfinished: a Serial_Error pair exists to judge
    assert "Serial_Error" not in got[0]["undecidable"]


def test_a_value_a_result_holds_shows_what_a_call_takes(tmp_path):
    ran = _fetch("1", "soup vegetables", ["root"], status=True, desc="Result: carrot, leek")
    takes = {"id": "2", "name": "price", "para": {"items": ["carrot"]}, "dep": ["1"]}
    entity = dict(takes, para={"items": ["soup vegetables"]})  # what 1 was given: an entity
    number = dict(takes, para={"items": ["2"]})
    got = _audit(
        tmp_path,
        *(_line([ran, t], "依赖关系缺失", id=i) for i, t in enumerate([takes, entity, number])),
    )
    assert [bool(DEPENDENCY & set(r["undecidable"])) for r in got] == [False, True, True]


def test_serial_and_redundancy_need_a_pair_to_judge(tmp_path):
    side = [_book(), _fetch("2", "Tokyo weather", ["root"])]  # no unfinished call waits
    twice = [_fetch("1", "news", ["root"]), _fetch("2", "weather", ["root"])]
    got = _audit(tmp_path, _line(side, "错误串行", id=1), _line(twice, "工具调用冗余", id=2))
    assert "Serial_Error" in got[0]["undecidable"]
    assert "Toolcall_Redundancy" in got[0]["undecidable"]  # book and fetch, once each
    assert "Toolcall_Redundancy" not in got[1]["undecidable"]  # fetch twice: a repeat to judge


def test_a_plan_that_does_not_parse_decides_only_its_dependency_failure(tmp_path):
    got = _audit(
        tmp_path,
        _line([dict(_book(), dep=["9"])], "依赖关系错误", id=1),  # a node it does not have
        _line([{"id": "1", "name": "book", "para": {}, "dep": ["root"]}] * 2, "依赖关系错误", id=2),
    )
    assert set(got[0]["undecidable"]) == PLAN_TYPES - {"Dependence_Error"}
    assert set(got[1]["undecidable"]) == PLAN_TYPES  # duplicate ids: nothing to read


def test_a_node_run_before_its_dependency_is_a_parallelism_error(tmp_path):
    # Table 12: "two nodes that should be executed sequentially are treated as parallel"; node
    # 2 is marked done while node 1, which it waits for, has not run
    early = [_book(), _fetch("2", "Tokyo weather", ["1"], status=True)]
    in_order = [dict(_book(), status=True), _fetch("2", "Tokyo weather", ["1"])]
    got = _audit(tmp_path, _line(early, "错误并行", id=1), _line(in_order, "错误并行", id=2))
    assert [r["detected"] for r in got] == [True, False]


# --- held-out real instances: the targets ----------------------------------------------------
#: the dataset's tags in English, written out here (not read from replan's taxonomy)
TAG_NAMES = {
    "参数值非法": "Parameter_Invalid",
    "错误串行": "Serial_Error",
    "错误并行": "Parallelism_Error",
    "依赖关系错误": "Dependence_Error",
}


def all_calls_done(row: dict) -> bool:
    """Read with ``json``: every tool-call node of the line's plan is marked done."""
    tasks = json.loads(row["plan"])["tasks"]
    calls = [t for t in tasks if t.get("name") and t["id"] not in ("root", "response")]
    return all(t.get("status") is True for t in calls)


#: Held-out instances whose plan shows no data flow into its unfinished calls (read by hand:
#: every value a literal, no reference of any kind, no text value copied from a result, the
#: dependencies well formed), so which step must wait for which is the task's meaning
HELDOUT_NO_FLOW = {
    1292: "node 4's session data is written out; nodes 2-4 wait for 1 and take nothing named",
    1321: "bread flour / water and their amounts, all from the request",
    1323: "front yard and numbers: watering before covering is gardening, not the plan",
}


def test_heldout_file_is_real_and_not_in_the_sample():
    sample = Path(__file__).parents[2] / "src/replan/samples/pararecover-sample"
    seen = {
        json.loads(x)["id"]
        for f in sample.glob("LEVEL-1/*real_rollout*.jsonl")
        for x in f.read_text("utf-8").splitlines()
        if x.strip()
    }
    rows = [json.loads(x) for x in HELDOUT_FILE.read_text("utf-8").splitlines() if x.strip()]
    assert len(rows) == 17 and not {r["id"] for r in rows} & seen
    assert "MIT" in (HELDOUT / "README.md").read_text("utf-8")


def test_heldout_meets_the_targets():
    from replan.suites.audit import MIN_TAGGED, STATIC_TYPES, audit_file

    rows = [json.loads(x) for x in HELDOUT_FILE.read_text("utf-8").splitlines() if x.strip()]
    tagged: dict[str, int] = {}
    for r in rows:
        tagged[TAG_NAMES[r["tag"]]] = tagged.get(TAG_NAMES[r["tag"]], 0) + 1
    assert tagged == {
        "Parameter_Invalid": 6,
        "Serial_Error": 3,
        "Parallelism_Error": 2,
        "Dependence_Error": 6,
    }
    done = {(r["id"], TAG_NAMES[r["tag"]]) for r in rows if all_calls_done(r)}
    assert done == {(357, "Parameter_Invalid"), (1111, "Serial_Error")}
    meaning = done | {(i, "Dependence_Error") for i in HELDOUT_NO_FLOW}
    rep = audit_file(HELDOUT_FILE)
    assert rep["instances"] == 17 and rep["line_errors"] == []
    assert {(x["id"], x["type"]) for x in rep["needs_meaning"]} == meaning
    for name, row in rep["by_type"].items():
        assert row["tagged"] == tagged.get(name, 0), name
        assert row["needs_meaning"] == sum(1 for _, t in meaning if t == name), name
        assert row["false_alarm_rate"] is None or row["false_alarm_rate"] <= 0.20, (name, row)
    for et in STATIC_TYPES:
        row = rep["by_type"][et.value]
        if row["decidable"] >= MIN_TAGGED:  # Dependence_Error 3, Parameter_Invalid 5
            assert row["detection_decidable"] >= 0.70, (et.value, row)
