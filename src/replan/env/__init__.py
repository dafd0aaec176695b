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


__all__ = ["ExecResult", "FaultInjector", "World", "WorldState", "task_world"]
