"""Static plan verification: the checks a planner can act on before anything runs.

Used by the Dual-Loop design (its verifier node) and by the prefix scorer and the ParaRecover
audit. For every call node: the tool exists; argument names and values fit the schema (a schema
description copied where a value belongs is an invalid value); references point at an existing
node that is an ancestor (otherwise a missing dependency, or a parallelism error when both nodes
would run in the same wave), at a field the producer's output schema declares, with a type that
fits; preconditions hold when the plan's effects are simulated in topological order. Plan-level:
a dependency that carries no data (a Serial_Error candidate), a dependency on the wrong node, a
node marked done whose dependency has not run (it ran in parallel with it), a pending call that
repeats a pending or an already-run call, and a pending call the response never waits for.

Real plans often refer to earlier results in words (``"task3 result"``, ``"1的结果"``,
``"2.output"``, ``"output of find_water_source"``); :func:`textual_references` reads those so
that a missing or wrong dependency can be told apart from a correct one. A reference in words is
text: where a parameter needs an object, array or number it is a type error. The augmented
file's reference tokens (``output_of_task2``, ``task2_output``), which its tool agent resolves,
stand for the output itself (:func:`reference_token`).

*Data flow without references.* When a producer's tool declares its output fields (the ToolMaze
corpus), data flows only through ``${node.field}`` references, so a dependency no reference uses
carries no data. When it declares none (ParaRecover tool lists: free-text results), plans copy
what they need from a result into literal values, which the plan cannot show. There a
dependency is a Serial_Error candidate only when the call takes nothing from any such
dependency (no reference, in words or in its description; no value the producer was given or
its recorded result holds; the producer takes arguments) and holds no value that any other call
of the plan also holds (a shared value is an entity passed through the plan, maybe from
upstream). This is a decision, measured on the shipped sample by ``replan audit``.

With ``unfinished=True`` (the ParaRecover audit, never the Dual-Loop verifier) two more readings
apply: a node that has run carries its result in its description (:func:`results_read`), and a
pending call holding a text value that only one other node's result holds, a node it does not
wait for, took that node's output without depending on it (:func:`_copied_from`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from datetime import date
from difflib import SequenceMatcher
from typing import Any

from replan.core import linre
from replan.core.leaves import json_leaves
from replan.core.plan import (
    RESPONSE,
    ROOT,
    Plan,
    PlanNode,
    exact_reference,
    iter_references,
    reference_text,
)
from replan.core.taxonomy import VerdictCode
from replan.core.tools import ToolSpec, canonical_json
from replan.core.trace import Finding
from replan.env.world import World

_TEXT_REF_PATTERNS = [
    linre.compile(r"(?:task|node|step|任务|节点|步骤)\s*[_#:\-]?\s*(\d+(?:\.\d+)*)", linre.I),
    linre.compile(r"(?:output|result|outcome)s?\s*(?:of|from)\s*(\d+(?:\.\d+)*)", linre.I),
    linre.compile(r"(\d+(?:\.\d+)*)\s*(?:的|中)", not_after=r"\d."),
    # "2.output"
    linre.compile(r"(\d+(?:\.\d+)*|root)\.(?:output|result)s?\b", linre.I, not_after=r"\w."),
]
_TOOL_REF = linre.compile(
    r"(?:output|result|outcome|response)s?\s*(?:of|from)\s*(?:the\s+)?([A-Za-z_][\w]*)"
    r"|([A-Za-z_][\w]*)\s*(?:'s\s+)?(?:output|result)s?\b|([A-Za-z_][\w]*)\s*(?:的|中)",
    linre.I,
)


def textual_references(
    value: Any, known_ids: Iterable[str], tools: Mapping[str, str] | None = None
) -> set[str]:
    """Node ids that ``value`` mentions in words (only ids the plan really has): by id
    (``"task3 result"``, ``"2的结果"``, ``"1.output"``) or, given ``tools`` (node id -> the tool
    it calls), by the producing tool's name (``"output of find_water_source"``) when exactly
    one node calls that tool."""
    known = set(known_ids)
    found: set[str] = set()
    if isinstance(value, str):
        for pat in _TEXT_REF_PATTERNS:
            for m in pat.finditer(value):
                if m.group(1) in known:
                    found.add(m.group(1))
        if tools:
            for m in _TOOL_REF.finditer(value):
                name = next(g for g in m.groups() if g)
                callers = [n for n, t in tools.items() if t == name and n in known]
                if len(callers) == 1:
                    found.add(callers[0])
    elif isinstance(value, Mapping):
        for v in value.values():
            found |= textual_references(v, known, tools)
    elif isinstance(value, list):
        for v in value:
            found |= textual_references(v, known, tools)
    return found


_TYPE_OK = {
    ("integer", "number"),
    ("integer", "integer"),
}


def _types(schema: Mapping[str, Any] | None) -> set[str] | None:
    if not schema:
        return None
    t = schema.get("type")
    if t is None:
        if "enum" in schema:
            return {type(v).__name__.replace("str", "string") for v in schema["enum"]}
        return None
    return set(t) if isinstance(t, list) else {t}


def types_compatible(produced: Mapping[str, Any] | None, wanted: Mapping[str, Any] | None) -> bool:
    """Whether a value of schema ``produced`` can fill a parameter of schema ``wanted``."""
    pt, wt = _types(produced), _types(wanted)
    if pt is None or wt is None:
        return True
    return any(p == w or (p, w) in _TYPE_OK for p in pt for w in wt)


def node_args(node: PlanNode, spec: ToolSpec | None) -> dict[str, Any]:
    """Named arguments of a node, binding a positional list onto the tool's parameters."""
    if node.positional is not None and spec is not None:
        return {**spec.bind_positional(node.positional), **node.args}
    if node.positional is not None:
        return {**{f"_arg{i}": v for i, v in enumerate(node.positional)}, **node.args}
    return dict(node.args)


