"""The evaluation graph: fan an Episode out to evaluator nodes (``Send``), gather their feedback.

An evaluator is any callable ``(episode, task) -> feedback`` where feedback is a dict
``{"key", "score", "comment"}``, a list of them, ``{"results": [...]}`` (the LangSmith shape)
or objects with ``key``/``score``/``comment`` attributes. All evaluators of an episode run in
one superstep; an evaluator that raises, or returns something that is not feedback, yields one
feedback ``<name>.error`` with ``score`` ``None`` and the reason — the others still count.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Checkpointer, Send

from replan.core.task import Task
from replan.core.trace import Episode
from replan.nodes.events import emit
from replan.nodes.llm import describe_error

Evaluator = Callable[[Episode, Task | None], Any]


class EvaluationState(TypedDict, total=False):
    episode: Episode
    task: Task | None
    feedback: Annotated[list[dict[str, Any]], operator.add]
    results: list[dict[str, Any]]


def normalise_feedback(name: str, raw: Any) -> list[dict[str, Any]]:
    """An evaluator's return value as a list of ``{"key", "score", "comment"}`` dicts.

    Raises ``ValueError`` naming the evaluator when the value is not feedback.
    """
    if isinstance(raw, Mapping) and "results" in raw and "key" not in raw:
        raw = raw["results"]
    items = [raw] if isinstance(raw, Mapping) or hasattr(raw, "key") else raw
    if items is None or isinstance(items, (str, bytes)) or not isinstance(items, Sequence):
        raise ValueError(f"evaluator {name!r} returned {type(raw).__name__}, not feedback")
    out = []
    for i, item in enumerate(items):
        if isinstance(item, Mapping):
            data = dict(item)
        elif hasattr(item, "key"):
            data = {k: getattr(item, k, None) for k in ("key", "score", "comment")}
        else:
            raise ValueError(f"evaluator {name!r}: item {i} is {type(item).__name__}, not feedback")
        key, score = data.get("key"), data.get("score")
        if not isinstance(key, str) or not key:
            raise ValueError(f"evaluator {name!r}: item {i} has no string 'key'")
        if score is not None and not isinstance(score, (int, float, bool)):
            raise ValueError(
                f"evaluator {name!r}: feedback {key!r} has a non-numeric score {score!r}"
            )
        out.append({**data, "key": key, "score": score, "comment": data.get("comment")})
    return out


def _names(evaluators: Mapping[str, Evaluator] | Sequence[Evaluator]) -> dict[str, Evaluator]:
    if isinstance(evaluators, Mapping):
        named = dict(evaluators)
    else:
        named = {}
        for fn in evaluators:
            base = getattr(fn, "__name__", None) or type(fn).__name__
            name, n = base, 2
            while name in named:
                name, n = f"{base}_{n}", n + 1
            named[name] = fn
    if not named:
        raise ValueError("the evaluation graph needs at least one evaluator")
    for name, fn in named.items():
        if not callable(fn):
            raise TypeError(f"evaluator {name!r} is not callable")
    return named


def build_evaluation_graph(
    evaluators: Mapping[str, Evaluator] | Sequence[Evaluator],
    *,
    checkpointer: Checkpointer = None,
) -> CompiledStateGraph:
    """``START ─Send×evaluators→ evaluate → gather → END``; input ``{"episode", "task"}``,
    output ``results`` (all feedback, ordered by key)."""
    named = _names(evaluators)

    def fan_out(state: EvaluationState) -> list[Send]:
        return [
            Send("evaluate", {"name": n, "episode": state["episode"], "task": state.get("task")})
            for n in named
        ]

    def evaluate(job: dict[str, Any]) -> dict[str, Any]:
        name = job["name"]
        try:
            feedback = normalise_feedback(name, named[name](job["episode"], job.get("task")))
        except Exception as exc:
            feedback = [{"key": f"{name}.error", "score": None, "comment": describe_error(exc)}]
        for fb in feedback:
            emit("feedback", evaluator=name, key=fb["key"], score=fb["score"])
        return {"feedback": feedback}

    def gather(state: EvaluationState) -> dict[str, Any]:
        return {"results": sorted(state.get("feedback") or [], key=lambda f: f["key"])}

    builder = StateGraph(EvaluationState)
    builder.add_node("evaluate", evaluate)
    builder.add_node("gather", gather)
    builder.add_conditional_edges(START, fan_out, ["evaluate"])
    builder.add_edge("evaluate", "gather")
    builder.add_edge("gather", END)
    return builder.compile(checkpointer=checkpointer, name="evaluation")


def evaluate_episode(
    episode: Episode,
    task: Task | None,
    evaluators: Mapping[str, Evaluator] | Sequence[Evaluator],
) -> list[dict[str, Any]]:
    """Run the evaluation graph once; the gathered feedback, ordered by key."""
    graph = build_evaluation_graph(evaluators)
    return graph.invoke({"episode": episode, "task": task})["results"]


__all__ = [
    "EvaluationState",
    "Evaluator",
    "build_evaluation_graph",
    "evaluate_episode",
    "normalise_feedback",
]
