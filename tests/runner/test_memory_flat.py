"""A run's memory is flat in its number of episodes: the runner lets go of each episode once it
is handed over (stored), instead of holding every one until the run ends."""

from __future__ import annotations

import asyncio
import gc
import weakref

import pytest

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