_UNKNOWN = object()


class _SymbolicState:
    """World records plus records the plan's effects create, keyed by literal or reference."""

    def __init__(self, world: World | None):
        self.known_literals = world is not None
        self.cols: dict[str, dict[str, dict[str, Any]]] = {}
        if world is not None:
            for c, recs in world.state.collections.items():
                self.cols[c] = {k: dict(v) for k, v in recs.items()}

    def get(self, col: str, key: str) -> dict[str, Any] | None:
        return self.cols.get(col, {}).get(key)


def _key_of(value: Any, known_ids: list[str]) -> tuple[str, bool]:
    """Symbolic key for a precondition argument: (key, is_reference)."""
    ref = exact_reference(value, known_ids)
    if ref is not None:
        return str(ref), True
    return str(value), False


def verify(
    plan: Plan,
    tools: Mapping[str, ToolSpec] | Iterable[ToolSpec],
    world: World | None = None,
    *,
    outputs: Mapping[str, Any] | None = None,
    given: str | None = None,
    unfinished: bool = False,
) -> list[Finding]:
    """Findings for ``plan`` against ``tools``; an empty list means the plan verifies clean.

    ``world`` (optional) is the state in which the plan's *pending* nodes will run: literal ids
    are then checked against its records. Nodes already ``done`` are assumed applied.
    ``outputs`` (optional) maps node ids to results recorded for them (a ParaRecover instance's
    last wave): a value copied from one of them is data that node passed on.
    ``given`` (optional) is the user's request: a value it states came from the user, so a call
    holding it shows no data passed from the calls it waits for (Serial_Error, below).
    ``unfinished`` judges the plan as ParaRecover's Table 12 does, "in the unfinished tasks of
    the updated DAG": a dependency between two calls is a Serial_Error only while both are still
    to run (a wait on a call that has already run delays nothing).
    """
    specs = dict(tools) if isinstance(tools, Mapping) else {t.name: t for t in tools}
    ids = plan.ids
    import networkx as nx  # late: 0.1 s to import, and `replan suites` never verifies

    g = plan.graph()
    ancestors = {n: nx.ancestors(g, n) for n in ids}
    layer_of = {nid: i for i, layer in enumerate(plan.layers()) for nid in layer}
    findings: list[Finding] = []

    def add(
        node: str,
        code: VerdictCode,
        message: str,
        param: str | None = None,
        severity: str = "error",
    ) -> None:
        findings.append(
            Finding(
                node=node,
                code=code,
                error_type=code.error_type,
                param=param,
                message=message,
                severity=severity,
            )
        )  # type: ignore[arg-type]

    order = [nid for layer in plan.layers() for nid in layer]
    nodes = {n.id: n for n in plan.nodes}
    callers = {n.id: n.tool for n in plan.call_nodes if n.tool}
    plan_values = {
        n.id: _scalars([n.args, n.positional]) for n in plan.call_nodes
    }  # what each call is given: a value two calls share is an entity passed through the plan
    sym = _SymbolicState(world)
    seen_calls: dict[str, str] = {}
    done_calls: dict[str, str] = {}
    recorded = results_read(plan, outputs) if unfinished else dict(outputs or {})

    for nid in order:
        node = nodes[nid]
        if not node.is_call:
            continue
        spec = specs.get(node.tool or "")
        if spec is None:
            add(
                nid,
                VerdictCode.UNKNOWN_TOOL,
                f"node {nid} calls {node.tool!r}, which is not an available tool; "
                f"choose one of {sorted(specs)[:12]}",
            )
            continue
        args = node_args(node, spec)
        referenced: set[str] = set()
        bad_names: set[str] = set()
        missing_refs: dict[str, str] = {}  # producer used but not an ancestor -> parameter
        if node.positional is not None:
            add(
                nid,
                VerdictCode.UNKNOWN_PARAM,
                f"node {nid}: arguments of {spec.name} are a bare list; give them as an object "
                f"keyed by parameter name ({list(spec.param_names)})",
            )
        if not node.deps and nid != ROOT:
            add(
                nid,
                VerdictCode.DEPENDENCY_MISSING,
                f"node {nid} depends on nothing; every node depends at least on root or on the "
                "nodes whose results it needs",
            )
        unknown = [k for k in args if k not in spec.param_names]
        missing = [r for r in spec.parameters["required"] if r not in args]
        # foreign argument names that are not typos of the tool's own, and that another tool
        # takes exactly: the wrong tool was chosen (a missing argument alone is just missing)
        typos = _pair_renames(unknown, missing)
        foreign = [k for k in unknown if k not in typos]
        fitting = _fitting_tool(specs, spec, args) if foreign else None
        if fitting is not None:
            # the arguments are another tool's: the wrong tool was chosen, not the arguments
            add(
                nid,
                VerdictCode.WRONG_TOOL,
                f"node {nid} calls {spec.name}, but its arguments are those of {fitting}: "
                f"did you mean {fitting}?",
            )
            bad_names.update(unknown)
            unknown, missing = [], []
        renamed = _pair_renames(unknown, missing, one_for_one=True)
        for key in unknown:
            bad_names.add(key)
            hint = (
                f"; did you mean {renamed[key]!r}?"
                if key in renamed
                else f"; its parameters are {list(spec.param_names)}"
            )
            add(
                nid,
                VerdictCode.UNKNOWN_PARAM,
                f"node {nid}: {spec.name} has no parameter {key!r}{hint}",
                param=key,
            )
        for req in missing:
            if req not in renamed.values():
                add(
                    nid,
                    VerdictCode.MISSING_PARAM,
                    f"node {nid}: {spec.name} needs the required parameter {req!r}",
                    param=req,
                )
        for key, value in args.items():
            if key in bad_names:
                referenced |= {r.node for r in iter_references(value, ids)}
                referenced |= textual_references(value, ids, callers) - {nid}
                continue
            pschema = spec.param_schema(key)
            refs = list(iter_references(value, ids))
            exact = exact_reference(value, ids)
            for ref in refs:
                referenced.add(ref.node)
                if ref.node not in nodes:
                    add(
                        nid,
                        VerdictCode.MISSING_CALL,
                        f"node {nid}.{key} uses {ref}, but the plan has no node {ref.node!r}: "
                        "add the call that produces it",
                        param=key,
                    )
                    continue
                if ref.node not in ancestors[nid]:
                    missing_refs.setdefault(ref.node, key)
                producer = nodes[ref.node]
                pspec = specs.get(producer.tool or "")
                if pspec is not None and ref.path and pspec.returns.get("properties"):
                    fschema = pspec.output_field_schema(ref.path)
                    other = (
                        _producing_tool(specs, pspec, node_args(producer, pspec), ref.path)
                        if fschema is None
                        else None
                    )
                    if other is not None:
                        add(
                            ref.node,
                            VerdictCode.WRONG_TOOL,
                            f"node {ref.node} calls {pspec.name}, but node {nid} needs its "
                            f"{'.'.join(ref.path)!r}, which {other} returns for the same "
                            f"arguments: did you mean {other}?",
                        )
                    elif fschema is None:
                        add(
                            nid,
                            VerdictCode.UNBOUND_REFERENCE,
                            f"node {nid}.{key} uses {ref}, but {pspec.name} returns no field "
                            f"{'.'.join(ref.path)!r}",
                            param=key,
                        )
                    elif exact is not None and not types_compatible(fschema, pschema):
                        add(
                            nid,
                            VerdictCode.TYPE_MISMATCH,
                            f"node {nid}.{key} expects {pschema.get('type') if pschema else '?'}"
                            f" but {ref} is {fschema.get('type')}",
                            param=key,
                        )
            if not refs:
                if isinstance(value, str) and value.strip() in spec.param_names:
                    # Parameter_Missing (Table 12): "some tool-call nodes fail to provide
                    # required parameters" -- a name is no value, so the value is not provided;
                    # and Parameter_Invalid: "parameter values with the correct type but invalid
                    # content" -- the text stands where the value belongs. Both definitions
                    # read it so (the real files tag it either way), so both are raised.
                    msg = (
                        f"node {nid}.{key} holds the placeholder {value!r}, not a value: "
                        "provide the actual value or reference the node that produces it"
                    )
                    add(nid, VerdictCode.MISSING_PARAM, msg, param=key)
                    add(nid, VerdictCode.INVALID_VALUE, msg, param=key)
                    continue
                if reference_token(value, ids) is not None:
                    ref_node = reference_token(value, ids)
                    referenced.add(ref_node)  # type: ignore[arg-type]
                    if ref_node not in ancestors[nid]:
                        missing_refs.setdefault(ref_node, key)  # type: ignore[arg-type]
                    continue  # the referenced output itself: its type is known when it runs
                res = spec.check_value(key, value)
                if not res.ok:
                    add(nid, res.code, f"node {nid}: {res.message}", param=key)
                else:
                    why = invalid_content(value, pschema, key in spec.required, key)
                    if why is not None:
                        add(nid, VerdictCode.INVALID_VALUE, f"node {nid}.{key} {why}", param=key)
                for other in textual_references(value, ids, callers) - {nid}:
                    referenced.add(other)
                    if other not in ancestors[nid]:
                        missing_refs.setdefault(other, key)
            elif exact is None and not isinstance(value, str) and pschema:
                pass  # structured value with embedded references: types known only at run time
            elif exact is None and "string" not in (_types(pschema) or {"string"}):
                add(
                    nid,
                    VerdictCode.TYPE_MISMATCH,
                    f"node {nid}.{key} expects {pschema.get('type')}, but gets text with an "
                    "embedded reference",
                    param=key,
                )
        copied: dict[str, str] = {}
        if unfinished and node.status != "done":
            # a value only one other node's result holds was copied from that result
            copied = _copied_from(nid, args, nodes, ancestors, specs, plan_values, recorded, given)
            for producer, key in copied.items():
                referenced.add(producer)
                if producer not in ancestors[nid]:
                    missing_refs.setdefault(producer, key)
        # the node's own description may say whose output it works on ("using task 2's list")
        said = textual_references(node.desc, ids, callers) - {nid}
        # dependencies that carry no data. Where the producer declares no output (free-text
        # results, as in ParaRecover), data may be copied instead of referenced: a dependency
        # is then flagged only when the node takes nothing from any such dependency
        implicit = [
            d
            for d in node.deps
            if d in nodes and d != ROOT and not _declares_output(specs.get(nodes[d].tool or ""))
        ]
        fed = any(
            d in referenced
            or d in said
            or _implicit_flow(
                nodes[d], specs.get(nodes[d].tool or ""), args, recorded.get(d), given
            )
            for d in implicit
        )
        for dep in node.deps:
            if dep in (ROOT,) or dep in referenced:
                continue
            dep_node = nodes.get(dep)
            if dep_node is None or orders_state(specs.get(dep_node.tool or ""), spec):
                continue
            # a value copied from a node it does not wait for came from there, not from upstream
            upstream = {k: v for k, v in recorded.items() if k not in copied}
            if dep in implicit and (
                fed or _shares_entity(nid, spec, args, plan_values, upstream, given)
            ):
                continue
            wrong_for = next((r for r in sorted(missing_refs) if r in nodes), None)
            if wrong_for is None and unfinished and "done" in (node.status, dep_node.status):
                # Serial_Error (ParaRecover Table 12): "two nodes have no dependency on each
                # other and can be executed in parallel, but they are mistakenly represented as
                # having a sequential dependency" -- in the unfinished tasks. A wait on a node
                # that has already run delays nothing: only two unfinished nodes can still run
                # in parallel.
                continue
            if wrong_for is not None:
                missing_refs.pop(wrong_for)
                add(
                    nid,
                    VerdictCode.WRONG_DEPENDENCY,
                    f"node {nid} depends on {dep}, whose output it never uses, but not on "
                    f"{wrong_for}, whose output it uses: depend on {wrong_for} instead",
                )
            else:
                add(
                    nid,
                    VerdictCode.UNNEEDED_DEPENDENCY,
                    f"node {nid} waits for {dep} but uses none of its output; drop the "
                    "dependency so they can run in parallel",
                    severity="warning",
                )
        for producer, key in missing_refs.items():
            _missing_dep(add, nid, producer, key, layer_of)
        # a node that ran before a dependency of its own ran alongside (or ahead of) it
        if node.status == "done":
            for dep in node.deps:
                dep_node = nodes.get(dep)
                if dep != ROOT and dep_node is not None and dep_node.status != "done":
                    add(
                        nid,
                        VerdictCode.PARALLEL_CONFLICT,
                        f"node {nid} has run, but its dependency {dep} has not: it ran in "
                        f"parallel with (or before) {dep}; order them",
                    )
        # preconditions against the simulated state
        if node.status != "done":
            _check_preconditions(add, sym, nid, spec, args, ids)
        # a done node ran: the records it made exist for the nodes that reference them
        _apply_effects(sym, nid, spec, args, ids)
        # duplicate pending calls
        sig = canonical_json([spec.name, args])
        if node.status == "done":
            done_calls.setdefault(sig, nid)
        elif sig in seen_calls or sig in done_calls:
            twin = seen_calls.get(sig)
            add(
                nid,
                VerdictCode.REDUNDANT_CALL,
                f"node {nid} repeats node {twin} (same tool, same arguments)"
                if twin is not None
                else f"node {nid} repeats node {done_calls[sig]}, which already ran (same "
                "tool, same arguments)",
                severity="warning",
            )
            if twin is not None and twin not in ancestors[nid]:
                # Parallelism_Error (Table 12): "two nodes that should be executed sequentially
                # are treated as parallel". A second identical call is needed only if the first
                # fails, so it needs the first's outcome: side by side, neither waiting for the
                # other, they are a retry scheduled in parallel with what it retries.
                add(
                    nid,
                    VerdictCode.PARALLEL_CONFLICT,
                    f"node {nid} repeats node {twin} without waiting for it: a retry runs only "
                    f"after the attempt it repeats; make {nid} depend on {twin} or drop it",
                )
            # a repeat of a call that has run is still a pending attempt: a second repeat
            # beside it is scheduled in parallel with it
            seen_calls.setdefault(sig, nid)
        else:
            seen_calls[sig] = nid
    # a call the response does not wait for: its result never reaches the answer
    if RESPONSE in nodes:
        before_response = ancestors[RESPONSE]
        for n in plan.call_nodes:
            if n.status != "done" and n.id not in before_response:
                add(
                    RESPONSE,
                    VerdictCode.DEPENDENCY_MISSING,
                    f"the response does not wait for node {n.id} ({n.tool}), which has not run: "
                    f"its result never reaches the answer; make the response depend on {n.id}",
                    severity="warning",
                )
    return findings


