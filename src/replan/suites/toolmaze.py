"""ToolMaze-style suite: C1–C4 task DAGs built tool-first from the corpus, × {NP, P1–P4}.

Generation follows ToolMaze §3.3, with deterministic code where the paper uses LLMs:

1. **DAG assembly.** A task is a sequence of *units*: a fixed tool, or an alternative group
   (``AlternativeGroup`` of the corpus: 1-1 / 1-N / N-N chains of tools). Units are chained by
   semantic kind (``x-kind``): an input is bound to an earlier output of the same kind and a
   compatible JSON type, written as a ``${node.field}`` reference, so data really flows; a
   parameter that names a record a precondition checks is bound only to the output that created
   that record. Literal inputs come from the kinds' example values (one shared rotation per task,
   so index-aligned kinds — a city, its airport, its country — stay coherent). Levels:
   **C1** a linear chain of fixed tools (one path); **C2** a chain with one 1-1 / 1-N group;
   **C3** a chain with one N-N (many-to-many) group; **C4** a shared prefix fanning out into 2–3
   branches, each holding its own group (paths multiply). Every task has a source and ends each
   branch in an action. Sampling is domain-balanced (a primary domain per task, General tools as
   glue, other domains where the kinds chain naturally) and penalises tools already used in the
   level, which keeps tool sets diverse.
2. **Solution-space enumeration.** Every combination of group chains is a valid path; each is
   built as a concrete plan and *executed* in a clean world — a task is kept only if all paths run
   clean. The shortest path (fewest calls, then fewest waves) is s*: ``min_calls`` = c*,
   ``optimal_rounds`` = G (tool-call waves of s*; no response round in this suite).
3. **Checker and query.** The checker holds what *every* valid path achieves: records created or
   changed (fields whose values agree across paths; tool-generated ids are left out of the match
   and must instead be stated in the answer), plus facts from the final outputs that every path
   returns. The query is written from templates and states every literal any path needs.

Each base task is crossed with the modes: the victim is chosen on s* (C1: a tool with
downstream calls; C2–C4: the group, the first of whose tools the agent calls becomes the victim;
C4: one branch's group). Under P2/P4 a C1 task has no path left and success means graceful
termination. ``Task.metadata`` carries the paths (tools + plan), the victim tools, the implicit
corruption per possible victim and ``min_calls_after_fault`` (c* for Recovery Cost, computed by
:mod:`replan.env.recovery_cost`).
"""

from __future__ import annotations

import itertools
import json
import math
import random
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import networkx as nx

from replan.core.leaves import json_leaves
from replan.core.plan import RESPONSE, ROOT, Plan, PlanNode, exact_reference, reference_text
from replan.core.task import (
    MODES,
    Checker,
    PerturbationProfile,
    RequiredRecord,
    Task,
    mode_flags,
)
from replan.core.tools import DOMAINS, ToolSpec, canonical_json
from replan.core.trace import Call
from replan.env.checker import check
from replan.env.corpus import Corpus, load_corpus
from replan.env.perturb import EXPLICIT_KINDS, ImplicitSpec, Perturber, plan_implicit
from replan.env.recovery_cost import min_calls
from replan.env.verifier import types_compatible
from replan.env.world import _MISSING as _MISSING_PATH
from replan.env.world import ExecResult, World, WorldState, stable_seed

SUITE = "toolmaze"
LEVELS: tuple[str, ...] = ("C1", "C2", "C3", "C4")
PER_LEVEL = 100

#: target s* lengths (tool calls) and their weights, after ToolMaze Table 1
_LENGTHS: dict[str, dict[int, float]] = {
    "C1": {5: 0.72, 6: 0.2, 7: 0.08},
    "C2": {5: 0.5, 6: 0.3, 7: 0.12, 8: 0.05, 9: 0.03},
    "C3": {6: 0.5, 7: 0.3, 8: 0.12, 9: 0.05, 10: 0.03},
}
_C4_TOTAL = {9: 0.12, 10: 0.22, 11: 0.26, 12: 0.2, 13: 0.12, 14: 0.05, 15: 0.03}
_C4_MAX = 15  # longest C4 s* (ToolMaze Table 1: 8–15)
_MAX_PATHS = 64


class GenerationError(RuntimeError):
    """The corpus cannot yield a task of the requested shape (names the level and index)."""


# ---------------------------------------------------------------------------------------------
# corpus index
@dataclass(frozen=True)
class ParamInfo:
    name: str
    kind: str | None
    schema: Mapping[str, Any]
    required: bool
    pre: str | None  # collection a precondition looks this argument up in
    pre_field: tuple[str, str] | None = None  # (field, canonical value) it must hold


@dataclass(frozen=True)
class OutField:
    path: tuple[str, ...]
    kind: str
    schema: Mapping[str, Any]


@dataclass(frozen=True)
class ToolInfo:
    spec: ToolSpec
    ins: tuple[ParamInfo, ...]
    outs: tuple[OutField, ...]
    creates: Mapping[tuple[str, ...], frozenset[str]]  # output path -> collections it keys
    sets: Mapping[tuple[str, ...], frozenset[tuple[str, str, str]]]  # (collection, field, value)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def in_kinds(self) -> set[str]:
        return {p.kind for p in self.ins if p.kind}

    @property
    def out_kinds(self) -> set[str]:
        return {o.kind for o in self.outs}


def _walk_outputs(schema: Any, prefix: tuple[str, ...] = (), depth: int = 0) -> list[OutField]:
    out: list[OutField] = []
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(props, Mapping):
        return out
    required = schema.get("required")
    for name, sub in props.items():
        if not isinstance(sub, Mapping):
            continue
        if isinstance(required, list) and name not in required:
            continue  # an optional field may be absent: nothing can rely on it
        path = (*prefix, str(name))
        if sub.get("x-kind"):
            out.append(OutField(path, str(sub["x-kind"]), sub))
        if depth < 4:
            if sub.get("type") == "object":
                out.extend(_walk_outputs(sub, path, depth + 1))
            elif sub.get("type") == "array" and isinstance(sub.get("items"), Mapping):
                # element 0 of a list: used only when nothing plainer fits (see ``_latest``),
                # and kept only if every path runs clean
                out.extend(_walk_outputs(sub["items"], (*path, "0"), depth + 1))
    out.sort(key=lambda o: ("0" in o.path, len(o.path)))
    return out


def _declared_output(corpus: Corpus, gid: str | None) -> str | None:
    grp = corpus.groups.get(gid) if gid else None
    return grp.output_kind if grp is not None else None


def _echo(out: OutField, ins: Sequence[ParamInfo]) -> bool:
    """An output field that repeats an input of the same name and kind (``sku`` -> ``sku``)."""
    return any(p.name == out.path[-1] and p.kind == out.kind for p in ins)


class CorpusIndex:
    """What the generator needs to know about the corpus, computed once."""

    def __init__(self, corpus: Corpus):
        self.corpus = corpus
        self.kinds = corpus.kinds
        self.literal = {k for k, v in corpus.kinds.items() if v.literal}
        self.tools: dict[str, ToolInfo] = {}
        for name, spec in sorted(corpus.tools.items()):
            pre = {p.arg: p.collection for p in spec.preconditions}
            pre_f = {
                p.arg: (p.field or "", canonical_json(p.value))
                for p in spec.preconditions
                if p.kind == "field_equals"
            }
            ins = tuple(
                ParamInfo(
                    name=p,
                    kind=sch.get("x-kind"),
                    schema=sch,
                    required=p in spec.required,
                    pre=pre.get(p),
                    pre_field=pre_f.get(p),
                )
                for p, sch in spec.parameters["properties"].items()
            )
            creates: dict[tuple[str, ...], set[str]] = defaultdict(set)
            triples: dict[tuple[str, ...], set[tuple[str, str, str]]] = defaultdict(set)
            for eff in spec.effects:
                if eff.op == "create":
                    path = tuple(eff.key.split("."))
                    creates[path].add(eff.collection)
                    for f, v in eff.fields.items():
                        if not (isinstance(v, str) and v.startswith("$")):
                            triples[path].add((eff.collection, f, canonical_json(v)))
            self.tools[name] = ToolInfo(
                spec=spec,
                ins=ins,
                outs=tuple(
                    o
                    for o in _walk_outputs(spec.returns)
                    # an input handed back is no data flow (but a group's result is kept)
                    if not _echo(o, ins) or o.kind == _declared_output(corpus, spec.group)
                ),
                creates={k: frozenset(v) for k, v in creates.items()},
                sets={k: frozenset(v) for k, v in triples.items()},
            )
        self.groups = dict(sorted(corpus.groups.items()))
        self._feasible: dict[str, bool] = {}
        self.in_kinds: dict[str, set[str]] = {}
        self.consumers: dict[str, set[str]] = defaultdict(set)
        for t in self.tools.values():
            self.in_kinds[t.name] = {p.kind for p in t.ins if p.kind}
            for p in t.ins:
                if p.kind and p.required:
                    self.consumers[p.kind].add(t.name)
        # finish[x]: bit k set when some chain of k more calls from x ends in an action, over
        # kind edges (ignores the other inputs, so it over-approximates: a pruning bound only)
        nexts: dict[str, set[str]] = {}
        cost: dict[str, int] = {n: 1 for n in self.tools}
        ends: dict[str, bool] = {n: t.spec.category == "action" for n, t in self.tools.items()}
        outk: dict[str, set[str]] = {n: t.out_kinds for n, t in self.tools.items()}
        ink: dict[str, set[str]] = {
            n: {p.kind for p in t.ins if p.kind} for n, t in self.tools.items()
        }
        for gid, grp in self.groups.items():
            key = "group:" + gid
            if not all(m in self.tools for m in grp.tools):
                continue
            cost[key] = min(len(c) for c in grp.members)
            ends[key] = all(self.tools[c[-1]].spec.category == "action" for c in grp.members)
            gk = _group_kind(grp, self)
            outk[key] = {gk} if gk else set()
            ink[key] = {p.kind for t in grp.tools for p in self.tools[t].ins if p.kind}
        for x in cost:
            nexts[x] = {y for y in cost if y != x and outk[x] & ink[y]}
        self.finish: dict[str, int] = {x: int(ends[x]) for x in cost}
        for _ in range(16):
            changed = False
            for x in cost:
                m = self.finish[x]
                for y in nexts[x]:
                    m |= (self.finish[y] << cost[y]) & 0xFFFF
                if m != self.finish[x]:
                    self.finish[x] = m
                    changed = True
            if not changed:
                break

    def group_feasible(self, gid: str) -> bool:
        """Whether every input of every chain of ``gid`` can be bound at all: a literal kind, an
        output of an earlier chain tool, or some tool's output (the creator of the record a
        precondition needs). Groups that fail this never fit a task."""
        got = self._feasible.get(gid)
        if got is None:
            got = self._feasible[gid] = self._group_feasible(gid)
        return got

    def _group_feasible(self, gid: str) -> bool:
        grp = self.groups[gid]
        if _group_kind(grp, self) is None:
            return False
        for chain in grp.members:
            made: set[str] = set()
            for t in chain:
                info = self.tools.get(t)
                if info is None:
                    return False
                for p in info.ins:
                    if not p.required:
                        continue
                    if p.kind is None or p.kind in made:
                        continue
                    if p.kind in self.literal and p.pre is None:
                        continue
                    if (
                        not any(
                            o.kind == p.kind
                            and (p.pre is None or p.pre in other.creates.get(o.path, ()))
                            for other in self.tools.values()
                            if other.name != t
                            for o in other.outs
                        )
                        and p.kind not in self.literal
                    ):
                        return False
                made |= info.out_kinds
        return True


