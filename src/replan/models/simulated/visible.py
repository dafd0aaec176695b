"""What a model can know: the simulated agent's reading of a request.

The simulated model (:mod:`replan.models.simulated`) may use only what a language model is
shown: the user's query, the tool list of the request (names, descriptions, parameter and output
schemas, including their ``x-kind`` annotations, which stand in for a model's reading of what a
parameter or an output field means) and the observations in the conversation. It never reads a
task's gold plan, its valid paths, its checker or its fault schedule. The general vocabulary of
value kinds (:mod:`replan.env.corpus.kinds`: what an airport code or a date looks like) stands in
for a model's world knowledge.

- :func:`read_plan` writes the plan a careful reader would write, with no mistakes: the steps the
  query describes (a step is recognised when the query paraphrases the first sentence of a
  listed tool's description); for a goal-level query, which lists no steps, the goals it names
  (a kind's noun from the kinds vocabulary, used other than as a value's label), each reached by
  a listed tool that yields it, with whatever producers their inputs need (backward chaining by
  kind); otherwise the tools its words name, with their producers. Each input is bound to
  an earlier step's output of the same kind, else to a value the query states (labelled
  ``label: value``, or recognised by its kind); a required input with no visible source is left
  out, so the call fails as a model's would.
- :func:`routes` lists replacement chains for a failed tool among the listed tools only: chains
  of one to three tools whose last output has the kinds the plan needs, ranked by length and by
  how close their descriptions are to the failed tool's.

Both are pure functions of the visible request, so the same request always reads the same way.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from replan.core import linre
from replan.core.plan import RESPONSE, ROOT, Plan, PlanNode, iter_references, reference_text
from replan.core.tools import ToolSpec

_WORD = linre.compile(r"[a-z0-9]+")
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "for",
        "to",
        "and",
        "or",
        "in",
        "on",
        "at",
        "by",
        "with",
        "from",
        "into",
        "its",
        "it",
        "is",
        "be",
        "as",
        "this",
        "that",
        "me",
        "my",
        "i",
        "you",
        "your",
        "their",
        "our",
        "all",
        "each",
        "one",
        "two",
        "any",
        "some",
        "then",
    ]
)


def output_kinds(schema: Mapping[str, Any], path: tuple[str, ...] = ()) -> list:
    """(path, x-kind) of every object field of an output schema (not inside arrays)."""
    out: list[tuple[tuple[str, ...], str]] = []
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(props, Mapping):
        return out
    for k, sub in props.items():
        if not isinstance(sub, Mapping):
            continue
        if sub.get("x-kind"):
            out.append(((*path, k), str(sub["x-kind"])))
        if sub.get("type") == "object":
            out += output_kinds(sub, (*path, k))
    return out


def value_fields(schema: Mapping[str, Any], path: tuple[str, ...] = (), depth: int = 0) -> list:
    """(path, x-kind) of the output fields a later call can rely on: fields the schema lists
    as required (when it lists any), nested objects, and element 0 of arrays -- plain fields
    first, array elements last."""
    out: list[tuple[tuple[str, ...], str]] = []
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(props, Mapping):
        return out
    required = schema.get("required")
    for k, sub in props.items():
        if not isinstance(sub, Mapping):
            continue
        if isinstance(required, list) and k not in required:
            continue
        here = (*path, str(k))
        if sub.get("x-kind"):
            out.append((here, str(sub["x-kind"])))
        if depth < 4 and sub.get("type") == "object":
            out += value_fields(sub, here, depth + 1)
        elif depth < 4 and sub.get("type") == "array" and isinstance(sub.get("items"), Mapping):
            out += value_fields(sub["items"], (*here, "0"), depth + 1)
    return sorted(out, key=lambda pk: ("0" in pk[0], len(pk[0])))


def param_kind(spec: ToolSpec, param: str) -> str | None:
    k = (spec.param_schema(param) or {}).get("x-kind")
    return str(k) if k else None


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def similarity(a: ToolSpec, b: ToolSpec) -> float:
    """Word overlap (Jaccard) of two tools' names and descriptions."""
    wa = _words(a.name.replace("_", " ") + " " + a.description)
    wb = _words(b.name.replace("_", " ") + " " + b.description)
    return len(wa & wb) / len(wa | wb) if wa | wb else 0.0


