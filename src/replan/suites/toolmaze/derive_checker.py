"""The checker of a base task: what every valid path achieves."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from replan.core import linre
from replan.core.leaves import json_leaves, scalar_leaves
from replan.core.task import (
    Checker,
    RequiredRecord,
)
from replan.core.tools import canonical_json
from replan.env.corpus import load_corpus
from replan.env.world import WorldState
from replan.suites.toolmaze.index import corpus_index
from replan.suites.toolmaze.stages import PathRun


# ---------------------------------------------------------------------------------------------
# checker
def _changes(initial: WorldState, final: WorldState) -> dict[str, dict[str, dict[str, Any]]]:
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for col, recs in final.collections.items():
        for key, rec in recs.items():
            if initial.get(col, key) != rec:
                out.setdefault(col, {})[key] = dict(rec)
    return out


def same_value(a: Any, b: Any) -> bool:
    """Two output values are one fact: numbers within 1e-9, anything else by canonical JSON."""
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-9)
    return canonical_json(a) == canonical_json(b)


_DATE_TEXT = linre.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2})?(Z|[+-]\d{2}:?\d{2})?)?$")


_MADE_ID = linre.compile(r"^[A-Za-z0-9_]+-[0-9A-Fa-f]{6,}$|^\d+\.\d+$")


def reportable_text(value: str, tool: str, path: tuple[str, ...]) -> bool:
    """A string fact worth asking for: a date or timestamp, or a short value of a tool-made kind
    (a time zone, a code) that is not an enum (statuses are too easy to guess)."""
    if _DATE_TEXT.match(value):
        return True
    if _MADE_ID.match(value):
        return False  # a generated id changes with the state it was made in
    spec = load_corpus().tools.get(tool)
    sch = spec.output_field_schema(list(path)) if spec is not None else None
    if not sch or "enum" in sch or len(value) > 40 or len(value) < 4:
        return False
    kind = sch.get("x-kind")
    return bool(kind) and kind not in corpus_index().literal


def yielders(run: PathRun, value: Any) -> list[str]:
    """The calls of ``run`` whose output states ``value`` anywhere (every array item)."""
    return [
        nid
        for nid, out in run.outputs.items()
        if any(same_value(value, x) for _, x in json_leaves(out) if x is not None)
    ]


def derive_checker(
    runs: list[PathRun],
    initial: WorldState,
    literal_values: Mapping[str, Any],
    tools_effects: Mapping[str, bool],
) -> tuple[Checker | None, list[tuple[Any, str]], str | None]:
    """The checker every valid path passes: (checker, facts with their source, problem)."""
    changes = [_changes(initial, r.state) for r in runs]
    created_keys: set[str] = set()
    for ch in changes:
        for col, recs in ch.items():
            created_keys |= {k for k in recs if initial.get(col, k) is None}
    required: list[RequiredRecord] = []
    for col, recs in sorted(changes[0].items()):
        if not all(col in ch for ch in changes[1:]):
            continue
        for key, rec in sorted(recs.items()):
            where = {
                f: v
                for f, v in rec.items()
                if not any(isinstance(x, str) and x in created_keys for _, x in json_leaves(v))
            }
            for ch in changes[1:]:
                best = max(
                    ch[col].values(),
                    key=lambda r: sum(
                        1 for f, v in where.items() if f in r and same_value(r[f], v)
                    ),
                )
                where = {f: v for f, v in where.items() if f in best and same_value(best[f], v)}
            created = initial.get(col, key) is None
            trivially_met = any(
                all(f in r and same_value(r[f], v) for f, v in where.items())
                for r in initial.records(col).values()
            )
            if trivially_met:
                continue
            required.append(RequiredRecord(collection=col, where=where, mention_key=created))
    # facts: scalar results of s*'s final calls that every path also returns
    star = runs[0]
    sinks = star.plan.final_calls()
    literals = [v for v in literal_values.values()]
    others = [[v for nid in r.outputs for _, v in scalar_leaves(r.outputs[nid])] for r in runs[1:]]
    facts: list[tuple[Any, str]] = []
    per_sink: dict[str, list[tuple[int, Any, str]]] = {}
    for nid in sinks:
        spec_tool = star.plan.node(nid).tool or ""
        cands = per_sink.setdefault(nid, [])
        for path, v in scalar_leaves(star.outputs.get(nid)):
            if isinstance(v, bool) or v in (None, ""):
                continue
            if isinstance(v, str) and not reportable_text(v, star.plan.node(nid).tool or "", path):
                continue  # names and statuses are too easy to echo
            if isinstance(v, (int, float)) and abs(v) < 10:
                continue
            if any(same_value(v, x) for x in literals):
                continue
            if not all(any(same_value(v, x) for x in other) for other in others):
                continue
            rank = 0 if isinstance(v, float) else 1 if isinstance(v, int) else 2
            cands.append((rank, v, f"{spec_tool}:{'.'.join(path)}"))
        cands.sort(key=lambda x: x[0])
    # a final call without effects is only there for its result: one of its facts is required,
    # and one that no other call of s* and no earlier call of any path yields (else a run that
    # skips the call, or takes the fact from another path's earlier call, passes)
    finals = [set(r.plan.final_calls()) for r in runs]
    for nid, cands in per_sink.items():
        if tools_effects.get(star.plan.node(nid).tool or ""):
            continue
        own = [
            c
            for c in cands
            if yielders(star, c[1]) == [nid]
            and all(set(yielders(r, c[1])) <= f for r, f in zip(runs, finals, strict=True))
        ]
        if not own:
            return (
                None,
                [],
                (
                    f"final call {star.plan.node(nid).tool} yields no checkable fact "
                    "that only it yields"
                ),
            )
        fresh = [c for c in own if not any(same_value(c[1], f) for f, _ in facts)]
        if not fresh:
            return None, [], f"final call {star.plan.node(nid).tool} yields no checkable fact"
        facts.append((fresh[0][1], fresh[0][2]))
    for _, v, src in sorted((c for cs in per_sink.values() for c in cs), key=lambda x: x[0]):
        if len(facts) >= 2:
            break
        if not any(same_value(v, f) for f, _ in facts):
            facts.append((v, src))
    return Checker(required_records=required, required_facts=[f for f, _ in facts]), facts, None