@lru_cache(maxsize=4)
def _index_for(corpus_id: int) -> CorpusIndex:  # keyed by id(corpus); the corpus is cached too
    return CorpusIndex(_CORPORA[corpus_id])


_CORPORA: dict[int, Corpus] = {}


def corpus_index(corpus: Corpus | None = None) -> CorpusIndex:
    corpus = corpus or load_corpus()
    _CORPORA[id(corpus)] = corpus
    return _index_for(id(corpus))


# ---------------------------------------------------------------------------------------------
# bindings
@dataclass(frozen=True)
class Lit:
    value: Any


@dataclass(frozen=True)
class NodeOut:
    node: str
    path: tuple[str, ...]


@dataclass(frozen=True)
class SlotOut:
    unit: int


@dataclass(frozen=True)
class Avail:
    ref: NodeOut | SlotOut
    kind: str
    schema: Mapping[str, Any]
    unit: int
    creates: frozenset[str]
    sets: frozenset[tuple[str, str, str]] = frozenset()
    source: tuple[str, str] = ("", "")  # (producer tool or group:<id>, output path)


@dataclass
class GNode:
    key: str
    tool: str
    args: dict[str, Lit | NodeOut | SlotOut]
    unit: int
    chain: int


@dataclass
class Unit:
    index: int
    group: str | None
    chains: list[list[GNode]]
    outs: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)  # group output per chain
    branch: int = 0

    @property
    def min_len(self) -> int:
        return min(len(c) for c in self.chains)

    @property
    def tools(self) -> list[str]:
        return [n.tool for c in self.chains for n in c]


class Literals:
    """Literal values for a task: kind examples in one rotation shared by all kinds."""

    def __init__(self, index: CorpusIndex, base: int):
        self.index = index
        self.base = base

    def value(self, kind: str, j: int) -> Any:
        """The ``j``-th distinct value of ``kind`` for this task; the first three occurrences
        never wrap around the example list (so ordered examples stay ordered: start < end)."""
        ex = self.index.kinds[kind].examples
        n = len(ex)
        start = self.base % max(1, n - 2) if n > 3 else self.base % n
        return ex[(start + j) % n]

    def from_schema(self, schema: Mapping[str, Any], j: int) -> Any:
        """A literal for a schema without a literal kind; ``_NONE`` when there is none."""
        k = schema.get("x-kind")
        if k in self.index.literal:
            return self.value(k, j)
        if "const" in schema:
            return schema["const"]
        if schema.get("enum"):
            return schema["enum"][(self.base + j) % len(schema["enum"])]
        t = schema.get("type")
        if isinstance(t, list):
            t = next((x for x in t if x != "null"), None)
        fmt = schema.get("format")
        if t == "string":
            by_fmt = {"date": "date", "email": "email", "time": "time"}.get(fmt or "")
            if by_fmt and by_fmt in self.index.literal:
                return self.value(by_fmt, j)
            return _NONE
        if t == "integer":
            lo = schema.get("minimum", 1)
            hi = schema.get("maximum", max(lo, 1) + 4)
            return int(min(max(lo, 1), hi))
        if t == "number":
            lo = schema.get("minimum", 1)
            hi = schema.get("maximum", max(lo, 1) + 4)
            return float(min(max(lo, 1), hi))
        if t == "boolean":
            return True
        if t == "object":
            props = schema.get("properties") or {}
            out = {}
            for name in schema.get("required", []):
                sub = props.get(name)
                if not isinstance(sub, Mapping):
                    return _NONE
                v = self.from_schema(sub, j)
                if v is _NONE:
                    return _NONE
                out[name] = v
            return out
        if t == "array" and isinstance(schema.get("items"), Mapping):
            v = self.from_schema(schema["items"], j)
            if v is _NONE:
                return _NONE
            return [v] * max(1, int(schema.get("minItems", 1)))
        return _NONE


_NONE = object()


# ---------------------------------------------------------------------------------------------
# the search state
@dataclass
class _State:
    units: list[Unit]
    avail: list[Avail]
    used: frozenset[str]
    groups_used: frozenset[str]

    def add(self, unit: Unit, ix: CorpusIndex) -> _State:
        new_avail = list(self.avail)
        if unit.group is None:
            node = unit.chains[0][0]
            info = ix.tools[node.tool]
            for o in info.outs:
                new_avail.append(
                    Avail(
                        NodeOut(node.key, o.path),
                        o.kind,
                        o.schema,
                        unit.index,
                        info.creates.get(o.path, frozenset()),
                        info.sets.get(o.path, frozenset()),
                        (info.name, ".".join(o.path)),
                    )
                )
        else:
            grp = ix.groups[unit.group]
            kind = _group_kind(grp, ix)
            assert kind is not None
            creates: frozenset[str] | None = None
            sets: frozenset[tuple[str, str, str]] | None = None
            schema: Mapping[str, Any] = {}
            for c, (key, path) in enumerate(unit.outs):
                info = ix.tools[_node(unit.chains[c], key).tool]
                cr = info.creates.get(path, frozenset())
                creates = cr if creates is None else creates & cr
                se = info.sets.get(path, frozenset())
                sets = se if sets is None else sets & se
                if c == 0:
                    schema = next(o.schema for o in info.outs if o.path == path)
            new_avail.append(
                Avail(
                    SlotOut(unit.index),
                    kind,
                    schema,
                    unit.index,
                    creates or frozenset(),
                    sets or frozenset(),
                    ("group:" + unit.group, kind),
                )
            )
        blocked = set()
        for t in unit.tools:
            g = ix.tools[t].spec.group
            if g:
                blocked.add(g)
        return _State(
            units=[*self.units, unit],
            avail=new_avail,
            used=self.used | set(unit.tools),
            groups_used=self.groups_used | blocked,
        )


def _fixed_nodes(st: _State) -> list[GNode]:
    """Calls every path of the task makes (fixed units), in order."""
    return [u.chains[0][0] for u in st.units if u.group is None]


def _node(chain: list[GNode], key: str) -> GNode:
    return next(n for n in chain if n.key == key)


def _group_kind(grp: Any, ix: CorpusIndex) -> str | None:
    if grp.output_kind:
        return grp.output_kind
    common: set[str] | None = None
    for chain in grp.members:
        last = ix.tools.get(chain[-1])
        if last is None:
            return None
        common = last.out_kinds if common is None else common & last.out_kinds
    return sorted(common)[0] if common else None


def _within(out: Mapping[str, Any], param: Mapping[str, Any]) -> bool:
    """Whether the bounds ``out`` declares are inside ``param``'s (undeclared: assumed fine).

    A count that may be 0 does not fill a parameter that needs at least 1.
    """
    inf = float("inf")
    lo_p = max(param.get("minimum", -inf), param.get("exclusiveMinimum", -inf))
    lo_o = max(out.get("minimum", -inf), out.get("exclusiveMinimum", -inf))
    if lo_o != -inf and (
        lo_o < lo_p
        or (lo_o == lo_p and "exclusiveMinimum" in param and "exclusiveMinimum" not in out)
    ):
        return False
    hi_p = min(param.get("maximum", inf), param.get("exclusiveMaximum", inf))
    hi_o = min(out.get("maximum", inf), out.get("exclusiveMaximum", inf))
    if hi_o != inf and hi_o > hi_p:
        return False
    if "enum" in param and "enum" in out:
        return set(map(str, out["enum"])) <= set(map(str, param["enum"]))
    return True


def _latest(avail: Sequence[Avail], ok: Any) -> Avail | None:
    """The most recent fitting output, preferring plain fields over array elements."""
    fallback = None
    for a in reversed(avail):
        if ok(a):
            if isinstance(a.ref, NodeOut) and "0" in a.ref.path:
                fallback = fallback or a
                continue
            return a
    return fallback


