"""Goal-level queries and their reverse validation (ToolMaze §3.3).

A goal-level query states what the user wants (the goals: the results to report, the records to
make), the values they give and nothing of the steps. Seed 002 keeps a task only if an
independent reconstruction of the tool dependencies from the query matches the task's DAG; here
the reconstruction is code, a reader of kinds:

- the *given* kinds are those of the values the query states;
- the reader starts from the goals, in the order the query names them; a goal kind already
  produced by a tool it chose is met, otherwise it picks a listed tool that produces it;
- each required input of a chosen tool is taken from the query when the query states a value of
  its kind, otherwise from a chosen tool that produces that kind, otherwise from a further listed
  producer (each choice a branch).

Every branch that meets every goal is a *reconstruction*: its tools and its edges (consumer,
parameter, source tool or ``query``). A task is kept when at least one reconstruction exists (the
goal is reachable from what the query gives) and every reconstruction is one of the task's valid
paths (tools and edges); otherwise the query is ambiguous and the task is regenerated.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from replan.core.plan import Plan, exact_reference
from replan.core.tools import ToolSpec
from replan.suites.toolmaze.index import CorpusIndex, group_kind, walk_outputs

#: the source of an input the query states
QUERY = "query"

#: an edge: (consumer tool, parameter, source tool or QUERY)
Edge = tuple[str, str, str]


@dataclass(frozen=True)
class Reconstruction:
    """One reading of a goal-level query: the tools it calls and where each input comes from."""

    tools: frozenset[str]
    edges: frozenset[Edge]


def _out_kinds(spec: ToolSpec) -> set[str]:
    """Kinds of the output fields a later call can rely on (the index's reading of outputs)."""
    return {o.kind for o in walk_outputs(spec.returns)}


def _needs(spec: ToolSpec) -> list[tuple[str, str]]:
    """(parameter, kind) of the required inputs of ``spec`` that have a kind, in order."""
    out = []
    for p in spec.param_names:
        kind = (spec.param_schema(p) or {}).get("x-kind")
        if p in spec.required and kind:
            out.append((p, str(kind)))
    return out


@dataclass
class _Branch:
    chosen: list[str] = field(default_factory=list)
    edges: set[Edge] = field(default_factory=set)


def reconstructions(
    specs: Mapping[str, ToolSpec],
    given: set[str] | frozenset[str],
    goals: Sequence[str],
    *,
    limit: int = 256,
) -> list[Reconstruction] | None:
    """Every reading of a query that states values of the ``given`` kinds and asks for the
    ``goals`` (output kinds), over the listed tools ``specs``; ``None`` when there are more than
    ``limit`` branches (too ambiguous to check)."""
    outs = {n: _out_kinds(s) for n, s in specs.items()}
    producers = {
        k: [n for n in specs if k in outs[n]] for k in {k for o in outs.values() for k in o}
    }
    found: set[Reconstruction] = set()
    budget = [limit * 16]

    def agenda_of(tool: str) -> list[tuple[str, str, str]]:
        return [(tool, p, k) for p, k in _needs(specs[tool])]

    def step(br: _Branch, goals_left: list[str], agenda: list[tuple[str, str, str]]) -> bool:
        budget[0] -= 1
        if budget[0] < 0 or len(found) > limit:
            return False
        if agenda:
            (consumer, param, kind), rest = agenda[0], agenda[1:]
            if kind in given:
                br.edges.add((consumer, param, QUERY))
                ok = step(br, goals_left, rest)
                br.edges.discard((consumer, param, QUERY))
                return ok
            have = [t for t in br.chosen if t != consumer and kind in outs[t]]
            options = have or [t for t in producers.get(kind, []) if t not in br.chosen]
            for src in options:
                edge = (consumer, param, src)
                new = src not in br.chosen
                if new:
                    br.chosen.append(src)
                added = edge not in br.edges
                br.edges.add(edge)
                more = agenda_of(src) if new else []
                if not step(br, goals_left, [*rest, *more]):
                    return False
                if added:
                    br.edges.discard(edge)
                if new:
                    br.chosen.pop()
            return True
        if goals_left:
            g, rest_goals = goals_left[0], goals_left[1:]
            if any(g in outs[t] for t in br.chosen):
                return step(br, rest_goals, [])
            for src in producers.get(g, []):
                br.chosen.append(src)
                if not step(br, rest_goals, agenda_of(src)):
                    return False
                br.chosen.pop()
            return True
        if _acyclic(br.edges):
            found.add(Reconstruction(frozenset(br.chosen), frozenset(br.edges)))
        return True

    if not step(_Branch(), list(goals), []):
        return None
    return sorted(found, key=lambda r: (len(r.tools), sorted(r.tools), sorted(r.edges)))


def _acyclic(edges: set[Edge]) -> bool:
    graph: dict[str, set[str]] = {}
    for consumer, _, src in edges:
        if src != QUERY:
            graph.setdefault(consumer, set()).add(src)
    state: dict[str, int] = {}

    def visit(n: str) -> bool:
        if state.get(n) == 1:
            return False
        if state.get(n) == 2:
            return True
        state[n] = 1
        ok = all(visit(m) for m in graph.get(n, ()))
        state[n] = 2
        return ok

    return all(visit(n) for n in list(graph))


def path_reading(plan: Plan, specs: Mapping[str, ToolSpec]) -> Reconstruction:
    """A valid path as a reconstruction: its tools, and for each required input with a kind,
    the tool whose output it references, or ``query`` for a stated value."""
    tool_of = {n.id: n.tool or "" for n in plan.call_nodes}
    edges: set[Edge] = set()
    for n in plan.call_nodes:
        spec = specs[n.tool or ""]
        for p, _ in _needs(spec):
            ref = exact_reference(n.args.get(p), list(tool_of))
            src = tool_of.get(ref.node, QUERY) if ref is not None else QUERY
            edges.add((spec.name, p, src))
    return Reconstruction(frozenset(tool_of.values()), frozenset(edges))


def reverse_validate(
    specs: Mapping[str, ToolSpec],
    given: set[str] | frozenset[str],
    goals: Sequence[str],
    paths: Sequence[Reconstruction],
) -> str | None:
    """``None`` when the query is unambiguous: the goals are reachable from the given kinds over
    the listed tools, and every reconstruction is one of ``paths``; else why not."""
    got = reconstructions(specs, given, goals)
    if got is None:
        return "too many readings of the query"
    if not got:
        return "the goal is not reachable from what the query gives"
    allowed = set(paths)
    for r in got:
        if r not in allowed:
            return f"a reading calls {sorted(r.tools)}, not a valid path"
    return None


# ---------------------------------------------------------------------------------------------
# the goal-level query
#: goal sentences, openers and fact labels (never a tool's name or description)
PHRASINGS_FILE = Path(__file__).with_name("goal_phrasings.json")


@lru_cache(maxsize=1)
def phrasings() -> dict[str, Any]:
    """The phrasing data of goal-level queries (``goal_phrasings.json``)."""
    return json.loads(PHRASINGS_FILE.read_text(encoding="utf-8"))


def kind_noun(ix: CorpusIndex, kind: str) -> str:
    """A kind's noun phrase from the kinds vocabulary, without its article."""
    k = ix.kinds.get(kind)
    return k.noun if k is not None else kind.replace("_", " ")


def goal_kinds(
    ix: CorpusIndex, plan: Plan, given: set[str] | frozenset[str] = frozenset()
) -> list[tuple[str, bool]] | None:
    """(kind, is an action) of what a task asks for: each final call of ``plan`` (one nothing
    else consumes) by the kind it yields -- a group's common output, else the key of the record
    it creates, else its first output field -- of a kind the query does not state and no other
    call of the plan yields (``None`` when a final call has none: the task cannot be asked for
    by its goals); actions first."""
    calls = [n.tool or "" for n in plan.call_nodes]
    finals = set(plan.final_calls())
    out: list[tuple[str, bool]] = []
    for n in plan.call_nodes:
        if n.id not in finals:
            continue
        spec = ix.tools[n.tool or ""].spec
        others = {
            o.kind
            for t in calls
            if t != spec.name and (not spec.group or ix.tools[t].spec.group != spec.group)
            for o in ix.tools[t].outs
        }
        if spec.group in ix.groups:
            options = [group_kind(ix.groups[spec.group], ix)]
        else:
            options = [
                (spec.output_field_schema(eff.key.split(".")) or {}).get("x-kind")
                for eff in spec.effects
                if eff.op == "create"
            ] + [o.kind for o in ix.tools[spec.name].outs]
        kind = next((k for k in options if k and k not in given and k not in others), None)
        if kind is None:
            return None
        if kind not in [k for k, _ in out]:
            out.append((kind, spec.category == "action"))
    return sorted(out, key=lambda ka: not ka[1])


def write_goal_query(
    ix: CorpusIndex,
    domain: str,
    goals: Sequence[tuple[str, bool]],
    facts: Sequence[tuple[Any, str]],
    rng: random.Random,
) -> str:
    """A goal-level query: an opener for ``domain``, one sentence per goal (an action's record
    to make, or a value to report, named by its kind's noun), then the given ``facts``
    (value, label) -- nothing of the steps."""
    ph = phrasings()
    text = rng.choice(ph["openers"].get(domain) or ph["openers"]["General"])
    sentences = []
    for kind, action in goals:
        noun = kind_noun(ix, kind)
        if action:
            sentences.append(rng.choice(ph["do"]).format(noun=_article(noun)))
        else:
            sentences.append(rng.choice(ph["report"]).format(noun="the " + noun))
    text += " ".join(s[:1].upper() + s[1:] for s in sentences)
    if facts:
        listed = "; ".join(f"{label}: {_fact_text(value)}" for value, label in facts)
        text += " " + rng.choice(ph["facts"]).format(facts=listed)
    if any(action for _, action in goals):
        text += " " + rng.choice(ph["keys"])
    return text


def _article(noun: str) -> str:
    return ("an " if noun[:1].lower() in "aeiou" else "a ") + noun


def _fact_text(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)