_REF_TOKEN = linre.compile(
    r"^(?:output_of_task_?(\d+(?:\.\d+)*)|task_?(\d+(?:\.\d+)*)_output)$", linre.I
)


def reference_token(value: Any, known_ids: Iterable[str] | None = None) -> str | None:
    """The node a whole-value reference token names (``output_of_task2``, ``task2_output``: the
    reference syntax of ParaRecover's augmented file, which its tool agent resolves), else
    ``None``. Unlike a reference in words, a token stands for the output itself."""
    if not isinstance(value, str):
        return None
    m = _REF_TOKEN.match(value.strip())
    if m is None:
        return None
    node = m.group(1) or m.group(2)
    return node if known_ids is None or node in set(known_ids) else None


_JSON_TYPES = {"string", "number", "integer", "boolean", "object", "array", "null", "enum"}
_SCHEMA_KEYS = {"type", "description", "properties", "items", "enum", "required", "format"}


def _schema_stub(value: Any) -> bool:
    """Whether ``value`` is a schema description (``{"type": "object", "description": ...}``)
    copied where a value belongs."""
    return (
        isinstance(value, Mapping)
        and "type" in value
        and "description" in value
        and set(value) <= _SCHEMA_KEYS
        and value.get("type") in _JSON_TYPES
    )