class _Builder:
    """Binds tools and groups into units over a search state."""

    def __init__(
        self,
        ix: CorpusIndex,
        lit: Literals,
        bad: set[tuple[str, str, str, str]] | None = None,
    ):
        self.ix = ix
        self.lit = lit
        self.bad = bad if bad is not None else set()  # (producer, path, consumer, param)

    def bind_tool(
        self,
        info: ToolInfo,
        avail: Sequence[Avail],
        internal: Sequence[Avail],
        link: set[int] | None,
        shared: dict[tuple[str, int], Any] | None,
        weak: bool = False,
        prior: Sequence[GNode] = (),
    ) -> tuple[dict[str, Any], bool] | None:
        """Arguments for ``info`` (required params only) and whether one came from ``link``.

        A parameter of a literal kind (a date, a count) takes a ``link`` output only when
        ``weak``: such links are the fallback, tool-made values (ids, results) come first.
        """
        args: dict[str, Any] = {}
        linked = False
        taken: set[Any] = set()
        occ: Counter[str] = Counter()

        def fits(a: Avail, p: ParamInfo) -> bool:
            return (
                a.kind == p.kind
                and a.ref not in taken
                and types_compatible(a.schema, p.schema)
                and (p.kind not in self.ix.literal or _within(a.schema, p.schema))
                and (p.pre is None or p.pre in a.creates)
                and (
                    p.pre_field is None
                    or (p.pre or "", *p.pre_field) in a.sets
                    or self._updated(a.ref, p.pre or "", p.pre_field, prior)
                )
                and (*a.source, info.name, p.name) not in self.bad
            )

        for p in info.ins:
            if not p.required:
                continue
            j = occ[p.kind or "_" + p.name]
            occ[p.kind or "_" + p.name] += 1
            chosen: Any = None
            if p.kind:
                chosen = _latest(internal, lambda a, p=p: fits(a, p))
                if chosen is None and shared is not None and (p.kind, j) in shared:
                    chosen = shared[(p.kind, j)]
                    if isinstance(chosen, Avail):
                        if not fits(chosen, p):
                            return None
                        if link is not None and chosen.unit in link:
                            linked = True
                if chosen is None and link and (weak or p.kind not in self.ix.literal):
                    chosen = _latest(avail, lambda a, p=p: a.unit in link and fits(a, p))
                    if chosen is not None:
                        linked = True
                if chosen is None and (p.kind not in self.ix.literal or p.pre is not None):
                    chosen = _latest(avail, lambda a, p=p: fits(a, p))
                if chosen is None and p.kind in self.ix.literal:
                    chosen = Lit(self.lit.value(p.kind, j))
                if chosen is None:
                    return None
                if shared is not None and not any(a is chosen for a in internal):
                    shared.setdefault((p.kind, j), chosen)
            else:
                v = self.lit.from_schema(p.schema, j)
                if v is _NONE:
                    return None
                chosen = Lit(v)
            if isinstance(chosen, Avail):
                taken.add(chosen.ref)
                args[p.name] = chosen.ref
            else:
                args[p.name] = chosen
        return args, linked

    def _updated(
        self, ref: Any, collection: str, field: tuple[str, str], prior: Sequence[GNode]
    ) -> bool:
        """Whether an earlier call updated the record ``ref`` names so that ``field`` holds
        (``add_to_cart`` makes a cart have items, which ``checkout_cart`` needs)."""
        for n in prior:
            for eff in self.ix.tools[n.tool].spec.effects:
                if (
                    eff.op == "update"
                    and eff.collection == collection
                    and n.args.get(eff.key) == ref
                    and field[0] in eff.fields
                    and canonical_json(eff.fields[field[0]]) == field[1]
                ):
                    return True
        return False

    def make_unit(
        self, cand: str, st: _State, link: set[int] | None, branch: int = 0
    ) -> Unit | None:
        """A unit for tool or group ``cand`` (``"group:<id>"``) in state ``st``."""
        unit = self._make_unit(cand, st, link, branch, weak=False)
        if unit is None and link is not None:
            unit = self._make_unit(cand, st, link, branch, weak=True)
        return unit

    def _make_unit(
        self, cand: str, st: _State, link: set[int] | None, branch: int, weak: bool
    ) -> Unit | None:
        index = len(st.units)
        if not cand.startswith("group:"):
            info = self.ix.tools[cand]
            got = self.bind_tool(info, st.avail, (), link, None, weak, _fixed_nodes(st))
            if got is None or (link is not None and not got[1]):
                return None
            node = GNode(f"u{index}c0t0", cand, got[0], index, 0)
            return Unit(index, None, [[node]], branch=branch)
        gid = cand[6:]
        grp = self.ix.groups[gid]
        kind = _group_kind(grp, self.ix)
        if kind is None:
            return None
        shared: dict[tuple[str, int], Any] = {}
        chains: list[list[GNode]] = []
        outs: list[tuple[str, tuple[str, ...]]] = []
        for c, members in enumerate(grp.members):
            internal: list[Avail] = []
            nodes: list[GNode] = []
            chain_linked = False
            for t_i, tool in enumerate(members):
                info = self.ix.tools.get(tool)
                if info is None or tool in st.used:
                    return None
                got = self.bind_tool(
                    info, st.avail, internal, link, shared, weak, [*_fixed_nodes(st), *nodes]
                )
                if got is None:
                    return None
                chain_linked |= got[1]
                key = f"u{index}c{c}t{t_i}"
                nodes.append(GNode(key, tool, got[0], index, c))
                for o in info.outs:
                    internal.append(
                        Avail(
                            NodeOut(key, o.path),
                            o.kind,
                            o.schema,
                            -1,
                            info.creates.get(o.path, frozenset()),
                            info.sets.get(o.path, frozenset()),
                            (info.name, ".".join(o.path)),
                        )
                    )
            if link is not None and not chain_linked:
                return None
            out = None
            for n in reversed(nodes):
                f = next((o for o in self.ix.tools[n.tool].outs if o.kind == kind), None)
                if f is not None:
                    out = (n.key, f.path)
                    break
            if out is None:
                return None
            chains.append(nodes)
            outs.append(out)
        return Unit(index, gid, chains, outs, branch=branch)


# ---------------------------------------------------------------------------------------------
# base tasks
@dataclass
class PathRun:
    """One path executed in a clean world."""

    plan: Plan
    tools: list[str]
    outputs: dict[str, Any]
    state: WorldState
    ok: bool
    error: str | None = None
    failed: str | None = None  # node id of the failing call
    failed_param: str | None = None


@dataclass
class BaseTask:
    """A task before it is crossed with the perturbation modes."""

    base_id: str
    level: str
    index: int
    domain: str
    query: str
    tools: list[str]
    world_seed: int
    units: list[Unit]
    paths: list[dict[str, Any]]  # {"tools", "plan", "calls", "rounds", "choice"}
    runs: list[PathRun]
    checker: Checker
    facts: list[tuple[Any, str]]  # (value, 'tool:field')
    victim_unit: int
    victim_node: str  # s* node id of the victim (C1) or of the group's first s* tool
    victim_tools: list[str]
    slot: str | None
    literals: dict[str, Any]
    victim_field: str | None = None  # the s* victim's output field an implicit fault corrupts


def _weighted_order(items: list[str], weights: list[float], rng: random.Random) -> list[str]:
    keys = [(-(rng.random() ** (1.0 / max(w, 1e-9))), i) for i, w in enumerate(weights)]
    return [items[i] for _, i in sorted(keys)]


def _pick(table: Mapping[int, float], rng: random.Random) -> int:
    r = rng.random() * sum(table.values())
    for k, w in table.items():
        r -= w
        if r <= 0:
            return k
    return list(table)[-1]


