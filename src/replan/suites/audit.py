"""Audit a ParaRecover file: parse every plan, verify it, and compare with the tags.

For each instance the verifier checks every tool node of the plan against the instance's own
tool list (an instance's error may sit in nodes not yet run or in the wave that just ran), and
the last wave's recorded results are read for the two tool-response errors (an empty result is
a Null_Error, a timeout a Timeout_Error). An instance counts as *detected* when a finding of the
tagged type is raised. Because a detector that flags everything would detect everything, the
audit also reports, per type, how often it is raised on instances tagged with something else
(its *false-alarm rate*).

Real instances often hold more than the one error their tag names (the ``error_reason`` text of
many lines lists two or three), so a "false alarm" is an upper bound: it counts every finding
of a type on an instance whose tag is another type, whether or not the plan has that error too.

Each rule reads its type's definition in ParaRecover's Table 12 (docs/metrics.md lists them).
Every plan-error definition there opens with "In the unfinished tasks of the updated DAG", so a
finding of those types counts only on a node that has not run (:data:`WHOLE_PLAN_TYPES` are the
exceptions), and the verifier runs with ``unfinished=True`` and the instance's query.

Which types a static check can decide (:data:`STATIC_TYPES`) and which it cannot
(:data:`NOT_STATIC`, with the reason) is stated here and printed by ``replan audit``.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from replan.core import linre
from replan.core.plan import Plan
from replan.core.taxonomy import ErrorType
from replan.core.tools import canonical_json
from replan.env.verifier import node_args, verify
from replan.suites.pararecover import (
    FunCall,
    LoadError,
    ParaRecoverInstance,
    iter_instances,
    match_last_wave,
)

#: error types decided from the plan, the tool schemas and the plan's references alone
STATIC_TYPES: tuple[ErrorType, ...] = (
    ErrorType.TYPE_ERROR,
    ErrorType.PARAMETER_ERROR,
    ErrorType.PARAMETER_MISSING,
    ErrorType.TOOL_NAME_ERROR,
    ErrorType.PARAMETER_INVALID,
    ErrorType.DEPENDENCE_ERROR,
    ErrorType.DEPENDENCE_NULL,
    ErrorType.PARALLELISM_ERROR,
    ErrorType.SERIAL_ERROR,
    ErrorType.TOOLCALL_REDUNDANCY,
)

#: error types the verifier does not decide statically, and why
NOT_STATIC: dict[ErrorType, str] = {
    ErrorType.TOOLCALL_MISSING: "needs the task's meaning: which step the query requires",
    ErrorType.TOOL_SELECT_ERROR: (
        "needs the task's meaning; only a call whose arguments are exactly another tool's is "
        "flagged"
    ),
    ErrorType.NULL_ERROR: "a tool's response, read from the recorded results, not the plan",
    ErrorType.TIMEOUT_ERROR: "a tool's response, read from the recorded results, not the plan",
}

#: the share below which a rate is not claimed: fewer tagged instances than this
MIN_TAGGED = 3

_TIMEOUT = linre.compile(r"time\s*-?\s*out|timed out|超时|deadline exceeded|504", linre.I)
_EMPTY_TEXT = linre.compile(
    r"^\s*(?:null|none|\[\]|\{\}|\"\"|empty|no results?\.?|空|结果为空)\s*$", linre.I
)
_EMPTY_SAYS = linre.compile(
    r"returned (?:an )?empty|empty (?:result|response)|返回(?:结果)?为空|结果为空|no data returned",
    linre.I,
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


def recorded_outputs(inst: ParaRecoverInstance) -> dict[str, Any]:
    """Node id -> result, for the plan's call nodes whose call the last wave recorded (same
    tool and arguments; a not-yet-updated node is matched by tool, as the replay does)."""
    if not isinstance(inst.plan, Plan):
        return {}
    specs = {t.name: t for t in inst.tools}
    out: dict[str, Any] = {}
    for c in inst.fun_call:
        for n in inst.plan.call_nodes:
            if n.tool == c.name and n.id not in out:
                same = canonical_json(node_args(n, specs.get(n.tool or ""))) == canonical_json(
                    c.arguments if c.arguments is not None else {}
                )
                if same:
                    out[n.id] = c.results
                    break
    for nid, c in match_last_wave(inst.plan, inst.fun_call).items():
        out.setdefault(nid, c.results)
    return out


#: Types whose Table 12 definition is not confined to "the unfinished tasks of the updated
#: DAG": a tool's response ("During tool execution, the tool returns an empty result" /
#: "fails with a timeout error") and a missing call ("In the updated plan DAG generated by the
#: agent, some tool calls required to complete the task are missing"). Every other definition
#: opens with "In the unfinished tasks of the updated DAG generated by the agent", so a finding
#: of those types counts only on a node that has not run.
WHOLE_PLAN_TYPES = frozenset(
    {ErrorType.NULL_ERROR, ErrorType.TIMEOUT_ERROR, ErrorType.TOOLCALL_MISSING}
)

#: Parse failures that are themselves a Dependence_Error. ParaRecover Table 12: "some
#: dependencies between nodes are incorrectly specified. For example, node 3 should depend on
#: node 2, but is mistakenly represented as depending on node 1." A dependency on a node the
#: plan does not have, or one that closes a cycle (a node depending on itself), is a dependency
#: specified incorrectly whatever the task means.
DEPENDENCE_PARSE_FAILURES = frozenset({"unknown_dep", "cycle"})


def audit_instance(inst: ParaRecoverInstance) -> dict[str, Any]:
    """Per-instance result: parse status, the error types raised, and whether the tag is hit."""
    tags = set(inst.error_types)
    if not isinstance(inst.plan, Plan):
        raised_p = (
            {ErrorType.DEPENDENCE_ERROR} if inst.plan.code in DEPENDENCE_PARSE_FAILURES else set()
        )
        raised_p |= observation_error_types(inst.fun_call)
        return {
            "id": inst.id,
            "parse_error": inst.plan.reason,
            "raised": sorted(t.value for t in raised_p),
            "detected": bool(raised_p & tags),
        }
    findings = verify(
        inst.plan, inst.tools, outputs=recorded_outputs(inst), given=inst.query, unfinished=True
    )
    pending = {n.id for n in inst.plan.nodes if n.status != "done"}
    raised = {
        f.error_type
        for f in findings
        if f.error_type is not None and (f.error_type in WHOLE_PLAN_TYPES or f.node in pending)
    }
    raised |= observation_error_types(inst.fun_call)
    return {
        "id": inst.id,
        "parse_error": None,
        "raised": sorted(t.value for t in raised),
        "detected": bool(raised & tags),
        "findings": [f.model_dump(mode="json") for f in findings],
    }


def _rate(k: int, n: int) -> float | None:
    return round(k / n, 4) if n else None


def audit_file(path: str | Path) -> dict[str, Any]:
    """The audit report of one file (the ``--json`` object of ``replan audit pararecover``).

    ``by_type`` holds, for each of the 14 types: ``tagged`` (instances tagged with it),
    ``detected`` (of those, how many it was raised on), ``detection`` (their share; ``None``
    when none is tagged), ``others`` / ``false_alarms`` / ``false_alarm_rate`` (the same on the
    instances tagged otherwise), ``static`` (whether the verifier decides it from the plan) and
    ``few`` (fewer than :data:`MIN_TAGGED` tagged instances: too few to claim a rate).
    """
    by_tag: dict[str, dict[str, int]] = {}
    tagged: Counter[str] = Counter()
    detected: Counter[str] = Counter()
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
        tags = {t.value for t in item.error_types}
        for et in ErrorType:
            hit = et.value in res["raised"]
            if et.value in tags:
                tagged[et.value] += 1
                detected[et.value] += int(hit)
            else:
                others[et.value] += 1
                raised_elsewhere[et.value] += int(hit)
    by_type = {
        et.value: {
            "tagged": tagged[et.value],
            "detected": detected[et.value],
            "detection": _rate(detected[et.value], tagged[et.value]),
            "others": others[et.value],
            "false_alarms": raised_elsewhere[et.value],
            "false_alarm_rate": _rate(raised_elsewhere[et.value], others[et.value]),
            "static": et in STATIC_TYPES,
            "few": tagged[et.value] < MIN_TAGGED,
        }
        for et in ErrorType
    }
    return {
        "file": str(path),
        "instances": instances,
        "parse_errors": parse_errors,
        "line_errors": [e.model_dump() for e in errors],
        "by_tag": dict(sorted(by_tag.items())),
        "by_type": by_type,
        "false_alarm_rate": {
            k: round(raised_elsewhere[k] / others[k], 4) for k in sorted(others) if others[k]
        },
        "not_static": {et.value: why for et, why in NOT_STATIC.items()},
    }


def merge_reports(reports: list[dict[str, Any]]) -> dict[str, Any]:
    """Several files' reports pooled into one ``by_type`` table (counts added, rates redone)."""
    by_type: dict[str, dict[str, Any]] = {}
    for et in ErrorType:
        rows = [r["by_type"][et.value] for r in reports]
        t = sum(r["tagged"] for r in rows)
        d = sum(r["detected"] for r in rows)
        o = sum(r["others"] for r in rows)
        f = sum(r["false_alarms"] for r in rows)
        by_type[et.value] = {
            "tagged": t,
            "detected": d,
            "detection": _rate(d, t),
            "others": o,
            "false_alarms": f,
            "false_alarm_rate": _rate(f, o),
            "static": et in STATIC_TYPES,
            "few": t < MIN_TAGGED,
        }
    return {
        "files": [r["file"] for r in reports],
        "instances": sum(r["instances"] for r in reports),
        "parse_errors": sum(r["parse_errors"] for r in reports),
        "by_type": by_type,
        "not_static": {et.value: why for et, why in NOT_STATIC.items()},
    }
