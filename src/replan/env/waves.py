"""One wave of a plan run offline against a world: the one executor of plan waves outside the
agent graphs (the ToolMaze plan executor, the ParaRecover-synth history, and what builds on them).

A wave is :meth:`~replan.core.plan.Plan.next_wave` of the nodes done: tool-less nodes settle
first, then every ready call node runs, in node-id order. The calls of one wave run together:
each binds the outputs of the nodes done *before* the wave (``bindings``), never another call of
its own wave, and each runs in the state the calls before it left (the world commits as it
goes). The replanner loop's dispatch (:mod:`replan.nodes.frontier`) runs the same waves
concurrently with the same meaning.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from replan.core.plan import Plan
from replan.core.trace import Call
from replan.env.world import ExecResult, World

#: ``visit(node_id, call, result, again) -> go on?``: what a caller does with each call's result;
#: ``again()`` issues the same call once more (a retry, in the state now, with the wave's
#: bindings) and returns its result; returning ``False`` ends the wave after that call.
Visit = Callable[[str, Call, ExecResult, Callable[[], ExecResult]], bool]


@dataclass
class Wave:
    """The wave that ran: its call nodes (node-id order) and the tool-less nodes settled before
    it. No ``calls``: nothing was ready (the plan is finished, or stuck)."""

    calls: list[str]
    settled: list[str]


def run_wave(
    plan: Plan,
    world: World,
    done: Iterable[str],
    bindings: Mapping[str, Any],
    visit: Visit,
    *,
    skip: Collection[str] = (),
) -> Wave:
    """Run the next wave of ``plan`` after the nodes ``done`` (module docstring); each call's
    result goes to ``visit``. Nodes in ``skip`` belong to the wave but are not run (their
    outcome is the caller's: a result it imposes)."""
    calls, settled = plan.next_wave(done)
    seen = dict(bindings)  # a wave runs together: no call sees another's output
    for nid in calls:
        if nid in skip:
            continue
        node = plan.node(nid)
        call = Call(tool=node.tool or "", args=node.args, node_id=nid)
        again = partial(world.execute, call, seen)
        if not visit(nid, call, again(), again):
            break
    return Wave(calls=calls, settled=settled)


__all__ = ["Visit", "Wave", "run_wave"]