def step_phrase(spec: ToolSpec) -> str:
    """How a request paraphrases a call of ``spec``: its description's first sentence."""
    text = spec.description.strip().split(". ")[0].rstrip(".")
    return linre.sub(r"\s*\([^)]*\)", "", text).strip()


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False) if isinstance(value, dict | list) else str(value)


def _label(spec: ToolSpec, param: str) -> str:
    desc = ((spec.param_schema(param) or {}).get("description") or "").strip().rstrip(".")
    return desc or param.replace("_", " ")


@dataclass(frozen=True)
class Literal:
    """A value the query states, where, and (when recognised) its kind."""

    start: int
    value: Any
    kind: str | None
    #: the labels the query states the value under (``"IATA code of the arrival airport: SCL"``)
    labels: frozenset[str] = frozenset()


class View:
    """The visible request: the query, the listed tools (in order) and the kind vocabulary."""

    def __init__(self, query: str, specs: Mapping[str, ToolSpec], kinds: Mapping[str, Any]):
        self.query = query
        self.specs = dict(specs)
        self.kinds = kinds
        self.literals = self._cached_literals()

    # -- values the query states -------------------------------------------------------------
    #: (kinds, query) -> literals: every model turn of an episode reads the same query, and
    #: scanning it costs one regex per example value of every kind (hundreds, more than re's
    #: own cache holds); about half of a simulated episode's CPU before this cache
    _LITERALS: ClassVar[dict[tuple[int, str], tuple[Mapping[str, Any], tuple[Literal, ...]]]] = {}
    _LITERALS_MAX: ClassVar[int] = 4096

    def _cached_literals(self) -> list[Literal]:
        key = (id(self.kinds), self.query)
        hit = View._LITERALS.get(key)
        if hit is not None and hit[0] is self.kinds:  # the same kinds, not a reused id
            return list(hit[1])
        found = self._literals()
        if len(View._LITERALS) >= View._LITERALS_MAX:
            View._LITERALS.clear()
        View._LITERALS[key] = (self.kinds, tuple(found))
        return found

    def _literals(self) -> list[Literal]:
        out: list[Literal] = []
        for kname, k in self.kinds.items():
            for ex in getattr(k, "examples", ()):
                if _text(ex) not in self.query:  # most are not: skip the regex
                    continue
                literal = linre.escape(_text(ex))
                if isinstance(ex, bool | int | float):  # a bare number only as a stated value
                    # (a full stop may end the sentence after it: "nights: 3.")
                    pat = linre.compile(
                        ": (" + literal + ")",
                        followed_by=r"[^\w.-]|\.[^\d]|\.$|$",
                        overlapping=True,
                    )
                else:
                    pat = linre.compile(
                        "(" + literal + ")",
                        not_after=r"\w-",
                        followed_by=r"[^\w-]|$",
                        overlapping=True,
                    )
                for m in pat.finditer(self.query):
                    out.append(Literal(m.start(1), ex, kname, self._labels_before(m.start(1))))
        return sorted(out, key=lambda x: (x.start, x.kind or ""))

    def _labels_before(self, start: int) -> frozenset[str]:
        """The label(s) a value at ``start`` is stated under (``label / label: value``)."""
        head = self.query[:start]
        if not head.endswith(": "):
            return frozenset()
        label = linre.split(r": |; |\. ", head[:-2])[-1]
        return frozenset(x.strip().lower() for x in label.split(" / ") if x.strip())

    def labelled(self, spec: ToolSpec, param: str) -> Any:
        """The value the query gives after ``<label>: `` for this parameter, if any.

        When several parameters of the tool share a label, the k-th of them (in the tool's
        parameter order) takes the k-th value stated under it.
        """
        label = _label(spec, param)
        nth = (
            [p for p in spec.param_names if _label(spec, p).lower() == label.lower()].index(param)
            if param in spec.param_names
            else 0
        )
        # the label, after ": ", "; ", "/ " or ". " (group 1); a match's own closing ": " may be
        # the next one's opening, so each search starts there
        pat = linre.compile(
            r"(?:: |; |/ |\. )(" + linre.escape(label) + r"(?: / [^:;]+?)*: )", linre.I
        )
        found: list[tuple[int, int]] = []
        pos = 0
        while (m := pat.search(self.query, pos)) is not None:
            found.append(m.span(1))
            pos = m.end() - 2
        if not found:
            return NO_VALUE
        rest = self.query[found[min(nth, len(found) - 1)][1] :]
        kname = param_kind(spec, param)
        k = self.kinds.get(kname) if kname else None
        for ex in getattr(k, "examples", ()) if k is not None else ():
            if rest.startswith(_text(ex)):
                return ex
        raw = linre.split(r"; |\.(?:\s|$)", rest, maxsplit=1)[0].strip()
        if not raw:
            return NO_VALUE
        schema = spec.param_schema(param) or {}
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError:
            parsed = raw
        if schema.get("type") == "string" and not isinstance(parsed, str):
            return raw
        return parsed

    def is_literal(self, kind: str) -> bool:
        """Whether a user can state a value of ``kind`` (a city, a date) -- not only tools."""
        k = self.kinds.get(kind)
        return bool(getattr(k, "examples", ()))

    def literal_of_kind(
        self,
        kind: str,
        used: Mapping[str, int],
        near: int | None,
        spec: ToolSpec | None = None,
        param: str | None = None,
    ) -> Any:
        """The next unused literal of ``kind`` (those at or after ``near`` first).

        A value the query states under the label of another parameter of ``spec`` belongs to
        that parameter (the arrival airport is not the departure one), so it is not offered.
        """
        found = [lit for lit in self.literals if lit.kind == kind]
        if spec is not None and param is not None:
            others = {_label(spec, q).lower() for q in spec.param_names if q != param}
            others.discard(_label(spec, param).lower())
            found = [lit for lit in found if not (lit.labels & others)]
        if near is not None:
            found = [lit for lit in found if lit.start >= near] + [
                lit for lit in found if lit.start < near
            ]
        i = used.get(kind, 0)
        return found[i].value if i < len(found) else NO_VALUE

    # -- the steps the query describes -------------------------------------------------------
    def described_steps(self) -> list[tuple[int, str]]:
        """(position, tool) of every step the query describes, in reading order."""
        hits: list[tuple[int, int, str]] = []
        for name, spec in self.specs.items():
            phrase = step_phrase(spec)
            if len(phrase) < 8:
                continue
            pat = linre.compile(
                linre.escape(phrase).replace(r"\ ", r"\s+"),
                linre.I,
                not_after=r"\w",
                followed_by=r"\W|$",
                overlapping=True,
            )
            for m in pat.finditer(self.query):
                hits.append((m.start(), m.end(), name))
        hits.sort(key=lambda h: (h[0], -(h[1] - h[0]), list(self.specs).index(h[2])))
        out: list[tuple[int, str]] = []
        end = -1
        for start, stop, name in hits:
            if start < end:
                continue  # a shorter or equal phrase inside one already read
            out.append((start, name))
            end = stop
        return out

    def goal_kinds(self) -> list[str]:
        """Kinds the query asks for, in reading order: a kind whose noun (the kinds
        vocabulary: "confirmed hotel reservation") the query uses other than as the label of a
        value it states, and that some listed tool yields. Longer nouns first where they
        overlap ("hotel reservation" inside "confirmed hotel reservation" is not another)."""
        made = {k for s in self.specs.values() for _, k in value_fields(s.returns)}
        hits: list[tuple[int, int, str]] = []
        for name in sorted(made):
            k = self.kinds.get(name)
            noun = getattr(k, "noun", "")
            if len(noun) < 4:
                continue
            if noun.lower() not in self.query.lower():
                continue
            # a whole noun, not followed by ": " or " / " (then it labels a stated value)
            pat = linre.compile(
                "(" + linre.escape(noun) + ")",
                linre.I,
                not_after=r"\w-",
                followed_by=r"$|[^\w: -]|:[^ ]|:$| [^/]| $| /[^ ]",
                overlapping=True,
            )
            for m in pat.finditer(self.query):
                hits.append((m.start(1), m.end(1), name))
        hits.sort(key=lambda h: (h[0], -(h[1] - h[0]), h[2]))
        out: list[str] = []
        end = -1
        for start, stop, name in hits:
            if start < end:
                continue
            end = stop
            if name not in out:
                out.append(name)
        return out

    def goal_tools(self) -> list[str]:
        """Tools the query names by their words (``book_flight``: "book ... flight")."""
        q = " " + " ".join(_WORD.findall(self.query.lower())) + " "
        out = []
        for name in self.specs:
            toks = [t for t in name.lower().split("_") if t and t not in ("get", "api")]
            if toks and all(linre.search(r"\s" + linre.escape(t.rstrip("s")), q) for t in toks):
                out.append(name)
        # a named tool that only feeds another named tool is not a goal of its own
        return [n for n in out if not any(m != n and self._feeds(n, m) for m in out)]

    def _feeds(self, a: str, b: str) -> bool:
        out = {k for _, k in output_kinds(self.specs[a].returns)}
        return any(param_kind(self.specs[b], p) in out for p in self.specs[b].param_names)

    def producers(self, kind: str, exclude: Iterable[str] = ()) -> list[str]:
        """Listed tools with an output field of ``kind`` (listing order)."""
        ex = set(exclude)
        return [
            n
            for n, s in self.specs.items()
            if n not in ex and any(k == kind for _, k in output_kinds(s.returns))
        ]


