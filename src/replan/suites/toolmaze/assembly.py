"""DAG assembly: units bound by semantic kind, the search state and the plan builder."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from replan.core.tools import canonical_json
from replan.env.verifier import types_compatible
from replan.suites.toolmaze.index import CorpusIndex, ParamInfo, ToolInfo, group_kind


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
    #: chains at the end of ``chains`` that mix two of the group's chains (:func:`mixed_chains`)
    mixed: int = 0

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
class SearchState:
    """A partial path of the generator's search: the units placed so far, the outputs they make
    available to later units, and the tools and groups already used."""

    units: list[Unit]
    avail: list[Avail]
    used: frozenset[str]
    groups_used: frozenset[str]

    def add(self, unit: Unit, ix: CorpusIndex) -> SearchState:
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
            kind = group_kind(grp, ix)
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
        return SearchState(
            units=[*self.units, unit],
            avail=new_avail,
            used=self.used | set(unit.tools),
            groups_used=self.groups_used | blocked,
        )


def _fixed_nodes(st: SearchState) -> list[GNode]:
    """Calls every path of the task makes (fixed units), in order."""
    return [u.chains[0][0] for u in st.units if u.group is None]


def _node(chain: list[GNode], key: str) -> GNode:
    return next(n for n in chain if n.key == key)


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


class Builder:
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
        self, cand: str, st: SearchState, link: set[int] | None, branch: int = 0
    ) -> Unit | None:
        """A unit for tool or group ``cand`` (``"group:<id>"``) in state ``st``."""
        unit = self._make_unit(cand, st, link, branch, weak=False)
        if unit is None and link is not None:
            unit = self._make_unit(cand, st, link, branch, weak=True)
        return unit

    def _make_unit(
        self, cand: str, st: SearchState, link: set[int] | None, branch: int, weak: bool
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
        kind = group_kind(grp, self.ix)
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
# cross-chain compositions of a group
def with_mixed_chains(unit: Unit, ix: CorpusIndex) -> Unit:
    """``unit`` with its group's mixed chains appended (``unit.mixed`` counts them).

    ToolMaze §3.3 (step 2) asks for a complete solution space of "schema-compatible alternative
    tool-call paths", and C3's many-to-many groups a "combinatorial space of valid recovery
    paths across interacting sub-graphs". A group's declared chains are not all of it: the head
    of one chain may feed the tail of another when the tail's tool-made inputs take outputs of
    the head of the same kind (``geonames_search`` -> ``sunrise_sunset_times`` in
    ``gen_sun_times``). A mixed chain is the head of chain ``c`` (its first ``k`` calls, as
    bound there) followed by the tail of chain ``d`` (from call ``j``), whose references into
    ``d``'s head are rebound to ``c``'s head by kind, type and the record a precondition needs;
    it exists only if every such reference finds an output and at least one does (else the head
    would feed nothing). Its other arguments are those of ``d``'s calls. A declared chain whose
    head feeds nothing (its tail takes a stated value instead) is also valid without that head
    (:func:`_trim`). Whether each runs clean is the generator's to find out.
    """
    if unit.group is None or len(unit.chains) < 2 or unit.mixed:
        return unit
    declared = list(unit.chains)
    kind = group_kind(ix.groups[unit.group], ix)
    chains, outs = list(declared), list(unit.outs)
    for chain, out in zip(declared, unit.outs, strict=True):
        trimmed = _trim(chain, out[0], ix)
        if len(trimmed) < len(chain) and [n.tool for n in trimmed] not in [
            [n.tool for n in ch] for ch in chains
        ]:
            chains.append(trimmed)
            outs.append(out)
    for c, head_chain in enumerate(declared):
        for d, tail_chain in enumerate(declared):
            if c == d:
                continue
            for k in range(1, len(head_chain)):
                for j in range(1, len(tail_chain)):
                    mix = _mix(head_chain[:k], tail_chain[:j], tail_chain[j:], unit, c, ix)
                    if mix is None or [n.tool for n in mix] in [
                        [n.tool for n in ch] for ch in chains
                    ]:
                        continue
                    out = None
                    for n in reversed(mix):
                        f = next((o for o in ix.tools[n.tool].outs if o.kind == kind), None)
                        if f is not None:
                            out = (n.key, f.path)
                            break
                    if out is None:
                        continue
                    chains.append(mix)
                    outs.append(out)
    return Unit(
        unit.index,
        unit.group,
        chains,
        outs,
        branch=unit.branch,
        mixed=len(chains) - len(declared),
    )


def _trim(chain: Sequence[GNode], out_key: str, ix: CorpusIndex) -> list[GNode]:
    """``chain`` without the calls that change nothing and feed nothing: no effect, not the
    group's output, and no later call of the chain references them."""
    nodes = list(chain)
    while True:
        used = {v.node for n in nodes for v in n.args.values() if isinstance(v, NodeOut)}
        idle = [
            n
            for n in nodes
            if n.key != out_key and n.key not in used and not ix.tools[n.tool].spec.effects
        ]
        if not idle:
            return nodes
        nodes = [n for n in nodes if n is not idle[0]]


def _mix(
    head: Sequence[GNode],
    dropped: Sequence[GNode],
    tail: Sequence[GNode],
    unit: Unit,
    c: int,
    ix: CorpusIndex,
) -> list[GNode] | None:
    """``head`` followed by ``tail`` rebound onto it (see :func:`with_mixed_chains`)."""
    head_outs = [(n, o) for n in head for o in ix.tools[n.tool].outs]
    gone = {n.key for n in dropped}
    renamed = {n.key: f"{n.key}x{c}h{len(head)}" for n in tail}
    nodes: list[GNode] = list(head)
    fed = False
    for n in tail:
        info = ix.tools[n.tool]
        args: dict[str, Lit | NodeOut | SlotOut] = {}
        taken: set[tuple[str, tuple[str, ...]]] = set()
        for name, v in n.args.items():
            if isinstance(v, NodeOut) and v.node in renamed:
                args[name] = NodeOut(renamed[v.node], v.path)
                continue
            if not (isinstance(v, NodeOut) and v.node in gone):
                args[name] = v
                continue
            p = next((q for q in info.ins if q.name == name), None)
            src = _rebind(p, head_outs, taken) if p is not None else None
            if src is None:
                return None
            taken.add(src)
            args[name] = NodeOut(*src)
            fed = True
        nodes.append(GNode(renamed[n.key], n.tool, args, unit.index, n.chain))
    return nodes if fed else None


def _rebind(
    p: ParamInfo,
    head_outs: Sequence[tuple[GNode, Any]],
    taken: set[tuple[str, tuple[str, ...]]],
) -> tuple[str, tuple[str, ...]] | None:
    """The output of a head call (latest first, plain fields before array elements) that
    fills ``p``: same kind and a compatible type. An input a precondition looks up (a record
    the call needs) is never rebound: it stays with the call that made the record."""
    if p.pre is not None or p.pre_field is not None:
        return None
    fallback = None
    for node, o in reversed(head_outs):
        ref = (node.key, o.path)
        if ref in taken or o.kind != p.kind or not types_compatible(o.schema, p.schema):
            continue
        if "0" in o.path:
            fallback = fallback or ref
            continue
        return ref
    return fallback
