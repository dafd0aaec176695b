"""Worker processes (``replan run --workers N``) store exactly the single-process episodes and
scores; a worker dying mid-batch loses nothing, and one that never answers cannot hang the run."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from replan.evaluators import scoring_stamp
from replan.runner import process_backend
from replan.runner.experiment import LocalBackend, RunConfig, arun, select_tasks, suite_options
from replan.runner.process_backend import ProcessBackend
from replan.runner.store import ResultsStore, episode_key
from replan.suites import load_suite

pytestmark = pytest.mark.slow

CFG = RunConfig(agents=["react", "replanner_loop"], limit=6, concurrency=2)


def _snapshot(out):
    with ResultsStore(out) as s:
        return s.snapshot()


def _outcomes(out):
    """What a run decided per episode: the end, the success, the tool calls made, and the
    stored per-run records (scored in the workers, or in the driver)."""
    with ResultsStore(out) as s:
        return {
            e.episode_id: (e.end_reason, e.success, [st.call.tool for st in e.steps], records)
            for e, _, records in s.scored_episodes(scoring_stamp())
        }


def test_workers_equal_one_process(tmp_path):
    asyncio.run(arun(CFG, tmp_path / "local", backend=LocalBackend(2)))
    asyncio.run(arun(CFG, tmp_path / "proc", backend=ProcessBackend(2, batch_size=3)))
    assert _snapshot(tmp_path / "proc") == _snapshot(tmp_path / "local")
    outcomes = _outcomes(tmp_path / "proc")
    assert outcomes == _outcomes(tmp_path / "local")
    assert all(o[3] for o in outcomes.values())  # current records, scored once in the workers
    assert len(_snapshot(tmp_path / "proc")["episodes"]) == 12


def _chaos(tmp_path, monkeypatch) -> object:
    marker = tmp_path / "killed-once"
    chosen = select_tasks(load_suite(CFG.suite, **suite_options(CFG)), CFG)
    perturbed = next(t for t in chosen if t.mode != "NP")
    monkeypatch.setenv("REPLAN_CHAOS_KILL_KEY", f"{perturbed.task_id}|react|{CFG.models[0]}|0")
    monkeypatch.setenv("REPLAN_CHAOS_MARKER", str(marker))
    return marker


def test_worker_death_is_retried(tmp_path, monkeypatch):
    marker = _chaos(tmp_path, monkeypatch)
    asyncio.run(arun(CFG, tmp_path / "proc", backend=ProcessBackend(2, batch_size=2)))
    assert marker.exists(), "the chaos hook never fired"
    asyncio.run(arun(CFG, tmp_path / "local", backend=LocalBackend(2)))
    assert _snapshot(tmp_path / "proc") == _snapshot(tmp_path / "local")


def test_worker_death_past_retries_is_stored_then_resumed(tmp_path, monkeypatch):
    marker = _chaos(tmp_path, monkeypatch)
    backend = ProcessBackend(2, batch_size=2, max_retries=0)
    out = asyncio.run(arun(CFG, tmp_path / "proc", backend=backend))
    assert marker.exists()
    assert out.failures == 2  # the dead worker's batch, stored as crashed, never dropped
    with ResultsStore(tmp_path / "proc") as s:
        assert len(s.failed_keys()) == 2 and len(s.done_keys()) == 12
    again = asyncio.run(arun(CFG, tmp_path / "proc", backend=backend))  # resume retries them
    assert (again.ran, again.failures) == (2, 0)
    asyncio.run(arun(CFG, tmp_path / "local", backend=LocalBackend(2)))
    assert _snapshot(tmp_path / "proc") == _snapshot(tmp_path / "local")


def test_silent_worker_is_killed_not_waited_for(tmp_path, monkeypatch):
    """A worker that stops answering (the hook makes it sleep for an hour on one batch) is
    killed after the episode deadline plus the grace; that batch is stored as timeouts and
    the other batch still runs."""
    monkeypatch.setattr(process_backend, "HANG_GRACE_S", 1.0)
    cfg = CFG.model_copy(update=dict(limit=2, agents=["react"], episode_timeout_s=2.0))
    tasks = select_tasks(load_suite(cfg.suite, **suite_options(cfg)), cfg)
    hung = episode_key(tasks[0].task_id, "react", cfg.models[0], 0)
    monkeypatch.setenv("REPLAN_CHAOS_HANG_KEY", hung)
    out = asyncio.run(
        arun(cfg, tmp_path / "proc", tasks=tasks, backend=ProcessBackend(1, batch_size=1))
    )
    assert out.ran == 2 and out.failures == 1
    with ResultsStore(tmp_path / "proc") as s:
        by_key = {e.episode_id: e for e in s.episodes()}
    assert by_key[hung].end_reason.value == "timeout"
    assert "sent nothing" in (by_key[hung].error or "")
    (other,) = [e for k, e in by_key.items() if k != hung]
    assert other.end_reason.value not in ("timeout", "crashed"), other.error


def _children() -> dict[int, int]:
    """Running processes and their parents (Linux /proc; a zombie counts as ended)."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            parents[int(stat.parent.name)] = int(fields[1])
    return parents


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_workers_end_when_the_driver_is_killed(tmp_path):
    """A driver killed outright cannot stop its workers; each notices within seconds that the
    driver is gone and ends, instead of playing its episode to the end for nobody (here a
    worker asleep for an hour on its batch)."""
    cfg = CFG.model_copy(update=dict(limit=1, agents=["react"]))
    tasks = select_tasks(load_suite(cfg.suite, **suite_options(cfg)), cfg)
    hung = episode_key(tasks[0].task_id, "react", cfg.models[0], 0)
    script = (
        "import asyncio, sys\n"
        "from replan.runner.experiment import RunConfig, arun\n"
        "from replan.runner.process_backend import ProcessBackend\n"
        "cfg = RunConfig(agents=['react'], limit=1, concurrency=2)\n"
        "asyncio.run(arun(cfg, sys.argv[1], backend=ProcessBackend(1)))\n"
    )
    env = {**os.environ, "REPLAN_CHAOS_HANG_KEY": hung}
    driver = subprocess.Popen([sys.executable, "-c", script, str(tmp_path / "out")], env=env)
    servers: set[int] = set()
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not workers:
            time.sleep(0.5)
            parents = _children()
            servers = {p for p, pp in parents.items() if pp == driver.pid}  # the fork server
            workers = {p for p, pp in parents.items() if pp in servers}
        assert workers, "the worker never started"
        time.sleep(3)  # the worker is asleep in its batch
        driver.kill()
        driver.wait(10)
        deadline = time.monotonic() + 20
        while workers & set(_children()) and time.monotonic() < deadline:
            time.sleep(0.5)
        left = workers & set(_children())
        assert not left, f"workers still running after the driver died: {left}"
    finally:
        for p in servers | workers:
            with contextlib.suppress(OSError):
                os.kill(p, signal.SIGKILL)
        if driver.poll() is None:
            driver.kill()


