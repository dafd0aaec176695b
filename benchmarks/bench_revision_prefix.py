"""What a Dual-Loop revision costs a prefix-caching server: the revision tag where it is now
(first line of the findings message) against the tag as the first line of the system message
(the wire format before 2026-12-02), on SmolLM2 through llama.cpp.

A revision request is the planning conversation continued: the planning request, the plan, then
the verifier's findings. llama.cpp (like vLLM's prefix cache and providers' prompt caching)
evaluates only the tokens after the longest prefix it evaluated last, so where the request's tag
sits decides how much of the conversation is evaluated again. For the first NP instance of each of
the first ``--tasks`` levels (C1-C4), the script asks SmolLM2 for a plan
(grammar-constrained, as in a run), checks it with the verifier, and, from the same cache state
(the planning conversation with its plan just evaluated), times the revision request's prompt
evaluation in both formats (one token generated, so the time is the prompt's, not the reply's):

    .venv/bin/python benchmarks/bench_revision_prefix.py [--tasks 2]

It prints per instance the prompt's tokens and both times, and the ratio of the totals
(tag first / tag last), measured in the same run on the same machine. Instances whose plan draws
no finding are skipped (there is no revision to make).
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from replan.core.plan import Plan
from replan.core.wire import TAGS
from replan.env import task_world
from replan.env.verifier import verify
from replan.models.local import CORES_ENV, LocalChatModel, _llama
from replan.nodes.prompts import planner_messages, revision_messages
from replan.suites import load_suite


def tag_first(messages: list[BaseMessage]) -> list[BaseMessage]:
    """The same revision request in the earlier wire format: the revision tag replaces the
    planning tag on the system message's first line; the findings message has no tag."""
    system, *rest = messages
    body = str(system.content).split("\n", 1)[1]
    last = rest[-1]
    findings = str(last.content).split("\n", 1)[1]
    return [
        SystemMessage(content=f"{TAGS['revise']}\n{body}"),
        *rest[:-1],
        HumanMessage(content=findings),
    ]


def prompt_seconds(model: LocalChatModel, messages: list[BaseMessage]) -> tuple[float, int]:
    """Seconds to evaluate ``messages`` as a prompt (one token generated), and its tokens."""
    llama, lock = _llama(
        str(model.model_path), model.n_ctx, model.n_threads, model.n_threads_batch, model.seed
    )
    with lock:
        t0 = time.perf_counter()
        out = llama.create_chat_completion(
            messages=model._render(messages, []), max_tokens=1, temperature=0.0
        )
        return time.perf_counter() - t0, int(out["usage"]["prompt_tokens"])


def first_np_instances(n: int) -> list[Any]:
    """The first NP instance of each of the first ``n`` ToolMaze levels (C1, C2, ...)."""
    picked: dict[str | None, Any] = {}
    for t in load_suite("toolmaze"):
        if t.mode == "NP":
            picked.setdefault(t.level, t)
    return sorted(picked.values(), key=lambda t: t.task_id)[:n]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", type=int, default=2, help="NP instances (one per level)")
    ns = ap.parse_args()
    os.environ.setdefault(CORES_ENV, "1")
    model = LocalChatModel()
    rows = []
    for task in first_np_instances(ns.tasks):
        world = task_world(task)
        plan_request = planner_messages(task.query, list(world.tools.values()))
        reply = model.invoke(plan_request)
        text = str(reply.content)
        parsed = Plan.parse(text)
        findings = verify(parsed, world.tools, world) if isinstance(parsed, Plan) else []
        if not findings:
            print(f"{task.task_id}: the plan drew no finding; skipped")
            continue
        revision = revision_messages(plan_request, text, findings)
        conversation = [*plan_request, revision[len(plan_request)]]
        times = {}
        for name, msgs in (("tag last", revision), ("tag first", tag_first(revision))):
            # the cache: the planning conversation, its plan included
            _, shared = prompt_seconds(model, conversation)
            times[name], tokens = prompt_seconds(model, msgs)
        rows.append((task.task_id, tokens, times["tag first"], times["tag last"]))
        print(
            f"{task.task_id}: revision prompt {tokens} tokens, {shared} of them the planning "
            f"conversation ({len(findings)} findings); tag first {times['tag first']:.1f} s, "
            f"tag last {times['tag last']:.1f} s"
        )
    if not rows:
        raise SystemExit("bench_revision_prefix: no plan drew a finding; nothing to compare")
    first = sum(r[2] for r in rows)
    last = sum(r[3] for r in rows)
    print(
        f"{len(rows)} revision(s): tag first {first:.1f} s, tag last {last:.1f} s; "
        f"ratio {first / last:.1f}x (prompt evaluation, same cache state, same run)"
    )


if __name__ == "__main__":
    main()
