"""The in-place run through ``langsmith.evaluate``: your dataset, your agent under a fault mode,
replan's evaluators.

    from langsmith import evaluate
    from replan.inplace.langsmith import langsmith_target, langsmith_evaluators, summary_evaluator

    evaluate(
        langsmith_target(make_agent, tools, mode="P1"),
        data="my-dataset",
        evaluators=langsmith_evaluators(),
        summary_evaluators=[summary_evaluator()],
    )

The target runs one episode per example (the example's inputs are the task's input) with the
mode's seeded fault and returns ``{"answer", "episode"}``. Success needs the example's reference
output, which only evaluators see, so the evaluators judge it (the answer must state the
reference value; a sentinel in the answer is never a success) and then score the episode with
replan's prefix and recovery metrics. Offline: ``upload_results=False`` and a client pointed
anywhere (nothing is sent).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from replan.core.task import Task
from replan.core.trace import Episode
from replan.env.tool_faults import FaultSchedule
from replan.env.tool_wrapper import as_base_tool, async_only
from replan.evaluators import score_one
from replan.evaluators.perturbation import toolmaze_feedback
from replan.evaluators.prefix import prefix_feedback
from replan.evaluators.stats import has_interval
from replan.inplace.evaluate import (
    EpisodeJob,
    carried_sentinel,
    core_task,
    mode_table,
    run_episode,
)
from replan.inplace.tasks import InPlaceTask, reference_value


def _task_of(inputs: Mapping[str, Any], reference: Any = None) -> InPlaceTask:
    raw: Any = dict(inputs)
    for k in ("input", "query", "question"):
        if k in inputs:
            raw = inputs[k]
            break
    else:
        if len(inputs) == 1 and "messages" not in inputs:
            raw = next(iter(inputs.values()))
    tid = (
        "ls-"
        + hashlib.sha256(json.dumps(raw, sort_keys=True, default=str).encode()).hexdigest()[:10]
    )
    if reference is None:
        return InPlaceTask(id=tid, input=raw, check=lambda _state: False)
    return InPlaceTask(id=tid, input=raw, expected=reference_value(reference, f"example {tid}"))


def langsmith_target(
    agent_or_factory: Any,
    tools: Sequence[Any],
    *,
    mode: str = "P1",
    target: str | None = None,
    groups: Mapping[str, Sequence[str]] | None = None,
    kind: str | None = None,
    field: str | None = None,
    schedule_seed: int = 0,
    seed: int = 0,
    name: str = "agent",
    recursion_limit: int = 50,
    trace_agent: bool = True,
) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A ``langsmith.evaluate`` target: one episode of your agent under ``mode`` per example.

    ``trace_agent=False`` keeps the agent's own runs out of LangSmith (``langsmith.evaluate``
    traces its target's children even with ``upload_results=False``)."""
    base = [as_base_tool(t, f"tools[{i}]") for i, t in enumerate(tools)]
    names = tuple(t.name for t in base)
    use_async = any(async_only(t) for t in base)

    def run(inputs: dict[str, Any]) -> dict[str, Any]:
        task = _task_of(inputs)
        sched = None
        if mode != "NP":
            sched = FaultSchedule(
                mode=mode,
                target=target,
                groups=dict(groups or {}),
                tools=names,
                kind=kind,
                field=field,
                seed=schedule_seed,
            )
        core = core_task(task, mode, names, sched)
        job = EpisodeJob(name, agent_or_factory, task, core, mode, seed, sched)
        if trace_agent:
            ep = run_episode(job, base, use_async=use_async, recursion_limit=recursion_limit)
        else:
            from langsmith import tracing_context

            with tracing_context(enabled=False):
                ep = run_episode(job, base, use_async=use_async, recursion_limit=recursion_limit)
        ep = ep.model_copy(
            update={"success": None}
        )  # judged by the evaluators (they see the reference)
        return {"answer": ep.final_answer, "episode": json.loads(ep.to_json())}

    return run


def _scored(inputs: Any, outputs: Any, reference_outputs: Any, groups: Any) -> Any:
    ep = Episode.model_validate(outputs["episode"])
    task = _task_of(inputs, reference_outputs or None)
    success = False
    if ep.final_answer:
        success, _ = task.judge(None, ep.final_answer)
        if carried_sentinel(ep.steps, ep.final_answer) is not None:
            success = False
    ep = ep.model_copy(update={"success": success})
    core = Task.model_validate(ep.metadata["task"])
    return score_one(ep, core)  # the stored task carries the declared groups


def langsmith_evaluators(
    groups: Mapping[str, Sequence[str]] | None = None,
) -> list[Callable[..., dict[str, Any]]]:
    """Per-run evaluators: success against the reference output, then ``prefix.*`` and
    ``toolmaze.*`` feedback (exposed, recovered, sentinel propagated, C_rec)."""
    gs = {k: list(v) for k, v in (groups or {}).items()}

    def replan_inplace(inputs: dict, outputs: dict, reference_outputs: dict) -> dict[str, Any]:
        sc = _scored(inputs, outputs, reference_outputs, gs)
        feedback = prefix_feedback(sc.prefix) + toolmaze_feedback(sc.recovery)
        return {"results": [f.to_dict() for f in feedback]}

    return [replan_inplace]


