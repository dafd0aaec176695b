"""The static ParaRecover error types as mutations of a call or a plan, in one place.

Two callers make mistakes on purpose: the simulated agent (:mod:`replan.models.simulated`) slips
while it writes a call or a plan node, and the ``pararecover-synth`` suite
(:mod:`replan.suites.pararecover_synth`) writes one flaw of a given type into a gold plan. Both
use the functions here. What differs between them is deliberate and named by a
:class:`MistakeStyle`:

- :data:`AGENT` -- a model's slips: a random one of several plausible variants (``startDate``,
  ``start_date_value``, ``input_start_date`` ...), any other listed tool for a wrong selection,
  an identifier no record has for an invalid value the schema cannot see, and structural edits
  that leave ``root`` among a node's dependencies as a model writing the list would.
- :data:`PARARECOVER` -- the look of the paper's annotated errors, one fixed variant per type
  (the first plausible one), a same-group or look-alike tool (same domain and category, closest
  name) for a wrong selection, a value of another type *with the same content* ("16" for 16),
  and edits that drop ``root`` from a node that has a real dependency.

Each mutation returns ``None`` when that mistake cannot be made (a call with no required
parameter cannot miss one). Call mutations are checked against the tool's compiled schema where
it can tell, so the world's verdict on the mutated call is the error type that was drawn: a
``Type_Error`` really is a ``type_mismatch``, a ``Parameter_Invalid`` an ``invalid_value``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

from replan.core import linre
from replan.core.plan import REFERENCE_PATTERN, RESPONSE, ROOT, Plan, PlanNode, iter_references
from replan.core.taxonomy import ErrorType, VerdictCode
from replan.core.tools import ToolSpec

Call = tuple[str, dict[str, Any]]
Variants = Callable[[str], list[str]]
Candidates = Callable[[Mapping[str, Any], Any], list[Any]]

_CAMEL = linre.compile(r"_([a-z])")


def _camel(name: str) -> str:
    return _CAMEL.sub(lambda m: m.group(1).upper(), name)


def _is_ref(value: Any) -> bool:
    return isinstance(value, str) and REFERENCE_PATTERN.search(value) is not None


# -- what each style's mistakes look like -------------------------------------------------------
def agent_tool_names(name: str) -> list[str]:
    """Near-misses of a tool name a model writes (``search_flight``, ``searchFlights`` ...)."""
    return [
        name[:-1] if name.endswith("s") else name + "s",
        _camel(name),
        name.replace("_", ""),
        name + "_api",
        "get_" + name if not name.startswith("get_") else name[4:] + "_info",
    ]


def paper_tool_names(name: str) -> list[str]:
    """Tool-name errors in the paper's look, most telling first (``searchFlights`` first)."""
    out = []
    parts = name.split("_")
    if len(parts) > 1:
        out.append(parts[0] + "".join(p.title() for p in parts[1:]))  # searchFlights
        out.append("_".join(reversed(parts)))  # flights_search
        out.append(name[:-1] if name.endswith("s") else name + "s")
    out.append(name + "_v2")
    out.append("get_" + name if not name.startswith("get_") else name[4:])
    return out


def agent_param_names(key: str) -> list[str]:
    """Plausible wrong names for a parameter a model writes."""
    return [
        _camel(key),
        key + "_value",
        key.rstrip("s") + "_name",
        "input_" + key,
        key.replace("_", ""),
    ]


def paper_param_names(name: str) -> list[str]:
    """Parameter-name errors in the paper's look, most telling first (``startDate`` first)."""
    out = []
    if "_" in name:
        out.append(_camel(name))  # start_date -> startDate
        out.append(name.replace("_", "-"))
        out.append(name.replace("_", ""))
    out.append(name + "s" if not name.endswith("s") else name[:-1])
    out.append(name + "_value")
    out.append(name[:1].upper() + name[1:])
    return out


def agent_retypes(schema: Mapping[str, Any], value: Any) -> list[Any]:
    """Values of another JSON type that a model plausibly writes instead of ``value``."""
    if isinstance(value, bool):
        return [str(value).lower(), int(value)]
    if isinstance(value, int | float):
        return [str(value), [value]]
    if isinstance(value, str):
        digits = linre.sub(r"\D", "", value)
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


