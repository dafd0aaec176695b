"""The evaluation graph: evaluators fan out over one Episode (Send) and their feedback gathers."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import pytest

from replan.core.taxonomy import VerdictCode
from replan.core.trace import Call, Episode, Step, Verdict
from replan.graphs import build_evaluation_graph, evaluate_episode, run_episode


def _episode() -> Episode:
    return Episode(
        episode_id="e1",
        task_id="t1",
        steps=[
            Step(index=0, round=1, call=Call(tool="a")),
            Step(
                index=1,
                round=1,
                call=Call(tool="b"),
                verdict=Verdict(code=VerdictCode.TYPE_MISMATCH),
            ),
            Step(index=2, round=2, call=Call(tool="c")),
        ],
        final_answer="ok",
    )


def first_error(episode, task):
    fed = next((s.index + 1 for s in episode.steps if not s.verdict.ok), None)
    return {"key": "prefix.fed", "score": fed, "comment": "1-based"}


def counts(episode, task):
    return [
        {"key": "steps", "score": len(episode.steps), "comment": None},
        {"key": "rounds", "score": episode.rounds, "comment": None},
    ]


def langsmith_shape(episode, task):
    return {"results": [{"key": "answered", "score": episode.final_answer is not None}]}


def attribute_shape(episode, task):
    return SimpleNamespace(key="task.known", score=task is not None, comment="has task")


def test_feedback_of_all_evaluators_is_gathered():
    graph = build_evaluation_graph([first_error, counts, langsmith_shape, attribute_shape])
    out = graph.invoke({"episode": _episode(), "task": None})["results"]
    assert [(f["key"], f["score"]) for f in out] == [
        ("answered", True),
        ("prefix.fed", 2),
        ("rounds", 2),
        ("steps", 3),
        ("task.known", False),
    ]


def test_evaluators_run_in_one_superstep():
    active, peak, lock = [0], [0], threading.Lock()

    def slow(name):
        def evaluator(episode, task):
            with lock:
                active[0] += 1
                peak[0] = max(peak[0], active[0])
            time.sleep(0.1)
            with lock:
                active[0] -= 1
            return {"key": name, "score": 1}

        return evaluator

    graph = build_evaluation_graph({f"e{i}": slow(f"e{i}") for i in range(3)})
    steps = [
        ev["step"]
        for ev in graph.stream({"episode": _episode()}, stream_mode="debug")
        if ev["type"] == "task" and ev["payload"]["name"] == "evaluate"
    ]
    assert len(steps) == 3 and len(set(steps)) == 1
    assert peak[0] == 3


def test_a_failing_evaluator_becomes_error_feedback():
    def broken(episode, task):
        raise RuntimeError("judge unavailable")

    def not_feedback(episode, task):
        return "great episode"

    out = evaluate_episode(_episode(), None, {"judge": broken, "vibes": not_feedback, "c": counts})
    by_key = {f["key"]: f for f in out}
    assert by_key["judge.error"]["score"] is None
    assert "RuntimeError: judge unavailable" in by_key["judge.error"]["comment"]
    assert "'vibes'" in by_key["vibes.error"]["comment"]
    assert by_key["steps"]["score"] == 3  # the others still count


def test_evaluator_names_and_bad_arguments():
    graph = build_evaluation_graph([counts, counts])
    out = graph.invoke({"episode": _episode()})["results"]
    assert [f["key"] for f in out] == ["rounds", "rounds", "steps", "steps"]
    with pytest.raises(ValueError, match="at least one evaluator"):
        build_evaluation_graph([])
    with pytest.raises(TypeError, match="'x' is not callable"):
        build_evaluation_graph({"x": 3})


def test_evaluating_a_real_episode(kit, travel_task):
    ep = run_episode("react", kit.ScriptedChatModel(fn=kit.travel_react_policy), travel_task)

    def success(episode, task):
        return {"key": "success", "score": float(episode.success), "comment": task.task_id}

    out = evaluate_episode(ep, travel_task, [success, first_error, counts])
    assert {f["key"]: f["score"] for f in out} == {
        "success": 1.0,
        "prefix.fed": None,
        "steps": 3,
        "rounds": 3,
    }
