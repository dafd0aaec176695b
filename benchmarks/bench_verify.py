"""Call verdicts per second for the World, against a fresh ``jsonschema.validate`` per call.

Both sides judge the same calls (valid ones and one mutation of each kind) in the same run; the
baseline only validates the schema, while the World also resolves references and checks
preconditions, so the ratio understates the gap. Target: >= 10x.

    .venv/bin/python benchmarks/bench_verify.py [--calls 20000]
"""

from __future__ import annotations

import argparse
import random
import time

import jsonschema

from replan.core.trace import Call
from replan.env.corpus import load_corpus


def sample_calls(n: int, seed: int = 0) -> list[Call]:
    """Valid literal calls built from kind examples, plus mutated ones (names, types, values)."""
    corpus = load_corpus()
    rng = random.Random(seed)
    base: list[Call] = []
    for spec in corpus.tools.values():
        args = {}
        for name, schema in spec.parameters["properties"].items():
            kind = corpus.kinds.get(schema.get("x-kind", ""))
            if "enum" in schema:
                args[name] = schema["enum"][0]
            elif kind is not None and kind.examples:
                args[name] = kind.examples[0]
            elif name in spec.required:
                args[name] = "X-1"
        base.append(Call(tool=spec.name, args=args))
    calls = []
    for i in range(n):
        c = base[i % len(base)]
        r = rng.random()
        if r < 0.2 and c.args:
            k = rng.choice(sorted(c.args))
            calls.append(Call(tool=c.tool, args={**c.args, k: {"wrong": "type"}}))
        elif r < 0.3 and c.args:
            k = rng.choice(sorted(c.args))
            calls.append(
                Call(tool=c.tool, args={(k + "_x" if a == k else a): v for a, v in c.args.items()})
            )
        else:
            calls.append(c)
    return calls


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=20000)
    ns = ap.parse_args()
    corpus = load_corpus()
    world = corpus.world()
    calls = sample_calls(ns.calls)
    for c in calls[
        :500
    ]:  # warm the compiled validators (compiled once, reused: that is the design)
        world.check(c)

    t0 = time.perf_counter()
    ok_world = sum(world.check(c)[0].ok for c in calls)
    t_world = time.perf_counter() - t0

    n_base = max(1, len(calls) // 10)  # the baseline is slow; time a tenth and scale per call
    t0 = time.perf_counter()
    ok_base = 0
    for c in calls[:n_base]:
        try:
            jsonschema.validate(c.args, corpus.tools[c.tool].parameters)
            ok_base += 1
        except jsonschema.ValidationError:
            pass
    t_base = time.perf_counter() - t0

    world_rate = len(calls) / t_world
    base_rate = n_base / t_base
    print(f"calls judged:            {len(calls)} ({ok_world} ok)")
    print(f"World.check verdicts/s:  {world_rate:,.0f}")
    print(f"fresh jsonschema.validate/s: {base_rate:,.0f} (on {n_base} calls, {ok_base} valid)")
    print(f"ratio:                   {world_rate / base_rate:.1f}x (target >= 10x)")


if __name__ == "__main__":
    main()
