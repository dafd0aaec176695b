"""The runner end to end: store, resume after SIGKILL, failures kept, the CLI's JSON summary."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from replan.core.trace import EndReason
from replan.runner.core import RunConfig
from replan.runner.store import ResultsStore

REPLAN = [sys.executable, "-m", "replan.cli"]
SMALL = ["--limit", "6", "--agents", "react,replanner_loop", "--concurrency", "2"]


def _cli(*args: str, cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*REPLAN, *args],
        capture_output=True,
        text=True,
        check=check,
        cwd=cwd,
        env={**os.environ, "CI": "1"},
    )


def _stored(out: Path) -> int:
    db = out / "results.sqlite"
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db) as c:
            return c.execute("SELECT COUNT(*) FROM episodes").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def test_run_json_summary_has_every_design(tmp_path):
    proc = _cli("run", "--out", str(tmp_path / "r"), *SMALL, "--json")
    summary = json.loads(proc.stdout)  # exactly one JSON object on stdout
    assert set(summary["designs"]) == {"react", "replanner_loop"}
    for row in summary["designs"].values():
        for key in ("TSR", "TER", "AUC-PEC", "RR", "calls"):
            est = row[key]
            if key == "RR" and est["value"] is None:  # no NP run with an invalid call
                assert est["eligible"] == 0
                continue
            assert est["low"] <= est["value"] <= est["high"]
    assert Path(summary["report"]).exists()
    with ResultsStore(tmp_path / "r") as store:
        assert len(store.episodes()) == 12
        assert len(store.done_keys()) == 12


def test_rerun_resumes_without_duplicates(tmp_path):
    out = tmp_path / "r"
    _cli("run", "--out", str(out), *SMALL)
    with ResultsStore(out) as s:
        before = s.snapshot()
    proc = _cli("run", "--out", str(out), *SMALL)
    assert "12 already done, 0 run" in proc.stderr
    with ResultsStore(out) as s:
        assert s.snapshot() == before


def test_sigkill_mid_run_then_resume_equals_a_clean_run(tmp_path):
    clean, killed = tmp_path / "clean", tmp_path / "killed"
    args = ["--limit", "10", "--agents", "react,dual_loop,replanner_loop", "--concurrency", "1"]
    _cli("run", "--out", str(clean), *args)
    proc = subprocess.Popen(
        [*REPLAN, "run", "--out", str(killed), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "CI": "1"},
    )
    deadline = time.time() + 120
    while _stored(killed) < 5 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None, "the run finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = _stored(killed)
    assert 0 < partial < 30
    _cli("run", "--out", str(killed), *args)
    with ResultsStore(clean) as a, ResultsStore(killed) as b:
        assert b.snapshot() == a.snapshot()
        assert len(b.episodes()) == 30


def test_failures_are_stored_and_the_run_goes_on(tmp_path):
    from replan.runner.api import run

    res = run(
        models=["simulated:competent", "nosuchprovider:model-x"],
        agents=["react"],
        limit=3,
        out=tmp_path / "r",
    )
    by_model = {}
    for e in res.episodes:
        by_model.setdefault(e.model, []).append(e)
    assert len(by_model["simulated:competent"]) == 3
    bad = by_model["nosuchprovider:model-x"]
    assert len(bad) == 3 and all(e.end_reason is EndReason.MODEL_ERROR for e in bad)
    assert all("nosuchprovider" in (e.error or "") for e in bad)
    assert all(e.success is False for e in bad)
    label = "react · nosuchprovider:model-x"
    assert res.summary[label]["failures"] == 3


def bad_factory(tools, model):  # used by name from the CLI test below
    raise RuntimeError("this factory is broken on purpose")


def test_agent_factory_that_raises_names_the_task(tmp_path):
    from replan.runner.api import evaluate_agent

    res = evaluate_agent(bad_factory, limit=2, out=tmp_path / "r")
    assert len(res.episodes) == 2
    for e in res.episodes:
        assert e.end_reason is EndReason.CRASHED
        assert e.task_id in (e.error or "") or "broken on purpose" in (e.error or "")


def test_broken_dataset_line_is_named_and_the_rest_runs(tmp_path, sample_files):
    lines = sample_files[0].read_text(encoding="utf-8").splitlines()[:3]
    data = tmp_path / "pr.jsonl"
    data.write_text(
        "\n".join([lines[0], '{"id": 99, "query": "broken', *lines[1:]]) + "\n", encoding="utf-8"
    )
    proc = _cli(
        "run",
        "--suite",
        "pararecover",
        "--path",
        str(data),
        "--agents",
        "replanner_loop",
        "--out",
        str(tmp_path / "r"),
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "pr.jsonl:2" in proc.stderr
    with ResultsStore(tmp_path / "r") as store:
        eps = store.episodes()
    assert len(eps) == 3
    # ParaRecover instances start at the replanner: the replan is parsed and executed
    assert all(e.design == "replanner_loop" and e.end_reason is not EndReason.CRASHED for e in eps)
    assert all(any(p.source == "replanner" for p in e.plans) for e in eps)


def test_experiment_id_is_stable_and_ignores_concurrency():
    a = RunConfig(limit=5, concurrency=1).experiment_id()
    assert a == RunConfig(limit=5, concurrency=8).experiment_id()
    assert a != RunConfig(limit=6).experiment_id()


def test_results_records(tmp_path):
    import pandas as pd

    from replan.runner.api import run

    res = run(agents=["react"], limit=2, out=tmp_path / "r")
    recs = res.records()
    assert len(recs) == 2
    by_id = {e.episode_id: e for e in res.episodes}
    for rec in recs:
        ep = by_id[rec["episode"]]
        # the record joins the episode with its stored feedback
        assert rec["calls"] == len(ep.steps) == rec["prefix.calls"]
        assert rec["success"] == ep.success
        assert rec["prefix.clean"] == float(all(s.verdict.ok for s in ep.steps))
    frame = res.to_pandas()
    assert isinstance(frame, pd.DataFrame) and len(frame) == 2