def paper_retypes(schema: Mapping[str, Any], value: Any) -> list[Any]:
    """The value in another JSON type carrying the same content ("16" for 16, 16 for "16")."""
    t = schema.get("type")
    if t in ("integer", "number"):
        return [str(value)]
    if t == "boolean":
        return ["true" if value else "false"]
    if t == "string":
        if isinstance(value, str) and linre.fullmatch(r"-?\d+(\.\d+)?", value.strip()):
            return [float(value) if "." in value else int(value)]
        return [[value]]
    if t == "array":
        return [", ".join(map(str, value)) if isinstance(value, list) else str(value)]
    if t == "object":
        return [json.dumps(value, ensure_ascii=False)]
    return []


def agent_invalid_values(schema: Mapping[str, Any], value: Any) -> list[Any]:
    """Right-typed values a model plausibly writes that ``schema`` forbids, most likely first."""
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


def paper_invalid_values(schema: Mapping[str, Any], value: Any) -> list[Any]:
    """One value of the right JSON type that breaks ``schema`` (a date that does not exist, a
    number out of range, a string outside the enum or pattern), or none."""
    t = schema.get("type")
    bad: Any = None
    if "enum" in schema and isinstance(value, str):
        cand = f"{value}_x" if value else "unknown"
        bad = cand if cand not in schema["enum"] else None
    elif t == "string" and isinstance(value, str):
        fmt = schema.get("format")
        if fmt == "date":
            y = value[:4] if linre.match(r"^\d{4}", value) else "2026"
            bad = f"{y}-02-32"
        elif fmt == "date-time":
            bad = "2026-13-45T25:61:00"
        elif fmt == "email":
            bad = value.replace("@", " at ") if "@" in value else "not-an-email"
        elif fmt == "time":
            bad = "25:61"
        elif schema.get("pattern"):
            bad = "?" + value + "?"
        elif "minLength" in schema and schema["minLength"] > 0:
            bad = ""
        elif "maxLength" in schema:
            bad = "x" * (int(schema["maxLength"]) + 1)
    elif (
        t in ("integer", "number")
        and isinstance(value, (int, float))
        and not isinstance(value, bool)
    ):
        if "minimum" in schema:
            bad = type(value)(schema["minimum"] - 1) if t == "integer" else schema["minimum"] - 1.5
        elif "exclusiveMinimum" in schema:
            bad = schema["exclusiveMinimum"] - (1 if t == "integer" else 0.5)
        elif "maximum" in schema:
            bad = schema["maximum"] + 1
    elif t == "array" and isinstance(value, list):
        if "minItems" in schema and schema["minItems"] > 0:
            bad = []
        elif "maxItems" in schema:
            bad = (value * (int(schema["maxItems"]) + 1))[: int(schema["maxItems"]) + 1] or None
    return [] if bad is None else [bad]


@dataclass(frozen=True)
class MistakeStyle:
    """What a caller's mistakes look like (see the module docstring)."""

    tool_names: Variants
    param_names: Variants
    retypes: Candidates
    invalid_values: Candidates
    #: the first plausible variant (a fixed look) rather than a random one
    first_variant: bool
    #: ``Parameter_Invalid`` falls back to an identifier no record has (a precondition fails)
    unknown_ids: bool
    #: ``Tool_select_Error`` outside the group picks a look-alike (same domain and category,
    #: closest name) rather than any other tool
    look_alike: bool
    #: structural edits keep ``root`` among a node's dependencies next to real ones
    keep_root: bool

    def pick(self, cands: Sequence[str], rng: random.Random) -> str:
        return cands[0] if self.first_variant else rng.choice(cands)


AGENT = MistakeStyle(
    tool_names=agent_tool_names,
    param_names=agent_param_names,
    retypes=agent_retypes,
    invalid_values=agent_invalid_values,
    first_variant=False,
    unknown_ids=True,
    look_alike=False,
    keep_root=True,
)
PARARECOVER = MistakeStyle(
    tool_names=paper_tool_names,
    param_names=paper_param_names,
    retypes=paper_retypes,
    invalid_values=paper_invalid_values,
    first_variant=True,
    unknown_ids=False,
    look_alike=True,
    keep_root=False,
)