class Generator:
    """Deterministic generator of ToolMaze-style base tasks over a corpus."""

    def __init__(self, corpus: Corpus | None = None, seed: int = 0):
        self.corpus = corpus or load_corpus()
        self.ix = corpus_index(self.corpus)
        self.seed = seed
        self._initial: dict[int, WorldState] = {}
        self._wcache: dict[tuple[str, str, bool], float] = {}
        self._failures: Counter[str] = Counter()
        self._global_failures: Counter[str] = Counter()
        # bindings that made a path fail: (producer, output path, consumer, param)
        self._bad: set[tuple[str, str, str, str]] = set()
        self._chosen: list[str] = []

    # -- weights ----------------------------------------------------------------------------------
    def _weight(self, cand: str, domain: str, uses: Counter[str], first: bool) -> float:
        key = (cand, domain, first)
        w = self._wcache.get(key)
        if w is not None:
            return w
        tools = list(self.ix.groups[cand[6:]].tools) if cand.startswith("group:") else [cand]
        w = 1.0
        for t in tools:
            d = self.ix.tools[t].spec.domain
            w *= 1.0 if d == domain else 0.4 if d == "General" else 0.2
            w *= 1.0 / (1.0 + uses[t]) ** 3
        w = w ** (1.0 / len(tools))
        if first and not cand.startswith("group:"):
            cat = self.ix.tools[cand].spec.category
            w *= 2.0 if cat == "source" else 0.6 if cat == "processor" else 0.1
        self._wcache[key] = w
        return w

    def _candidates(
        self,
        st: _State,
        last: int | None,
        groups_left: int,
        allowed: frozenset[str],
        domain: str,
        uses: Counter[str],
        rng: random.Random,
    ) -> list[str]:
        """Candidates for the next unit, in weighted random order; the groups still to place
        come first (they are what the level is about)."""
        if last is None:
            pool: set[str] = set(self.ix.tools)
            strong: set[str] = set()
        else:
            linkable = self._link_set(st, last)
            kinds = {a.kind for a in st.avail if a.unit in linkable}
            strong = kinds - self.ix.literal
            pool = set()
            for k in kinds:
                pool |= self.ix.consumers.get(k, set())
        fixed = [
            t
            for t in sorted(pool - st.used)
            if (self.ix.tools[t].spec.group or "") not in st.groups_used
        ]
        weights = [
            self._weight(c, domain, uses, last is None)
            * (3.0 if strong & self.ix.in_kinds[c] else 1.0)
            for c in fixed
        ]
        order = _weighted_order(fixed, weights, rng)
        if groups_left:
            groups = [
                "group:" + g
                for g in sorted(allowed)
                if g not in st.groups_used
                and not any(t in st.used for t in self.ix.groups[g].tools)
            ]
            order = groups + order
        return order

    @staticmethod
    def _link_set(st: _State, last: int) -> set[int]:
        """Units the next step may feed on: the last one, and the one before a group (a group
        may end its own branch, its result reported rather than consumed)."""
        out = {last}
        if st.units[last].group is not None and last > 0:
            out.add(st.units[last - 1].index)
        return out

    def _reportable(self, unit: Unit) -> bool:
        """Whether a unit's result can be a checked fact (a number, a date, a tool-made code)."""
        for chain in unit.chains:
            info = self.ix.tools[chain[-1].tool]
            if not any(
                o.schema.get("type") in ("number", "integer")
                or o.schema.get("format") in ("date", "date-time")
                or (o.kind not in self.ix.literal and "enum" not in o.schema)
                for o in info.outs
            ):
                return False
        return True

    def _ends_action(self, unit: Unit) -> bool:
        return all(self.ix.tools[c[-1].tool].spec.category == "action" for c in unit.chains)

    def _can_finish(self, cand: str, lo: int, hi: int) -> bool:
        """Whether some chain of ``lo``..``hi`` more calls after ``cand`` may end in an action."""
        if hi < 0:
            return False
        lo = max(lo, 0)
        window = ((1 << (hi - lo + 1)) - 1) << lo
        return bool(self.ix.finish.get(cand, 0) & window)

    def _extend(
        self,
        b: _Builder,
        st: _State,
        last: int | None,
        need: int,
        room: int,
        groups_left: int,
        allowed: frozenset[str],
        domain: str,
        uses: Counter[str],
        rng: random.Random,
        budget: list[int],
        branch: int,
        width: int = 4,
        end_action: bool = True,
    ) -> _State | None:
        """Depth-first growth of a linear chain: at least ``need`` and at most ``room`` more
        calls (s* counting), ``groups_left`` of the ``allowed`` groups still to place, ending
        in an action."""
        if (
            need <= 0
            and groups_left == 0
            and st.units
            and (
                self._ends_action(st.units[-1])
                or (not end_action and self._reportable(st.units[-1]))
            )
        ):
            return st
        if room <= 0 or budget[0] <= 0:
            return None
        tried = 0
        for cand in self._candidates(st, last, groups_left, allowed, domain, uses, rng):
            if tried >= width or budget[0] <= 0:
                break
            is_group = cand.startswith("group:")
            if not is_group and groups_left >= room:
                continue
            c0 = self.ix.groups[cand[6:]] if is_group else None
            c_min = min(len(c) for c in c0.members) if c0 else 1
            if end_action and not self._can_finish(cand, need - c_min, room - c_min):
                continue
            budget[0] -= 1
            unit = b.make_unit(
                cand, st, self._link_set(st, last) if last is not None else None, branch
            )
            if unit is None and is_group and last is not None:
                # a group may take its inputs from any earlier step (a DAG, not a strict chain),
                # or from literals alone (a second source that later steps join)
                unit = b.make_unit(cand, st, {u.index for u in st.units}, branch)
                if unit is None:
                    unit = b.make_unit(cand, st, None, branch)
            if unit is None:
                continue
            cost = unit.min_len
            if cost > room or (room - cost) < (groups_left - is_group):
                continue
            tried += 1
            res = self._extend(
                b,
                st.add(unit, self.ix),
                unit.index,
                need - cost,
                room - cost,
                groups_left - is_group,
                allowed,
                domain,
                uses,
                rng,
                budget,
                branch,
                width,
                end_action,
            )
            if res is not None:
                return res
        return None

    # -- structure ------------------------------------------------------------------------------
    def _structure(
        self, level: str, domain: str, uses: Counter[str], rng: random.Random, lit: Literals
    ) -> list[Unit] | None:
        b = _Builder(self.ix, lit, self._bad)
        empty = _State([], [], frozenset(), frozenset())
        budget = [300]
        self._wcache: dict[tuple[str, str, bool], float] = {}
        if level in _LENGTHS:
            target = _pick(_LENGTHS[level], rng)
            if level == "C1":
                allowed: frozenset[str] = frozenset()
            else:
                kinds = {"C2": ("1-1", "1-N"), "C3": ("N-N",)}[level]
                gid = self._choose_group(kinds, domain, uses, rng, frozenset())
                if gid is None:
                    return None
                allowed = frozenset({gid})
            hi = max(_LENGTHS[level])
            if not allowed:
                st = self._extend(
                    b, empty, None, target, hi, 0, allowed, domain, uses, rng, budget, 0
                )
            else:
                st = self._grow_with_group(
                    b, empty, None, target, hi, next(iter(allowed)), domain, uses, rng, budget, 0
                )
            return st.units if st else None
        # C4: a prefix fanning out into branches, each with its own group
        total = _pick(_C4_TOTAL, rng)
        n_branches = 3 if total >= 12 and rng.random() < 0.6 else 2
        prefix_len = 1 if rng.random() < 0.8 else 2
        rest = total - prefix_len
        sizes = [rest // n_branches] * n_branches
        for i in range(rest - sum(sizes)):
            sizes[i] += 1
        if min(sizes) < 2:
            return None
        st = self._extend_prefix(b, empty, prefix_len, domain, uses, rng, budget)
        if st is None:
            return None
        hub = st.units[-1].index
        chosen: set[str] = set()
        for i, size in enumerate(sizes):
            gid = self._choose_group(("1-1", "1-N", "N-N"), domain, uses, rng, frozenset(chosen))
            if gid is None:
                return None
            chosen.add(gid)
            budget[0] = max(budget[0], 200)
            # fan out from the hub, or (integrated later by the response) start afresh
            start = hub if i == 0 or rng.random() < 0.5 else None
            # some branch must end in an action; the others may end in a result to report
            has_action = any(self._ends_action(u) for u in st.units)
            last_branch = i == len(sizes) - 1
            nxt = self._grow_with_group(
                b,
                st,
                start,
                size,
                size + 2,
                gid,
                domain,
                uses,
                rng,
                budget,
                i + 1,
                last_branch and not has_action,
            )
            if nxt is None:
                return None
            st = nxt
        if sum(u.min_len for u in st.units) > _C4_MAX:
            return None
        return st.units

    def _grow_with_group(
        self,
        b: _Builder,
        st: _State,
        last: int | None,
        need: int,
        room: int,
        gid: str,
        domain: str,
        uses: Counter[str],
        rng: random.Random,
        budget: list[int],
        branch: int,
        end_action: bool = True,
    ) -> _State | None:
        """A chain that contains group ``gid``: either led by the group (fed by ``last``, by any
        earlier step, or by literals alone) or with the group placed by the search."""

        def led() -> _State | None:
            links: list[set[int] | None] = []
            if last is not None:  # the chain continues from ``last``: the group must feed on it
                links.append(self._link_set(st, last))
            else:
                links.append(None)
            for link in links:
                unit = b.make_unit("group:" + gid, st, link, branch)
                if unit is None or unit.min_len > room:
                    continue
                return self._extend(
                    b,
                    st.add(unit, self.ix),
                    unit.index,
                    need - unit.min_len,
                    room - unit.min_len,
                    0,
                    frozenset(),
                    domain,
                    uses,
                    rng,
                    budget,
                    branch,
                    end_action=end_action,
                )
            return None

        def searched() -> _State | None:
            return self._extend(
                b,
                st,
                last,
                need,
                room,
                1,
                frozenset({gid}),
                domain,
                uses,
                rng,
                budget,
                branch,
                end_action=end_action,
            )

        # led by the group less often: after a step, the next one may feed on either
        first, second = (led, searched) if rng.random() < 0.35 else (searched, led)
        return first() or second()

    def _choose_group(
        self,
        kinds: Sequence[str],
        domain: str,
        uses: Counter[str],
        rng: random.Random,
        exclude: frozenset[str],
    ) -> str | None:
        """The least-used group of one of ``kinds`` (ties: the task's domain first, then chance).

        Groups that failed to fit this task, or failed often across tasks, rank lower.
        """
        gids = [
            g
            for g, grp in self.ix.groups.items()
            if grp.kind in kinds
            and g not in exclude
            and self.ix.group_feasible(g)
            and not (self._global_failures[g] >= 15 and uses["group:" + g] == 0)
        ]
        if not gids:
            return None

        def score(g: str) -> float:
            doms = {self.ix.tools[t].spec.domain for t in self.ix.groups[g].tools}
            affinity = 0.0 if domain in doms else 0.4 if "General" in doms else 0.8
            return (
                uses["group:" + g]
                + 2.0 * self._failures[g]
                + 0.5 * self._global_failures[g]
                + affinity
                + rng.random() * 0.6
            )

        gid = min(gids, key=score)
        self._chosen.append(gid)
        return gid

    def _extend_prefix(
        self,
        b: _Builder,
        st: _State,
        length: int,
        domain: str,
        uses: Counter[str],
        rng: random.Random,
        budget: list[int],
    ) -> _State | None:
        """A linear prefix whose last unit feeds several consumers (the fan-out hub)."""
        last: int | None = None
        for _ in range(length):
            found = None
            for cand in self._candidates(st, last, 0, frozenset(), domain, uses, rng)[:30]:
                unit = b.make_unit(cand, st, {last} if last is not None else None)
                if unit is None:
                    continue
                kinds = {o.kind for o in self.ix.tools[cand].outs}
                fan = sum(len(self.ix.consumers.get(k, ())) for k in kinds)
                if fan < 4:
                    continue
                found = unit
                break
            if found is None:
                return None
            st = st.add(found, self.ix)
            last = found.index
        return st

    # -- paths, plans, runs -------------------------------------------------------------------------
    def _choices(self, units: list[Unit]) -> list[dict[int, int]]:
        gunits = [u for u in units if u.group is not None]
        combos = itertools.product(*[range(len(u.chains)) for u in gunits])
        out = []
        for combo in itertools.islice(combos, _MAX_PATHS):
            out.append({u.index: c for u, c in zip(gunits, combo, strict=True)})
        return out

    @staticmethod
    def _path_nodes(units: list[Unit], choice: Mapping[int, int]) -> list[GNode]:
        return [n for u in units for n in u.chains[choice.get(u.index, 0)]]

    def _plan(
        self,
        units: list[Unit],
        choice: Mapping[int, int],
        ids: Mapping[str, str],
        query: str,
    ) -> Plan:
        nodes = [PlanNode(id=ROOT, desc=query, status="done")]
        used_by: set[str] = set()
        calls: list[PlanNode] = []
        for n in self._path_nodes(units, choice):
            args: dict[str, Any] = {}
            deps: set[str] = set()
            for p, v in n.args.items():
                if isinstance(v, Lit):
                    args[p] = v.value
                    continue
                if isinstance(v, SlotOut):
                    key, path = units[v.unit].outs[choice[v.unit]]
                else:
                    key, path = v.node, v.path
                src = ids[key]
                deps.add(src)
                args[p] = reference_text(src, *path)
            used_by |= deps
            calls.append(
                PlanNode(
                    id=ids[n.key],
                    tool=n.tool,
                    args=args,
                    desc=_describe(self.ix.tools[n.tool].spec),
                    deps=sorted(deps, key=_idnum) or [ROOT],
                )
            )
        calls.sort(key=lambda x: _idnum(x.id))
        nodes.extend(calls)
        sinks = [c.id for c in calls if c.id not in used_by]
        nodes.append(PlanNode(id=RESPONSE, desc="Report the results to the user.", deps=sinks))
        return Plan.from_nodes(nodes)

    def initial_state(self, world_seed: int) -> WorldState:
        st = self._initial.get(world_seed)
        if st is None:
            st = self._initial[world_seed] = self.corpus.initial_state(world_seed)
        return st

    def run(self, plan: Plan, world_seed: int, version_shift: int = 0) -> PathRun:
        """Execute ``plan`` in a clean world; ``version_shift`` starts from a later state version
        (as if other calls had happened first), which changes every generated id."""
        tools = [n.tool for n in plan.call_nodes if n.tool]
        start = self.initial_state(world_seed)
        if version_shift:
            start = WorldState(collections=start.collections, version=start.version + version_shift)
        world = World({t: self.corpus.tools[t] for t in tools}, start, seed=world_seed)
        res = execute_plan(plan, world)
        return PathRun(
            plan=plan,
            tools=tools,
            outputs=res.outputs,
            state=world.state,
            ok=res.failed is None,
            error=res.error,
            failed=res.failed,
            failed_param=res.steps[-1][1].verdict.param if res.failed else None,
        )

    # -- one base task ------------------------------------------------------------------------------
    def base_task(self, level: str, index: int, uses: Counter[str]) -> BaseTask:
        domain = DOMAINS[(index + LEVELS.index(level)) % len(DOMAINS)]
        domains_present = {t.spec.domain for t in self.ix.tools.values()}
        if domain not in domains_present:
            domain = sorted(domains_present)[index % len(domains_present)]
        base_id = f"{SUITE}-{level}-{index:03d}"
        last_error = "no structure found"
        self._failures = Counter()  # groups that did not fit this task
        for attempt in range(160):
            rng = random.Random(stable_seed(SUITE, self.seed, level, index, attempt))
            lit = Literals(self.ix, rng.randrange(10_000))
            self._chosen = []
            units = self._structure(level, domain, uses, rng, lit)
            if units is None:
                self._failures.update(self._chosen)
                self._global_failures.update(self._chosen)
                continue
            world_seed = stable_seed("world", self.seed, level, index) % 100_000
            got = self._finish(base_id, level, index, domain, units, lit, world_seed, rng)
            if isinstance(got, str):
                last_error = got
                self._failures.update(self._chosen)
                continue
            for t in got.tools:
                uses[t] += 1
            for u in got.units:
                if u.group is not None:
                    uses["group:" + u.group] += 1
            return got
        raise GenerationError(
            f"{base_id}: could not build a valid {level} task from the corpus "
            f"({len(self.ix.tools)} tools, {len(self.ix.groups)} groups); last problem: {last_error}"
        )

    def _finish(
        self,
        base_id: str,
        level: str,
        index: int,
        domain: str,
        units: list[Unit],
        lit: Literals,
        world_seed: int,
        rng: random.Random,
    ) -> BaseTask | str:
        choices = self._choices(units)

        # s*: fewest calls, then fewest waves (computed from a provisional numbering)
        def key_of(ch: dict[int, int]) -> tuple:
            nodes = self._path_nodes(units, ch)
            ids = {n.key: str(i + 1) for i, n in enumerate(nodes)}
            allkeys = {n.key for u in units for c in u.chains for n in c}
            ids.update({k: f"x{i}" for i, k in enumerate(sorted(allkeys - set(ids)))})
            p = self._plan(units, ch, ids, "")
            return (len(nodes), p.depth, [n.tool for n in nodes])

        keyed = sorted(((key_of(ch), i) for i, ch in enumerate(choices)))
        order = [choices[i] for _, i in keyed]
        star = order[0]
        ids: dict[str, str] = {}
        for n in self._path_nodes(units, star):
            ids[n.key] = str(len(ids) + 1)
        for u in units:
            for c in u.chains:
                for n in c:
                    if n.key not in ids:
                        ids[n.key] = str(len(ids) + 1)
        plans = [self._plan(units, ch, ids, "") for ch in order]
        runs = [self.run(p, world_seed) for p in plans]
        bad = next((r for r in runs if not r.ok), None)
        if bad is not None:
            self._learn(bad, units, ids)
            return f"path {bad.tools} does not run clean: {bad.error}"
        initial = self.initial_state(world_seed)
        literal_values = _literal_values(units)
        effects = {t: bool(self.corpus.tools[t].effects) for r in runs for t in r.tools}
        # s* once more from a later state version: what changes there (generated ids and what
        # embeds them) is not something an agent that made one extra call would reproduce
        shifted = self.run(plans[0], world_seed, version_shift=7)
        if not shifted.ok:
            return f"s* does not run clean after other calls: {shifted.error}"
        checker, facts, problem = _derive_checker(
            [*runs, shifted], initial, literal_values, effects
        )
        if checker is None:
            return problem or "no checker"
        if not checker.required_records and not checker.required_facts:
            return "nothing checkable: no path-invariant record or fact"
        problem = _idle_step(plans[0], effects)
        if problem:
            return problem
        victims = self._victims(level, units, plans[0], rng)
        if not victims:
            return "no victim with downstream calls on s*"
        best: tuple[int, tuple[int, str, list[str]], str | None, tuple[Any, str] | None] | None
        best = None
        for cand in victims[:4]:
            field, extra, quality = self._sensitise(
                runs[0], [*runs[1:], shifted], cand[1], checker, literal_values, world_seed
            )
            if best is None or quality > best[0]:
                best = (quality, cand, field, extra)
            if quality == 2:
                break
        assert best is not None
        _, victim, victim_field, extra = best
        victim_unit, victim_node, victim_tools = victim
        slot = f"branch-{units[victim_unit].branch}" if level == "C4" else None
        if extra is not None:
            facts.append(extra)
            checker = checker.model_copy(
                update={"required_facts": [*checker.required_facts, extra[0]]}
            )
        query = _write_query(self.ix, units, star, plans[0], facts, checker, lit, rng)
        plans = [p.model_copy(update={"nodes": _with_root(p, query)}) for p in plans]
        for r, p in zip(runs, plans, strict=True):
            r.plan = p
        tools: list[str] = []
        for p in plans:
            for n in p.call_nodes:
                if n.tool not in tools:
                    tools.append(n.tool)  # type: ignore[arg-type]
        paths = [
            {
                "tools": [n.tool for n in p.call_nodes],
                "plan": p.to_pararecover(),
                "calls": len(p.call_nodes),
                "rounds": p.depth,
                "node_ids": [n.id for n in p.call_nodes],
            }
            for p in plans
        ]
        return BaseTask(
            base_id=base_id,
            level=level,
            index=index,
            domain=domain,
            query=query,
            tools=tools,
            world_seed=world_seed,
            units=units,
            paths=paths,
            runs=runs,
            checker=checker,
            facts=facts,
            victim_unit=victim_unit,
            victim_node=victim_node,
            victim_tools=victim_tools,
            slot=slot,
            literals={k: v for k, v in sorted(literal_values.items())},
            victim_field=victim_field,
        )

    def _sensitise(
        self,
        star: PathRun,
        others: list[PathRun],
        victim_node: str,
        checker: Checker,
        literal_values: Mapping[str, Any],
        world_seed: int,
    ) -> tuple[str | None, tuple[Any, str] | None, int]:
        """Pick the output field of the s* victim whose corruption matters, and if the checker
        would not notice a blindly used corrupted value, a fact that does.

        For each candidate field (consumed ones first) s* is run with that field corrupted on
        every invocation: if the checker then fails, the field is chosen as is; else a
        path-invariant result that changed becomes a required fact. Returns (field, fact,
        quality): 2 the checker catches a blindly used corruption, 1 it surfaces as a later
        call's error, 0 neither.
        """
        from replan.env.perturb import _field_rank, _scalar_fields, corrupt, corruptions

        plan = star.plan
        tool = plan.node(victim_node).tool or ""
        spec = self.corpus.tools[tool]
        clean = star.outputs.get(victim_node)
        if not isinstance(clean, (Mapping, list)):
            return None, None, 0
        consumed = _consumed_fields(plan, victim_node)
        fields = sorted(
            _scalar_fields(clean),
            key=lambda p: _field_rank(p, _lookup(clean, p), consumed),
        )
        probe = Task(task_id="probe", suite=SUITE, query="", tools=[], checker=checker)
        literals = list(literal_values.values())
        pool = [[v for nid in r.outputs for _, v in _scalars(r.outputs[nid])] for r in others]
        failing: str | None = None
        for path in fields[:8]:
            value = _lookup(clean, path)
            sch = spec.output_field_schema(list(path)) or {}
            ispec = None
            for kind, new in corruptions(value, sch, stable_seed("probe", tool)):
                cand = ImplicitSpec(".".join(path), kind, new)
                if new != value and spec.check_output(corrupt(clean, cand)).ok:
                    ispec = cand
                    break
            if ispec is None:
                continue
            prof = PerturbationProfile(
                mode="P4", victim=tool, kind=ispec.kind, field=ispec.field, sentinel=ispec.value
            )
            tools = [n.tool or "" for n in plan.call_nodes]
            world = World(
                {t: self.corpus.tools[t] for t in tools},
                self.initial_state(world_seed),
                seed=world_seed,
                faults=Perturber(prof, implicit={tool: ispec}),
            )
            blind = execute_plan(plan, world)
            if blind.failed is not None:
                failing = failing or ispec.field  # the lie surfaces as a later error
                continue
            answer = answer_from_outputs(blind.outputs, [n.id for n in plan.call_nodes])
            if not check(probe, world.state, answer).success:
                return ispec.field, None, 2
            seen_blind = [x for nid in blind.outputs for _, x in _scalars(blind.outputs[nid])]
            for n in reversed(plan.call_nodes):
                for p2, v in _scalars(star.outputs.get(n.id)):
                    if any(_same(v, x) for x in seen_blind):
                        continue  # the clean value still shows elsewhere: it would not tell
                    got = _lookup(blind.outputs.get(n.id), p2)
                    if _same(v, got) or isinstance(v, bool) or v in (None, ""):
                        continue
                    if isinstance(v, (int, float)):
                        if abs(v) < 10:
                            continue
                    elif not (isinstance(v, str) and _reportable_text(v, n.tool or "", p2)):
                        continue
                    if any(_same(v, x) for x in literals) or not all(
                        any(_same(v, x) for x in other) for other in pool
                    ):
                        continue
                    return ispec.field, (v, f"{n.tool}:{'.'.join(p2)}"), 2
        return failing, None, 1 if failing else 0

    def _learn(self, run: PathRun, units: list[Unit], ids: Mapping[str, str]) -> None:
        """Remember the bindings into a failing call so that later attempts avoid them."""
        if run.failed is None:
            return
        by_id = {ids[n.key]: (u, n) for u in units for c in u.chains for n in c if n.key in ids}
        node = run.plan.node(run.failed)
        params = [run.failed_param] if run.failed_param in node.args else list(node.args)
        for p in params:
            v = node.args[p]
            m = re.match(r"^\$\{([^.{}]+)\.([^{}]+)\}$", v) if isinstance(v, str) else None
            if not m or m.group(1) not in by_id:
                continue
            unit, src = by_id[m.group(1)]
            path = m.group(2)
            if unit.group is not None and (src.key, tuple(path.split("."))) in unit.outs:
                source = ("group:" + unit.group, _group_kind(self.ix.groups[unit.group], self.ix))
            else:
                source = (src.tool, path)
            self._bad.add((source[0], source[1] or "", node.tool or "", p))

    def _victims(
        self, level: str, units: list[Unit], star: Plan, rng: random.Random
    ) -> list[tuple[int, str, list[str]]]:
        """Victim candidates on s*, best first: (unit, s* node id, victim tools).

        C1: a call with downstream calls (non-actions first); C2–C4: a group unit, whose
        first tool on s* is the profile's named victim.
        """
        if level == "C1":
            g = star.graph()
            cands = [
                n for n in star.call_nodes if any(d != RESPONSE for d in nx.descendants(g, n.id))
            ]
            rng.shuffle(cands)
            cands.sort(key=lambda n: self.ix.tools[n.tool or ""].spec.category == "action")
            out = []
            for node in cands:
                unit = next(u.index for u in units if u.chains[0][0].tool == node.tool)
                out.append((unit, node.id, [node.tool or ""]))
            return out
        gunits = [u for u in units if u.group is not None]
        rng.shuffle(gunits)
        star_tools = {n.tool: n.id for n in star.call_nodes}
        out = []
        for unit in gunits:
            first = next(n for c in unit.chains for n in c if n.tool in star_tools)
            out.append((unit.index, star_tools[first.tool], sorted(set(unit.tools))))
        return out

    # -- instances ----------------------------------------------------------------------------------
    def instances(self, base: BaseTask, modes: Iterable[str] = MODES) -> list[Task]:
        """The base task crossed with ``modes``."""
        out = []
        for mode in modes:
            out.append(self._instance(base, mode))
        return out

    def _instance(self, base: BaseTask, mode: str) -> Task:
        group = self.ix.tools[base.victim_tools[0]].spec.group if base.level != "C1" else None
        star_plan = base.runs[0].plan
        star_victim = star_plan.node(base.victim_node).tool or ""
        meta: dict[str, Any] = {
            "base_id": base.base_id,
            "domain": base.domain,
            "domains": sorted({self.ix.tools[t].spec.domain for t in base.tools}),
            "paths": base.paths,
            "victim_tools": base.victim_tools if group else [],
            "victim_node": base.victim_node,
            "literals": base.literals,
            "rounds_counting": "tool-call waves (no response round)",
        }
        profile = None
        checker = base.checker
        if mode != "NP":
            explicit, permanent = mode_flags(mode)
            salt = stable_seed("sentinel", base.base_id, mode)
            if explicit:
                kind = EXPLICIT_KINDS[
                    stable_seed("explicit", base.base_id, mode) % len(EXPLICIT_KINDS)
                ]
                profile = PerturbationProfile(
                    mode=mode,
                    victim=star_victim,
                    group=group,
                    kind=kind,
                    slot=base.slot,  # type: ignore[arg-type]
                )
            else:
                implicit = self._implicit_specs(base, mode)
                meta["implicit"] = {t: s.to_dict() for t, s in implicit.items()}
                spec = implicit[star_victim]
                profile = PerturbationProfile(
                    mode=mode,  # type: ignore[arg-type]
                    victim=star_victim,
                    group=group,
                    kind=spec.kind,
                    sentinel=spec.value,
                    field=spec.field,
                    slot=base.slot,
                )
            by_victim = {
                t: min_calls(base.paths, t, self._executed_before(base, t), permanent)
                for t in (base.victim_tools if group else [star_victim])
            }
            # c* for an agent that meets the fault where s* does; per possible victim below,
            # and ``min_calls_after_fault(task, victim, executed)`` for any other history
            meta["min_calls_after_fault"] = by_victim[star_victim]
            meta["min_calls_after_fault_by_victim"] = by_victim
            meta["sentinel_salt"] = salt
            if permanent and base.level == "C1":
                g = star_plan.graph()
                down = nx.descendants(g, base.victim_node) - {RESPONSE}
                checker = Checker(
                    graceful=True,
                    forbidden_after_failure=sorted({star_plan.node(d).tool or "" for d in down}),
                )
        return Task(
            task_id=f"{base.base_id}-{mode}",
            suite=SUITE,
            query=base.query,
            tools=list(base.tools),
            level=base.level,
            mode=mode,  # type: ignore[arg-type]
            world_seed=base.world_seed,
            gold_plan=base.paths[0]["plan"],
            valid_paths=[list(p["tools"]) for p in base.paths],
            optimal_rounds=base.paths[0]["rounds"],
            min_calls=base.paths[0]["calls"],
            perturbation=profile,
            checker=checker,
            metadata=meta,
        )

    def _executed_before(self, base: BaseTask, tool: str) -> list[str]:
        """Tools a gold-following agent ran before first calling ``tool`` (its ancestors)."""
        for r in base.runs:
            node = next((n for n in r.plan.call_nodes if n.tool == tool), None)
            if node is not None:
                return [r.plan.node(a).tool or "" for a in r.plan.ancestors(node.id) if a != ROOT]
        return []

    def _implicit_specs(self, base: BaseTask, mode: str) -> dict[str, ImplicitSpec]:
        out: dict[str, ImplicitSpec] = {}
        group = base.level != "C1"
        star_victim = base.runs[0].plan.node(base.victim_node).tool
        tools = base.victim_tools if group else [star_victim]
        for tool in tools:
            for r in base.runs:
                node = next((n for n in r.plan.call_nodes if n.tool == tool), None)
                if node is None:
                    continue
                preferred = _consumed_fields(r.plan, node.id)
                if tool == star_victim and base.victim_field:
                    preferred = [base.victim_field, *preferred]
                spec = plan_implicit(
                    self.corpus.tools[tool],
                    r.outputs[node.id],
                    stable_seed("sentinel", base.base_id, mode, tool),
                    preferred,
                )
                if spec is not None:
                    out[tool] = spec
                break
        if star_victim not in out:
            raise GenerationError(f"{base.base_id}: no implicit corruption for {star_victim}")
        return out


def _idle_step(plan: Plan, effects: Mapping[str, bool]) -> str | None:
    """A call of s* that nothing needs: no dependent call, no effect, not a final call."""
    g = plan.graph()
    for n in plan.call_nodes:
        succ = set(g.successors(n.id))
        if succ and succ != {RESPONSE}:
            continue
        if succ == {RESPONSE}:
            continue  # a final call: its result or effect is checked
        if not effects.get(n.tool or ""):
            return f"call {n.tool} feeds nothing"
    return None


def _with_root(plan: Plan, query: str) -> list[PlanNode]:
    return [n.model_copy(update={"desc": query}) if n.id == ROOT else n for n in plan.nodes]


def _idnum(node_id: str) -> tuple:
    return (0, int(node_id)) if node_id.isdigit() else (1, node_id)


def _lookup(value: Any, path: Sequence[str]) -> Any:
    from replan.env.world import lookup_path

    got = lookup_path(value, path)
    return None if got is _MISSING_PATH else got


def _consumed_fields(plan: Plan, node_id: str) -> list[str]:
    """Dotted output paths of ``node_id`` that later nodes reference."""
    out: list[str] = []
    for n in plan.call_nodes:
        for v in n.args.values():
            ref = exact_reference(v, [node_id])
            field = ".".join(ref.path) if ref is not None and ref.node == node_id else ""
            if field and field not in out:
                out.append(field)
    return out


def _literal_values(units: list[Unit]) -> dict[str, Any]:
    """Every literal argument of every path, keyed ``tool.param``."""
    out: dict[str, Any] = {}
    for u in units:
        for c in u.chains:
            for n in c:
                for p, v in n.args.items():
                    if isinstance(v, Lit):
                        out[f"{n.tool}.{p}"] = v.value
    return out


# ---------------------------------------------------------------------------------------------
# execution of a plan against a world
@dataclass
class PlanExecution:
    steps: list[tuple[str, ExecResult]] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    failed: str | None = None
    error: str | None = None
    perturbed: list[str] = field(default_factory=list)

    @property
    def calls(self) -> int:
        return len(self.steps)


def execute_plan(
    plan: Plan,
    world: World,
    *,
    done: Mapping[str, Any] | None = None,
    retry_perturbed: bool = False,
    stop_on_perturbation: bool = False,
) -> PlanExecution:
    """Run ``plan``'s pending call nodes wave by wave (:meth:`Plan.next_wave`; ids in order
    within a wave).

    ``done`` maps node ids already executed to their outputs (they are skipped and bound).
    With ``retry_perturbed`` a call whose response was perturbed is issued once more (the
    transient-fault recovery); with ``stop_on_perturbation`` execution stops right after a
    perturbed response. Stops at the first call that is not ``ok``.
    """
    out = PlanExecution(outputs=dict(done or {}))
    ran = set(out.outputs)
    while True:
        layer, settled = plan.next_wave(ran)
        if not layer:
            return out
        ran.update(settled)
        ran.update(layer)
        seen = dict(out.outputs)  # a wave runs in parallel: no call sees another's output
        for nid in layer:
            node = plan.node(nid)
            call = Call(tool=node.tool or "", args=node.args, node_id=nid)
            res = world.execute(call, seen)
            out.steps.append((nid, res))
            if not res.ok:
                out.failed, out.error = nid, res.verdict.message
                return out
            if res.perturbation is not None:
                out.perturbed.append(nid)
                if stop_on_perturbation:
                    out.outputs[nid] = res.observation
                    return out
                if retry_perturbed:
                    res = world.execute(call, seen)
                    out.steps.append((nid, res))
                    if not res.ok:
                        out.failed, out.error = nid, res.verdict.message
                        return out
            out.outputs[nid] = res.observation


def _scalars(value: Any) -> list[tuple[tuple[str, ...], Any]]:
    """The non-null leaves of an output with their paths (arrays: their first 20 items)."""
    return [(p, v) for p, v in json_leaves(value, max_items=20) if v is not None]


def answer_from_outputs(outputs: Mapping[str, Any], node_ids: Iterable[str] | None = None) -> str:
    """A plain answer stating every scalar field of the given outputs (for tests and demos)."""
    parts = []
    for nid in node_ids if node_ids is not None else outputs:
        for path, v in _scalars(outputs.get(nid)):
            parts.append(f"{'.'.join(path)}: {v}")
    return "Done. " + "; ".join(parts)


# ---------------------------------------------------------------------------------------------
# checker
def _changes(initial: WorldState, final: WorldState) -> dict[str, dict[str, dict[str, Any]]]:
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for col, recs in final.collections.items():
        for key, rec in recs.items():
            if initial.get(col, key) != rec:
                out.setdefault(col, {})[key] = dict(rec)
    return out


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-9)
    return canonical_json(a) == canonical_json(b)