class _NoneType:
    def __repr__(self) -> str:
        return "<none>"


#: "no value found" from a lookup in what a request shows (``None`` is a value there)
NO_VALUE: Any = _NoneType()


def _hit(spec: ToolSpec, kind: str) -> tuple[str, ...] | None:
    return next((p for p, k in output_kinds(spec.returns) if k == kind), None)


class _Writer:
    """Writes plan nodes, binding inputs to earlier outputs or stated values."""

    def __init__(self, view: View):
        self.v = view
        self.nodes: list[PlanNode] = []
        self.used: dict[str, int] = {}

    def _next_id(self) -> str:
        return str(len(self.nodes) + 1)

    def add(self, tool: str, near: int | None, depth: int = 0, chain: bool = False) -> str | None:
        spec = self.v.specs[tool]
        args: dict[str, Any] = {}
        for p in spec.param_names:
            val = self.bind(spec, p, near, depth)
            if val is not NO_VALUE:
                args[p] = val
        prev = self.nodes[-1] if self.nodes and chain else None
        if prev is not None and not any(
            r.node == prev.id and r.path
            for v in args.values()
            for r in iter_references(v, [n.id for n in self.nodes])
        ):
            # a step of a described chain takes something from the step before: the first
            # required input of a kind that step gives, though the query states a value too
            for p in spec.param_names:
                kind = param_kind(spec, p)
                if p in spec.required and kind and kind != "_":
                    got = self._latest([prev], kind)
                    if got is not None:
                        args[p] = got
                        break
        nid = self._next_id()
        ids = [n.id for n in self.nodes]
        refs = sorted({r.node for v in args.values() for r in iter_references(v, ids)}, key=_idkey)
        self.nodes.append(
            PlanNode(id=nid, tool=tool, args=args, desc=step_phrase(spec), deps=refs or [ROOT])
        )
        return nid

    def bind(self, spec: ToolSpec, p: str, near: int | None, depth: int) -> Any:
        """A value for parameter ``p``: one the query states for it, an earlier step's output
        of its kind, a value of its kind the query states, or a producer's output. Optional
        parameters take only a value the query states for them."""
        kind = param_kind(spec, p)
        got = self.v.labelled(spec, p)
        if got is not NO_VALUE or p not in spec.required:
            return got
        literal = kind is not None and self.v.is_literal(kind)
        if kind and self.nodes and not literal:
            # a tool-made value: the step before first (a request's steps read as a chain),
            # then the latest earlier one; in a step its last field of the kind, plain first
            got = self._latest(self.nodes[-1:], kind) or self._latest(self.nodes, kind)
            if got is not None:
                return got
        if kind:
            got = self.v.literal_of_kind(kind, self.used, near, spec, p)
            if got is not NO_VALUE:
                self.used[kind] = self.used.get(kind, 0) + 1
                return got
        if kind and self.nodes:
            got = self._latest(self.nodes[-1:], kind) or self._latest(self.nodes, kind)
            if got is not None:
                return got
        if kind and p in spec.required and depth < 3:
            for prod in self.v.producers(kind, exclude={spec.name}):
                pspec = self.v.specs[prod]
                if all(self._bindable(pspec, q) for q in pspec.required):
                    nid = self.add(prod, near, depth + 1)
                    hit = _hit(pspec, kind)
                    if nid is not None and hit is not None:
                        return reference_text(nid, *hit)
        return NO_VALUE

    def reach(self, goals: Sequence[str]) -> None:
        """Plan toward the goal kinds by backward chaining over the listed tools' kinds.

        Goals are taken in order: one a chosen tool yields is met, otherwise a listed tool that
        yields it is chosen. Each required input of a chosen tool comes from the query when the
        query states a value for it (under its label, or a value of its kind), else from a
        chosen tool that yields its kind, else from a further listed producer. The first
        complete reading is kept (producers in listing order; a producer whose own inputs
        cannot all be found is passed over); its calls are written producers first."""
        # values stated as values ("label: value"), not words of a sentence that happen to
        # look like one ("in US dollars" is no country)
        given = {lit.kind for lit in self.v.literals if lit.kind and lit.labels}
        outs = {n: {k for _, k in value_fields(s.returns)} for n, s in self.v.specs.items()}

        def producers(kind: str) -> list[str]:  # listing order; array elements count
            return [n for n in self.v.specs if kind in outs[n]]

        def needs(tool: str) -> list[tuple[str, str, str]]:
            spec = self.v.specs[tool]
            return [
                (tool, p, k)
                for p in spec.param_names
                if p in spec.required and (k := param_kind(spec, p))
            ]

        def stated(tool: str, p: str, kind: str) -> bool:
            return kind in given or self.v.labelled(self.v.specs[tool], p) is not NO_VALUE

        def search(
            chosen: list[str], source: dict, goals_left: list[str], agenda: list
        ) -> tuple[list[str], dict] | None:
            if agenda:
                (tool, p, kind), rest = agenda[0], agenda[1:]
                if stated(tool, p, kind):
                    return search(chosen, source, goals_left, rest)
                have = [t for t in chosen if t != tool and kind in outs[t]]
                for src in have or [t for t in producers(kind) if t not in chosen]:
                    new = [] if src in chosen else [src]
                    got = search(
                        [*chosen, *new],
                        {**source, (tool, p): src},
                        goals_left,
                        [*rest, *(needs(src) if new else [])],
                    )
                    if got is not None:
                        return got
                return None
            if not goals_left:
                return chosen, source
            g, more = goals_left[0], goals_left[1:]
            if any(g in outs[t] for t in chosen):
                return search(chosen, source, more, [])
            for src in [t for t in producers(g) if t not in chosen]:
                got = search([*chosen, src], source, more, needs(src))
                if got is not None:
                    return got
            return None

        found = search([], {}, list(goals), [])
        if found is None:  # no complete reading: reach what can be reached, goal by goal
            chosen, source = [], {}
            for g in goals:
                got = search(chosen, source, [g], [])
                if got is not None:
                    chosen, source = got
        else:
            chosen, source = found
        node_of: dict[str, str] = {}
        pending = list(chosen)
        while pending:  # producers first
            ready = [
                t
                for t in pending
                if all(src in node_of for (c, _), src in source.items() if c == t)
            ]
            tool = ready[0] if ready else pending[0]
            pending.remove(tool)
            node_of[tool] = self._add_sourced(tool, source, node_of)

    def _add_sourced(self, tool: str, source: Mapping, node_of: Mapping[str, str]) -> str:
        """Write a call of ``tool`` whose inputs come from ``source`` (a producer per input)
        or, for the others, from the query."""
        spec = self.v.specs[tool]
        args: dict[str, Any] = {}
        for p in spec.param_names:
            kind = param_kind(spec, p)
            src = source.get((tool, p))
            val: Any = self.v.labelled(spec, p)
            if src is not None and src in node_of and kind:
                val = self._latest([self.node(node_of[src])], kind) or val
            elif val is NO_VALUE and p in spec.required and kind:
                val = self._stated(spec, p, kind)
            if val is not NO_VALUE:
                args[p] = val
        nid = self._next_id()
        ids = [n.id for n in self.nodes]
        refs = sorted({r.node for v in args.values() for r in iter_references(v, ids)}, key=_idkey)
        self.nodes.append(
            PlanNode(id=nid, tool=tool, args=args, desc=step_phrase(spec), deps=refs or [ROOT])
        )
        return nid

    def _stated(self, spec: ToolSpec, p: str, kind: str) -> Any:
        """The value the query states for an input of ``kind``: the one stated under the
        kind's own noun ("e-mail address: ..."), else the one value of that kind it states,
        else the next unused one."""
        noun = getattr(self.v.kinds.get(kind), "noun", "").lower()
        lits = [lit for lit in self.v.literals if lit.kind == kind and lit.labels] or [
            lit for lit in self.v.literals if lit.kind == kind
        ]
        named = [lit for lit in lits if noun and noun in lit.labels]
        for group in (named, lits):
            if len({_text(lit.value) for lit in group}) == 1:
                return group[0].value  # reused by every call that needs it
        got = self.v.literal_of_kind(kind, self.used, None, spec, p)
        if got is not NO_VALUE:
            self.used[kind] = self.used.get(kind, 0) + 1
        return got

    def node(self, nid: str) -> PlanNode:
        return next(n for n in self.nodes if n.id == nid)

    def _latest(self, nodes: Sequence[PlanNode], kind: str) -> str | None:
        fallback = None
        for n in reversed(nodes):
            prod = self.v.specs.get(n.tool or "")
            for path, k in reversed(value_fields(prod.returns)) if prod is not None else ():
                if k != kind:
                    continue
                ref = reference_text(n.id, *path)
                if "0" not in path:
                    return ref
                fallback = fallback or ref
        return fallback

    def _bindable(self, spec: ToolSpec, p: str) -> bool:
        kind = param_kind(spec, p)
        if self.v.labelled(spec, p) is not NO_VALUE:
            return True
        if not kind:
            return False
        if any(_hit(self.v.specs[n.tool], kind) for n in self.nodes if n.tool in self.v.specs):
            return True
        if any(lit.kind == kind for lit in self.v.literals):
            return True
        return bool(self.v.producers(kind, exclude={spec.name}))

    def plan(self) -> Plan:
        used = {d for n in self.nodes for d in n.deps}
        sinks = [n.id for n in self.nodes if n.id not in used]
        nodes = [
            PlanNode(id=ROOT, desc=self.v.query, status="done"),
            *self.nodes,
            PlanNode(id=RESPONSE, desc="answer the user", deps=sinks or [ROOT]),
        ]
        return Plan(
            nodes=nodes,
            thought="I read the request and the tool list and plan the calls it needs.",
        )


