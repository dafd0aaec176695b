"""The simulated agent's mistakes: one function per static error type, on a call or a plan.

Each mutation takes the intended call (tool name and arguments) and returns the erroneous one,
or ``None`` when that mistake cannot be made on this call (a call with no required parameter
cannot miss one). Mutations are checked against the tool's compiled schema where the schema
can tell (a ``Type_Error`` really is a type mismatch), so the world's verdict on the mutated
call is the error type that was drawn.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping
from typing import Any

from replan.core.plan import RESPONSE, ROOT, PlanNode, exact_reference, iter_references
from replan.core.taxonomy import ErrorType, VerdictCode
from replan.core.tools import ToolSpec

Call = tuple[str, dict[str, Any]]


def _is_ref(value: Any) -> bool:
    return isinstance(value, str) and "${" in value


# -- tool errors --------------------------------------------------------------------------------
def misspell_tool(name: str, known: Mapping[str, Any], rng: random.Random) -> str | None:
    """A near-miss of ``name`` that is not a known tool (``Tool_name_Error``)."""
    camel = re.sub(r"_([a-z])", lambda m: m.group(1).upper(), name)
    cands = [
        name[:-1] if name.endswith("s") else name + "s",
        camel,
        name.replace("_", ""),
        name + "_api",
        "get_" + name if not name.startswith("get_") else name[4:] + "_info",
    ]
    cands = [c for c in dict.fromkeys(cands) if c and c != name and c not in known]
    return rng.choice(cands) if cands else None


def select_wrong_tool(name: str, specs: Mapping[str, ToolSpec], rng: random.Random) -> str | None:
    """Another available tool, preferring one of the same alternative group (``Tool_select``).

    The arguments stay those of the intended tool, as when a model picks the wrong function
    for the data it has.
    """
    spec = specs.get(name)
    others = [n for n in specs if n != name]
    if not others:
        return None
    if spec is not None and spec.group:
        same = [n for n in others if specs[n].group == spec.group]
        if same:
            return rng.choice(sorted(same))
    return rng.choice(sorted(others))


# -- parameter errors ---------------------------------------------------------------------------
def rename_param(args: dict[str, Any], spec: ToolSpec | None, rng: random.Random) -> dict | None:
    """One argument under a plausible but wrong name (``Parameter_Error``)."""
    if not args:
        return None
    key = rng.choice(sorted(args))
    known = set(spec.param_names) if spec else set(args)
    camel = re.sub(r"_([a-z])", lambda m: m.group(1).upper(), key)
    cands = [camel, key + "_value", key.rstrip("s") + "_name", "input_" + key, key.replace("_", "")]
    cands = [c for c in dict.fromkeys(cands) if c != key and c not in known and c not in args]
    if not cands:
        return None
    new = rng.choice(cands)
    return {(new if k == key else k): v for k, v in args.items()}


def drop_param(args: dict[str, Any], spec: ToolSpec | None, rng: random.Random) -> dict | None:
    """A required argument left out (``Parameter_Missing``)."""
    required = sorted(spec.required & set(args)) if spec else sorted(args)
    if not required:
        return None
    key = rng.choice(required)
    return {k: v for k, v in args.items() if k != key}


def _retyped(value: Any) -> list[Any]:
    """Values of another JSON type that a model plausibly writes instead of ``value``."""
    if isinstance(value, bool):
        return [str(value).lower(), int(value)]
    if isinstance(value, int | float):
        return [str(value), [value]]
    if isinstance(value, str):
        digits = re.sub(r"\D", "", value)
        out: list[Any] = []
        if digits and len(digits) < 16:
            out.append(int(digits))
        out += [[value], {"value": value}]
        return out
    if isinstance(value, list):
        return [", ".join(map(str, value)), json.dumps(value)]
    if isinstance(value, dict):
        return [json.dumps(value), list(value.values())]
    return ["null"] if value is None else []


def retype_param(args: dict[str, Any], spec: ToolSpec | None, rng: random.Random) -> dict | None:
    """One argument with a value of the wrong JSON type (``Type_Error``).

    With a spec the result is checked to be a real ``type_mismatch``; references (plan mode)
    are not retyped because their type is only known at run time.
    """
    keys = [k for k in sorted(args) if not _is_ref(args[k])]
    rng.shuffle(keys)
    for key in keys:
        for cand in _retyped(args[key]):
            if spec is None or spec.param_schema(key) is None:
                return {**args, key: cand}
            if spec.check_value(key, cand).code is VerdictCode.TYPE_MISMATCH:
                return {**args, key: cand}
    return None


def _invalid_candidates(schema: Mapping[str, Any], value: Any) -> list[Any]:
    out: list[Any] = []
    if schema.get("enum"):
        first = schema["enum"][0]
        out.append(f"{first}_other" if isinstance(first, str) else first)
    if schema.get("format") == "date":
        out += ["2026-13-45", "31/12/2026"]
    if schema.get("format") == "email":
        out += ["not-an-email"]
    if schema.get("format") == "time":
        out += ["25:99"]
    if "pattern" in schema and isinstance(value, str):
        out += [value.lower(), "x" + value, value + "!"]
    if "minLength" in schema:
        out.append("")
    if "maximum" in schema:
        m = schema["maximum"]
        out.append(int(m) + 1 if isinstance(m, int) else m * 2 + 1)
    if "minimum" in schema:
        m = schema["minimum"]
        out.append(int(m) - 1 if isinstance(m, int) else m - 1)
    if "exclusiveMinimum" in schema:
        out.append(schema["exclusiveMinimum"])
    return out


def invalidate_param(
    args: dict[str, Any], spec: ToolSpec | None, rng: random.Random
) -> dict | None:
    """One argument of the right type but an invalid value (``Parameter_Invalid``).

    Schema constraints first (enum, format, pattern, bounds); otherwise an identifier that no
    record has, for a parameter a precondition looks up (the world says
    ``precondition_failed``, which the taxonomy counts as an invalid value).
    """
    if spec is None or not args:
        return None
    keys = sorted(args)
    rng.shuffle(keys)
    pre_args = {p.arg for p in spec.preconditions}
    for key in keys:
        schema = spec.param_schema(key) or {}
        value = args[key]
        for cand in _invalid_candidates(schema, value):
            if spec.check_value(key, cand).code is VerdictCode.INVALID_VALUE:
                return {**args, key: cand}
    for key in keys:
        if key in pre_args:
            value = args[key]
            prefix = value.split("-")[0] if isinstance(value, str) and "-" in value else "ID"
            cand = f"{prefix}-00000000"
            if spec.check_value(key, cand).ok:
                return {**args, key: cand}
    return None


def mutate_call(
    error: ErrorType,
    tool: str,
    args: dict[str, Any],
    specs: Mapping[str, ToolSpec],
    rng: random.Random,
) -> Call | None:
    """Apply one call-level error to ``(tool, args)``; ``None`` when it does not apply."""
    spec = specs.get(tool)
    if error is ErrorType.TOOL_NAME_ERROR:
        new = misspell_tool(tool, specs, rng)
        return (new, dict(args)) if new else None
    if error is ErrorType.TOOL_SELECT_ERROR:
        new = select_wrong_tool(tool, specs, rng)
        return (new, dict(args)) if new else None
    fn = {
        ErrorType.PARAMETER_ERROR: rename_param,
        ErrorType.PARAMETER_MISSING: drop_param,
        ErrorType.TYPE_ERROR: retype_param,
        ErrorType.PARAMETER_INVALID: invalidate_param,
    }.get(error)
    if fn is None:
        return None
    out = fn(dict(args), spec, rng)
    return (tool, out) if out is not None else None


# -- plan structure -----------------------------------------------------------------------------
def referenced_nodes(node: PlanNode, ids: list[str]) -> list[str]:
    """Ids of the nodes whose outputs ``node``'s arguments use, in first-use order."""
    out: list[str] = []
    for ref in iter_references(node.args, ids):
        if ref.node not in out and ref.node in ids:
            out.append(ref.node)
    return out