def _real_date(text: str) -> bool:
    """Whether ``text`` starts with a calendar date written YYYY-MM-DD (2026-02-32 is not)."""
    head = text.strip()[:10]
    if len(head) != 10 or head[4] != "-" or head[7] != "-":
        return False
    if not (head[:4] + head[5:7] + head[8:]).isdigit():
        return False
    try:
        date(int(head[:4]), int(head[5:7]), int(head[8:]))
    except ValueError:
        return False
    return True


#: a web address as RFC 3986 writes one (a scheme, ``https://x``, ``mailto:a@b``) or a bare host
#: with an optional path (``www.example.com/x``)
_URL = linre.compile(
    r"^(?:[a-z][a-z0-9+.\-]*:(?://\S+|[^/\s]\S*)|(?:[a-z0-9\-]+\.)+[a-z]{2,}(?:[/:?#]\S*)?)$",
    linre.I,
)
_URL_WORD = linre.compile(r"(?:^|[^a-z])(?:url|uri)s?(?:[^a-z]|$)", linre.I)


def wants_url(name: str, pschema: Mapping[str, Any] | None) -> bool:
    """Whether a parameter states that its value is a web address: its schema's ``format`` is
    ``uri``/``url``, or its name or description names a URL (``video_url``, "page URL")."""
    schema = pschema or {}
    if str(schema.get("format") or "").lower() in ("uri", "url", "iri"):
        return True
    if "string" not in (_types(schema) or {"string"}):
        return False
    return bool(_URL_WORD.search(name) or _URL_WORD.search(str(schema.get("description") or "")))


