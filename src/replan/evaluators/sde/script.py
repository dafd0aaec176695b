"""The script items and execution metrics: E5 and tool-use efficiency (see the package
docstring for the zero rules)."""

from __future__ import annotations

from typing import Any

from replan.core.task import Task
from replan.core.trace import EndReason, Episode


def _executed(episode: Episode, task: Task | None, key: str) -> int:
    """Rounds or calls (``key``: ``rounds_executed`` / ``calls_executed``) run before the agent
    took over: the replan-point run's episode metadata, else the task's replan point, else 0."""
    if key in episode.metadata:
        return int(episode.metadata[key] or 0)
    point = task.replan_point if task is not None else None
    return int(getattr(point, key) or 0) if point is not None else 0


def _ground_truth(episode: Episode, task: Task | None, field: str, key: str) -> Any:
    """G or c*: the task's typed field; for an episode scored without its task, the upstream
    name (``round_gt`` / ``funcall_times_gt``) in the episode's metadata (``replan score``)."""
    value = getattr(task, field) if task is not None else None
    return episode.metadata.get(key) if value is None else value


def _counts_response(episode: Episode, task: Task | None) -> bool:
    """Whether G counts the response as a round: the task's field; for an episode scored
    without its task, ``rounds_include_response`` in the episode's metadata."""
    if "rounds_include_response" in episode.metadata:
        return bool(episode.metadata["rounds_include_response"])
    return task.rounds_include_response if task is not None else False


def e5_score(
    episode: Episode, task: Task | None, s5: float | None, success: bool | None
) -> tuple[float | None, str]:
    """E5 = S·min(1, G/T) with the zero rules of the module docstring; (score, why)."""
    g = _ground_truth(episode, task, "optimal_rounds", "round_gt")
    if g is None:
        return None, "no optimal round count G for this task"
    if s5 == 0:
        return 0.0, "the replan does not parse"
    if episode.end_reason is not EndReason.ANSWERED:
        return 0.0, f"the run ended with {episode.end_reason.value}"
    if not success:
        return 0.0, "the run did not succeed"
    t = _executed(episode, task, "rounds_executed") + episode.rounds
    if _counts_response(episode, task):
        # ParaRecover's G (round_gt) counts the response as a round (a chain of six calls has 7):
        # count T the same way, so that a perfect run scores 1
        t += 1
    ratio = 1.0 if t == 0 else min(1.0, int(g) / t)
    return ratio, f"G={g}, T={t}"


def tool_use_efficiency(
    episode: Episode, task: Task | None, success: bool | None
) -> tuple[float | None, str]:
    """S·min(1, gt calls / actual calls); (score, why)."""
    gt = _ground_truth(episode, task, "min_calls", "funcall_times_gt")
    if gt is None:
        return None, "no ground-truth call count for this task"
    actual = _executed(episode, task, "calls_executed") + len(episode.steps)
    if not success:
        return 0.0, "the run did not succeed"
    ratio = 1.0 if actual == 0 else min(1.0, int(gt) / actual)
    return ratio, f"gt={gt}, actual={actual}"
