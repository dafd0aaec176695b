"""One wave executor (issue 31 §1): ``env.waves.run_wave`` runs a plan's waves offline for
every suite; expected values worked out by hand on a two-tool bank world."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from replan.core.plan import Plan
from replan.env.waves import run_wave

from .test_world import world

SRC = Path(__file__).resolve().parents[2] / "src" / "replan"


def _plan(nodes: list[dict[str, Any]]) -> Plan:
    tasks = [{"id": "root", "desc": "bank", "dep": [], "status": True}, *nodes]
    tasks.append({"id": "response", "desc": "answer", "dep": [nodes[-1]["id"]], "status": False})
    got = Plan.parse({"tasks": tasks})
    assert isinstance(got, Plan), got
    return got


def _node(nid: str, tool: str, para: dict[str, Any], dep: list[str]) -> dict[str, Any]:
    return {"id": nid, "name": tool, "para": para, "desc": tool, "dep": dep, "status": False}


def _collect(log: list[tuple[str, Any]], go_on: bool = True):
    def visit(nid, call, res, again):
        log.append((nid, res))
        return go_on

    return visit


def test_a_wave_runs_ready_calls_in_id_order_each_in_the_state_the_ones_before_left():
    plan = _plan(
        [
            _node("1", "open_account", {"owner": "ana"}, ["root"]),
            _node("2", "open_account", {"owner": "bo"}, ["root"]),
            _node("3", "deposit", {"account_id": "${1.account_id}", "amount": 5}, ["1"]),
        ]
    )
    w = world()
    log: list[tuple[str, Any]] = []
    first = run_wave(plan, w, [], {}, _collect(log))
    # by hand: 1 and 2 are ready (root is done), 3 waits for 1
    assert first.calls == ["1", "2"] and [n for n, _ in log] == ["1", "2"]
    assert all(r.ok for _, r in log)
    assert len(w.state.collections["accounts"]) == 3  # the closed one + two opened
    outputs = {n: r.observation for n, r in log}
    log.clear()
    second = run_wave(plan, w, ["1", "2"], outputs, _collect(log))
    assert second.calls == ["3"] and log[0][1].ok
    assert log[0][1].observation == {"balance": 5}  # deposited into node 1's account
    assert run_wave(plan, w, ["1", "2", "3"], outputs, _collect(log)).calls == []


def test_a_call_never_binds_the_output_of_its_own_wave():
    # 2 reads node 1's output but does not depend on it: both run in one wave, and 2's
    # reference is unbound (1's output is not there before the wave)
    plan = _plan(
        [
            _node("1", "open_account", {"owner": "ana"}, ["root"]),
            _node("2", "deposit", {"account_id": "${1.account_id}", "amount": 5}, ["root"]),
        ]
    )
    log: list[tuple[str, Any]] = []
    assert run_wave(plan, world(), [], {}, _collect(log)).calls == ["1", "2"]
    assert log[0][1].ok and log[1][1].verdict.code.value == "unbound_reference"


def test_visit_can_end_the_wave_and_skipped_nodes_do_not_run():
    plan = _plan(
        [
            _node("1", "open_account", {"owner": "ana"}, ["root"]),
            _node("2", "open_account", {"owner": "bo"}, ["root"]),
            _node("3", "open_account", {"owner": "cy"}, ["root"]),
        ]
    )
    log: list[tuple[str, Any]] = []
    assert run_wave(plan, world(), [], {}, _collect(log, go_on=False)).calls == ["1", "2", "3"]
    assert [n for n, _ in log] == ["1"]  # stopped after the first call
    log.clear()
    w = world()
    run_wave(plan, w, [], {}, _collect(log), skip={"2"})
    assert [n for n, _ in log] == ["1", "3"]
    assert len(w.state.collections["accounts"]) == 3


def test_only_the_environment_executes_calls_in_a_world():
    """Suites, graphs, nodes and models never call ``World.execute`` themselves: plan waves go
    through ``env.waves.run_wave`` (offline) or the tool wrapper (agents)."""
    offenders = []
    for pkg in ("suites", "graphs", "nodes", "models"):
        for path in sorted((SRC / pkg).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "execute"
                ):
                    offenders.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert offenders == [], offenders
