"""Hand-built plans over the travel tools: each finding code on the right node."""

import json
from pathlib import Path

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


# --- real ParaRecover plans: free-text outputs, references in words (issue 12) ---------------
def _pr_tools():
    from replan.core.tools import ToolSpec

    return ToolSpec.from_pararecover(
        [
            {"name": "measure", "parameters": {"liquid": {"type": "string"}}, "required": []},
            {"name": "analyze", "parameters": {"sample": {"type": "object"}}, "required": []},
            {"name": "sanitize", "parameters": {"items": {"type": "array"}}, "required": []},
            {"name": "set_temp", "parameters": {"degrees": {"type": "number"}}, "required": []},
            {"name": "list_ids", "parameters": {}, "required": []},
            {"name": "show", "parameters": {"id": {"type": "string"}}, "required": []},
        ]
    )


def _pr_plan(*tasks, response_dep=None):
    nodes = [{"id": "root", "dep": [], "status": True}, *tasks]
    nodes.append({"id": "response", "dep": response_dep or [tasks[-1]["id"]]})
    p = Plan.parse(json.dumps({"tasks": nodes}))
    assert isinstance(p, Plan), p
    return p


def _types_at(p, node, **kw):
    return {f.error_type for f in verify(p, _pr_tools(), **kw) if f.node == node}


def test_serial_on_free_text_outputs_needs_a_call_tied_to_nothing():
    m = {"id": "1", "name": "measure", "para": {"liquid": "water"}, "dep": ["root"]}
    # the same entity passed along: data may have been copied from 1's free-text result
    a = {"id": "2", "name": "analyze", "para": {"sample": {"liquid": "water"}}, "dep": ["1"]}
    assert ErrorType.SERIAL_ERROR not in _types_at(_pr_plan(m, a), "2")
    # a reference in words, by id or by the producing tool's name
    for words in ("1.output", "output of measure", "task1 result"):
        w = dict(a, para={"sample": words})
        assert ErrorType.SERIAL_ERROR not in _types_at(_pr_plan(m, w), "2"), words
    # a value the recorded result holds
    t = {"id": "2", "name": "set_temp", "para": {"degrees": 68}, "dep": ["1"]}
    got = _types_at(_pr_plan(m, t), "2", outputs={"1": "measured 68 ml of water"})
    assert ErrorType.SERIAL_ERROR not in got
    # a call that takes nothing from what it waits for and holds no value found elsewhere
    assert ErrorType.SERIAL_ERROR in _types_at(_pr_plan(m, t), "2")
    # a producer with no arguments exists for its output: waiting for it carries data
    ids = {"id": "1", "name": "list_ids", "para": {}, "dep": ["root"]}
    show = {"id": "2", "name": "show", "para": {"id": "A-7"}, "dep": ["1"]}
    assert ErrorType.SERIAL_ERROR not in _types_at(_pr_plan(ids, show), "2")


def test_reference_tokens_words_and_schema_stubs():
    m = {"id": "1", "name": "measure", "para": {"liquid": "water"}, "dep": ["root"]}
    # the augmented file's reference token stands for the output: no type claim
    tok = {"id": "2", "name": "analyze", "para": {"sample": "output_of_task1"}, "dep": ["1"]}
    assert ErrorType.TYPE_ERROR not in _types_at(_pr_plan(m, tok), "2")
    # a description in words where an object is needed is text: a type error
    words = dict(tok, para={"sample": "task1 result"})
    assert ErrorType.TYPE_ERROR in _types_at(_pr_plan(m, words), "2")
    # a schema copied where a value belongs
    stub = dict(tok, para={"sample": {"type": "object", "description": "the sample of task 1"}})
    assert ErrorType.PARAMETER_INVALID in _types_at(_pr_plan(m, stub), "2")


def test_statuses_repeats_and_calls_the_response_never_waits_for():
    m = {"id": "1", "name": "measure", "para": {"liquid": "water"}, "dep": ["root"]}
    a = {"id": "2", "name": "analyze", "para": {"sample": "task1 result"}, "dep": ["1"]}
    # 2 has run but 1 (its dependency) has not: they ran in parallel
    p = _pr_plan(m, dict(a, status=True))
    assert ErrorType.PARALLELISM_ERROR in _types_at(p, "2")
    # a pending call identical to one that already ran
    again = dict(m, id="3", dep=["1"])
    p = _pr_plan(dict(m, status=True), again)
    assert ErrorType.TOOLCALL_REDUNDANCY in _types_at(p, "3")
    # the response waits only for 1: 2's result never reaches the answer
    p = _pr_plan(m, a, response_dep=["1"])
    assert ErrorType.DEPENDENCE_NULL in _types_at(p, "response")
    assert ErrorType.DEPENDENCE_NULL not in _types_at(_pr_plan(m, a), "response")