def summary_evaluator(
    groups: Mapping[str, Sequence[str]] | None = None,
) -> Callable[[list, list, list], dict[str, Any]]:
    """TSR, PRR (with exposed count) and TER of the experiment, with 95% intervals."""
    gs = {k: list(v) for k, v in (groups or {}).items()}

    def replan_inplace_summary(
        inputs: list[dict], outputs: list[dict], reference_outputs: list[dict]
    ) -> dict[str, Any]:
        scores = [
            _scored(i, o, r, gs) for i, o, r in zip(inputs, outputs, reference_outputs, strict=True)
        ]
        results = []
        for mode, row in mode_table(scores).items():
            for key in ("tsr", "prr", "ter"):
                est = row.get(key)
                if not est or est.get("value") is None:
                    continue
                extra = f", exposed={est['exposed']}" if key == "prr" else ""
                results.append(
                    {
                        "key": f"inplace.{key}.{mode}",
                        "score": float(est["value"]),
                        "comment": (
                            f"95% CI [{est['low']:.3f}, {est['high']:.3f}] "
                            if has_interval(est)
                            else "no interval (too few runs) "
                        )
                        + f"(n={est['n']}{extra})",
                    }
                )
        return {"results": results}

    return replan_inplace_summary


class LangSmithUnreachable(ConnectionError):
    """LangSmith could not be reached (the message is one line naming the endpoint).
    ``episodes``: the episodes that ran before it was lost (none when it was down from the
    start: then nothing ran)."""

    def __init__(self, message: str, episodes: Sequence[Episode] = ()) -> None:
        super().__init__(message)
        self.episodes = list(episodes)


def _connection_lost(exc: BaseException) -> bool:
    """Whether an exception (or one it was raised from) is a connection failure."""
    import requests
    from langsmith.utils import LangSmithConnectionError

    kinds = (ConnectionError, TimeoutError, requests.ConnectionError, requests.Timeout)
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, (*kinds, LangSmithConnectionError)):
            return True
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return False


def evaluate_in_langsmith(
    agent_or_factory: Any,
    tools: Sequence[Any],
    data: Any,
    *,
    mode: str = "P1",
    groups: Mapping[str, Sequence[str]] | None = None,
    client: Any = None,
    upload_results: bool = True,
    experiment_prefix: str = "replan-inplace",
    max_concurrency: int | None = 0,
    **target_options: Any,
) -> Any:
    """``langsmith.evaluate`` of your agent under ``mode`` on ``data`` with replan's evaluators
    (the agent's own runs are traced only when results are uploaded).

    When LangSmith is needed (uploading, or ``data`` is a dataset to fetch) its endpoint is
    probed first: one that does not answer raises :class:`LangSmithUnreachable` within seconds,
    before any episode runs. A connection lost during the experiment raises it too, with the
    episodes that ran in its ``episodes``."""
    from langsmith import Client, evaluate
    from langsmith.schemas import Example

    from replan.runner.langsmith import endpoint_of, probe, short_error

    target_options.setdefault("trace_agent", upload_results)
    run_one = langsmith_target(agent_or_factory, tools, mode=mode, groups=groups, **target_options)
    ran: list[Episode] = []

    def target(inputs: dict[str, Any]) -> dict[str, Any]:
        out = run_one(inputs)
        ran.append(Episode.model_validate(out["episode"]))
        return out

    local = isinstance(data, (list, tuple)) and all(isinstance(x, Example) for x in data)
    if upload_results or not local:
        client = client if client is not None else Client()
        why = probe(client)
        if why is not None:
            raise LangSmithUnreachable(
                f"LangSmith at {endpoint_of(client)} is unreachable ({why}); nothing was run "
                "or sent (check LANGSMITH_ENDPOINT and the network, or evaluate offline: "
                "upload_results=False with a list of Examples)"
            )
    try:
        return evaluate(
            target,
            data=data,
            evaluators=langsmith_evaluators(groups),
            summary_evaluators=[summary_evaluator(groups)],
            client=client,
            upload_results=upload_results,
            experiment_prefix=experiment_prefix,
            max_concurrency=max_concurrency,
        )
    except Exception as exc:
        if not _connection_lost(exc):
            raise
        where = endpoint_of(client) if client is not None else "LangSmith"
        raise LangSmithUnreachable(
            f"LangSmith at {where} was lost during the experiment ({short_error(exc)}); the "
            f"{len(ran)} episode(s) that ran are kept in this error's .episodes",
            ran,
        ) from exc


__all__ = [
    "LangSmithUnreachable",
    "evaluate_in_langsmith",
    "langsmith_evaluators",
    "langsmith_target",
    "summary_evaluator",
]
