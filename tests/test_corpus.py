"""The corpus as a whole: size and coverage, the chaining contract, and every tool running.

Arguments are synthesised here, independently of the suite generator: a required parameter
takes the first enum value, else a literal example of its kind that fits its schema, else the
value of a field of that kind from a producer tool that is run first (depth-limited search).
"""

from __future__ import annotations

from collections import Counter
from functools import cache
from typing import Any

import pytest

from replan.core.tools import DOMAINS, compile_schema
from replan.core.trace import Call
from replan.env.corpus import load_corpus
from replan.env.world import World

CORPUS = load_corpus()


def kind_paths(
    schema: dict[str, Any], prefix: tuple[str, ...] = ()
) -> list[tuple[str, tuple[str, ...]]]:
    """(kind, path) of every kind-tagged field in an output schema (arrays step into item 0)."""
    out = []
    if not isinstance(schema, dict):
        return out
    if schema.get("x-kind") and prefix:
        out.append((schema["x-kind"], prefix))
    for k, sub in (schema.get("properties") or {}).items():
        out.extend(kind_paths(sub, (*prefix, k)))
    if isinstance(schema.get("items"), dict):
        out.extend(kind_paths(schema["items"], (*prefix, "0")))
    return out


@cache
def producers() -> dict[str, list[tuple[str, tuple[str, ...]]]]:
    out: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
    for spec in CORPUS.tools.values():
        for kind, path in kind_paths(spec.returns):
            out.setdefault(kind, []).append((spec.name, path))
    return out


def _get(value: Any, path: tuple[str, ...], item: int = 0) -> Any:
    """Follow ``path``; list steps take element ``item`` (modulo the list's length)."""
    for p in path:
        if isinstance(value, list):
            if not value:
                return None
            value = value[item % len(value)]
        elif isinstance(value, dict) and p in value:
            value = value[p]
        else:
            return None
    return value


def fits(schema: dict[str, Any], value: Any) -> bool:
    try:
        compile_schema(schema)(value)
    except Exception:
        return False
    return True


def synth(world: World, tool: str, depth: int = 3, offset: int = 0) -> dict[str, Any] | None:
    """Arguments for ``tool`` in ``world`` (running producers in it), or None.

    Parameter ``i`` takes example ``(i + offset) % n``, so two parameters of one kind (origin,
    destination) get different values, and other offsets try other combinations.
    """
    spec = CORPUS.tools[tool]
    args: dict[str, Any] = {}
    for i, name in enumerate(spec.parameters["required"]):
        schema = spec.param_schema(name)
        kind = CORPUS.kinds.get(schema.get("x-kind", ""))
        if "enum" in schema:
            args[name] = schema["enum"][0]
            continue
        if kind is not None and kind.examples:
            ok = [e for e in kind.examples if fits(schema, e)]
            if ok:
                args[name] = ok[(i + offset) % len(ok)]
                continue
        value = None
        if depth > 0 and kind is not None:
            for prod, path in producers().get(kind.name, []):
                if prod == tool:
                    continue
                pargs = synth(world, prod, depth - 1, offset)
                if pargs is None:
                    continue
                res = world.execute(Call(tool=prod, args=pargs))
                if res.ok:
                    v = _get(res.observation, path, item=i)
                    if v is not None and fits(schema, v):
                        value = v
                        break
        if value is None:
            return None
        args[name] = value
    return args


def test_size_and_coverage():
    tools = CORPUS.tools.values()
    assert len(CORPUS.tools) >= 150
    assert set(DOMAINS) == {t.domain for t in tools}
    for d in DOMAINS:
        assert {t.category for t in tools if t.domain == d} == {"source", "processor", "action"}, d
    shapes = Counter(g.kind for g in CORPUS.groups.values())
    assert len(CORPUS.groups) >= 50 and set(shapes) == {"1-1", "1-N", "N-N"}
    created = {e.collection: t.name for t in tools for e in t.effects if e.op == "create"}
    needed = {p.collection for t in tools for p in t.preconditions}
    stateful = {created[c] for c in created if c in needed}
    assert len(stateful) >= 12


def test_schemas_compile_and_required_params_have_kinds():
    for spec in CORPUS.tools.values():
        compile_schema(spec.returns)
        for name in spec.parameters["required"]:
            assert spec.param_schema(name).get("x-kind") or "enum" in spec.param_schema(name), (
                spec.name,
                name,
            )


def test_chaining_contract():
    prod = producers()
    for spec in CORPUS.tools.values():
        for name in spec.parameters["required"]:
            schema = spec.param_schema(name)
            k = schema.get("x-kind")
            if not k or "enum" in schema:
                continue
            kind = CORPUS.kinds[k]
            if kind.examples:
                assert all(fits(schema, e) for e in kind.examples) or prod.get(k), (spec.name, name)
            else:
                assert prod.get(k), f"{spec.name}.{name}: kind {k} has no examples and no producer"


def test_groups_are_consistent():
    for gid, grp in CORPUS.groups.items():
        assert len(grp.members) >= 2, gid
        for chain in grp.members:
            assert all(CORPUS.tools[t].group == gid for t in chain)
            if grp.output_kind:
                last = CORPUS.tools[chain[-1]]
                assert grp.output_kind in {k for k, _ in kind_paths(last.returns)}, (gid, chain)


def enable(world: World, tool: str, args: dict[str, Any], verdict: Any, offset: int) -> bool:
    """After a failed ``field_equals`` precondition, run a tool whose update effect sets the
    needed field (send the invoice, add an item to the cart) on the same record."""
    spec = CORPUS.tools[tool]
    for pre in spec.preconditions:
        if pre.arg != verdict.param or pre.kind != "field_equals":
            continue
        rec = world.state.get(pre.collection, args[pre.arg]) or {}
        if rec.get(pre.field) == pre.value:
            continue
        for other in CORPUS.tools.values():
            for eff in other.effects:
                if (
                    eff.op == "update"
                    and eff.collection == pre.collection
                    and eff.fields.get(pre.field) == pre.value
                ):
                    oargs = synth(world, other.name, 2, offset)
                    if oargs is None:
                        continue
                    oargs[eff.key] = args[pre.arg]
                    if world.execute(Call(tool=other.name, args=oargs)).ok:
                        return True
    return False


@pytest.mark.parametrize("tool", sorted(CORPUS.tools))
def test_every_tool_runs_validly_and_deterministically(tool):
    for offset in range(6):  # some example combinations are invalid by design (LIS -> LIS)
        world = CORPUS.world(seed=0)
        args = synth(world, tool, offset=offset)
        if args is None:
            continue
        res = world.execute(Call(tool=tool, args=args), commit=False)
        if not res.ok and res.verdict.code.value == "precondition_failed":
            enable(world, tool, args, res.verdict, offset)
        snap = world.snapshot()
        res = world.execute(Call(tool=tool, args=args))
        if res.ok:
            break
    assert args is not None, f"could not build arguments for {tool}"
    assert res.ok, res.verdict
    assert CORPUS.tools[tool].check_output(res.observation).ok
    again = world.execute(Call(tool=tool, args=args), state=snap, commit=False)
    assert again.observation == res.observation


def test_domain_modules_share_one_clock():
    from replan.env.corpus import kinds
    from replan.env.corpus.general import facts

    assert facts.NOW is kinds.CORPUS_NOW
