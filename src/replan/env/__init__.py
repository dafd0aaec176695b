"""The deterministic world: execution, verification, perturbation, and the tool corpus."""

from __future__ import annotations

from typing import Any

from replan.core.task import Task
from replan.env.world import ExecResult, FaultInjector, World, WorldState


def task_world(task: Task, faults: FaultInjector | None = None, corpus: Any = None) -> World:
    """The world a task runs in: its tools only, its start state, its seed.

    ``faults`` is the task's fault injector (``replan.env.perturb``) or ``None`` for a clean
    world, as used when replaying a trace (recorded perturbations already say which calls failed).
    """
    if corpus is None:
        # late: the corpus loads only when no corpus is given (env modules import this package)
        from replan.env.corpus import load_corpus

        corpus = load_corpus()
    missing = [t for t in task.tools if t not in corpus.tools]
    if missing:
        raise ValueError(f"task {task.task_id}: tools not in the corpus: {missing}")
    state = (
        WorldState.from_dict(task.initial_state)
        if task.initial_state is not None
        else corpus.initial_state(task.world_seed)
    )
    return World(
        {t: corpus.tools[t] for t in task.tools}, state, seed=task.world_seed, faults=faults
    )


def replan_point_world(task: Task, seed: int = 0, corpus: Any = None) -> World:
    """The world a run from ``task``'s replan point continues in: the corpus tools in the world
    after the history (``ReplanPoint.state``), or, for tools with no implementation
    (ParaRecover's tool lists, ``Task.tool_specs``), a
    :class:`~replan.env.simulators.SimulatedWorld` whose simulator is seeded with ``seed``."""
    point = task.replan_point
    if point is None or not point.starts_mid_run:
        raise ValueError(f"task {task.task_id} has no replan point to start from")
    if point.state is None:
        # late: the simulators import this package's world module
        from replan.core.tools import ToolSpec
        from replan.env.simulators import SimulatedWorld

        return SimulatedWorld(ToolSpec.from_pararecover(task.tool_specs), seed)
    world = task_world(task, corpus=corpus)
    world.initial_state = world.state = WorldState.from_dict(point.state)
    return world


__all__ = [
    "ExecResult",
    "FaultInjector",
    "World",
    "WorldState",
    "replan_point_world",
    "task_world",
]