def invalid_content(
    value: Any, pschema: Mapping[str, Any] | None, required: bool, name: str = ""
) -> str | None:
    """Why a value of the declared type cannot be a real value, or ``None``.

    Parameter_Invalid, ParaRecover Table 12: "some tool-call nodes assign parameter values with
    the correct type but invalid content. For example, the tool requires a date parameter, but
    the call provides an invalid value such as '2026/02/32'." Each case below is a value whose
    type fits but whose content is not a value: a schema description or a bare type word where
    an object belongs; a date that the parameter's stated YYYY-MM-DD format cannot read, or
    that is no calendar day; text that is no web address where the parameter states a URL
    (:func:`wants_url`: ``"下载链接"``, "download link", for ``url``), the same case as the
    definition's date; an empty value for a required parameter. Text that names another
    node's output in words ("task1中输出的视频URL") under a string parameter is not flagged: the
    real files tag that same pattern Parameter_Invalid in some instances and leave it untagged
    in others (their tool agent reads such words), so the plan alone cannot decide it.
    """
    if _schema_stub(value):
        return f"holds a schema description ({value}), not a value"
    if isinstance(value, Mapping) and value and set(value) <= {"type", "description"}:
        return f"holds a description of a value ({value}), not the value"
    desc = str((pschema or {}).get("description") or "")
    wants_date = (pschema or {}).get("format") == "date" or "yyyy-mm-dd" in desc.lower()
    if wants_date and isinstance(value, str) and value.strip() and not _real_date(value):
        return f"holds {value!r}, which is not a date written YYYY-MM-DD"
    is_text = isinstance(value, str) and bool(value.strip())
    if is_text and wants_url(name, pschema) and not _URL.match(value.strip()):
        return f"holds {value!r}, which is not a web address (URL)"
    if required and (value in ("", [], {}) or (isinstance(value, str) and not value.strip())):
        return f"holds an empty value ({value!r}) for a required parameter"
    return None


