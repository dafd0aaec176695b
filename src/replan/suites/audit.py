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
from replan.core.leaves import json_leaves
from replan.core.plan import RESPONSE, ROOT, Plan, iter_references
from replan.core.taxonomy import ErrorType, VerdictCode
from replan.core.tools import canonical_json
from replan.core.trace import Finding
from replan.env.verifier import (
    holds_result_text,
    node_args,
    reference_token,
    results_read,
    textual_references,
    verify,
)
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


#: Types whose question is which node must wait for which. Table 12 answers it by what a node
#: takes: "node 2 requires the execution result of node 1 as its input parameter"
#: (Parallelism_Error); "node 3 should depend on node 2" (Dependence_Error); "some nodes have
#: missing dependencies" (Dependence_Null).
DEPENDENCY_TYPES = frozenset(
    {ErrorType.DEPENDENCE_ERROR, ErrorType.DEPENDENCE_NULL, ErrorType.PARALLELISM_ERROR}
)


def _states_data_flow(inst: ParaRecoverInstance, plan: Plan) -> bool:
    """Whether some unfinished call of ``plan`` shows what it takes from another node: a
    reference to another node's output (``${2.x}``, a token ``task2_output``, words ``"task2的
    结果"``, in its arguments or its description), or a text value that a result the plan shows
    contains (a value copied from that result)."""
    ids = plan.ids
    callers = {n.id: n.tool for n in plan.call_nodes if n.tool}
    specs = {t.name: t for t in inst.tools}
    results = results_read(plan, recorded_outputs(inst))
    given = {n.id: node_args(n, specs.get(n.tool or "")) for n in plan.call_nodes}
    for n in plan.call_nodes:
        if n.status == "done":
            continue
        args = given[n.id]
        if any(r.node != n.id for r in iter_references(args, ids)):
            return True
        if any(reference_token(v, ids) not in (None, n.id) for _, v in json_leaves(args)):
            return True
        if textual_references([args, n.desc], ids, callers) - {n.id}:
            return True
        other_results = [r for m, r in results.items() if m != n.id]
        other_args = [a for m, a in given.items() if m != n.id]
        if holds_result_text(args, other_results, inst.query, other_args):
            return True
    return False


def _malformed_dependencies(inst: ParaRecoverInstance, plan: Plan) -> bool:
    """Whether the dependencies are wrong whatever the task: a node other than the root that
    depends on nothing, a node marked done that depends on one that has not run, an
    unfinished call the response does not wait for, or an unfinished call identical (same
    tool, same arguments) to another call that it does not wait for."""
    if any(not n.deps for n in plan.nodes if n.id != ROOT):
        return True
    ids = set(plan.ids)
    pending = [n for n in plan.call_nodes if n.status != "done"]
    pending_ids = {n.id for n in pending}
    if any(set(n.deps) & pending_ids for n in plan.nodes if n.status == "done"):
        return True
    if RESPONSE in ids:
        before = plan.ancestors(RESPONSE)
        if any(n.id not in before for n in pending):
            return True
    specs = {t.name: t for t in inst.tools}
    sig = {
        n.id: canonical_json([n.tool, node_args(n, specs.get(n.tool or ""))])
        for n in plan.call_nodes
    }
    for n in pending:
        mine = plan.ancestors(n.id)
        for m in plan.call_nodes:
            if (
                m.id != n.id
                and sig[m.id] == sig[n.id]
                and m.id not in mine
                and n.id not in plan.ancestors(m.id)
            ):
                return True
    return False


def undecidable(inst: ParaRecoverInstance) -> dict[str, str]:
    """Static types the plan alone cannot decide on this instance, each with the reason.

    The criterion reads the plan, never the tag or the instance's wording, and follows Table 12:

    - every plan-error definition places the error "in the unfinished tasks of the updated
      DAG": when every call of the plan is marked done there is nothing unfinished to judge
      (a tag there points at the calls already run, which is the task's meaning, not the plan);
    - a plan that does not parse shows none of its calls, except that a dependency on a node
      it does not have, or on itself, is itself a Dependence_Error;
    - Serial_Error is "two nodes ... represented as having a sequential dependency" in the
      unfinished tasks: with no unfinished call waiting for another there is no such pair;
    - Toolcall_Redundancy is "some unnecessary tool calls": whether a call is needed follows
      from the task, except for a call that repeats another (its result is had already); with
      no tool called twice, one call of it unfinished, only the task's meaning can tell;
    - :data:`DEPENDENCY_TYPES` ask what a node must wait for, which is what it takes. When no
      unfinished call shows what it takes from another node (:func:`_states_data_flow`) and the
      dependencies are well formed (:func:`_malformed_dependencies`), which step must come
      first follows from the task's meaning (water after covering the soil; brew after checking
      the beans), not from the plan.
    """
    plan = inst.plan
    if not isinstance(plan, Plan):
        why = f"the plan does not parse ({plan.reason})"
        dep_ok = plan.code in DEPENDENCE_PARSE_FAILURES
        return {
            et.value: why
            for et in STATIC_TYPES
            if not (dep_ok and et is ErrorType.DEPENDENCE_ERROR)
        }
    pending = [n for n in plan.call_nodes if n.status != "done"]
    if not pending:
        why = "every call is marked done: nothing unfinished, where Table 12 places the error"
        return {et.value: why for et in STATIC_TYPES}
    out: dict[str, str] = {}
    pending_ids = {n.id for n in pending}
    if not any(set(n.deps) & pending_ids for n in pending):
        out[ErrorType.SERIAL_ERROR.value] = "no unfinished call waits for another unfinished one"
    tools = Counter(n.tool for n in plan.call_nodes)
    if not any(tools[n.tool] > 1 for n in pending):
        out[ErrorType.TOOLCALL_REDUNDANCY.value] = (
            "no tool is called twice: whether a call is needed follows from the task's meaning"
        )
    if not _states_data_flow(inst, plan) and not _malformed_dependencies(inst, plan):
        why = (
            "no unfinished call shows what it takes from another node: which must wait for "
            "which follows from the task's meaning"
        )
        out |= {et.value: why for et in DEPENDENCY_TYPES}
    return out


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
            "undecidable": undecidable(inst),
        }
    findings = verify(
        inst.plan, inst.tools, outputs=recorded_outputs(inst), given=inst.query, unfinished=True
    )
    pending = {n.id for n in inst.plan.nodes if n.status != "done"}
    deps = {n.id: set(n.deps) for n in inst.plan.nodes}

    def in_scope(f: Finding) -> bool:
        if f.error_type in WHOLE_PLAN_TYPES or f.node in pending:
            return True
        # Parallelism_Error: "two nodes that should be executed sequentially are treated as
        # parallel". A node marked done while a dependency of its own has not run was run
        # alongside it, and that dependency is an unfinished task of the pair
        return f.code is VerdictCode.PARALLEL_CONFLICT and bool(deps.get(f.node, set()) & pending)

    raised = {f.error_type for f in findings if f.error_type is not None and in_scope(f)}
    raised |= observation_error_types(inst.fun_call)
    return {
        "id": inst.id,
        "parse_error": None,
        "raised": sorted(t.value for t in raised),
        "detected": bool(raised & tags),
        "undecidable": undecidable(inst),
        "findings": [f.model_dump(mode="json") for f in findings],
    }