def _idkey(nid: str) -> tuple:
    return tuple(int(x) if x.isdigit() else 0 for x in nid.split("."))


def read_plan(view: View) -> Plan:
    """The plan a careful reader writes from the query and the tool list (no mistakes)."""
    w = _Writer(view)
    steps = view.described_steps()
    goals = [] if steps else view.goal_kinds()
    if steps:
        for pos, tool in steps:
            w.add(tool, pos, chain=True)
    elif goals:
        w.reach(goals)
    else:
        for tool in view.goal_tools():
            w.add(tool, None)
    return w.plan()


def routes(
    view: View,
    failed: str,
    need: Sequence[str],
    exclude: Iterable[str],
    max_len: int = 3,
) -> list[list[str]]:
    """Chains of listed tools that could replace ``failed``: the last tool outputs every kind
    in ``need`` and each later tool takes an input of a kind the one before outputs. Shortest
    first, then closest in description to ``failed``; tools in ``exclude`` are never used."""
    ex = set(exclude) | {failed}
    fspec = view.specs.get(failed)

    def needs_own_output(n: str) -> bool:  # takes what it should give: an echo, not a source
        s = view.specs[n]
        return any(param_kind(s, p) in need for p in s.required)

    cands = [n for n in view.specs if n not in ex and not needs_own_output(n)]

    def outs(n: str) -> set[str]:
        return {k for _, k in value_fields(view.specs[n].returns)}

    def ins(n: str) -> set[str]:
        s = view.specs[n]
        return {k for p in s.param_names if (k := param_kind(s, p))}

    enders = [n for n in cands if set(need) <= outs(n)] if need else []
    found: list[list[str]] = [[n] for n in enders]
    frontier = [[n] for n in enders]
    for _ in range(max_len - 1):
        nxt = []
        for chain in frontier:
            head = chain[0]
            for n in cands:
                if n in chain or not (outs(n) & ins(head)):
                    continue
                nxt.append([n, *chain])
        found += nxt
        frontier = nxt

    def score(chain: list[str]) -> tuple:
        sim = max((similarity(view.specs[n], fspec) for n in chain), default=0.0) if fspec else 0
        return (len(chain), -sim, chain)

    return sorted(found, key=score)


def closest(name: str, options: Iterable[str]) -> str | None:
    """The option most like ``name`` (a misspelt tool or parameter name), if any is close."""
    got = difflib.get_close_matches(name, list(options), n=1, cutoff=0.5)
    return got[0] if got else None


__all__ = [
    "Literal",
    "View",
    "closest",
    "output_kinds",
    "param_kind",
    "read_plan",
    "routes",
    "similarity",
    "step_phrase",
    "value_fields",
]
