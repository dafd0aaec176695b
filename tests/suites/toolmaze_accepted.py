"""An independent enumeration of the tool sets a ToolMaze task's checker accepts (issue 29 §3).

Written from the task alone, never from the generator's path enumeration: the listed tools'
input and output kinds (``x-kind`` in their schemas), the values the task states (its
literals, ``tool.param``), and the checker's documented rule (``replan.env.checker``: every
required record exists with its fields, the answer states every required fact and the id of
every record marked ``mention_key``).

A tool set is *accepted* when some binding of its calls runs clean in the task's world and the
checker accepts the final state with an answer that states every result: each required input
takes the stated value when the task states one for it, else the output of another tool of the
set with the same kind and a compatible type (every acyclic choice is tried), the calls in the
order the task lists its tools where data flow allows. The *minimal*
accepted sets (no accepted proper subset) are what a valid path is: compared with the task's
``valid_paths`` as sets of tools.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from replan.core.leaves import json_leaves
from replan.core.task import Task
from replan.core.tools import ToolSpec, canonical_json
from replan.core.trace import Call
from replan.env import task_world
from replan.env.checker import check
from replan.env.verifier import types_compatible
from replan.env.world import MISSING, lookup_path

_NONE = MISSING  # a parameter the query states no value for


def output_fields(
    schema: Any, prefix: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], str, Any]]:
    """(path, kind, schema) of every output field with a kind; an array's items as element 0."""
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    out: list[tuple[tuple[str, ...], str, Any]] = []
    if not isinstance(props, Mapping):
        return out
    for name, sub in props.items():
        if not isinstance(sub, Mapping):
            continue
        path = (*prefix, str(name))
        if sub.get("x-kind"):
            out.append((path, str(sub["x-kind"]), sub))
        if sub.get("type") == "object":
            out += output_fields(sub, path)
        elif sub.get("type") == "array" and isinstance(sub.get("items"), Mapping):
            out += output_fields(sub["items"], (*path, "0"))
    return out


@dataclass(frozen=True)
class Slot:
    """A required input: the stated value, or the producers (tool, output path) of its kind."""

    tool: str
    param: str
    stated: Any
    producers: tuple[tuple[str, tuple[str, ...]], ...]


def slots_of(task: Task, specs: Mapping[str, ToolSpec]) -> dict[str, list[Slot]]:
    """The required inputs of each listed tool and where each may come from."""
    literals = task.metadata.get("literals") or {}
    outs = {t: output_fields(specs[t].returns) for t in task.tools}
    slots: dict[str, list[Slot]] = {}
    for t in task.tools:
        spec = specs[t]
        got = []
        for p in spec.parameters.get("properties", {}):
            if p not in spec.required:
                continue
            sch = spec.param_schema(p) or {}
            kind = sch.get("x-kind")
            prods = tuple(
                (u, path)
                for u in task.tools
                if u != t
                for path, k, s in outs[u]
                if kind and k == kind and types_compatible(s, sch)
            )
            got.append(Slot(t, p, literals.get(f"{t}.{p}", _NONE), prods))
        slots[t] = got
    return slots


