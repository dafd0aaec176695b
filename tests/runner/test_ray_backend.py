"""The Ray backend gives exactly the local backend's episodes and scores, and survives a worker
dying mid-run (the batch is retried; nothing is lost or duplicated)."""

from __future__ import annotations

import asyncio

import pytest

ray = pytest.importorskip("ray")

from replan.runner.experiment import (  # noqa: E402
    LocalBackend,
    RunConfig,
    arun,
    select_tasks,
    suite_options,
)
from replan.runner.limits import Limits  # noqa: E402
from replan.runner.ray_backend import EndpointLimiter, RayBackend  # noqa: E402
from replan.runner.store import ResultsStore  # noqa: E402
from replan.suites import load_suite  # noqa: E402

pytestmark = pytest.mark.slow

CFG = RunConfig(agents=["react", "replanner_loop"], limit=6, concurrency=2)


@pytest.fixture(scope="module")
def ray_session():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    yield
    ray.shutdown()


def _snapshot(out):
    with ResultsStore(out) as s:
        return s.snapshot()


def test_ray_equals_local(tmp_path, ray_session):
    asyncio.run(arun(CFG, tmp_path / "local", backend=LocalBackend(2)))
    asyncio.run(arun(CFG, tmp_path / "ray", backend=RayBackend(batch_size=3)))
    assert _snapshot(tmp_path / "ray") == _snapshot(tmp_path / "local")
    assert len(_snapshot(tmp_path / "ray")["episodes"]) == 12


def test_worker_death_loses_nothing(tmp_path, ray_session, monkeypatch):
    marker = tmp_path / "killed-once"
    chosen = select_tasks(load_suite(CFG.suite, **suite_options(CFG)), CFG)
    perturbed = next(t for t in chosen if t.mode != "NP")  # whichever the selection holds
    key = f"{perturbed.task_id}|react|{CFG.models[0]}|0"
    monkeypatch.setenv("REPLAN_CHAOS_KILL_KEY", key)
    monkeypatch.setenv("REPLAN_CHAOS_MARKER", str(marker))
    # workers inherit the driver's environment only when started after it is set
    ray.shutdown()
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={
            "env_vars": {"REPLAN_CHAOS_KILL_KEY": key, "REPLAN_CHAOS_MARKER": str(marker)}
        },
    )
    asyncio.run(arun(CFG, tmp_path / "ray", backend=RayBackend(batch_size=2)))
    assert marker.exists(), "the chaos hook never fired"
    asyncio.run(arun(CFG, tmp_path / "local", backend=LocalBackend(2)))
    snap = _snapshot(tmp_path / "ray")
    assert snap == _snapshot(tmp_path / "local")
    assert len({e[0] for e in snap["episodes"]}) == 12


def test_endpoint_limiter_counts_per_endpoint():
    """The actor's budgets: a slot per call up to each endpoint's own limit, freed on release."""
    lim = EndpointLimiter({"openai:gpt-x": Limits(max_in_flight=1)}, Limits(max_in_flight=2))
    assert lim.try_acquire("openai:gpt-x") == 0 and lim.try_acquire("openai:gpt-x") > 0
    assert lim.try_acquire("other") == 0 and lim.try_acquire("other") == 0
    assert lim.try_acquire("other") > 0
    lim.release("openai:gpt-x", 10, False)
    assert lim.try_acquire("openai:gpt-x") == 0
    assert lim.stats()["openai:gpt-x"]["peak_in_flight"] == 1