_DATE_TEXT = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2})?(Z|[+-]\d{2}:?\d{2})?)?$")


_MADE_ID = re.compile(r"^[A-Za-z0-9_]+-[0-9A-Fa-f]{6,}$|^\d+\.\d+$")


def _reportable_text(value: str, tool: str, path: tuple[str, ...]) -> bool:
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


def _derive_checker(
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
                if not (isinstance(v, str) and v in created_keys)
                and not isinstance(v, (dict, list))
            }
            for ch in changes[1:]:
                best = max(
                    ch[col].values(),
                    key=lambda r: sum(1 for f, v in where.items() if f in r and _same(r[f], v)),
                )
                where = {f: v for f, v in where.items() if f in best and _same(best[f], v)}
            created = initial.get(col, key) is None
            trivially_met = any(
                all(f in r and _same(r[f], v) for f, v in where.items())
                for r in initial.records(col).values()
            )
            if trivially_met:
                continue
            required.append(RequiredRecord(collection=col, where=where, mention_key=created))
    # facts: scalar results of s*'s final calls that every path also returns
    star = runs[0]
    g = star.plan.graph()
    sinks = [n.id for n in star.plan.call_nodes if not (set(g.successors(n.id)) - {RESPONSE})]
    literals = [v for v in literal_values.values()]
    others = [[v for nid in r.outputs for _, v in _scalars(r.outputs[nid])] for r in runs[1:]]
    facts: list[tuple[Any, str]] = []
    per_sink: dict[str, list[tuple[int, Any, str]]] = {}
    for nid in sinks:
        spec_tool = star.plan.node(nid).tool or ""
        cands = per_sink.setdefault(nid, [])
        for path, v in _scalars(star.outputs.get(nid)):
            if isinstance(v, bool) or v in (None, ""):
                continue
            if isinstance(v, str) and not _reportable_text(v, star.plan.node(nid).tool or "", path):
                continue  # names and statuses are too easy to echo
            if isinstance(v, (int, float)) and abs(v) < 10:
                continue
            if any(_same(v, x) for x in literals):
                continue
            if not all(any(_same(v, x) for x in other) for other in others):
                continue
            rank = 0 if isinstance(v, float) else 1 if isinstance(v, int) else 2
            cands.append((rank, v, f"{spec_tool}:{'.'.join(path)}"))
        cands.sort(key=lambda x: x[0])
    # a final call without effects is only there for its result: one of its facts is required
    for nid, cands in per_sink.items():
        if tools_effects.get(star.plan.node(nid).tool or ""):
            continue
        fresh = [c for c in cands if not any(_same(c[1], f) for f, _ in facts)]
        if not fresh:
            return None, [], f"final call {star.plan.node(nid).tool} yields no checkable fact"
        facts.append((fresh[0][1], fresh[0][2]))
    for _, v, src in sorted((c for cs in per_sink.values() for c in cs), key=lambda x: x[0]):
        if len(facts) >= 2:
            break
        if not any(_same(v, f) for f, _ in facts):
            facts.append((v, src))
    return Checker(required_records=required, required_facts=[f for f, _ in facts]), facts, None


