"""The corpus as the generator sees it: tools by kind, their inputs and output fields."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from replan.core.tools import ToolSpec, canonical_json
from replan.env.corpus import Corpus, load_corpus


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


def walk_outputs(
    schema: Any, prefix: tuple[str, ...] = (), depth: int = 0, *, optional: bool = False
) -> list[OutField]:
    """The required output fields of a JSON Schema that carry an ``x-kind`` (nested objects and
    element 0 of arrays, 4 levels deep), plainest first: what a later call can consume.
    ``optional``: the fields an output may leave out too (what an agent may still use)."""
    out: list[OutField] = []
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(props, Mapping):
        return out
    required = schema.get("required")
    for name, sub in props.items():
        if not isinstance(sub, Mapping):
            continue
        if not optional and isinstance(required, list) and name not in required:
            continue  # an optional field may be absent: nothing can rely on it
        path = (*prefix, str(name))
        if sub.get("x-kind"):
            out.append(OutField(path, str(sub["x-kind"]), sub))
        if depth < 4:
            if sub.get("type") == "object":
                out.extend(walk_outputs(sub, path, depth + 1, optional=optional))
            elif sub.get("type") == "array" and isinstance(sub.get("items"), Mapping):
                # element 0 of a list: used only when nothing plainer fits (see ``_latest``),
                # and kept only if every path runs clean
                out.extend(walk_outputs(sub["items"], (*path, "0"), depth + 1, optional=optional))
    out.sort(key=lambda o: ("0" in o.path, len(o.path)))
    return out


def _declared_output(corpus: Corpus, gid: str | None) -> str | None:
    grp = corpus.groups.get(gid) if gid else None
    return grp.output_kind if grp is not None else None


def _echo(out: OutField, ins: Sequence[ParamInfo]) -> bool:
    """An output field that repeats an input of the same name and kind (``sku`` -> ``sku``)."""
    return any(p.name == out.path[-1] and p.kind == out.kind for p in ins)


def group_kind(grp: Any, ix: CorpusIndex) -> str | None:
    """The kind of value an alternative group yields: its declared output kind, else the first
    kind every member chain's last tool outputs; ``None`` when the members share none."""
    if grp.output_kind:
        return grp.output_kind
    common: set[str] | None = None
    for chain in grp.members:
        last = ix.tools.get(chain[-1])
        if last is None:
            return None
        common = last.out_kinds if common is None else common & last.out_kinds
    return sorted(common)[0] if common else None


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
                    for o in walk_outputs(spec.returns)
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
        #: tools with an output field of a kind (what a tool-made input can come from)
        self.producers: dict[str, set[str]] = defaultdict(set)
        for t in self.tools.values():
            for o in t.outs:
                self.producers[o.kind].add(t.name)
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
            gk = group_kind(grp, self)
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
        if group_kind(grp, self) is None:
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


_CORPORA: dict[int, Corpus] = {}


def corpus_key(corpus: Corpus) -> int:
    """A hashable key for ``corpus`` (its ``id``) that caches keyed on it can turn back into the
    corpus with :func:`corpus_by_key`; the corpus is kept alive so the key stays its own."""
    _CORPORA[id(corpus)] = corpus
    return id(corpus)


def corpus_by_key(key: int) -> Corpus:
    """The corpus :func:`corpus_key` gave ``key`` for."""
    return _CORPORA[key]


@lru_cache(maxsize=4)
def _index_for(key: int) -> CorpusIndex:
    return CorpusIndex(corpus_by_key(key))


def corpus_index(corpus: Corpus | None = None) -> CorpusIndex:
    """The index of ``corpus`` (default: the shipped one), built once per corpus."""
    return _index_for(corpus_key(corpus or load_corpus()))