# -- tool errors --------------------------------------------------------------------------------
def misspell_tool(
    name: str, known: Container[str], rng: random.Random, style: MistakeStyle = AGENT
) -> str | None:
    """A near-miss of ``name`` that is not a known tool (``Tool_name_Error``)."""
    cands = [c for c in dict.fromkeys(style.tool_names(name)) if c and c != name and c not in known]
    return style.pick(cands, rng) if cands else None


def _similar(a: str, b: str) -> float:
    return SequenceMatcher(None, a, b).ratio()


def select_wrong_tool(
    name: str, specs: Mapping[str, ToolSpec], rng: random.Random, style: MistakeStyle = AGENT
) -> str | None:
    """Another tool of ``specs``, one of the same alternative group first (``Tool_select``).

    The arguments stay those of the intended tool, as when a model picks the wrong function
    for the data it has.
    """
    spec = specs.get(name)
    others = sorted(n for n in specs if n != name)
    if spec is not None and spec.group:
        same = [n for n in others if specs[n].group == spec.group]
        if same:
            return rng.choice(same)
    if style.look_alike:
        if spec is None:
            return None
        pool = [
            n
            for n in others
            if specs[n].domain == spec.domain and specs[n].category == spec.category
        ]
        pool.sort(key=lambda n: -_similar(n, name))
        others = pool[:3]
    return rng.choice(others) if others else None


# -- parameter errors ---------------------------------------------------------------------------
def rename_param(
    args: dict[str, Any], spec: ToolSpec | None, rng: random.Random, style: MistakeStyle = AGENT
) -> dict | None:
    """One argument under a plausible but wrong name (``Parameter_Error``)."""
    if not args:
        return None
    key = rng.choice(sorted(args))
    known = set(spec.param_names) if spec else set(args)
    cands = [
        c
        for c in dict.fromkeys(style.param_names(key))
        if c != key and c not in known and c not in args
    ]
    if not cands:
        return None
    new = style.pick(cands, rng)
    return {(new if k == key else k): v for k, v in args.items()}


def drop_param(args: dict[str, Any], spec: ToolSpec | None, rng: random.Random) -> dict | None:
    """A required argument left out (``Parameter_Missing``)."""
    required = sorted(spec.required & set(args)) if spec else sorted(args)
    if not required:
        return None
    key = rng.choice(required)
    return {k: v for k, v in args.items() if k != key}


def retype_param(
    args: dict[str, Any],
    spec: ToolSpec | None,
    rng: random.Random,
    style: MistakeStyle = AGENT,
    *,
    keys: Iterable[str] | None = None,
) -> dict | None:
    """One argument with a value of the wrong JSON type (``Type_Error``), among ``keys``
    (default: the arguments that hold no reference, whose type is known before run time).

    With a spec the result is checked to be a real ``type_mismatch``, and a string that names
    one of the tool's parameters is passed over (it reads as a parameter mix-up).
    """
    keys = list(keys) if keys is not None else [k for k in sorted(args) if not _is_ref(args[k])]
    rng.shuffle(keys)
    for key in keys:
        schema = spec.param_schema(key) if spec is not None else None
        for cand in style.retypes(schema or {}, args[key]):
            if spec is None or schema is None:
                return {**args, key: cand}
            if spec.check_value(key, cand).code is not VerdictCode.TYPE_MISMATCH:
                continue
            if isinstance(cand, str) and cand.strip() in spec.param_names:
                continue
            return {**args, key: cand}
    return None