# ---------------------------------------------------------------------------------------------
# natural-language query
_OPENERS = (
    "",
    "I need a hand with something. ",
    "Could you take care of this for me? ",
    "Here is what I'd like done. ",
    "Please help me with the following. ",
    "I have a small errand for you. ",
    "Can you sort this out? ",
)
_LIST_INTRO = (
    "Here is what has to happen:",
    "The steps are:",
    "I need these done, in a sensible order:",
    "What I'm after:",
)
_SEQ_INTRO = ("The job: ", "In short: ", "What needs doing: ")
_FACTS = (
    "Here are the details: {facts}.",
    "Use these values: {facts}.",
    "For reference: {facts}.",
    "The details you need: {facts}.",
)
_ASK = (
    "In your answer, tell me {items}.",
    "When you're done, let me know {items}.",
    "Please report back {items}.",
    "Reply with {items}.",
)


def _describe(spec: ToolSpec) -> str:
    text = spec.description.strip().split(". ")[0].rstrip(".")
    text = re.sub(r"\s*\([^)]*\)", "", text).strip()
    return text[:1].lower() + text[1:] if text else spec.name.replace("_", " ")


def _humanize(name: str) -> str:
    words = name.replace(".", " ").replace("_", " ").split()
    special = {"usd": "USD", "id": "ID", "eur": "EUR", "pct": "%", "iban": "IBAN", "sku": "SKU"}
    return " ".join(special.get(w.lower(), w) for w in words if not w.isdigit())