def test_live_agent_object_is_refused():
    with pytest.raises(ValueError, match="importable agent factory"):
        asyncio.run(ProcessBackend(2).run([object()], CFG, agent=lambda *a: None, on_done=print))


def test_cli_workers(tmp_path):
    from typer.testing import CliRunner

    from replan.cli import app

    out = tmp_path / "r"
    args = ["run", "--agents", "react", "--limit", "2", "--out", str(out), "--json"]
    res = CliRunner().invoke(app, [*args, "--workers", "2"])
    assert res.exit_code == 0, res.output
    with ResultsStore(out) as s:
        assert len(s.done_keys()) == 2
    res = CliRunner().invoke(app, [*args, "--workers", "2", "--backend", "ray"])
    assert res.exit_code == 2 and "--workers 2 is for --backend local" in res.output


def test_each_worker_is_told_its_share_of_the_cores(monkeypatch):
    """Workers learn how many cores are theirs (a local llama.cpp model sizes its threads by
    it); a share the user set is passed on as set."""
    from replan.models.local import CORES_ENV

    seen: list[dict[str, str]] = []

    class Started(Exception):
        pass

    def fake_worker(ctx, cfg, env, limiter=None):
        seen.append(dict(env))
        raise Started

    jobs = [object()] * 8
    monkeypatch.setattr(process_backend, "_Worker", fake_worker)
    monkeypatch.setattr(process_backend, "cpu_workers", lambda: 4)
    monkeypatch.delenv(CORES_ENV, raising=False)
    for workers, share in ((2, "2"), (4, "1"), (8, "1"), (1, "4")):
        with pytest.raises(Started):
            asyncio.run(ProcessBackend(workers, batch_size=1).run(jobs, CFG, None, print))
        assert seen.pop()[CORES_ENV] == share, workers
    monkeypatch.setenv(CORES_ENV, "3")
    with pytest.raises(Started):
        asyncio.run(ProcessBackend(2, batch_size=1).run(jobs, CFG, None, print))
    assert seen.pop()[CORES_ENV] == "3"
