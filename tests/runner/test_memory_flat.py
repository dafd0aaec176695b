"""A run's memory is flat in its number of episodes: the runner lets go of each episode once it
is handed over (stored), instead of holding every one until the run ends."""

from __future__ import annotations

import asyncio
import gc
import weakref

import pytest

from replan.core.task import PackedTask, Task
from replan.core.trace import Episode
from replan.runner import experiment
from replan.runner.experiment import Job, RunConfig, play
from replan.suites import load_suite


class Tracked(Episode):
    """An episode that can be watched with a weak reference."""


def test_play_holds_no_episode_it_handed_over(monkeypatch: pytest.MonkeyPatch) -> None:
    task = load_suite("toolmaze", per_level=1)[0]
    jobs = [Job(task, "react", "simulated:competent", seed) for seed in range(60)]

    async def fake_run_job(job: Job, cfg: RunConfig, agent: object = None) -> Episode:
        await asyncio.sleep(0)
        return Tracked(episode_id=job.key, task_id=job.task.task_id, seed=job.seed)

    monkeypatch.setattr(experiment, "run_job", fake_run_job)
    handed: list[weakref.ref] = []
    alive_late: list[int] = []

    def done(index: int, job: Job, ep: Episode) -> None:
        handed.append(weakref.ref(ep))
        if len(handed) == 50:
            gc.collect()
            alive_late.append(sum(r() is not None for r in handed[:-1]))

    asyncio.run(play(jobs, RunConfig(agents=["react"]), concurrency=3, done=done))
    assert len(handed) == 60
    # after 50 episodes: at most the ones still in the workers' hands (3), not all 49
    assert len(alive_late) == 1 and alive_late[0] <= 3, alive_late


def test_play_without_done_returns_every_episode_in_job_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    task = load_suite("toolmaze", per_level=1)[0]
    jobs = [Job(task, "react", "simulated:competent", seed) for seed in range(7)]

    async def fake_run_job(job: Job, cfg: RunConfig, agent: object = None) -> Episode:
        await asyncio.sleep(0.01 * (7 - job.seed))  # later jobs end first
        return Episode(episode_id=job.key, task_id=job.task.task_id, seed=job.seed)

    monkeypatch.setattr(experiment, "run_job", fake_run_job)
    eps = asyncio.run(play(jobs, RunConfig(agents=["react"]), concurrency=3))
    assert [e.seed for e in eps] == list(range(7))


def test_every_hundredth_scoring_hands_free_heap_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """glibc keeps the memory an episode freed in its arenas: every ``TRIM_EVERY`` episodes
    scored, the process hands the free pages back (``malloc_trim``), so its RSS stays flat."""
    task = load_suite("toolmaze", per_level=1)[0]
    job = Job(task, "react", "simulated:competent", 0)
    ep = experiment.failed_episode(job, experiment.EndReason.CRASHED, "a crash")
    trims: list[int] = []
    monkeypatch.setattr(experiment, "_malloc_trim", lambda: trims.append)
    monkeypatch.setattr(experiment, "TRIM_EVERY", 3)
    monkeypatch.setattr(experiment, "_scored_here", [0])
    for _ in range(7):
        experiment.score_rows(ep, task)
    assert trims == [0, 0]  # after the 3rd and the 6th


def _live_tasks() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, Task))


def test_the_driver_holds_its_tasks_packed_and_a_consumer_parses_one(tmp_path, monkeypatch):
    """A run holds every selected task from start to end: packed (its JSON text), not parsed
    (7 kB against 33 to 73 kB a task: issue 32 §5, 144 MB of a 2,000-task driver). While the
    backend runs, no parsed task of the run is alive in the driver; the episode's consumer
    (playing it, scoring it) parses it, and gets the very task the suite defines."""
    from replan.evaluators import scoring

    monkeypatch.setattr(scoring, "_WORLDS", type(scoring._WORLDS)())  # other tests' tasks
    cfg = RunConfig(suite="toolmaze", limit=5, agents=["react", "replanner_loop"], seeds=1)
    selected = {t.task_id: t for t in experiment.select_tasks(load_suite("toolmaze"), cfg)}
    before = _live_tasks()
    seen: dict[str, object] = {}

    class Recording:
        async def run(self, jobs, cfg, agent, on_done) -> None:
            seen["alive"] = _live_tasks() - before
            seen["kinds"] = {type(j.task) for j in jobs}
            seen["n"] = len(jobs)
            seen["parsed"] = {j.task.task_id: j.task.parse() for j in jobs}
            for job in jobs:
                ep = experiment.failed_episode(job, experiment.EndReason.CRASHED, "not run")
                on_done(job, ep)

    out = asyncio.run(experiment.arun(cfg, tmp_path, backend=Recording()))
    assert out.ran == seen["n"] == 10
    assert seen["alive"] <= 0, f"{seen['alive']} parsed tasks alive in the driver"
    assert seen["kinds"] == {PackedTask}
    assert seen["parsed"] == selected  # what a consumer parses is the suite's task
