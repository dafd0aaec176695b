"""c*, the optimum of Recovery Cost (seed 002 eq. 3): the fewest calls that still complete a task
after a fault, given what the agent had already run.

It depends only on the task (its valid paths and mode), so it lives below both the suite that
stores it per victim at generation time and the evaluator that computes it per trajectory.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from replan.core.task import Task, mode_flags


def min_calls(
    paths: Sequence[Mapping[str, Any]], victim: str, executed: Iterable[str], permanent: bool
) -> int:
    """The fewest calls left on any of ``paths`` (each ``{"tools": [...]}``) once ``executed``
    tools count as done; a permanent fault rules out every path through ``victim``, and with
    no path left the optimum is graceful termination: 0 calls."""
    done = Counter(executed)
    best: int | None = None
    for p in paths:
        tools = list(p["tools"])
        if permanent and victim in tools:
            continue
        left = Counter(tools) - done
        n = sum(left.values())
        best = n if best is None else min(best, n)
    return 0 if best is None else best


def min_calls_after_fault(task: Task, victim: str, executed: Iterable[str] = ()) -> int:
    """c*: the fewest tool calls that complete ``task`` after ``victim``'s first faulty response.

    ``executed`` are the tools the agent had already run successfully (clean) before the fault;
    a path's call counts as done when such a call of the same tool exists. Transient modes may
    retry the victim (it is counted again); permanent modes must avoid it. With no path left
    (C1 under P2/P4) the optimum is graceful termination: 0 calls.
    """
    permanent = task.mode != "NP" and mode_flags(task.mode)[1]
    return min_calls([{"tools": p} for p in task.valid_paths], victim, executed, permanent)