def _rate(k: int, n: int) -> float | None:
    return round(k / n, 4) if n else None


def _row(
    et: ErrorType, tagged: int, detected: int, meaning: int, det_meaning: int, others: int, fa: int
) -> dict[str, Any]:
    """One type's row: detection over all tagged instances and over those the plan alone can
    decide (``decidable``: tagged less ``needs_meaning``, see :func:`undecidable`); the
    target (``few`` below) applies to the decidable ones."""
    decidable = tagged - meaning
    return {
        "tagged": tagged,
        "detected": detected,
        "detection": _rate(detected, tagged),
        "decidable": decidable,
        "detected_decidable": detected - det_meaning,
        "detection_decidable": _rate(detected - det_meaning, decidable),
        "needs_meaning": meaning,
        "detected_needs_meaning": det_meaning,
        "others": others,
        "false_alarms": fa,
        "false_alarm_rate": _rate(fa, others),
        "static": et in STATIC_TYPES,
        "few": decidable < MIN_TAGGED,
    }


def audit_file(path: str | Path) -> dict[str, Any]:
    """The audit report of one file (the ``--json`` object of ``replan audit pararecover``).

    ``by_type`` holds, for each of the 14 types: ``tagged`` (instances tagged with it),
    ``detected`` (of those, how many it was raised on), ``detection`` (their share; ``None``
    when none is tagged), ``others`` / ``false_alarms`` / ``false_alarm_rate`` (the same on the
    instances tagged otherwise), ``static`` (whether the verifier decides it from the plan),
    ``decidable`` / ``needs_meaning`` (the tagged instances the plan alone can or cannot decide,
    by :func:`undecidable`), ``detected_decidable`` / ``detection_decidable`` and
    ``detected_needs_meaning``, and ``few`` (fewer than :data:`MIN_TAGGED` decidable instances:
    too few to claim a rate). ``needs_meaning`` lists each such (instance, type) with its reason.
    """
    by_tag: dict[str, dict[str, int]] = {}
    tagged: Counter[str] = Counter()
    detected: Counter[str] = Counter()
    meaning: Counter[str] = Counter()  # tagged, but the plan alone cannot decide it
    detected_meaning: Counter[str] = Counter()
    raised_elsewhere: Counter[str] = Counter()
    others: Counter[str] = Counter()
    errors: list[LoadError] = []
    needs_meaning: list[dict[str, Any]] = []
    instances = parse_errors = 0
    levels: set[str] = set()
    for item in iter_instances(path):
        if isinstance(item, LoadError):
            errors.append(item)
            continue
        instances += 1
        levels.add(item.level)
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
                if et.value in res["undecidable"]:
                    needs_meaning.append(
                        {"id": item.id, "type": et.value, "why": res["undecidable"][et.value]}
                    )
                    meaning[et.value] += 1
                    detected_meaning[et.value] += int(hit)
            else:
                others[et.value] += 1
                raised_elsewhere[et.value] += int(hit)
    by_type = {
        et.value: _row(
            et,
            tagged[et.value],
            detected[et.value],
            meaning[et.value],
            detected_meaning[et.value],
            others[et.value],
            raised_elsewhere[et.value],
        )
        for et in ErrorType
    }
    return {
        "file": str(path),
        "level": "+".join(sorted(levels)) or None,
        "instances": instances,
        "parse_errors": parse_errors,
        "line_errors": [e.model_dump() for e in errors],
        "by_tag": dict(sorted(by_tag.items())),
        "by_type": by_type,
        "needs_meaning": needs_meaning,
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
        by_type[et.value] = _row(
            et,
            *(
                sum(r[k] for r in rows)
                for k in (
                    "tagged",
                    "detected",
                    "needs_meaning",
                    "detected_needs_meaning",
                    "others",
                    "false_alarms",
                )
            ),
        )
    return {
        "files": [r["file"] for r in reports],
        "instances": sum(r["instances"] for r in reports),
        "parse_errors": sum(r["parse_errors"] for r in reports),
        "by_type": by_type,
        "not_static": {et.value: why for et, why in NOT_STATIC.items()},
    }