def _ancestors(nodes: list[PlanNode], nid: str) -> set[str]:
    by_id = {n.id: n for n in nodes}
    seen: set[str] = set()
    stack = list(by_id[nid].deps) if nid in by_id else []
    while stack:
        d = stack.pop()
        if d not in seen:
            seen.add(d)
            stack.extend(by_id[d].deps if d in by_id else [])
    return seen


def _replace(nodes: list[PlanNode], nid: str, **update: Any) -> list[PlanNode]:
    return [n.model_copy(update=update) if n.id == nid else n for n in nodes]


def next_id(nodes: list[PlanNode]) -> str:
    """A fresh numeric id, one above the largest numeric id in use."""
    nums = [int(n.id) for n in nodes if n.id.isdigit()]
    return str(max(nums, default=0) + 1)


def mutate_structure(
    error: ErrorType, nodes: list[PlanNode], nid: str, rng: random.Random
) -> list[PlanNode] | None:
    """Apply one structural error at node ``nid`` of a plan; ``None`` when it does not apply."""
    ids = [n.id for n in nodes]
    node = next(n for n in nodes if n.id == nid)
    producers = [p for p in referenced_nodes(node, ids) if p in node.deps]
    if error is ErrorType.DEPENDENCE_NULL:
        if not producers:
            return None
        p = rng.choice(producers)
        return _replace(nodes, nid, deps=[d for d in node.deps if d != p])
    if error is ErrorType.PARALLELISM_ERROR:
        if not producers:
            return None
        p = rng.choice(producers)
        pdeps = next(n for n in nodes if n.id == p).deps
        deps = [d for d in node.deps if d != p]
        deps += [d for d in pdeps if d not in deps]
        return _replace(nodes, nid, deps=deps or [ROOT])
    if error is ErrorType.DEPENDENCE_ERROR:
        if not producers:
            return None
        p = rng.choice(producers)
        desc = {n.id for n in nodes if nid in _ancestors(nodes, n.id)}
        wrong = [
            n.id
            for n in nodes
            if n.is_call and n.id not in (nid, p) and n.id not in desc and n.id not in node.deps
        ]
        if not wrong:
            return None
        w = rng.choice(wrong)
        return _replace(nodes, nid, deps=[w if d == p else d for d in node.deps])
    if error is ErrorType.SERIAL_ERROR:
        anc = _ancestors(nodes, nid)
        desc = {n.id for n in nodes if nid in _ancestors(nodes, n.id)}
        free = [
            n.id
            for n in nodes
            if n.is_call and n.id != nid and n.id not in anc and n.id not in desc
        ]
        if not free:
            return None
        return _replace(nodes, nid, deps=[*node.deps, rng.choice(free)])
    if error is ErrorType.TOOLCALL_MISSING:
        out = []
        for n in nodes:
            if n.id == nid:
                continue
            if nid in n.deps:
                deps = [d for d in n.deps if d != nid]
                deps += [d for d in node.deps if d not in deps and n.id != RESPONSE]
                n = n.model_copy(update={"deps": deps or [ROOT]})
            out.append(n)
        return out
    if error is ErrorType.TOOLCALL_REDUNDANCY:
        dup = node.model_copy(update={"id": next_id(nodes)})
        out = []
        for n in nodes:
            if n.id == RESPONSE:
                out.append(dup)
                n = n.model_copy(update={"deps": [*n.deps, dup.id]})
            out.append(n)
        return out
    return None


def unresolved(value: Any, ids: list[str]) -> bool:
    """Whether ``value`` still holds a ``${...}`` reference to one of ``ids``."""
    return any(r.node in ids for r in iter_references(value, ids)) or (
        exact_reference(value, ids) is not None
    )


__all__ = [
    "drop_param",
    "invalidate_param",
    "misspell_tool",
    "mutate_call",
    "mutate_structure",
    "next_id",
    "referenced_nodes",
    "rename_param",
    "retype_param",
    "select_wrong_tool",
]
