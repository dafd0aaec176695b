"""Property tests over random valid plans from the corpus (issue acceptance for the verifier).

Random valid plans verify clean and execute clean; each single mutation of a static kind is
reported with the right code on the right node. The mutations and their expected codes are
computed here from the plan and the tool specs alone, not from the verifier.
"""

from __future__ import annotations

import random

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replan.core.plan import Plan, PlanNode, exact_reference, iter_references
from replan.core.taxonomy import VerdictCode
from replan.core.trace import Call
from replan.env.corpus import load_corpus
from replan.env.verifier import verify

CORPUS = load_corpus()
random_plan = pytest.importorskip("replan.suites.toolmaze").random_plan

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _plan(seed: int, n: int) -> Plan:
    return random_plan(CORPUS, random.Random(seed), n)


def _with(plan: Plan, node_id: str, **update) -> Plan:
    nodes = [n.model_copy(update=update) if n.id == node_id else n for n in plan.nodes]
    return Plan(nodes=nodes, thought=plan.thought)


def _codes_at(plan: Plan, node: str) -> set[VerdictCode]:
    return {f.code for f in verify(plan, CORPUS.tools, CORPUS.world()) if f.node == node}


@SETTINGS
@given(seed=st.integers(0, 10**6), n=st.integers(2, 8))
def test_random_plans_verify_and_execute_clean(seed, n):
    plan = _plan(seed, n)
    assert [f for f in verify(plan, CORPUS.tools, CORPUS.world()) if f.severity == "error"] == []
    world = CORPUS.world()
    order = [nid for layer in plan.layers() for nid in layer]
    calls = [
        Call(tool=plan.node(i).tool, args=plan.node(i).args, node_id=i)
        for i in order
        if plan.node(i).is_call
    ]
    results = world.run_calls(calls)
    assert all(r.ok for r in results), [r.verdict for r in results if not r.ok]


def _literal_params(plan: Plan):
    """(node, param) pairs holding a literal value (no reference)."""
    for node in plan.call_nodes:
        for k, v in node.args.items():
            if not list(iter_references(v, plan.ids)):
                yield node, k


@SETTINGS
@given(seed=st.integers(0, 10**6), n=st.integers(2, 8), pick=st.integers(0, 10**6))
def test_static_mutations_are_reported_on_the_right_node(seed, n, pick):
    plan = _plan(seed, n)
    rng = random.Random(pick)
    calls = plan.call_nodes
    node = calls[rng.randrange(len(calls))]
    spec = CORPUS.tools[node.tool]

    # unknown tool
    assert VerdictCode.UNKNOWN_TOOL in _codes_at(
        _with(plan, node.id, tool=node.tool + "_v9"), node.id
    )
    # drop a required param
    req = sorted(spec.required & set(node.args))
    if req:
        k = rng.choice(req)
        args = {a: v for a, v in node.args.items() if a != k}
        assert VerdictCode.MISSING_PARAM in _codes_at(_with(plan, node.id, args=args), node.id)
    # rename a param (to a name the tool does not have)
    if node.args:
        k = rng.choice(sorted(node.args))
        args = {(a + "_zz" if a == k else a): v for a, v in node.args.items()}
        assert VerdictCode.UNKNOWN_PARAM in _codes_at(_with(plan, node.id, args=args), node.id)
    # wrong type: an object where the schema wants a scalar / a list where it wants an object...
    if node.args:
        k = rng.choice(sorted(node.args))
        t = spec.param_schema(k).get("type")
        wrong = {"object": [1], "array": {"a": 1}}.get(t, {"not": "a scalar"})
        assert VerdictCode.TYPE_MISMATCH in _codes_at(
            _with(plan, node.id, args={**node.args, k: wrong}), node.id
        )


def _invalid_value(schema: dict):
    """A value of the right type that breaks a value constraint, or None if there is none."""
    if "enum" in schema:
        return "__not_in_enum__" if all(isinstance(v, str) for v in schema["enum"]) else None
    if schema.get("format") == "date":
        return "2026-02-30"
    if schema.get("format") == "email":
        return "no-at-sign"
    if "pattern" in schema:
        return "\u00a7\u00a7 !"
    if "minimum" in schema and schema.get("type") in ("integer", "number"):
        return schema["minimum"] - 1
    if "maximum" in schema and schema.get("type") in ("integer", "number"):
        return schema["maximum"] + 1
    return None


@SETTINGS
@given(seed=st.integers(0, 10**6), n=st.integers(2, 8))
def test_invalid_value_mutation(seed, n):
    plan = _plan(seed, n)
    cands = [
        (node, k, _invalid_value(CORPUS.tools[node.tool].param_schema(k)))
        for node, k in _literal_params(plan)
    ]
    cands = [c for c in cands if c[2] is not None]
    if not cands:
        return
    node, k, bad = cands[seed % len(cands)]
    assert VerdictCode.INVALID_VALUE in _codes_at(
        _with(plan, node.id, args={**node.args, k: bad}), node.id
    )


@SETTINGS
@given(seed=st.integers(0, 10**6), n=st.integers(3, 8))
def test_dependency_mutations(seed, n):
    plan = _plan(seed, n)
    g = plan.graph()
    # remove a dependency that carries data, when that leaves the producer a non-ancestor
    for node in plan.call_nodes:
        used = {r.node for r in iter_references(node.args, plan.ids)}
        for dep in node.deps:
            if dep not in used:
                continue
            g2 = g.copy()
            g2.remove_edge(dep, node.id)
            if dep in nx.ancestors(g2, node.id):
                continue
            deps = [d for d in node.deps if d != dep] or ["root"]
            mutated = _with(plan, node.id, deps=deps)
            got = _codes_at(mutated, node.id)
            assert got & {
                VerdictCode.DEPENDENCY_MISSING,
                VerdictCode.PARALLEL_CONFLICT,
                VerdictCode.WRONG_DEPENDENCY,
            }, got
            break
    # add a dependency that carries no data (and no state): a Serial_Error candidate
    for node in plan.call_nodes:
        used = {r.node for r in iter_references(node.args, plan.ids)}
        spec = CORPUS.tools[node.tool]
        needs = {p.collection for p in spec.preconditions} | {e.collection for e in spec.effects}
        for other in plan.call_nodes:
            if other.id == node.id or other.id in node.deps or other.id in used:
                continue
            if node.id in nx.ancestors(g, other.id):  # would close a cycle
                continue
            if {e.collection for e in CORPUS.tools[other.tool].effects} & needs:
                continue
            mutated = _with(plan, node.id, deps=[*node.deps, other.id])
            assert VerdictCode.UNNEEDED_DEPENDENCY in _codes_at(mutated, node.id)
            return


def test_random_plan_is_deterministic():
    a, b = _plan(5, 6), _plan(5, 6)
    assert a.to_text() == b.to_text()
    assert all(isinstance(n, PlanNode) for n in a.nodes)
    assert (
        any(exact_reference(v, a.ids) for n in a.call_nodes for v in n.args.values())
        or len(a.call_nodes) == 1
    )
