"""Decide a task's success from the final world state and the final answer (DESIGN §3).

Success = every required record exists in the final state (with the required field values) and
the answer mentions every required fact and the id of every record marked ``mention_key``. For a
task with no valid path left (``graceful``), success means no call to a tool downstream of the
failed branch after the fault, and an answer that reports the failure.

Facts and ids match as *whole values* (:func:`mentions`): the implicit corruption
``16:37-KEACH`` contains the true ``16:37`` but does not state it. An answer that states an
injected corrupted value (the perturbation's sentinel) is never a success, whatever else it says.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from replan.core import linre
from replan.core.plan import Plan
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


#: characters that glue two pieces of one value together ("16:37-KEACH", "ab.cd", "x/y")
_JOINERS = "-:/.@+_'"


def _value_char(text: str, i: int, towards: int) -> bool:
    """Whether ``text[i]`` continues a value that reaches it from the ``towards`` side: a
    letter or digit, or a joiner that is itself followed (preceded) by one."""
    if not 0 <= i < len(text):
        return False
    ch = text[i]
    if ch.isalnum():
        return True
    if ch in _JOINERS:
        j = i + towards
        return 0 <= j < len(text) and text[j].isalnum()
    return False


def _whole(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is a whole value: no value character glued to either side."""
    return not _value_char(text, start - 1, -1) and not _value_char(text, end, 1)


def _digit_glued(text: str, i: int, towards: int) -> bool:
    """Whether ``text[i]`` glues a number to more digits (``2026-12``, ``16:37``); letters may
    touch a number (a unit: ``42km``)."""
    if not 0 <= i < len(text):
        return False
    if text[i].isdigit():
        return True
    j = i + towards
    return text[i] in _JOINERS and 0 <= j < len(text) and text[j].isdigit()


def _id_glued(text: str, start: int, end: int) -> bool:
    """Whether the number ``text[start:end]`` is a piece of an identifier: the value it sits in
    has a digit or a ``-``/``_`` before it (``DOC-80AB46D1``, ``pm_Hn7wMc5454``, ``A-3``), or
    letters then a digit after it, directly or past a ``-``/``_`` (``80AB46D1``, ``80-AB46D1``).
    Letters alone on either side leave it a number: a currency or a unit (``USD80``,
    ``EUR12.50``, ``42km``, ``80%``)."""
    i = start
    while i > 0 and (text[i - 1].isalpha() or text[i - 1] in "-_" or text[i - 1].isdigit()):
        if text[i - 1].isdigit() or (text[i - 1] in "-_" and i > 1 and text[i - 2].isalnum()):
            return True
        if text[i - 1] in "-_":
            break
        i -= 1
    j = end + (1 if end < len(text) and text[end] in "-_" else 0)
    k = j
    while k < len(text) and text[k].isalpha():
        k += 1
    return k > j and k < len(text) and text[k].isdigit()


_NUMBER = linre.compile(r"-?\d[\d,]*(?:\.\d+)?")


@functools.lru_cache(maxsize=64)
def _numbers(answer: str, unsigned: bool) -> tuple[float, ...]:
    """The whole numbers ``answer`` states, once per answer (a checker asks about each of a
    task's facts in turn); ``unsigned``: a leading ``-`` is a dash, not a sign (the fact
    looked for is not negative)."""
    out = []
    for m in _NUMBER.finditer(answer):
        start = m.start() + (1 if unsigned and m.group().startswith("-") else 0)
        if _digit_glued(answer, start - 1, -1) or _digit_glued(answer, m.end(), 1):
            continue  # part of a longer value: a date, a time, a version, an id
        if _id_glued(answer, start, m.end()):
            continue  # a piece of a generated id: DOC-80AB46D1 states no 80
        try:
            out.append(float(answer[start : m.end()].replace(",", "")))
        except ValueError:
            continue
    return tuple(out)