def _writers(specs: Mapping[str, ToolSpec], tools: Sequence[str]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for t in tools:
        for eff in specs[t].effects:
            out.setdefault(eff.collection, set()).add(t)
    return out


def accepts(
    task: Task,
    specs: Mapping[str, ToolSpec],
    chosen: Sequence[str],
    slots: Mapping[str, list[Slot]],
    *,
    bound: Mapping[tuple[str, str], set[str]] | None = None,
    max_calls: int = 6000,
) -> bool | None:
    """Whether the checker accepts some clean run of exactly the tools ``chosen`` (module
    docstring); ``None`` when ``max_calls`` tool calls did not decide it.

    ``bound``: the producers the task's stored plans bind each input to. Where ``chosen`` holds
    one of them, the input takes it (as every stored plan does); otherwise every producer of its
    kind in ``chosen`` is tried. This keeps the search small without deciding which sets are
    accepted: the sets are every subset of the listed tools."""
    bound = bound or {}
    # calls run in the order the task lists its tools, where data flow allows: an order a state
    # needs (send an invoice before marking it paid) is no data dependency, and the listed order
    # is s*'s (guided C4-060 of v4: alphabetical order marked the invoice paid before sending it)
    rank = {t: i for i, t in enumerate(task.tools)}
    chosen = sorted(chosen, key=lambda t: rank.get(t, len(rank)))
    free: list[Slot] = []
    for t in chosen:
        for s in slots[t]:
            if s.stated is _NONE:
                prods = [p for p in s.producers if p[0] in chosen]
                usual = [p for p in prods if p[0] in bound.get((s.tool, s.param), ())]
                if not prods:
                    return False
                free.append(Slot(s.tool, s.param, _NONE, tuple(usual or prods)))
    writers = _writers(specs, chosen)
    required = task.checker.required_records
    world = task_world(task)
    cache: dict[Any, Any] = {}
    calls = [0]

    def run(order: list[str], choice: Mapping[tuple[str, str], tuple[str, tuple[str, ...]]]):
        key: Any = ()
        state, outputs = world.state, {}
        for i, t in enumerate(order):
            args = {}
            for s in slots[t]:
                if s.stated is not _NONE:
                    args[s.param] = s.stated
                    continue
                u, path = choice[(t, s.param)]
                v = lookup_path(outputs[u], path)
                if v is _NONE:
                    return None
                args[s.param] = v
            key = (key, t, canonical_json(args))
            if key in cache:
                got = cache[key]
                if got is None:
                    return None
                state, out = got
                outputs = {**outputs, t: out}
                continue
            calls[0] += 1
            res = world.execute(Call(tool=t, args=args), state=state, commit=False)
            if not res.ok or _records_fail(t, order[i + 1 :], res.state):
                cache[key] = None
                return None
            cache[key] = (res.state, res.observation)
            state, outputs = res.state, {**outputs, t: res.observation}
        return state, outputs

    def _records_fail(t: str, later: Sequence[str], state: Any) -> bool:
        """After the last writer of a collection, its required records must hold already."""
        for rec in required:
            ws = writers.get(rec.collection, set())
            if t not in ws or ws & set(later):
                continue
            recs = state.records(rec.collection).values()
            if not any(all(_same(r.get(f), v) for f, v in rec.where.items()) for r in recs):
                return True
        return False

    def acyclic_order(choice: Mapping[tuple[str, str], tuple[str, tuple[str, ...]]]):
        deps = {
            t: {choice[(t, s.param)][0] for s in slots[t] if (t, s.param) in choice} for t in chosen
        }
        order: list[str] = []
        done: set[str] = set()
        while len(order) < len(chosen):
            # the first listed tool whose inputs are ready: the listed order wherever data
            # flow allows it
            ready = next((t for t in chosen if t not in done and deps[t] <= done), None)
            if ready is None:
                return None
            order.append(ready)
            done.add(ready)
        return order

    for combo in itertools.product(*[s.producers for s in free]):
        if calls[0] > max_calls:
            return None
        choice = {(s.tool, s.param): c for s, c in zip(free, combo, strict=True)}
        order = acyclic_order(choice)
        if order is None:
            continue
        got = run(order, choice)
        if got is None:
            continue
        state, outputs = got
        # every result, each under its field's name (array positions left out: "daily.13.kwh"
        # would state a 13 no call returned)
        answer = "Done. " + "; ".join(
            f"{next((k for k in reversed(p) if not k.isdigit()), t)}: {v}"
            for t in order
            for p, v in json_leaves(outputs[t])
            if v is not None
        )
        if check(task, state, answer).success:
            return True
    return False


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return abs(float(a) - float(b)) <= 1e-6 * max(1.0, abs(float(b)))
    return a == b


def stored_bindings(task: Task) -> dict[tuple[str, str], set[str]]:
    """(tool, parameter) -> the tools the task's stored plans take that input from."""
    bound: dict[tuple[str, str], set[str]] = {}
    for p in task.metadata.get("paths", []):
        names = {n["id"]: n.get("name") for n in p["plan"]["tasks"]}
        for n in p["plan"]["tasks"]:
            for param, v in (n.get("para") or {}).items():
                if isinstance(v, str) and v.startswith("${"):
                    src = names.get(v[2:].split(".")[0].rstrip("}"))
                    bound.setdefault((n.get("name"), param), set()).add(src)
    return bound


def minimal_accepted_sets(
    task: Task, specs: Mapping[str, ToolSpec], *, max_calls: int = 6000
) -> tuple[list[frozenset[str]], list[frozenset[str]]]:
    """(the minimal tool sets the checker accepts, the sets ``accepts`` could not decide).

    Candidates are the subsets of the listed tools whose every unstated input has a producer in
    the subset and that write every collection a required record lives in; they are tried
    smallest first, and a superset of an accepted set is not minimal."""
    import numpy as np

    tools = list(task.tools)
    bit = {t: 1 << i for i, t in enumerate(tools)}
    slots = slots_of(task, specs)
    masks = np.arange(1 << len(tools), dtype=np.int64)
    ok = np.ones(len(masks), dtype=bool)
    for t in tools:
        has = (masks & bit[t]) != 0
        for s in slots[t]:
            if s.stated is _NONE:
                pm = sum({bit[u] for u, _ in s.producers})
                ok &= ~has | ((masks & pm) != 0)
    writers = _writers(specs, tools)
    for rec in task.checker.required_records:
        ok &= (masks & sum(bit[t] for t in writers.get(rec.collection, ()))) != 0
    cands = masks[ok]
    sizes = np.array([bin(int(m)).count("1") for m in cands], dtype=np.int64)
    bound = stored_bindings(task)
    accepted: list[int] = []
    undecided: list[frozenset[str]] = []
    for size in range(1, len(tools) + 1):
        level = cands[sizes == size]
        for a in accepted:
            level = level[(level & a) != a]
        for m in level.tolist():
            chosen = [t for t in tools if m & bit[t]]
            got = accepts(task, specs, chosen, slots, bound=bound, max_calls=max_calls)
            if got is None:
                undecided.append(frozenset(chosen))
            elif got:
                accepted.append(m)
    return [frozenset(t for t in tools if m & bit[t]) for m in accepted], undecided