def _scalars(value: Any, out: set[str] | None = None) -> set[str]:
    """Normalised scalar values inside ``value`` (strings lower-cased, numbers as floats)."""
    out = set() if out is None else out
    for _, leaf in json_leaves(value):
        if isinstance(leaf, bool) or leaf is None:
            continue
        if isinstance(leaf, (int, float)):
            out.add(repr(float(leaf)))
        elif isinstance(leaf, str):
            text = leaf.strip().lower()
            if _is_num(text):
                out.add(repr(float(text)))
            elif len(text) >= 2:
                out.add(text)
    return out


def _shares_entity(
    nid: str,
    spec: ToolSpec,
    args: Mapping[str, Any],
    plan_values: Mapping[str, set[str]],
    recorded: Mapping[str, Any],
    given: str | None = None,
) -> bool:
    """Whether a call holds a value that another call of the plan also holds, or that a
    recorded result contains: the same entity passes through the plan, so it may have come
    from the calls it waits for even when none of them gave it (a sibling can share it with an
    upstream producer). A call whose values appear nowhere else is tied to nothing. A call with
    no values, or holding a placeholder (a parameter's own name), gives nothing to tell by. A
    value the user's request (``given``) states came from the user, not from another call: a
    call holding only such values is tied to nothing."""
    mine = _scalars(dict(args))
    if not mine or any(isinstance(v, str) and v.strip() in spec.param_names for v in args.values()):
        return True  # nothing to tell by
    mine = _not_given(mine, given)
    for other, values in plan_values.items():
        if other != nid and mine & values:
            return True
    mine = _not_given(mine, given, names=True)
    return any(_in_text(mine, out) for out in recorded.values())


def results_read(plan: Plan, outputs: Mapping[str, Any] | None) -> dict[str, Any]:
    """Node id -> what the plan shows of its result: the recorded result (``outputs``) and, for
    a node that has run, its description, where the real ParaRecover files write the result
    once the node has run ("... Result: [...]")."""
    out: dict[str, Any] = dict(outputs or {})
    for n in plan.call_nodes:
        if n.status == "done" and n.desc:
            had = out.get(n.id)
            text = had if isinstance(had, str) else "" if had is None else canonical_json(had)
            out[n.id] = f"{text}\n{n.desc}" if text else n.desc  # text: quotes stay unescaped
    return out


def _wordy(value: str) -> bool:
    """Whether a value is text with 3+ letters: numbers, dates and times coincide too easily
    (a timestamp the plan invents may match one a result holds) to tell that one was copied."""
    return sum(c.isalpha() for c in value) >= 3


def holds_result_text(
    args: Any, results: Iterable[Any], given: str | None = None, others: Any = None
) -> bool:
    """Whether ``args`` hold a text value that one of ``results`` contains: a value copied from
    a result. Only text with 3+ letters counts (:func:`_wordy`), and not a value the
    user's request (``given``) states or that other calls are given too (``others``, their
    arguments): such a value is an entity passed through the plan, not taken from a result."""
    mine = {v for v in _scalars(args) if _wordy(v)}
    mine = _not_given(mine, given, names=True) - _scalars(others)
    return bool(mine) and any(_in_text(mine, r) for r in results)


def _copied_from(
    nid: str,
    args: Mapping[str, Any],
    nodes: Mapping[str, PlanNode],
    ancestors: Mapping[str, set[str]],
    specs: Mapping[str, ToolSpec],
    plan_values: Mapping[str, set[str]],
    recorded: Mapping[str, Any],
    given: str | None,
) -> dict[str, str]:
    """Nodes whose result a call copies a value from, each with the parameter holding it.

    Dependence_Null, ParaRecover Table 12: "some nodes have missing dependencies"; a node
    depends on another when it needs that node's result (Parallelism_Error's own example:
    "node 2 requires the execution result of node 1 as its input parameter"). Where results are
    free text (the producer's tool declares no output), a plan passes a result on by copying
    from it into a literal value. A value counts as copied from node ``m`` when it is text with
    3+ letters (:func:`_wordy`), the user's request does not state
    it, no other call of the plan is given it, nothing the call could already wait for holds it
    (its ancestors' arguments, descriptions and results, the root's description), and exactly
    one other node that has run -- neither the call's ancestor nor its descendant -- holds it in
    its result (its recorded result, or the description a node that has run carries, where the
    real files write the result).
    """
    mine: dict[str, str] = {}
    for key, value in args.items():
        for v in _scalars(value):
            if _wordy(v):
                mine.setdefault(v, key)
    mine = {v: k for v, k in mine.items() if not (given and _in_text({v}, given))}
    mine = {
        v: k
        for v, k in mine.items()
        if not any(v in vals for other, vals in plan_values.items() if other != nid)
    }
    if not mine:
        return {}

    def holds(m: str) -> list[Any]:
        n = nodes[m]
        return [n.args, n.positional, n.desc, recorded.get(m)]

    upstream = [x for m in ancestors[nid] if m in nodes for x in holds(m)]
    mine = {v: k for v, k in mine.items() if not any(_in_text({v}, u) for u in upstream)}
    sources = [
        m
        for m, n in nodes.items()
        if m != nid
        and n.is_call
        and n.status == "done"
        and m not in ancestors[nid]
        and nid not in ancestors[m]
        and not _declares_output(specs.get(n.tool or ""))
    ]
    out: dict[str, str] = {}
    for v, key in mine.items():
        found = [m for m in sources if _in_text({v}, recorded.get(m))]
        if len(found) == 1:
            out.setdefault(found[0], key)
    return out