def mentions(answer: str | None, fact: Any) -> bool:
    """Whether ``answer`` states ``fact`` as a whole value (case-insensitive; numbers in any
    common format). ``16:37-KEACH`` does not state ``16:37``, nor ``ID-123`` state ``ID``: a
    corrupted value that merely contains the true one is a different value."""
    if answer is None:
        return False
    if isinstance(fact, (int, float)) and not isinstance(fact, bool):
        target = float(fact)
        return any(
            math.isclose(n, target, rel_tol=1e-6, abs_tol=0.006)
            for n in _numbers(answer, target >= 0)
        )
    needle = str(fact).lower().strip()
    if not needle:
        return False
    text = answer.lower()
    start = text.find(needle)
    while start >= 0:
        if _whole(text, start, start + len(needle)):
            return True
        start = text.find(needle, start + 1)
    return False


def injected_sentinels(task: Task, episode: Episode | None = None) -> list[Any]:
    """The corrupted values injected into this run (the task's and every perturbed step's);
    booleans are left out (a flipped flag has no text of its own to look for)."""
    found = [task.perturbation.sentinel] if task.perturbation is not None else []
    if episode is not None:
        found += [s.perturbation.sentinel for s in episode.steps if s.perturbation is not None]
    out: list[Any] = []
    for v in found:
        if v is None or isinstance(v, bool) or v in out:
            continue
        if isinstance(v, (str, int, float)):
            out.append(v)
    return out


def graceful_termination(task: Task, answer: str | None, episode: Episode | None) -> CheckResult:
    """Whether a run stopped wisely where no valid path is left (ToolMaze §3.5, recovery (3)):
    no call to a tool downstream of the failed branch after the fault, and an answer that
    reports the failure. The sentinel rule of :func:`check` is not part of it."""
    c: Checker = task.checker
    reasons: list[str] = []
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
    if not any(w in (answer or "").lower() for w in c.failure_words):
        reasons.append("the answer does not report the failure")
    return CheckResult(success=not reasons, reasons=reasons)


def check(
    task: Task, final_state: WorldState, answer: str | None, episode: Episode | None = None
) -> CheckResult:
    c: Checker = task.checker
    reasons: list[str] = []
    answer = answer or ""
    for sentinel in injected_sentinels(task, episode):
        if mentions(answer, sentinel):
            # a corrupted value reported as fact is never a success (ToolMaze §3.4: the
            # implicit fault is survived only by not trusting it)
            reasons.append(f"the answer states the injected corrupted value {sentinel!r}")
    if c.graceful:
        reasons += graceful_termination(task, answer, episode).reasons
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


def abandoned_calls(previous: Plan, new: Plan, executed: Iterable[str] = ()) -> list[str]:
    """The pending call nodes of ``previous`` that ``new`` drops without a replacement (a
    give-up, whatever the plan's words say), else ``[]``.

    Pending = a call node of ``previous`` that has not run cleanly (``executed``: the ids that
    did). It is *dropped* when ``new`` has no call node with its id and none with its tool (a
    retry under a new id, or a duplicate removed while its twin stays, keeps the tool). A
    *replacement* is a call node of ``new`` that ``previous`` does not have: a new id, or an id
    whose tool changed (a reroute). Pass@1 (seed 000, Appendix B: the replanned plan
    "completes the task in subsequent rounds") does not count a replan that reaches the
    response by abandoning calls it still owed.
    """
    ran = set(executed)
    pending = [n for n in previous.call_nodes if n.id not in ran]
    new_ids = {n.id for n in new.call_nodes}
    new_tools = {n.tool for n in new.call_nodes}
    dropped = [n.id for n in pending if n.id not in new_ids and n.tool not in new_tools]
    if not dropped:
        return []
    before = {n.id: n.tool for n in previous.call_nodes}
    replaced = any(n.id not in before or before[n.id] != n.tool for n in new.call_nodes)
    return [] if replaced else dropped
