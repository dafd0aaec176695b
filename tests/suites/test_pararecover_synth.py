"""Error injectors (the 14 ParaRecover types) and the pararecover-synth suite."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from replay_models import run_protocol

from replan.core.plan import Plan, PlanNode
from replan.core.taxonomy import ErrorType
from replan.core.tools import Effect, Precondition, ToolSpec
from replan.core.trace import EndReason
from replan.env.corpus import load_corpus
from replan.env.verifier import verify
from replan.suites import pararecover_synth as ij
from replan.suites import toolmaze as tm
from replan.suites.audit import observation_error_types
from replan.suites.pararecover import FunCall, parse_record

# ---------------------------------------------------------------------------------------------
# a small hand-made plan: 1 -> 3, 2 -> 3, 3 -> 4 (4 books what 3 quoted)
_S = {"type": "string"}
TOOLS = {
    t.name: t
    for t in [
        ToolSpec(
            name="find_city",
            parameters={"type": "object", "properties": {"name": _S}, "required": ["name"]},
            returns={"type": "object", "properties": {"city_id": _S}, "required": ["city_id"]},
        ),
        ToolSpec(
            name="find_dates",
            parameters={
                "type": "object",
                "properties": {"start_date": {"type": "string", "format": "date"}},
                "required": ["start_date"],
            },
            returns={"type": "object", "properties": {"day": _S}, "required": ["day"]},
        ),
        ToolSpec(
            name="quote_trip",
            parameters={
                "type": "object",
                "properties": {
                    "city_id": _S,
                    "day": _S,
                    "people": {"type": "integer", "minimum": 1},
                },
                "required": ["city_id", "day", "people"],
            },
            returns={"type": "object", "properties": {"quote_id": _S, "total": {"type": "number"}}},
            effects=[
                Effect(op="create", collection="quotes", key="quote_id", fields={"status": "open"})
            ],
        ),
        ToolSpec(
            name="book_trip",
            parameters={"type": "object", "properties": {"quote_id": _S}, "required": ["quote_id"]},
            returns={"type": "object", "properties": {"booking_id": _S}},
            preconditions=[Precondition(kind="exists", collection="quotes", arg="quote_id")],
        ),
    ]
}


def _plan() -> Plan:
    return Plan.from_nodes(
        [
            PlanNode(id="root", desc="q", status="done"),
            PlanNode(id="1", tool="find_city", args={"name": "Porto"}, deps=["root"]),
            PlanNode(id="2", tool="find_dates", args={"start_date": "2026-12-03"}, deps=["root"]),
            PlanNode(
                id="3",
                tool="quote_trip",
                args={"city_id": "${1.city_id}", "day": "${2.day}", "people": 2},
                deps=["1", "2"],
            ),
            PlanNode(id="4", tool="book_trip", args={"quote_id": "${3.quote_id}"}, deps=["3"]),
            PlanNode(id="response", deps=["4"]),
        ]
    )


def _types(findings, node=None):
    return {f.error_type for f in findings if node is None or f.node == node}


def test_clean_hand_plan_verifies_clean():
    assert verify(_plan(), TOOLS) == []


@pytest.mark.parametrize("et", ij.STATIC_TYPES)
def test_each_static_injector_on_the_hand_plan(et):
    got = ij.inject(_plan(), et, TOOLS, random.Random(3))
    assert got is not None and got.error_type is et
    before, after = _plan(), got.plan
    assert before.to_text() != after.to_text()
    assert et in _types(verify(after, TOOLS), got.node), (et, got.detail, verify(after, TOOLS))


def test_what_each_injector_changes_by_hand():
    p = _plan()
    rng = lambda: random.Random(0)  # noqa: E731
    miss = ij.inject(p, "Parameter_Missing", TOOLS, rng(), nodes=["3"]).plan.node("3")
    assert len(miss.args) == 2 and set(miss.args) < {"city_id", "day", "people"}
    inval = ij.inject(p, "Parameter_Invalid", TOOLS, rng(), nodes=["2"]).plan.node("2")
    assert inval.args["start_date"] == "2026-02-32"
    typ = ij.inject(p, "Type_Error", TOOLS, rng(), nodes=["3"]).plan.node("3")
    assert typ.args["people"] == "2"
    name = ij.inject(p, "Tool_name_Error", TOOLS, rng(), nodes=["4"]).plan.node("4")
    assert name.tool not in TOOLS and name.args == p.node("4").args
    gone = ij.inject(p, "Toolcall_Missing", TOOLS, rng(), nodes=["3"])
    assert gone.plan.get("3") is None and gone.node == "4"
    assert gone.plan.node("4").args == {"quote_id": "${3.quote_id}"}
    dup = ij.inject(p, "Toolcall_Redundancy", TOOLS, rng(), nodes=["1"])
    assert dup.plan.node(dup.node).args == p.node("1").args and dup.node not in p.ids
    par = ij.inject(p, "Parallelism_Error", TOOLS, rng(), nodes=["3"]).plan
    assert par.layers().index(next(x for x in par.layers() if "3" in x)) == 1  # beside 1, 2
    ser = ij.inject(p, "Serial_Error", TOOLS, rng(), nodes=["2"]).plan.node("2")
    assert ser.deps == ["1"]  # waits for 1, which it never uses
    depn = ij.inject(p, "Dependence_Null", TOOLS, rng(), nodes=["4"])
    # 4 loses its only source: it moves to layer 1 while 3 stays on layer 3 (not parallel)
    assert depn.plan.node("4").deps == ["root"]
    assert ij.inject(p, "Parallelism_Error", TOOLS, rng(), nodes=["4"]) is None  # 3 is deeper
    name_ok = ij.inject(p, "Tool_name_Error", TOOLS, rng(), nodes=["4"]).plan.node("4").tool
    assert name_ok != "book_trip" and name_ok not in TOOLS


def test_dependence_null_and_error_sites_by_hand():
    p = _plan()
    dn = ij.inject(p, "Dependence_Null", TOOLS, random.Random(0))
    assert dn is not None
    m = dn.plan.node(dn.node)
    orig = p.node(dn.node)
    assert set(m.deps) < set(orig.deps) or m.deps == ["root"]
    de = ij.inject(p, "Dependence_Error", TOOLS, random.Random(0))
    assert de is not None
    assert set(de.plan.node(de.node).deps) != set(p.node(de.node).deps)
    assert ErrorType.DEPENDENCE_ERROR in _types(verify(de.plan, TOOLS), de.node)


def test_response_types_leave_the_plan_alone():
    for et in ij.RESPONSE_TYPES:
        got = ij.inject(_plan(), et, TOOLS, random.Random(1), nodes=["1"])
        assert got.plan.to_text() == _plan().to_text() and got.node == "1"
        found = observation_error_types([FunCall(name="find_city", results=got.result)])
        assert found == {et}


def test_tool_select_picks_a_same_group_or_look_alike_tool():
    corpus = load_corpus()
    grp = next(x for x in corpus.groups.values() if x.kind == "1-1")
    a, b = grp.members[0][0], grp.members[1][0]
    plan = Plan.from_nodes(
        [
            PlanNode(id="root", status="done"),
            PlanNode(id="1", tool=a, args={}, deps=["root"]),
            PlanNode(id="response", deps=["1"]),
        ]
    )
    got = ij.inject(
        plan, "Tool_select_Error", {a: corpus.tools[a]}, random.Random(0), corpus_tools=corpus.tools
    )
    assert got.plan.node("1").tool == b and got.extra_tools == [b]


def test_injectors_are_deterministic():
    for et in ErrorType:
        x = ij.inject(_plan(), et, TOOLS, random.Random(42))
        y = ij.inject(_plan(), et, TOOLS, random.Random(42))
        assert (x is None) == (y is None)
        if x is not None:
            assert x.plan.to_text() == y.plan.to_text() and x.node == y.node


#: every static type plus tool selection (the verifier reads a wrong tool from arguments that
#: belong to another tool, or from an output field that another tool returns)
CHECKED_TYPES = (*ij.STATIC_TYPES, ErrorType.TOOL_SELECT_ERROR)


def _round_trip(bases, per_type_min: int) -> dict[str, tuple[int, int]]:
    corpus = load_corpus()
    hit: Counter = Counter()
    tot: Counter = Counter()
    for b in bases:
        plan = b.runs[0].plan
        tools = {x: corpus.tools[x] for x in b.tools}
        world = corpus.world(b.world_seed)
        for i, et in enumerate(CHECKED_TYPES):
            inj = ij.inject(plan, et, tools, random.Random(f"{b.base_id}:{i}"))
            if inj is None:
                continue
            tot[et] += 1
            # a tool-selection error brings its (wrong) tool into the tool list
            avail = {**tools, **{x: corpus.tools[x] for x in inj.extra_tools}}
            hit[et] += et in _types(verify(inj.plan, avail, world), inj.node)
    for et in CHECKED_TYPES:
        assert tot[et] >= per_type_min, (et, tot[et])
        assert hit[et] >= 0.95 * tot[et], (et, hit[et], tot[et])
    return {et.value: (hit[et], tot[et]) for et in CHECKED_TYPES}


def test_round_trip_on_a_sample_of_gold_plans():
    bases = [b for lv in tm.LEVELS for b in tm.base_tasks(levels=[lv], per_level=6)]
    _round_trip(bases, per_type_min=3)


@pytest.mark.slow  # every gold plan of the suite; the sample above runs in the fast set
def test_round_trip_on_every_gold_plan():
    _round_trip(tm.base_tasks(), per_type_min=100)


# ---------------------------------------------------------------------------------------------
# the synthetic suite
@pytest.fixture(scope="module")
def synth():
    return ij.generate_synth(seed=3, n_level1=42, n_level2=30, toolmaze_seed=0)


def test_type_balance_follows_the_paper(synth):
    l1 = Counter(t.metadata["error_types"][0] for t in synth if t.level == "LEVEL-1")
    assert sum(l1.values()) == 42
    # 42 slots over the Table 10 shares: every type 2 or 3 times, Serial_Error (10.1%) most
    expected = {
        et.value: 42 * c / sum(ij.LEVEL1_COUNTS.values()) for et, c in ij.LEVEL1_COUNTS.items()
    }
    for et, n in l1.items():
        assert abs(n - expected[et]) < 1.0, (et, n, expected[et])
    l2 = [t for t in synth if t.level == "LEVEL-2"]
    assert len(l2) >= 27  # a slot no task can host is dropped, rarely
    third = sum(len(t.metadata["error_types"]) == 3 for t in l2)
    assert abs(third - 30 * ij.LEVEL2_THIRD_ROUND) <= 2


def test_ground_truth_is_exact(synth):
    for t in synth:
        gold = Plan.parse(t.gold_plan)
        calls = gold.call_nodes
        # G: waves of the gold plan, counted by hand from the dependencies, + the response
        depth: dict[str, int] = {"root": 0}
        for n in calls:  # ids are in topological order in generated plans
            depth[n.id] = 1 + max(depth[d] for d in n.deps)
        assert t.optimal_rounds == max(depth[n.id] for n in calls) + 1
        assert t.min_calls == len(calls)
        # one name each: G and c* are the typed fields, never repeated in the metadata
        assert not {"round_gt", "funcall_times_gt"} & set(t.metadata)


def test_errors_sit_in_the_right_rounds(synth):
    corpus = load_corpus()
    flagged: Counter = Counter()
    total: Counter = Counter()
    for t in synth:
        m = t.metadata
        rounds, k = m["error_rounds"], t.replan_point.rounds_executed
        assert rounds == sorted(rounds) and len(set(rounds)) == len(rounds)
        assert rounds[-1] == k  # the latest error is in the latest round
        point = t.replan_point
        plan = Plan.parse(point.plan)
        assert isinstance(plan, Plan)
        earlier = [n.id for n in plan.call_nodes if n.status == "done"]
        last, _ = plan.next_wave(earlier)  # round k: the plan's frontier after the earlier rounds
        assert [c.name for c in point.last_wave] == [
            plan.node(i).tool for i in sorted(last, key=plan.ids.index)
        ]
        assert set(point.outputs) <= set(earlier) | set(last)  # only calls that ran
        tools = {x: corpus.tools[x] for x in t.tools}
        et = ErrorType(m["error_types"][-1])
        if et in ij.STATIC_TYPES:  # the latest flaw is still in the plan the replanner reads
            flagged[et] += et in _types(verify(plan, tools), m["error_nodes"][-1])
            total[et] += 1
        elif et in ij.RESPONSE_TYPES:
            res = [
                c.results for c in point.last_wave if c.name == plan.node(m["error_nodes"][-1]).tool
            ]
            assert et in observation_error_types([FunCall(name="x", results=r) for r in res])
        if t.level == "LEVEL-1":
            assert len(m["error_types"]) == 1
            assert set(earlier) <= set(point.outputs)  # nothing failed before round k
        else:
            assert len(m["error_types"]) in (2, 3)
    assert sum(flagged.values()) >= 0.95 * sum(total.values()), (flagged, total)


def test_a_perfect_replan_completes_and_the_flawed_plan_does_not(synth):
    static_call_level = {
        ErrorType.PARAMETER_MISSING,
        ErrorType.PARAMETER_INVALID,
        ErrorType.PARAMETER_ERROR,
        ErrorType.TYPE_ERROR,
        ErrorType.TOOL_NAME_ERROR,
    }
    for t in synth:
        gold = Plan.parse(t.gold_plan)
        fixed = run_protocol(t, gold.to_text())
        assert fixed.success, (t.task_id, fixed.error, t.metadata["error_details"])
        # T = rounds already run + the waves still needed + the response round >= G
        k = t.replan_point.rounds_executed
        after = {s.round for s in fixed.steps} - {k}
        assert after == set(range(k + 1, k + 1 + len(after)))  # waves continue the numbering
        assert k + len(after) + 1 > t.optimal_rounds - 1
        if ErrorType(t.metadata["error_types"][-1]) in static_call_level:
            as_is = run_protocol(t, t.replan_point.plan)
            assert not as_is.success and as_is.end_reason is not EndReason.ANSWERED, t.task_id


def test_records_round_trip_through_the_loader(synth):
    recs = ij.to_records(synth)
    for t, rec in zip(synth, recs, strict=True):
        inst = parse_record(
            json.loads(json.dumps(rec)), source="synth.jsonl", line=1, level=t.level
        )
        assert [e.value for e in inst.error_types] == list(dict.fromkeys(t.metadata["error_types"]))
        assert inst.round_gt == t.optimal_rounds and inst.funcall_times_gt == t.min_calls
        assert isinstance(inst.plan, Plan)
        assert [c.name for c in inst.fun_call] == [c.name for c in t.replan_point.last_wave]


def test_synth_is_deterministic():
    a = ij.generate_synth(seed=5, n_level1=6, n_level2=4)
    b = ij.generate_synth(seed=5, n_level1=6, n_level2=4)
    assert [x.model_dump_json() for x in a] == [x.model_dump_json() for x in b]