def invalidate_param(
    args: dict[str, Any],
    spec: ToolSpec | None,
    rng: random.Random,
    style: MistakeStyle = AGENT,
    *,
    keys: Iterable[str] | None = None,
) -> dict | None:
    """One argument of the right type but an invalid value (``Parameter_Invalid``), among
    ``keys`` (default: all).

    Schema constraints first (enum, format, pattern, bounds); then, where the style allows, an
    identifier that no record has, for a parameter a precondition looks up (the world says
    ``precondition_failed``, which the taxonomy counts as an invalid value).
    """
    if spec is None or not args:
        return None
    keys = list(keys) if keys is not None else sorted(args)
    rng.shuffle(keys)
    for key in keys:
        schema = spec.param_schema(key) or {}
        for cand in style.invalid_values(schema, args[key]):
            if spec.check_value(key, cand).code is VerdictCode.INVALID_VALUE:
                return {**args, key: cand}
    if not style.unknown_ids:
        return None
    pre_args = {p.arg for p in spec.preconditions}
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
    style: MistakeStyle = AGENT,
) -> Call | None:
    """Apply one call-level error to ``(tool, args)``; ``None`` when it does not apply."""
    spec = specs.get(tool)
    if error is ErrorType.TOOL_NAME_ERROR:
        new = misspell_tool(tool, specs, rng, style)
        return (new, dict(args)) if new else None
    if error is ErrorType.TOOL_SELECT_ERROR:
        new = select_wrong_tool(tool, specs, rng, style)
        return (new, dict(args)) if new else None
    if error is ErrorType.PARAMETER_MISSING:
        out = drop_param(dict(args), spec, rng)
    elif error is ErrorType.PARAMETER_ERROR:
        out = rename_param(dict(args), spec, rng, style)
    elif error is ErrorType.TYPE_ERROR:
        out = retype_param(dict(args), spec, rng, style)
    elif error is ErrorType.PARAMETER_INVALID:
        out = invalidate_param(dict(args), spec, rng, style)
    else:
        return None
    return (tool, out) if out is not None else None


# -- plan structure -----------------------------------------------------------------------------
def referenced_nodes(node: PlanNode, ids: Sequence[str]) -> list[str]:
    """Ids of the nodes whose outputs ``node``'s arguments use, in first-use order."""
    out: list[str] = []
    for ref in iter_references(node.args, ids):
        if ref.node not in out and ref.node in ids:
            out.append(ref.node)
    return out


def ancestors(nodes: Sequence[PlanNode], nid: str) -> set[str]:
    """Every node ``nid`` waits for, directly or through others (the plan need not be valid)."""
    return Plan(nodes=list(nodes)).ancestors(nid)


def descendants(nodes: Sequence[PlanNode], nid: str) -> set[str]:
    """Every node that waits for ``nid``, directly or through others."""
    return Plan(nodes=list(nodes)).descendants(nid)


def next_id(nodes: Iterable[PlanNode]) -> str:
    """A fresh numeric id, one above the largest numeric id in use."""
    nums = [int(n.id) for n in nodes if n.id.isdigit()]
    return str(max(nums, default=0) + 1)


def with_deps(node: PlanNode, deps: Iterable[str]) -> PlanNode:
    """``node`` waiting for ``deps`` (duplicates dropped; ``root`` when none is left)."""
    return node.model_copy(update={"deps": list(dict.fromkeys(deps)) or [ROOT]})


def replace_node(nodes: Sequence[PlanNode], node: PlanNode) -> list[PlanNode]:
    """``nodes`` with the node of ``node``'s id replaced by it."""
    return [node if n.id == node.id else n for n in nodes]


def swap_dependency(node: PlanNode, old: str, new: str) -> PlanNode:
    """``node`` waiting for ``new`` where it waited for ``old`` (``Dependence_Error``)."""
    return node.model_copy(update={"deps": [new if d == old else d for d in node.deps]})


def add_dependency(node: PlanNode, dep: str, style: MistakeStyle = AGENT) -> PlanNode:
    """``node`` also waiting for ``dep``, whose output it never uses (``Serial_Error``)."""
    if style.keep_root:
        return node.model_copy(update={"deps": [*node.deps, dep]})
    return with_deps(node, [*(d for d in node.deps if d != ROOT), dep])


def remove_call(nodes: Sequence[PlanNode], nid: str, style: MistakeStyle = AGENT) -> list[PlanNode]:
    """The plan without call ``nid`` (``Toolcall_Missing``): what waited for it waits for what
    it waited for instead; the response only loses it."""
    gone = next(n for n in nodes if n.id == nid)
    inherited = [d for d in gone.deps if style.keep_root or d != ROOT]
    out = []
    for n in nodes:
        if n.id == nid:
            continue
        if nid in n.deps:
            kept = [d for d in n.deps if d != nid]
            n = with_deps(n, kept if n.id == RESPONSE else [*kept, *inherited])
        out.append(n)
    return out