def test_python_literal_tool_lists_are_read(tmp_path):
    from replan.suites.pararecover import load_instances

    line = {
        "id": 1,
        "query": "q",
        "tool_list": "[{'name': 'measure', 'parameters': {'liquid': {'type': 'string'}}, "
        "'required': ['liquid']}]",
        "plan": json.dumps({"tasks": [{"id": "root", "dep": []}, {"id": "response", "dep": []}]}),
        "fun_call": "[{'name': 'measure', 'arguments': {'liquid': 'water'}, 'results': None}]",
    }
    f = tmp_path / "x.jsonl"
    f.write_text(json.dumps(line) + "\n", encoding="utf-8")
    good, bad = load_instances(f)
    assert bad == [] and [t.name for t in good[0].tools] == ["measure"]
    assert good[0].fun_call[0].arguments == {"liquid": "water"}
    f.write_text(json.dumps({**line, "tool_list": "[{'name': __import__('os')}]"}) + "\n")
    good, bad = load_instances(f)  # a literal only: code is never evaluated
    assert good == [] and "tool_list" in bad[0].message


#: Sample instances (file, id, tagged type) the plan alone cannot decide, besides those whose
#: calls are all marked done (counted below with ``json``), each read by hand
SAMPLE_NEEDS_MEANING = {
    # literal values only, no reference, nothing copied from a result, dependencies well formed:
    # which step must wait for which follows from the task (send the invitations before
    # checking the RSVPs; check the beans before brewing; the sandwich before serving it)
    ("LEVEL-1_real_rollout.jsonl", 1256, "Dependence_Error"),
    ("LEVEL-1_real_rollout.jsonl", 1407, "Dependence_Null"),
    ("LEVEL-1_augmented.jsonl", 2034, "Dependence_Error"),
    # no tool called twice: whether displayRecipe is needed is the task's meaning
    ("LEVEL-1_real_rollout.jsonl", 714, "Toolcall_Redundancy"),
}

#: the dataset's tags in English, written out here (not read from replan's taxonomy)
TAGS_EN = {
    "类型错误": "Type_Error",
    "参数名称错误": "Parameter_Error",
    "参数值非法": "Parameter_Invalid",
    "必要参数缺失": "Parameter_Missing",
    "错误串行": "Serial_Error",
    "错误并行": "Parallelism_Error",
    "依赖关系错误": "Dependence_Error",
    "依赖关系缺失": "Dependence_Null",
    "工具调用冗余": "Toolcall_Redundancy",
}


def _done_everywhere(path: Path) -> set[tuple[str, int, str]]:
    """(file, id, tagged type) of the lines whose plan marks every call done, read with json."""
    out = set()
    for x in path.read_text("utf-8").splitlines():
        if not x.strip():
            continue
        row = json.loads(x)
        try:
            tasks = json.loads(row["plan"])["tasks"]
        except (ValueError, KeyError, TypeError):
            continue
        calls = [t for t in tasks if t.get("name") and t["id"] not in ("root", "response")]
        tags = [row.get("tag")] + [row.get(f"tag_{i}") for i in (1, 2, 3)]
        if calls and all(t.get("status") is True for t in calls):
            out |= {(path.name, row["id"], TAGS_EN[t]) for t in tags if t in TAGS_EN}
    return out


def test_audit_meets_the_targets_per_file_and_pooled(sample_files):
    from replan.suites.audit import MIN_TAGGED, STATIC_TYPES, audit_file, merge_reports

    reports = [audit_file(p) for p in sample_files]
    pooled = merge_reports(reports)
    assert pooled["instances"] == 85
    done = set().union(*(_done_everywhere(p) for p in sample_files))
    assert done == {
        ("LEVEL-1_real_rollout.jsonl", 342, "Parameter_Invalid"),
        ("LEVEL-1_real_rollout.jsonl", 1029, "Serial_Error"),
    }
    got = {(Path(r["file"]).name, x["id"], x["type"]) for r in reports for x in r["needs_meaning"]}
    assert got == done | SAMPLE_NEEDS_MEANING
    for rep in [*reports, pooled]:
        name = Path(rep["file"]).name if "file" in rep else "pooled"
        for et, row in rep["by_type"].items():
            assert row["false_alarm_rate"] is None or row["false_alarm_rate"] <= 0.20, (name, et)
        for et in STATIC_TYPES:
            row = rep["by_type"][et.value]
            # the target is per file (issue 29 §4); pooled, Parallelism_Error stays at 2/3
            # (1255: which of two side-by-side calls needs the other is not shown)
            if row["decidable"] >= MIN_TAGGED and name != "pooled":
                assert row["detection_decidable"] >= 0.70, (name, et.value, row)


def test_audit_cli_prints_the_type_table_and_what_it_does_not_decide(sample_files):
    from typer.testing import CliRunner

    from replan.cli import app

    res = CliRunner().invoke(app, ["audit", "pararecover", *map(str, sample_files)])
    assert res.exit_code == 0, res.output
    assert "false alarms" in res.output and "all 3 files: 85 instances" in res.output
    assert "Not decided statically" in res.output and "Toolcall_Missing" in res.output
    # the two LEVEL-1 files pooled on their own (49 + 16), apart from LEVEL-2's 20
    assert "LEVEL-1, 2 files: 65 instances" in res.output
    assert "needs meaning" in res.output and "1407 Dependence_Null" in res.output
    res = CliRunner().invoke(app, ["audit", "pararecover", str(sample_files[0]), "--json"])
    rep = json.loads(res.stdout)
    assert rep["by_type"]["Type_Error"]["tagged"] == 18 and rep["not_static"]