def _record_label(ix: CorpusIndex, plan: Plan, collection: str) -> str:
    """How the query names the id of a record a plan creates (its key field)."""
    for n in plan.call_nodes:
        spec = ix.tools[n.tool or ""].spec
        for eff in spec.effects:
            if eff.op == "create" and eff.collection == collection:
                sch = spec.output_field_schema(eff.key.split(".")) or {}
                kind = ix.kinds.get(sch.get("x-kind", ""))
                text = kind.description if kind is not None else _humanize(eff.key)
                return "the " + re.sub(r"^(an?|the)\s+", "", text.strip().rstrip("."))
    return "the " + _humanize(collection) + " id"


def _fact_text(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _write_query(
    ix: CorpusIndex,
    units: list[Unit],
    star: Mapping[int, int],
    star_plan: Plan,
    facts: list[tuple[Any, str]],
    checker: Checker,
    lit: Literals,
    rng: random.Random,
) -> str:
    steps = [_describe(ix.tools[n.tool or ""].spec) for n in star_plan.call_nodes]
    style = rng.randrange(3)
    if len(steps) == 1:
        body = steps[0][:1].upper() + steps[0][1:] + "."
    elif style == 0:
        body = (
            rng.choice(_LIST_INTRO)
            + " "
            + "; ".join(f"({i}) {s}" for i, s in enumerate(steps, start=1))
            + "."
        )
    elif style == 1:
        body = (
            rng.choice(_LIST_INTRO)
            + " "
            + " ".join(f"{i}. {s[:1].upper() + s[1:]}." for i, s in enumerate(steps, start=1))
        )
    else:
        body = (
            rng.choice(_SEQ_INTRO)
            + ", ".join(steps[:-1])
            + rng.choice((", and finally ", ", and at the end ", ", and to finish "))
            + steps[-1]
            + "."
        )
    # every literal any path needs, grouped by value
    by_value: dict[str, list[str]] = {}
    for u in units:
        for c in u.chains:
            for n in c:
                spec = ix.tools[n.tool].spec
                for p, v in n.args.items():
                    if not isinstance(v, Lit):
                        continue
                    sch = spec.param_schema(p) or {}
                    label = (sch.get("description") or _humanize(p)).rstrip(".")
                    labels = by_value.setdefault(_fact_text(v.value), [])
                    if label not in labels:
                        labels.append(label)
    facts_text = "; ".join(f"{' / '.join(lbls[:3])}: {val}" for val, lbls in by_value.items())
    text = rng.choice(_OPENERS) + body
    if facts_text:
        text += " " + rng.choice(_FACTS).format(facts=facts_text)
    items: list[str] = []
    for rec in checker.required_records:
        if rec.mention_key:
            label = _record_label(ix, star_plan, rec.collection)
            if label not in items:
                items.append(label)
    for _, src in facts:
        tool, _, path = src.partition(":")
        sch = ix.tools[tool].spec.output_field_schema(path.split(".")) or {}
        items.append("the " + (sch.get("description") or _humanize(path)).rstrip("."))
    if items:
        joined = ", ".join(items[:-1]) + (" and " if len(items) > 1 else "") + items[-1]
        text += " " + rng.choice(_ASK).format(items=joined)
    return text


# ---------------------------------------------------------------------------------------------
# the suite
#: called as ``hook(level, done, n)`` after each base task is generated (the CLI's progress bar)
ON_BASE_TASK: Callable[[str, int, int], None] | None = None


@lru_cache(maxsize=32)
def _base_level(corpus_id: int, seed: int, level: str, n: int) -> tuple[BaseTask, ...]:
    gen = Generator(_CORPORA[corpus_id], seed)
    uses: Counter[str] = Counter()
    out = []
    for i in range(n):
        out.append(gen.base_task(level, i, uses))
        if ON_BASE_TASK is not None:
            ON_BASE_TASK(level, i + 1, n)
    return tuple(out)


def base_tasks(
    seed: int = 0,
    levels: Iterable[str] = LEVELS,
    per_level: int = PER_LEVEL,
    corpus: Corpus | None = None,
) -> list[BaseTask]:
    """The base tasks (``per_level`` per level), generated deterministically and cached."""
    corpus = corpus or load_corpus()
    _CORPORA[id(corpus)] = corpus
    out: list[BaseTask] = []
    for level in levels:
        if level not in LEVELS:
            raise ValueError(f"unknown ToolMaze level {level!r}; expected one of {LEVELS}")
        out.extend(_base_level(id(corpus), seed, level, per_level))
    return out


def generate(
    seed: int = 0,
    levels: Iterable[str] = LEVELS,
    modes: Iterable[str] = MODES,
    limit: int | None = None,
    per_level: int = PER_LEVEL,
    corpus: Corpus | None = None,
) -> list[Task]:
    """The suite's task instances: base tasks of ``levels`` × ``modes`` (level-major order).

    ``limit`` keeps the first ``limit`` base tasks of each level (all their modes).
    """
    modes = list(modes)
    for m in modes:
        if m not in MODES:
            raise ValueError(f"unknown perturbation mode {m!r}; expected one of {MODES}")
    corpus = corpus or load_corpus()
    gen = Generator(corpus, seed)
    n = per_level if limit is None else min(per_level, limit)
    out: list[Task] = []
    for level in levels:
        for base in base_tasks(seed, [level], per_level if limit is None else n, corpus)[:n]:
            out.extend(gen.instances(base, modes))
    return out


def stats(tasks: Sequence[Task]) -> dict[str, Any]:
    """ToolMaze Table 1 figures per level, plus the instance count per mode."""
    corpus = load_corpus()
    out: dict[str, Any] = {
        "levels": {},
        "modes": dict(sorted(Counter(t.mode for t in tasks).items())),
    }
    bases: dict[str, dict[str, Task]] = defaultdict(dict)
    for t in tasks:
        bases[t.level or "?"].setdefault(t.base_id, t)
    for level, by_base in sorted(bases.items()):
        ts = list(by_base.values())
        domains: Counter[str] = Counter()
        for t in ts:
            for d in {corpus.tools[x].domain for x in t.tools if x in corpus.tools}:
                domains[d] += 1
        sets = [frozenset(t.tools) for t in ts]
        pairs = list(itertools.combinations(sets, 2))
        jac = sum(len(a & b) / len(a | b) for a, b in pairs) / len(pairs) if pairs else 0.0
        lengths = [t.min_calls or 0 for t in ts]
        out["levels"][level] = {
            "tasks": len(ts),
            "domain_involvement": {d: domains.get(d, 0) for d in DOMAINS},
            "mean_jaccard": round(jac, 4),
            "avg_length": round(sum(lengths) / len(lengths), 2) if lengths else 0.0,
            "min_length": min(lengths) if lengths else 0,
            "max_length": max(lengths) if lengths else 0,
            "valid_paths": sum(len(t.valid_paths) for t in ts),
        }
    return out


# ---------------------------------------------------------------------------------------------
# random plans for property tests
def random_plan(corpus: Corpus, rng: random.Random, n_calls: int, *, attempts: int = 200) -> Plan:
    """A random valid plan of ``n_calls`` tool calls over ``corpus`` with real data flow.

    Every call after the first consumes an output of an earlier call through a ``${node.field}``
    reference; the plan verifies clean (``replan.env.verifier.verify`` with ``corpus.world()``)
    and executes clean on ``corpus.world()``. Raises ``ValueError`` when none is found.
    """
    if n_calls < 1:
        raise ValueError(f"n_calls must be at least 1, got {n_calls}")
    from replan.env.verifier import verify

    ix = corpus_index(corpus)
    gen = Generator(corpus, 0)
    for _ in range(attempts):
        lit = Literals(ix, rng.randrange(10_000))
        b = _Builder(ix, lit)
        st = _State([], [], frozenset(), frozenset())
        ok = True
        for i in range(n_calls):
            if i == 0:
                pool = list(ix.tools)
            else:
                pool = sorted({c for a in st.avail for c in ix.consumers.get(a.kind, ())} - st.used)
            rng.shuffle(pool)
            unit = None
            for cand in pool[:60]:
                if ix.tools[cand].spec.group and ix.tools[cand].spec.group in st.groups_used:
                    continue
                link = None if i == 0 else {u.index for u in st.units}
                unit = b.make_unit(cand, st, link)
                if unit is not None:
                    break
            if unit is None:
                ok = False
                break
            st = st.add(unit, ix)
        if not ok:
            continue
        ids = {u.chains[0][0].key: str(i + 1) for i, u in enumerate(st.units)}
        plan = gen._plan(st.units, {}, ids, "a random task")
        world = corpus.world()
        if verify(plan, corpus.tools, world):
            continue
        if execute_plan(plan, world).failed is None:
            return plan
    raise ValueError(f"no valid random plan of {n_calls} calls found in {attempts} attempts")


def path_plans(task: Task) -> list[Plan]:
    """The concrete plans of every valid path of a generated task (s* first)."""
    out = []
    for p in task.metadata.get("paths", []):
        plan = Plan.parse(p["plan"])
        if not isinstance(plan, Plan):
            raise ValueError(f"task {task.task_id}: stored path plan does not parse: {plan.reason}")
        out.append(plan)
    return out


def task_injector(task: Task) -> Perturber | None:
    """The fault injector of a ToolMaze task instance (``None`` under NP)."""
    from replan.env.perturb import injector_for

    return injector_for(task)


__all__ = [
    "LEVELS",
    "SUITE",
    "BaseTask",
    "GenerationError",
    "Generator",
    "PlanExecution",
    "answer_from_outputs",
    "base_tasks",
    "execute_plan",
    "generate",
    "path_plans",
    "random_plan",
    "stats",
    "task_injector",
]
