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


# -- bounded under hostile input (issue 17) -------------------------------------------------------
# What took the parser down: unclosed <thought> tags (a lazy regex rescanned the rest of the text
# from each one: 180 KB took 28.7 s), runs of blank lines (``^\s*//`` rescanned them from every
# line start), and JSON nested so deep that the parsed plan could not be written back.
ADVERSARIAL = {
    "unclosed thought tags": lambda n: "<thought>" * (n // 9),
    "thought tags, one closed at the end": lambda n: "<thought>x" * (n // 10) + "</thought>",
    "blank lines before a brace": lambda n: "\n" * n + "{",
    "blank lines in JSON": lambda n: '{"tasks": [' + "\n" * n + "1,]",
    "unclosed fences": lambda n: "```json {" * (n // 9),
    "open braces": lambda n: "{" * n,
    "commas and spaces": lambda n: "{" + ", " * (n // 2),
}


def _parse_seconds(text: str, repeats: int = 5) -> float:
    import time

    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        res = Plan.parse(text)
        best = min(best, time.perf_counter() - t0)
        assert isinstance(res, (Plan, ParseFailure))
    return best


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_parse_time_grows_linearly_on_adversarial_text(name):
    """8x the input may take ~8x the time, not ~64x (a ratio measured in this run: no clock)."""
    make = ADVERSARIAL[name]
    small, big = make(10_000), make(80_000)
    t_small = max(_parse_seconds(small), 1e-4)  # below that, timer noise dominates
    ratio = _parse_seconds(big) / t_small
    assert ratio < 32, f"{name}: 8x input took {ratio:.0f}x the time (quadratic is ~64x)"


def test_the_issue_plan_of_repeated_thought_tags_is_fast_relative_to_a_real_plan():
    """The 180 KB plan from issue 17 (28.7 s before) against the same size of a normal plan."""
    real = _dag(ROOT, N1, RESP)
    normal = "<thought>plan</thought>" + real + " " * (180_000 - len(real))
    hostile = ("<thought>" * 20_000)[:180_000]
    assert _parse_seconds(hostile) < 20 * max(_parse_seconds(normal), 1e-3)


def test_a_text_over_the_cap_is_a_named_failure():
    from replan.core.plan import MAX_PLAN_CHARS

    res = Plan.parse("<thought>" + "x" * MAX_PLAN_CHARS + "</thought>" + _dag(ROOT, N1, RESP))
    assert isinstance(res, ParseFailure) and res.code == "too_large"
    assert f"{MAX_PLAN_CHARS:,}" in res.reason


@pytest.mark.parametrize("depth", [200, 5_000, 90_000])
def test_deep_nesting_is_a_named_failure(depth):
    deep = "[" * depth + "]" * depth
    nested = _dag(ROOT, dict(N1, para={"q": "PLACEHOLDER"}), RESP).replace('"PLACEHOLDER"', deep)
    res = Plan.parse(nested)
    assert isinstance(res, ParseFailure) and res.code == "too_deep", res
    # ``para`` as a JSON string is decoded too: nested, it is refused; too deep for Python's
    # decoder, it stays one string argument; either way what is accepted can be written back
    res = Plan.parse(_dag(ROOT, dict(N1, para=deep), RESP))
    if isinstance(res, Plan):
        assert res.node("1").positional == [deep]
        assert Plan.parse(res.to_text()).model_dump() == res.model_dump()
    else:
        assert res.code == "too_deep", res


def test_an_accepted_deep_plan_writes_back_even_from_a_deep_stack():
    import sys

    from replan.core.plan import MAX_PLAN_DEPTH

    value: object = "leaf"
    for _ in range(MAX_PLAN_DEPTH - 4):
        value = [value]
    plan = Plan.parse(_dag(ROOT, dict(N1, para={"q": value}), RESP))
    assert isinstance(plan, Plan)

    def nested(k: int) -> str:  # call to_text with most of the stack already used
        return plan.to_text() if k == 0 else nested(k - 1)

    text = nested(sys.getrecursionlimit() - 250)
    assert Plan.parse(text).model_dump() == plan.model_dump()


_FRAGMENTS = [
    "<thought>",
    "</thought>",
    "<THOUGHT>",
    "```",
    "```json",
    "{",
    "}",
    "[",
    "]",
    '"',
    ",",
    ":",
    "\n",
    "  ",
    "//",
    "${",
    '"tasks"',
    '"id"',
    '"dep"',
    '"root"',
    '"response"',
    '"1"',
    "Thought:",
    "\\",
    "null",
    "0",
]


@given(
    st.lists(st.sampled_from(_FRAGMENTS), max_size=400).map("".join)
    | st.builds(
        lambda pre, nodes, post: pre + _dag(*nodes) + post,
        st.lists(st.sampled_from(_FRAGMENTS), max_size=30).map("".join),
        st.lists(
            st.sampled_from([ROOT, N1, RESP, dict(N1, id="2"), dict(N1, para=[[[["x"]]]])]),
            max_size=5,
        ),
        st.lists(st.sampled_from(_FRAGMENTS), max_size=30).map("".join),
    )
)
def test_adversarial_text_never_raises_and_accepted_plans_round_trip(text):
    res = Plan.parse(text)
    assert isinstance(res, (Plan, ParseFailure))
    if isinstance(res, Plan):
        again = Plan.parse(res.to_text())
        assert isinstance(again, Plan)
        assert again.model_dump(exclude={"thought"}) == res.model_dump(exclude={"thought"})


def test_a_raw_line_break_inside_a_string_is_read_as_written():
    # seen from SmolLM2 under llama-cpp-python's JSON grammar, whose string rule lets control
    # characters through: strict JSON refuses it, and the bracket inside the thought then read
    # as the task list ("task 0 is not an object")
    text = (
        '{"thought": "look ][1]\n{ first", "tasks": [{"id": "root", "dep": []}, '
        '{"id": "1", "name": "search", "para": {"q": "a\nb"}, "dep": ["root"]}, '
        '{"id": "response", "dep": ["1"]}]}'
    )
    plan = Plan.parse(text)
    assert isinstance(plan, Plan), plan
    assert plan.ids == ["root", "1", "response"]
    assert plan.node("1").args == {"q": "a\nb"}
    assert plan.thought == "look ][1]\n{ first"
