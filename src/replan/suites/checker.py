"""Decide a task's success from the final world state and the final answer (DESIGN §3).

Success = every required record exists in the final state (with the required field values) and
the answer mentions every required fact and the id of every record marked ``mention_key``. For a
task with no valid path left (``graceful``), success means no call to a tool downstream of the
failed branch after the fault, and an answer that reports the failure.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from replan.core.task import Checker, Task
from replan.core.trace import Episode
from replan.env.world import WorldState


@dataclass
class CheckResult:
    success: bool
    reasons: list[str] = field(default_factory=list)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return math.isclose(float(a), float(b), rel_tol=1e-6, abs_tol=1e-6)
    return a == b


def mentions(answer: str, fact: Any) -> bool:
    """Whether ``answer`` states ``fact`` (case-insensitive; numbers in any common format)."""
    if answer is None:
        return False
    text = answer.lower()
    if isinstance(fact, (int, float)) and not isinstance(fact, bool):
        nums = [float(x.replace(",", "")) for x in re.findall(r"-?\d[\d,]*\.?\d*", answer)]
        return any(math.isclose(n, float(fact), rel_tol=1e-6, abs_tol=0.006) for n in nums)
    return str(fact).lower() in text


def check(
    task: Task, final_state: WorldState, answer: str | None, episode: Episode | None = None
) -> CheckResult:
    c: Checker = task.checker
    reasons: list[str] = []
    answer = answer or ""
    if c.graceful:
        if episode is not None:
            fault_at = next(
                (i for i, s in enumerate(episode.steps) if s.perturbation is not None), None
            )
            if fault_at is not None:
                late = [
                    s.call.tool
                    for s in episode.steps[fault_at + 1 :]
                    if s.call.tool in c.forbidden_after_failure
                ]
                if late:
                    reasons.append(f"called {late[0]} downstream of the failed branch")
        if not any(w in answer.lower() for w in c.failure_words):
            reasons.append("the answer does not report the failure")
        return CheckResult(success=not reasons, reasons=reasons)
    for req in c.required_records:
        recs = final_state.records(req.collection)
        matches = [
            k for k, r in recs.items() if all(_same(r.get(f), v) for f, v in req.where.items())
        ]
        if not matches:
            reasons.append(f"no {req.collection} record with {req.where}")
        elif req.mention_key and not any(mentions(answer, k) for k in matches):
            # any matching record will do: a retried call may have made a second one
            reasons.append(f"the answer does not mention {req.collection} id {matches[0]}")
    for fact in c.required_facts:
        if not mentions(answer, fact):
            reasons.append(f"the answer does not state {fact!r}")
    return CheckResult(success=not reasons, reasons=reasons)
