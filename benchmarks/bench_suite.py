"""Suite generation time: the full ToolMaze-style suite (400 base tasks, 2,000 instances) and
the pararecover-synth suite, from a cold start (no cache), one core.

Generation builds every task's DAG, executes every valid path (twice for s*), probes the
victim's implicit corruption and writes the checker, the query and the five instances. The
baseline, measured in the same run, is the bare cost of *executing* what the suite contains: every
valid path of every base task once in a clean world, with no search, checking or writing — so the
ratio says how much the generator spends beyond running its own output. Target: the full
ToolMaze suite in under 60 s on the 2-core machine; nothing is asserted.

    .venv/bin/python benchmarks/bench_suite.py [--seed 0] [--no-synth] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-synth", action="store_true", help="skip the pararecover-synth suite")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args()

    t0 = time.perf_counter()
    from replan.env.corpus import load_corpus

    corpus = load_corpus()
    t_corpus = time.perf_counter() - t0

    from replan.suites import toolmaze as tm

    t1 = time.perf_counter()
    tasks = tm.generate(seed=args.seed, corpus=corpus)
    t_gen = time.perf_counter() - t1

    # baseline: execute every valid path of every base task once, nothing else
    from replan.env import task_world

    bases = [t for t in tasks if t.mode == "NP"]
    plans = [(t, p) for t in bases for p in tm.path_plans(t)]
    t2 = time.perf_counter()
    calls = 0
    for t, p in plans:
        calls += tm.execute_plan(p, task_world(t, corpus=corpus)).calls
    t_exec = time.perf_counter() - t2

    out = {
        "corpus_tools": len(corpus.tools),
        "corpus_load_s": round(t_corpus, 3),
        "toolmaze_instances": len(tasks),
        "toolmaze_base_tasks": len(bases),
        "toolmaze_generation_s": round(t_gen, 2),
        "baseline_execute_paths_s": round(t_exec, 3),
        "baseline_paths": len(plans),
        "baseline_calls": calls,
        "ratio_generation_over_baseline": round(t_gen / t_exec, 1) if t_exec else None,
        "target_s": 60,
        "within_target": t_gen < 60,
    }
    if not args.no_synth:
        from replan.suites.pararecover_synth import generate_synth

        t3 = time.perf_counter()
        synth = generate_synth(seed=args.seed, corpus=corpus)  # reuses the cached ToolMaze tasks
        out["synth_instances"] = len(synth)
        out["synth_generation_s"] = round(time.perf_counter() - t3, 2)
    if args.json:
        print(json.dumps(out))
        return
    w = sys.stdout.write
    w(f"corpus: {out['corpus_tools']} tools, loaded in {out['corpus_load_s']} s\n")
    w(
        f"toolmaze: {out['toolmaze_instances']} instances ({out['toolmaze_base_tasks']} base tasks)"
        f" in {out['toolmaze_generation_s']} s  (target < 60 s: "
        f"{'met' if out['within_target'] else 'MISSED'})\n"
    )
    w(
        f"baseline: executing the {out['baseline_paths']} valid paths once ({calls} calls) takes "
        f"{out['baseline_execute_paths_s']} s; generation = {out['ratio_generation_over_baseline']}x"
        " the baseline\n"
    )
    if "synth_instances" in out:
        w(
            f"pararecover-synth: {out['synth_instances']} instances in {out['synth_generation_s']} s\n"
        )


if __name__ == "__main__":
    main()