def _declares_output(spec: ToolSpec | None) -> bool:
    """Whether the tool declares its output's fields (then data flows only by reference)."""
    return spec is not None and bool(spec.returns.get("properties"))


def _implicit_flow(
    producer: PlanNode,
    pspec: ToolSpec | None,
    consumer_args: Mapping[str, Any],
    output: Any,
    given: str | None = None,
) -> bool:
    """Whether data may pass from ``producer`` to a consumer that names none of its output.

    Only when the producer's tool declares no output schema (ParaRecover tool lists): its result
    is free text, and plans copy what they need from it into literal values. The dependency
    then counts as carrying data when the producer is not a call or takes no arguments (all it
    gives is its output), when the consumer holds a value the producer was given (the same
    entity, passed along), or a value that the producer's recorded result contains. A value the
    user's request (``given``) states is the user's, not the producer's: it shows nothing.
    """
    if _declares_output(pspec):
        return False  # a declared output: data flows only through references to it
    if not producer.is_call or (not producer.args and not producer.positional):
        return True
    mine = _not_given(_scalars(dict(consumer_args)), given)
    theirs = _scalars([producer.args, producer.positional])
    if mine & theirs:
        return True
    return _in_text(_not_given(mine, given, names=True), output)


def _not_given(values: set[str], given: str | None, *, names: bool = False) -> set[str]:
    """``values`` less the numbers the user's request states (and, with ``names``, the names
    too). A quantity the user gave ("5 seedlings", "12 inches") reaches every call that needs
    it from the user, so two calls holding it are not tied by it; a name is kept there, as two
    calls on the same named thing (measure the water, then analyse it) may be ordered by that
    thing's state. Against a recorded result every given value goes: a result that repeats
    what the user said ("whole milk") shows nothing the consumer took from it."""
    if not given:
        return values
    return {v for v in values if not ((names or _is_num(v)) and _in_text({v}, given))}


def _in_text(values: set[str], output: Any) -> bool:
    """Whether a recorded result contains one of ``values`` (text of 3+ characters, or a number
    standing alone)."""
    if output is None:
        return False
    low = (output if isinstance(output, str) else canonical_json(output)).lower()
    return any(
        linre.compile(
            linre.escape(_num_text(v)), not_after=r"\d.", followed_by=r"\D|$", overlapping=True
        ).search(low)
        if _is_num(v)
        else len(v) >= 3 and v in low
        for v in values
    )


def _is_num(v: str) -> bool:
    try:
        return math.isfinite(float(v))
    except ValueError:
        return False


def _num_text(v: str) -> str:
    f = float(v)
    return str(int(f)) if f.is_integer() else repr(f)


def _fitting_tool(
    specs: Mapping[str, ToolSpec], chosen: ToolSpec, args: Mapping[str, Any]
) -> str | None:
    """Another tool whose parameter names the arguments fit exactly (names, not values), the
    most similar name first; ``None`` when there is none or the arguments fit nothing."""
    if not args:
        return None
    fits = [
        s.name
        for s in specs.values()
        if s.name != chosen.name and set(args) <= set(s.param_names) and s.required <= set(args)
    ]
    return max(fits, key=lambda n: SequenceMatcher(None, n, chosen.name).ratio(), default=None)


def _producing_tool(
    specs: Mapping[str, ToolSpec], chosen: ToolSpec, args: Mapping[str, Any], path: list[str]
) -> str | None:
    """A tool that takes these arguments and returns ``path`` (which ``chosen`` does not)."""
    for s in specs.values():
        if s.name == chosen.name or s.output_field_schema(path) is None:
            continue
        if set(args) <= set(s.param_names) and s.required <= set(args):
            return s.name
    return None


