"""ToolMaze-style suite: structure per level, validity of every instance, statistics.

The validity checks run on a stratified subset and on all 2,000 instances (the full sweep takes
about 25 s on two cores, generation included). Each check executes the stored plans in the task's own world and asks the task's
checker — nothing is taken from the generator's own bookkeeping.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import subprocess
import sys
from collections import Counter

import pytest

from replan.core.plan import RESPONSE, Plan
from replan.core.task import MODES, mode_flags
from replan.env import task_world
from replan.env.checker import check, mentions
from replan.env.corpus import load_corpus
from replan.env.perturb import injector_for
from replan.env.recovery_cost import min_calls_after_fault
from replan.env.verifier import verify
from replan.suites import list_suites, load_suite
from replan.suites import toolmaze as tm

SUBSET = 6  # base tasks per level in the default run (x 5 modes x 4 levels = 120 instances)


@pytest.fixture(scope="module")
def subset():
    return tm.generate(limit=SUBSET)


@pytest.fixture(scope="module")
def corpus():
    return load_corpus()


def _answer(outputs, plan: Plan) -> str:
    return tm.answer_from_outputs(outputs, [n.id for n in plan.call_nodes])


def _problems(task) -> list[str]:
    """Everything wrong with one instance (empty when valid)."""
    out = []
    plans = tm.path_plans(task)
    gold = plans[0]
    if task.mode == "NP":
        for p in plans:  # every valid path runs clean and passes the checker
            w = task_world(task)
            ex = tm.execute_plan(p, w)
            if ex.failed:
                out.append(f"path {[n.tool for n in p.call_nodes]} fails: {ex.error}")
                continue
            res = check(task, w.state, _answer(ex.outputs, p))
            if not res.success:
                out.append(f"path {[n.tool for n in p.call_nodes]}: {res.reasons}")
        if check(task, task_world(task).initial_state, "").success:
            out.append("the checker passes an empty answer in the start state")
        return out
    explicit, permanent = mode_flags(task.mode)
    w = task_world(task, injector_for(task))
    ex = tm.execute_plan(gold, w, stop_on_perturbation=True)
    if not ex.perturbed:
        return [f"running s* does not make the fault fire ({ex.error})"]
    pert = ex.steps[-1][1].perturbation
    if pert.explicit != explicit or pert.permanent != permanent:
        out.append(f"fault {pert} does not match mode {task.mode}")
    if not permanent:  # retrying the victim once recovers
        w2 = task_world(task, injector_for(task))
        ex2 = tm.execute_plan(gold, w2, retry_perturbed=True)
        res = check(task, w2.state, _answer(ex2.outputs, gold))
        if ex2.failed or not res.success:
            out.append(f"retry after the transient fault fails: {ex2.error} {res.reasons}")
    elif task.level == "C1":  # no path left: graceful termination is success, going on is not
        stop = check(
            task, w.state, f"I could not finish: {pert.victim} failed.", _episode(ex, gold)
        )
        if not stop.success:
            out.append(f"graceful termination is not accepted: {stop.reasons}")
        w3 = task_world(task, injector_for(task))
        ex3 = tm.execute_plan(gold, w3)
        if check(
            task, w3.state, _answer(ex3.outputs, gold) + " failed", _episode(ex3, gold)
        ).success:
            out.append("calling downstream of the failed branch still passes")
    else:  # an alternative path avoiding the victim completes the task
        alts = [p for p in plans[1:] if pert.victim not in [n.tool for n in p.call_nodes]]
        if not alts:
            return [*out, f"no alternative path avoids {pert.victim}"]
        alt = alts[0]
        done = {
            k: v
            for k, v in ex.outputs.items()
            if k not in ex.perturbed
            and alt.get(k) is not None
            and alt.node(k).tool == gold.node(k).tool
        }
        ex4 = tm.execute_plan(alt, w, done=done)
        res = check(task, w.state, _answer(ex4.outputs, alt))
        if ex4.failed or not res.success:
            out.append(f"the alternative path fails: {ex4.error} {res.reasons}")
    return out


def _episode(ex, plan: Plan):
    """The steps of an execution as an Episode (what the graceful-termination check reads)."""
    from replan.core.trace import Call, Episode, Step

    steps = [
        Step(
            index=i,
            call=Call(tool=plan.node(nid).tool or "", args=plan.node(nid).args, node_id=nid),
            perturbation=res.perturbation,
        )
        for i, (nid, res) in enumerate(ex.steps)
    ]
    return Episode(episode_id="e", task_id="t", steps=steps)


# ---------------------------------------------------------------------------------------------
def test_subset_has_every_level_and_mode(subset):
    cells = Counter((t.level, t.mode) for t in subset)
    assert set(cells) == {(lv, m) for lv in tm.LEVELS for m in MODES}
    assert set(cells.values()) == {SUBSET}


def test_every_instance_of_the_subset_is_valid(subset):
    bad = {t.task_id: p for t in subset if (p := _problems(t))}
    assert not bad, json.dumps(bad, indent=1)[:3000]


@pytest.fixture(scope="module")
def full_suite():
    """All 2,000 instances, generated once for the tests that read them all."""
    return tm.generate()


@pytest.mark.slow
def test_every_instance_of_the_full_suite_is_valid(full_suite):
    """All 2,000 instances (about 25 s on two cores, generation included)."""
    tasks = full_suite
    assert len(tasks) == 2000
    bad = {t.task_id: p for t in tasks if (p := _problems(t))}
    assert not bad, json.dumps(dict(itertools.islice(bad.items(), 20)), indent=1)


def test_levels_have_their_topology(subset, corpus):
    for t in (t for t in subset if t.mode == "NP"):
        groups = {corpus.tools[x].group for x in t.tools}
        n_paths = len(t.valid_paths)
        used = [
            g for g in groups if g and sum(1 for x in t.tools if corpus.tools[x].group == g) >= 2
        ]
        if t.level == "C1":
            assert n_paths == 1 and not used, t.task_id
            gold = tm.path_plans(t)[0]
            assert len(gold.call_nodes) == gold.depth  # linear: one call per wave
        elif t.level == "C2":
            assert n_paths >= 2 and len(used) == 1
            assert corpus.groups[used[0]].kind in ("1-1", "1-N")
        elif t.level == "C3":
            assert n_paths >= 2 and len(used) == 1
            assert corpus.groups[used[0]].kind == "N-N"
        else:
            assert len(used) >= 2 and n_paths >= 4
        cats = {corpus.tools[x].category for x in t.valid_paths[0]}
        assert {"source", "action"} <= cats or "action" in cats, t.task_id
        assert t.min_calls == len(t.valid_paths[0]) == min(len(p) for p in t.valid_paths)


def test_gold_paths_verify_clean_and_use_real_data_flow(subset, corpus):
    for t in (t for t in subset if t.mode == "NP"):
        for p in tm.path_plans(t):
            assert verify(p, {x: corpus.tools[x] for x in t.tools}, task_world(t)) == [], t.task_id
            calls = p.call_nodes
            for n in calls:  # a call is a source, or it takes something from an earlier call
                fed = any("${" in json.dumps(v) for v in n.args.values())
                assert fed or n.deps == ["root"], (t.task_id, n.id)
                assert not (fed and "root" in n.deps), (t.task_id, n.id)
            assert sum(n.deps == ["root"] for n in calls) < len(calls)


def test_query_states_every_literal_and_asks_for_the_facts(subset):
    for t in (t for t in subset if t.mode == "NP"):
        for v in t.metadata["literals"].values():
            text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
            assert text in t.query or str(v) in t.query, (t.task_id, v)
        if t.checker.required_facts or t.checker.required_records:
            assert any(
                w in t.query for w in ("tell me", "let me know", "report back", "Reply with")
            )


def test_profiles_point_at_s_star_and_are_identical_for_every_run(subset):
    for t in (t for t in subset if t.mode != "NP"):
        p = t.perturbation
        assert p is not None and p.mode == t.mode
        assert p.victim in t.valid_paths[0]
        if t.level == "C1":
            assert p.group is None
        else:
            assert p.group is not None and p.victim in t.faults.victim_tools
        if t.level == "C4":
            assert p.slot and p.slot.startswith("branch-")
        explicit, _ = mode_flags(t.mode)
        if explicit:
            assert p.kind in ("http_404", "http_429", "http_503", "timeout", "empty")
        else:
            assert p.sentinel is not None and p.field
            assert t.faults.implicit[p.victim]["value"] == p.sentinel
    again = {t.task_id: t for t in tm.generate(limit=SUBSET)}
    assert all(again[t.task_id].perturbation == t.perturbation for t in subset)


def test_min_calls_after_fault_by_hand(subset):
    t = next(t for t in subset if t.level == "C2" and t.mode == "P2")
    victim = t.perturbation.victim
    alt = [p for p in t.valid_paths if victim not in p]
    # nothing ran yet: the cheapest path that avoids the victim, all of it
    assert min_calls_after_fault(t, victim) == min(len(p) for p in alt)
    # everything of that path but one call already ran: one call left
    best = min(alt, key=len)
    assert min_calls_after_fault(t, victim, best[:-1]) == 1
    # transient: retrying on s* counts the victim again
    t1 = next(x for x in subset if x.base_id == t.base_id and x.mode == "P1")
    gold = t1.valid_paths[0]
    before = gold[: gold.index(victim)]
    assert min_calls_after_fault(t1, victim, before) <= len(gold) - len(before)
    # C1 under a permanent fault: graceful termination, no calls
    c1 = next(x for x in subset if x.level == "C1" and x.mode == "P4")
    assert min_calls_after_fault(c1, c1.perturbation.victim) == 0
    assert t.faults.min_calls_after_fault == t.faults.min_calls_after_fault_by_victim[victim]


def test_stats_compute_table1_figures():
    tasks = tm.generate(levels=["C1", "C2"], limit=4, modes=["NP", "P1"])
    s = tm.stats(tasks)
    assert s["modes"] == {"NP": 8, "P1": 8}
    for lv in ("C1", "C2"):
        ts = [t for t in tasks if t.level == lv and t.mode == "NP"]
        sets = [set(t.tools) for t in ts]
        pairs = list(itertools.combinations(sets, 2))
        jac = sum(len(a & b) / len(a | b) for a, b in pairs) / len(pairs)
        row = s["levels"][lv]
        assert row["tasks"] == 4
        assert row["mean_jaccard"] == pytest.approx(jac, abs=1e-4)
        assert row["avg_length"] == pytest.approx(sum(t.min_calls for t in ts) / 4, abs=0.01)
        assert row["valid_paths"] == sum(len(t.valid_paths) for t in ts)


@pytest.mark.slow  # generating all 2,000 instances: 26 s of CPU
def test_full_suite_meets_the_targets(full_suite):
    s = tm.stats(full_suite)
    assert s["modes"] == {m: 400 for m in MODES}
    for row in s["levels"].values():
        assert row["tasks"] == 100
        assert row["min_length"] >= 5
    assert s["levels"]["C4"]["avg_length"] >= 10
    for lv in tm.LEVELS:
        assert s["levels"][lv]["mean_jaccard"] <= 0.06, (lv, s["levels"][lv])


def test_generation_is_deterministic_across_processes():
    code = (
        "import json,hashlib;from replan.suites import toolmaze as tm;"
        "ts=tm.generate(limit=2);"
        "print(hashlib.sha256(json.dumps([t.model_dump(mode='json') for t in ts],"
        "sort_keys=True).encode()).hexdigest())"
    )
    outs = set()
    for hs in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hs}
        outs.add(subprocess.check_output([sys.executable, "-c", code], env=env, text=True))
    assert len(outs) == 1


def test_random_plan_verifies_and_executes_clean(corpus):
    rng = random.Random(11)
    for n in (1, 3, 6, 9):
        plan = tm.random_plan(corpus, rng, n)
        assert len(plan.call_nodes) == n
        world = corpus.world()
        assert verify(plan, corpus.tools, world) == []
        assert tm.execute_plan(plan, world).failed is None
        for node in plan.call_nodes[1:]:
            assert node.deps != ["root"]  # real data flow: fed by an earlier call
    with pytest.raises(ValueError, match="at least 1"):
        tm.random_plan(corpus, rng, 0)


def test_load_suite_and_list(subset):
    names = [s["name"] for s in list_suites()]
    assert names == ["toolmaze", "toolmaze-guided", "pararecover", "pararecover-synth"]
    got = load_suite("toolmaze", levels="C2", modes=["P3"], limit=2)
    assert [t.task_id for t in got] == ["toolmaze-C2-000-P3", "toolmaze-C2-001-P3"]
    with pytest.raises(ValueError, match="unknown suite"):
        load_suite("nope")
    with pytest.raises(ValueError, match="no option 'path'"):
        load_suite("toolmaze", path="x")
    with pytest.raises(ValueError, match="unknown ToolMaze level"):
        load_suite("toolmaze", levels=["C9"])
    with pytest.raises(ValueError, match="needs path"):
        load_suite("pararecover")


def test_tasks_serialise_losslessly(subset):
    from replan.core.task import Task

    for t in subset[:10]:
        assert Task.model_validate_json(t.model_dump_json()) == t


def test_response_depends_on_every_sink(subset):
    for t in (t for t in subset if t.mode == "NP"):
        for p in tm.path_plans(t):
            g = p.graph()
            sinks = {n.id for n in p.call_nodes if set(g.successors(n.id)) <= {RESPONSE}}
            assert set(p.node(RESPONSE).deps) == sinks


# -- the checker: whole values, never an injected value -----------------------------------------
def test_a_fact_matches_only_as_a_whole_value():
    assert not mentions("The meeting is at 16:37-KEACH.", "16:37")  # the implicit corruption
    assert mentions("The meeting is at 16:37.", "16:37")
    assert mentions("16:37, as planned", "16:37")
    assert not mentions("order ORD-1234X", "ORD-1234")
    assert mentions("Total: 1,234.50 USD", 1234.5)
    assert mentions("about 42km away", 42)  # a unit may touch a number
    assert not mentions("on 2026-12-03", 12)  # part of a date, not the number 12
    assert not mentions("at 16:37", 37)
    # a number inside a generated id is no statement of it (guided C4-042 of v4 passed a run
    # without its forecast call: the pop of 80 was "in" the created DOC-80AB46D1)
    assert not mentions("Saved as DOC-80AB46D1.", 80)
    assert not mentions("Saved as DOC-80AB46D1.", 46)
    assert not mentions("card pm_Hn7wMc5454", 5454)
    assert not mentions("ref 80-AB46D1", 80)
    assert not mentions("order ORD-1234X", 1234)
    assert mentions("Rain is likely (80%).", 80)
    assert mentions("USD80 in all", 80)  # a currency before it, a unit after it
    assert mentions("EUR12.50", 12.5)
    assert mentions("pop: 80", 80)
    assert mentions("low of -3.3 C", -3.3)


def test_an_answer_with_the_injected_value_is_never_a_success():
    # a P3 instance whose corruption appends a token to a string fact: toolmaze-C1-020-P3,
    # "05:00" -> "05:00-8X4LQ" (24 of the suite's 800 P3/P4 instances are of this kind)
    t = next(
        t
        for t in tm.generate(levels=["C1"], modes=["P3"], limit=21)
        if t.mode in ("P3", "P4")
        and isinstance(t.perturbation.sentinel, str)
        and any(
            isinstance(f, str) and t.perturbation.sentinel.startswith(f + "-")
            for f in t.checker.required_facts
        )
    )
    fact = next(f for f in t.checker.required_facts if t.perturbation.sentinel.startswith(f"{f}-"))
    gold = tm.path_plans(t)[0]
    w = task_world(t)
    ex = tm.execute_plan(gold, w)
    clean = _answer(ex.outputs, gold)
    assert check(t, w.state, clean).success
    corrupted = clean.replace(fact, t.perturbation.sentinel)
    res = check(t, w.state, corrupted)
    assert not res.success
    assert any("does not state" in r for r in res.reasons)
    # stating the true value as well does not make up for reporting the corrupted one
    res2 = check(t, w.state, clean + f" (the tool first said {t.perturbation.sentinel})")
    assert not res2.success and any("injected corrupted value" in r for r in res2.reasons)


def test_limit_keeps_every_level_and_mode_cell():
    from replan.runner.experiment import RunConfig, select_tasks, suite_options

    cfg = RunConfig(suite="toolmaze", limit=40)
    opts = suite_options(cfg)
    assert opts["per_level"] == 2  # 40 tasks over 4 levels x 5 modes: 2 per cell
    tasks = load_suite("toolmaze", **opts)
    chosen = select_tasks(tasks, cfg)
    cells = Counter((t.level, t.mode) for t in chosen)
    assert len(chosen) == 40
    assert cells == {(lvl, m): 2 for lvl in ("C1", "C2", "C3", "C4") for m in MODES}
    # fewer tasks than cells: one per cell, spread so that 5 tasks already cover every level
    # and every mode
    few = select_tasks(tasks, RunConfig(suite="toolmaze", limit=5))
    assert len({(t.level, t.mode) for t in few}) == 5
    assert {t.level for t in few} == {"C1", "C2", "C3", "C4"} and {t.mode for t in few} == set(
        MODES
    )
    # with a filter, the cells are the filtered ones
    cfg2 = RunConfig(suite="toolmaze", limit=6, filter=["C2", "P1", "P3"])
    picked = select_tasks(load_suite("toolmaze", **suite_options(cfg2)), cfg2)
    assert Counter((t.level, t.mode) for t in picked) == {("C2", "P1"): 3, ("C2", "P3"): 3}
