"""What checking the grammar on the greedy pick first saves (:mod:`replan.models.lazy_grammar`),
against llama-cpp-python's own sampler chain (the grammar over the whole vocabulary at every
token), on SmolLM2 through llama.cpp, in the same run.

For the first NP instance of each of the first ``--tasks`` levels (C1-C4), the script writes a
plan (the plan grammar) and a ReAct executor's first turn (the tool-call JSON schema) both ways
from the same cache state (the same request answered just before, untimed, so only the reply is
timed: llama.cpp's logits depend slightly on how the prompt was evaluated, one batch or a
cached prefix plus the rest, and greedy text can follow them), checks the text is the same, and
prints tokens per second both ways and the ratio of the totals:

    .venv/bin/python benchmarks/bench_lazy_grammar.py [--tasks 2]
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

from bench_revision_prefix import first_np_instances  # beside this script

from replan.env import task_world
from replan.models import lazy_grammar
from replan.models.local import (
    CORES_ENV,
    PLAN_SCHEMA,
    LocalChatModel,
    _listed_tools,
    _llama,
    _turn_schema,
    plan_grammar,
)
from replan.nodes.prompts import executor_messages, planner_messages


def reply(model: LocalChatModel, messages: list[Any], tools: list[Any], lazy: bool) -> tuple:
    """The reply's text, tokens and seconds, the sampler the library's own or ours."""
    llm, _ = _llama(
        str(model.model_path), model.n_ctx, model.n_threads, model.n_threads_batch, model.seed
    )
    llm.__dict__.pop("_init_sampler", None)  # the library's own chain
    if lazy:
        lazy_grammar.install(llm)
    schema = _turn_schema(tools) if tools else PLAN_SCHEMA
    chat = model._render(messages, tools)
    grammar = None if tools else plan_grammar(_listed_tools(messages))
    t0 = time.perf_counter()
    text, usage = model._complete(chat, schema, None, grammar)
    return text, usage["output_tokens"], time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", type=int, default=2, help="NP instances (one per level)")
    ns = ap.parse_args()
    os.environ.setdefault(CORES_ENV, "1")
    model = LocalChatModel()
    totals = {False: [0, 0.0], True: [0, 0.0]}
    for task in first_np_instances(ns.tasks):
        world = task_world(task)
        specs = list(world.tools.values())
        requests = {
            "plan": (planner_messages(task.query, specs), []),
            "ReAct turn": (executor_messages(task.query), [s.to_openai() for s in specs]),
        }
        for name, (messages, tools) in requests.items():
            reply(model, messages, tools, False)  # the same cache state for both: this request
            texts = {}
            for lazy in (False, True):
                texts[lazy], tokens, seconds = reply(model, messages, tools, lazy)
                totals[lazy][0] += tokens
                totals[lazy][1] += seconds
                print(
                    f"{task.task_id} {name}: {'greedy pick first' if lazy else 'library chain'}"
                    f" {tokens} tokens in {seconds:.1f} s ({tokens / seconds:.1f}/s)",
                    flush=True,
                )
            if texts[False] != texts[True]:
                raise SystemExit(f"{task.task_id} {name}: the two samplers wrote different text")
    stock, lazy = (totals[k][0] / totals[k][1] for k in (False, True))
    print(
        f"same text on every request; library chain {stock:.1f} tokens/s, greedy pick first "
        f"{lazy:.1f} tokens/s: {lazy / stock:.2f}x (same run, same cache state)"
    )


if __name__ == "__main__":
    main()