def duplicate_call(nodes: Sequence[PlanNode], nid: str) -> tuple[list[PlanNode], str]:
    """The plan with call ``nid`` written twice (``Toolcall_Redundancy``): the copy, under a
    fresh id, comes before the response, which waits for it too. Returns the plan and the id."""
    dup = next(n for n in nodes if n.id == nid).model_copy(update={"id": next_id(nodes)})
    out = []
    for n in nodes:
        if n.id == RESPONSE:
            out.append(dup)
            n = n.model_copy(update={"deps": [*n.deps, dup.id]})
        out.append(n)
    return out, dup.id


def wrong_dependencies(nodes: Sequence[PlanNode], nid: str, src: str) -> list[str]:
    """Calls that could stand in for ``src`` among ``nid``'s dependencies without a cycle: not
    ``nid`` or ``src``, not waiting for ``nid``, not already a dependency."""
    node = next(n for n in nodes if n.id == nid)
    desc = descendants(nodes, nid)
    return [
        n.id
        for n in nodes
        if n.is_call and n.id not in (nid, src) and n.id not in desc and n.id not in node.deps
    ]


def unordered_calls(nodes: Sequence[PlanNode], nid: str) -> list[str]:
    """Calls with no order to ``nid`` either way (an edge to one is a ``Serial_Error``)."""
    anc, desc = ancestors(nodes, nid), descendants(nodes, nid)
    return [
        n.id for n in nodes if n.is_call and n.id != nid and n.id not in anc and n.id not in desc
    ]


def mutate_structure(
    error: ErrorType, nodes: list[PlanNode], nid: str, rng: random.Random
) -> list[PlanNode] | None:
    """A model's structural slip at node ``nid`` of the plan it writes (the :data:`AGENT`
    style: drawn, not checked); ``None`` when it does not apply.

    The ``pararecover-synth`` injectors make the same edits but search for a site where the
    flaw is a clean instance of its type (see :mod:`replan.suites.pararecover_synth`).
    """
    node = next(n for n in nodes if n.id == nid)
    producers = [p for p in referenced_nodes(node, [n.id for n in nodes]) if p in node.deps]
    if error is ErrorType.DEPENDENCE_NULL:
        if not producers:
            return None
        p = rng.choice(producers)
        deps = [d for d in node.deps if d != p]
        return replace_node(nodes, node.model_copy(update={"deps": deps}))
    if error is ErrorType.PARALLELISM_ERROR:
        if not producers:
            return None
        p = rng.choice(producers)
        pdeps = next(n for n in nodes if n.id == p).deps
        deps = [d for d in node.deps if d != p]
        deps += [d for d in pdeps if d not in deps]
        return replace_node(nodes, node.model_copy(update={"deps": deps or [ROOT]}))
    if error is ErrorType.DEPENDENCE_ERROR:
        if not producers:
            return None
        p = rng.choice(producers)
        wrong = wrong_dependencies(nodes, nid, p)
        if not wrong:
            return None
        return replace_node(nodes, swap_dependency(node, p, rng.choice(wrong)))
    if error is ErrorType.SERIAL_ERROR:
        free = unordered_calls(nodes, nid)
        if not free:
            return None
        return replace_node(nodes, add_dependency(node, rng.choice(free)))
    if error is ErrorType.TOOLCALL_MISSING:
        return remove_call(nodes, nid)
    if error is ErrorType.TOOLCALL_REDUNDANCY:
        return duplicate_call(nodes, nid)[0]
    return None


__all__ = [
    "AGENT",
    "PARARECOVER",
    "MistakeStyle",
    "add_dependency",
    "ancestors",
    "descendants",
    "drop_param",
    "duplicate_call",
    "invalidate_param",
    "misspell_tool",
    "mutate_call",
    "mutate_structure",
    "next_id",
    "referenced_nodes",
    "remove_call",
    "rename_param",
    "replace_node",
    "retype_param",
    "select_wrong_tool",
    "swap_dependency",
    "unordered_calls",
    "with_deps",
    "wrong_dependencies",
]
