"""Audit a ParaRecover file: parse every plan, verify it, and compare with the tags.

For each instance the verifier checks every tool node of the plan against the instance's own
tool list (an instance's error may sit in nodes not yet run or in the wave that just ran), and
the last wave's recorded results are read for the two tool-response errors (an empty result is
a Null_Error, a timeout a Timeout_Error). An instance counts as *detected* when a finding of the
tagged type is raised. Because a detector that flags everything would detect everything, the
audit also reports, per type, how often it is raised on instances tagged with something else.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

from replan.core.plan import Plan
from replan.core.taxonomy import ErrorType
from replan.env.verifier import verify
from replan.suites.pararecover import FunCall, LoadError, ParaRecoverInstance, iter_instances

_TIMEOUT = re.compile(r"time\s*-?\s*out|timed out|超时|deadline exceeded|504", re.I)
_EMPTY_TEXT = re.compile(
    r"^\s*(?:null|none|\[\]|\{\}|\"\"|empty|no results?\.?|空|结果为空)\s*$", re.I
)
_EMPTY_SAYS = re.compile(
    r"returned (?:an )?empty|empty (?:result|response)|返回(?:结果)?为空|结果为空|no data returned",
    re.I,
)


def observation_error_types(calls: list[FunCall]) -> set[ErrorType]:
    """Tool-response errors visible in the recorded results of the last wave."""
    found: set[ErrorType] = set()
    for c in calls:
        r = c.results
        text = r if isinstance(r, str) else ("" if r in (None, [], {}) else str(r))
        if r in (None, "", [], {}) or _EMPTY_TEXT.match(text) or _EMPTY_SAYS.search(text):
            found.add(ErrorType.NULL_ERROR)
        if _TIMEOUT.search(text):
            found.add(ErrorType.TIMEOUT_ERROR)
    return found


def audit_instance(inst: ParaRecoverInstance) -> dict[str, Any]:
    """Per-instance result: parse status, the error types raised, and whether the tag is hit."""
    if not isinstance(inst.plan, Plan):
        return {"id": inst.id, "parse_error": inst.plan.reason, "raised": [], "detected": False}
    findings = verify(inst.plan, inst.tools)
    raised = {f.error_type for f in findings if f.error_type is not None}
    raised |= observation_error_types(inst.fun_call)
    return {
        "id": inst.id,
        "parse_error": None,
        "raised": sorted(t.value for t in raised),
        "detected": bool(raised & set(inst.error_types)),
        "findings": [f.model_dump(mode="json") for f in findings],
    }


def audit_file(path: str | Path) -> dict[str, Any]:
    """The audit report of one file (the ``--json`` object of ``replan audit pararecover``)."""
    by_tag: dict[str, dict[str, int]] = {}
    raised_elsewhere: Counter[str] = Counter()
    others: Counter[str] = Counter()
    errors: list[LoadError] = []
    instances = parse_errors = 0
    for item in iter_instances(path):
        if isinstance(item, LoadError):
            errors.append(item)
            continue
        instances += 1
        res = audit_instance(item)
        if res["parse_error"]:
            parse_errors += 1
        tag = "|".join(t.value for t in item.error_types) or "untagged"
        row = by_tag.setdefault(tag, {"n": 0, "detected": 0, "parse_errors": 0})
        row["n"] += 1
        row["detected"] += int(res["detected"])
        row["parse_errors"] += int(bool(res["parse_error"]))
        tagged = {t.value for t in item.error_types}
        for et in ErrorType:
            if et.value not in tagged:
                others[et.value] += 1
                raised_elsewhere[et.value] += int(et.value in res["raised"])
    return {
        "file": str(path),
        "instances": instances,
        "parse_errors": parse_errors,
        "line_errors": [e.model_dump() for e in errors],
        "by_tag": dict(sorted(by_tag.items())),
        "false_alarm_rate": {
            k: round(raised_elsewhere[k] / others[k], 4) for k in sorted(others) if others[k]
        },
    }
