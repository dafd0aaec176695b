"""The scorer builds a task's world once per task id while it stays among the
``WORLD_CACHE_SIZE`` most recently scored tasks, and never reuses one for another task."""

from __future__ import annotations

import replan.evaluators.scoring as ev
from replan.suites import load_suite


def test_world_cache_by_task_id(monkeypatch):
    built: list[str] = []

    def fake_world(task):
        built.append(task.task_id)
        return object()

    monkeypatch.setattr(ev, "task_world_or_none", fake_world)
    monkeypatch.setattr(ev, "_WORLDS", ev.OrderedDict())
    monkeypatch.setattr(ev, "WORLD_CACHE_SIZE", 3)
    a, b, c, d = load_suite("toolmaze", per_level=1)[:4]
    for _model in range(4):  # revisited after the other tasks, as a run of several models
        for t in (a, b, c):
            ev._world_for(t)
    assert built == [a.task_id, b.task_id, c.task_id]
    same = a.model_copy()  # equal content, another object (a task sent to a worker process)
    assert ev._world_for(same) is ev._world_for(a) and len(built) == 3
    ev._world_for(d)  # past the bound: the least recently used (b) goes
    ev._world_for(b)
    assert built[3:] == [d.task_id, b.task_id]
    other = a.model_copy(update={"query": "something else"})  # same id, another task
    ev._world_for(other)
    assert built[-1] == a.task_id and len(built) == 6
