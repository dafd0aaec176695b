"""Hand-built plans over the travel tools: each finding code on the right node."""

import json

import pytest

from replan.core.plan import Plan
from replan.core.taxonomy import ErrorType, VerdictCode
from replan.env.corpus import load_corpus
from replan.env.verifier import textual_references, verify

TOOLS = ["search_flights", "find_flight_offers", "quote_flight", "book_flight"]


@pytest.fixture(scope="module")
def corpus():
    return load_corpus()


def plan(*tasks):
    nodes = [{"id": "root", "desc": "q", "dep": [], "status": True}, *tasks]
    last = [t["id"] for t in tasks][-1:]
    nodes.append({"id": "response", "dep": last})
    p = Plan.parse(json.dumps({"tasks": nodes}))
    assert isinstance(p, Plan), p
    return p


S = {
    "id": "1",
    "name": "search_flights",
    "para": {"origin": "LIS", "destination": "KIX", "date": "2026-12-03"},
    "dep": ["root"],
}
Q = {
    "id": "2",
    "name": "quote_flight",
    "para": {"flight_id": "${1.cheapest_flight_id}", "passengers": 2},
    "dep": ["1"],
}
B = {
    "id": "3",
    "name": "book_flight",
    "para": {
        "quote_id": "${2.quote_id}",
        "traveller_name": "Ana Silva",
        "contact_email": "ana@example.org",
    },
    "dep": ["2"],
}


def codes(findings):
    return {(f.node, f.code) for f in findings}


def test_gold_chain_verifies_clean_and_runs(corpus):
    p = plan(S, Q, B)
    assert verify(p, corpus.tools, corpus.world()) == []
    w = corpus.world()
    from replan.core.trace import Call

    res = w.run_calls([Call(tool=n.tool, args=n.args, node_id=n.id) for n in p.call_nodes])
    assert all(r.ok for r in res)


@pytest.mark.parametrize(
    ("tasks", "expected"),
    [
        ([dict(S, name="search_flight")], ("1", VerdictCode.UNKNOWN_TOOL)),
        ([dict(S, para={"origin": "LIS", "date": "2026-12-03"})], ("1", VerdictCode.MISSING_PARAM)),
        (
            [dict(S, para={"origin": "LIS", "destinaton": "KIX", "date": "2026-12-03"})],
            ("1", VerdictCode.UNKNOWN_PARAM),
        ),
        (
            [dict(S, para={"origin": "LIS", "destination": 7, "date": "2026-12-03"})],
            ("1", VerdictCode.TYPE_MISMATCH),
        ),
        (
            [dict(S, para={"origin": "LIS", "destination": "KIX", "date": "2026-02-31"})],
            ("1", VerdictCode.INVALID_VALUE),
        ),
        (
            [S, dict(Q, para={"flight_id": "${1.cheapest_id}"})],
            ("2", VerdictCode.UNBOUND_REFERENCE),
        ),
        ([S, dict(Q, para={"flight_id": "${1.flights}"})], ("2", VerdictCode.TYPE_MISMATCH)),
        (
            [S, dict(Q, para={"flight_id": "${7.cheapest_flight_id}"})],
            ("2", VerdictCode.MISSING_CALL),
        ),
        ([S, dict(Q, dep=["root"])], ("2", VerdictCode.PARALLEL_CONFLICT)),
        (
            [S, {**S, "id": "1.5", "para": {**S["para"], "origin": "DEN"}}, dict(Q, dep=["1.5"])],
            ("2", VerdictCode.WRONG_DEPENDENCY),
        ),
        (
            [S, dict(S, id="2", para={**S["para"], "origin": "DEN"}, dep=["1"])],
            ("2", VerdictCode.UNNEEDED_DEPENDENCY),
        ),
        ([S, dict(S, id="2")], ("2", VerdictCode.REDUNDANT_CALL)),
        ([S, Q, B, dict(B, id="4", dep=["3"])], ("4", VerdictCode.PRECONDITION_FAILED)),
    ],
)
def test_each_finding_on_the_right_node(corpus, tasks, expected):
    findings = verify(plan(*tasks), corpus.tools, corpus.world())
    assert expected in codes(findings), [f.message for f in findings]


def test_dependency_missing_across_waves(corpus):
    # node 3 uses node 1 but depends only on an unrelated node 2 that itself waits for root
    t2 = dict(S, id="2", para={**S["para"], "origin": "DEN"})
    t3 = dict(Q, id="3", dep=["2", "root"])
    t3["para"] = {"flight_id": "${1.cheapest_flight_id}"}
    t2b = dict(t2, dep=["root"])
    t1 = dict(S, dep=["root"])
    t4 = {
        "id": "4",
        "name": "quote_flight",
        "para": {"flight_id": "${1.cheapest_flight_id}"},
        "dep": ["3"],
    }
    found = codes(
        verify(
            plan(t1, t2b, dict(t3, para={"flight_id": "${2.cheapest_flight_id}"}), t4), corpus.tools
        )
    )
    assert ("4", VerdictCode.DEPENDENCY_MISSING) in found


def test_literal_ids_checked_against_the_world(corpus):
    stale = {
        "id": "1",
        "name": "book_flight",
        "dep": ["root"],
        "para": {
            "quote_id": "FQ-EXPIRED1",
            "traveller_name": "Ana Silva",
            "contact_email": "a@b.org",
        },
    }
    assert ("1", VerdictCode.PRECONDITION_FAILED) in codes(
        verify(plan(stale), corpus.tools, corpus.world())
    )
    # without a world, a literal id cannot be judged
    assert verify(plan(stale), corpus.tools) == []


def test_rename_is_reported_once_as_a_name_error(corpus):
    f = verify(
        plan(dict(S, para={"origin": "LIS", "destinaton": "KIX", "date": "2026-12-03"})),
        corpus.tools,
    )
    assert [x.error_type for x in f] == [ErrorType.PARAMETER_ERROR]
    assert "did you mean 'destination'" in f[0].message


def test_executed_nodes_are_not_resimulated(corpus):
    # 3 already ran (it consumed the quote in the live world); re-checking it would be wrong
    p = plan(dict(S, status=True), dict(Q, status=True), dict(B, status=True))
    assert verify(p, corpus.tools, corpus.world()) == []


def test_textual_references():
    ids = ["root", "1", "2", "2.1", "3"]
    assert textual_references("task3 result", ids) == {"3"}
    assert textual_references("output_of_task2", ids) == {"2"}
    assert textual_references("2.1的结果", ids) == {"2.1"}
    assert textual_references({"a": ["1中输出的联系人列表"]}, ids) == {"1"}
    assert textual_references("5 gallons of water", ids) == set()
    assert textual_references("task 9 result", ids) == set()


def test_audit_detects_parameter_errors_on_the_sample(sample_files):
    from replan.suites.audit import audit_file

    target = {"Type_Error", "Parameter_Error", "Parameter_Missing", "Tool_name_Error"}
    n = det = total = 0
    for path in sample_files:
        rep = audit_file(path)
        total += rep["instances"]
        assert rep["line_errors"] == []
        for tag, row in rep["by_tag"].items():
            if tag in target:
                n += row["n"]
                det += row["detected"]
    assert total == 85
    assert n >= 50 and det / n >= 0.8