def _pair_renames(
    unknown: list[str], missing: list[str], *, one_for_one: bool = False
) -> dict[str, str]:
    """Unknown argument names that are near-misses of a missing required one (a rename).

    With ``one_for_one`` (once no other tool fits the arguments), the names left over pair up
    too when as many are unknown as are missing: an argument the tool does not take, given
    where a required one is absent, is that argument misnamed (``pot_name`` for
    ``container``), not an extra argument beside a missing one.
    """
    out: dict[str, str] = {}
    free = list(missing)
    for u in unknown:
        best = max(free, key=lambda m: SequenceMatcher(None, u, m).ratio(), default=None)
        if best is not None and SequenceMatcher(None, u, best).ratio() >= 0.6:
            out[u] = best
            free.remove(best)
    rest = [u for u in unknown if u not in out]
    if one_for_one and rest and len(rest) == len(free):
        for u in rest:
            best = max(free, key=lambda m: SequenceMatcher(None, u, m).ratio())
            out[u] = best
            free.remove(best)
    return out


def _missing_dep(add: Any, nid: str, producer: str, key: str, layer_of: dict[str, int]) -> None:
    if layer_of.get(producer) == layer_of.get(nid):
        add(
            nid,
            VerdictCode.PARALLEL_CONFLICT,
            f"node {nid} needs the output of {producer} (in {key!r}) but would run in parallel "
            f"with it; add {producer} to its dependencies",
            param=key,
        )
    else:
        add(
            nid,
            VerdictCode.DEPENDENCY_MISSING,
            f"node {nid} uses the output of {producer} (in {key!r}) but does not depend on it; "
            f"add {producer} to its dependencies",
            param=key,
        )


def orders_state(producer: ToolSpec | None, consumer: ToolSpec | None) -> bool:
    """Whether a dependency between two calls carries state: the producer's effects touch what
    the consumer needs (its preconditions or its own effects). Unknown tools carry none."""
    if producer is None or consumer is None:
        return False
    touched = {e.collection for e in producer.effects}
    needed = {p.collection for p in consumer.preconditions} | {
        e.collection for e in consumer.effects
    }
    return bool(touched & needed)


def _check_preconditions(
    add: Any, sym: _SymbolicState, nid: str, spec: ToolSpec, args: dict[str, Any], ids: list[str]
) -> None:
    for pre in spec.preconditions:
        if pre.arg not in args:
            continue
        key, is_ref = _key_of(args[pre.arg], ids)
        if not is_ref and not sym.known_literals:
            continue
        rec = sym.get(pre.collection, key)
        if rec is None:
            if is_ref:
                msg = (
                    f"node {nid}: {pre.arg}={args[pre.arg]} does not name a {pre.collection} "
                    "record any earlier node creates"
                )
            else:
                msg = f"node {nid}: no {pre.collection} record {key!r} exists ({pre.arg})"
            add(
                nid,
                VerdictCode.PRECONDITION_FAILED,
                msg + (f" — {pre.description}" if pre.description else ""),
                param=pre.arg,
            )
            continue
        if pre.kind == "field_equals":
            got = rec.get(pre.field or "", _UNKNOWN)
            if got is not _UNKNOWN and got != pre.value:
                add(
                    nid,
                    VerdictCode.PRECONDITION_FAILED,
                    f"node {nid}: {pre.collection} {key} has {pre.field}={got!r}, needs "
                    f"{pre.value!r}" + (f" — {pre.description}" if pre.description else ""),
                    param=pre.arg,
                )


def _apply_effects(
    sym: _SymbolicState, nid: str, spec: ToolSpec, args: dict[str, Any], ids: list[str]
) -> None:
    for eff in spec.effects:
        col = sym.cols.setdefault(eff.collection, {})
        fields: dict[str, Any] = {}
        for k, v in eff.fields.items():
            if isinstance(v, str) and v.startswith("$arg."):
                val = args.get(v[5:], _UNKNOWN)
                fields[k] = _UNKNOWN if exact_reference(val, ids) or val is _UNKNOWN else val
            elif isinstance(v, str) and v.startswith("$output."):
                fields[k] = _UNKNOWN
            else:
                fields[k] = v
        if eff.op == "create":
            col[reference_text(nid, eff.key)] = {
                k: v for k, v in fields.items() if v is not _UNKNOWN
            } | {k: _UNKNOWN for k, v in fields.items() if v is _UNKNOWN}
        elif eff.key in args:
            key, _ = _key_of(args[eff.key], ids)
            if eff.op == "delete":
                col.pop(key, None)
            elif key in col:
                col[key] = {**col[key], **fields}


def verify_text(
    text: str, tools: Mapping[str, ToolSpec] | Iterable[ToolSpec], world: World | None = None
) -> tuple[Plan | None, list[Finding], str | None]:
    """Parse then verify; returns (plan or None, findings, parse failure reason or None)."""
    parsed = Plan.parse(text)
    if not parsed:
        return None, [], parsed.reason  # type: ignore[union-attr]
    return parsed, verify(parsed, tools, world), None  # type: ignore[arg-type]


__all__ = [
    "RESPONSE",
    "holds_result_text",
    "invalid_content",
    "node_args",
    "reference_token",
    "results_read",
    "textual_references",
    "types_compatible",
    "verify",
    "verify_text",
]
