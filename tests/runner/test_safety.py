"""Bounded and safe under faults (issue 17): hanging or exiting agent code, Ctrl-C, two writers
on one store, a corrupt store, hostile dataset files, LangSmith out of reach.

Each test drives the real ``replan`` command in a subprocess where the fault is a process-level
one (a hang, a signal, a second process), with every deadline short and every wait bounded.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from replan.core.trace import EndReason
from replan.runner.store import ResultsStore, StoreBusy, StoreCorrupt, WriterLock

REPLAN = [sys.executable, "-m", "replan.cli"]
QUICK = ["--agents", "react", "--concurrency", "1"]

#: a user's agent module: answers at once, hangs, exits, or hangs from its third episode on
AGENTS = textwrap.dedent(
    """
    import os, sys, threading
    from langchain_core.messages import AIMessage
    from langgraph.graph import END, START, MessagesState, StateGraph

    CALLS = {"n": 0}

    def _answer():
        g = StateGraph(MessagesState)
        g.add_node("a", lambda s: {"messages": [AIMessage(content="done")]})
        g.add_edge(START, "a")
        g.add_edge("a", END)
        return g.compile()

    def quick(tools, model):
        return _answer()

    def hangs(tools, model):
        threading.Event().wait()

    def slow(tools, model):
        threading.Event().wait(0.8)
        return _answer()

    def exits(tools, model):
        sys.exit(3)

    def interrupts(tools, model):
        raise KeyboardInterrupt

    def hangs_from_the_third(tools, model):
        CALLS["n"] += 1
        if CALLS["n"] >= 3:
            threading.Event().wait()
        return _answer()

    def _never_returns(state):
        open("node-started", "w").close()
        threading.Event().wait()

    def node_hangs(tools, model):
        # a graph whose node never returns: LangGraph runs it in a thread pool of its own
        g = StateGraph(MessagesState)
        g.add_node("a", _never_returns)
        g.add_edge(START, "a")
        g.add_edge("a", END)
        return g.compile()
    """
)


def _env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "CI": "1", "PYTHONUNBUFFERED": "1", **extra}
    for var in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2", "LANGCHAIN_TRACING"):
        env[var] = "false"
    return env


def _cli(
    *args: str, cwd: Path | None = None, timeout: float = 240, **env: str
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*REPLAN, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=_env(**env),
        timeout=timeout,
    )


def _start(*args: str, cwd: Path | None = None) -> subprocess.Popen:
    """``replan ARGS`` running in the background, its output captured."""
    return subprocess.Popen(
        [*REPLAN, *args],
        cwd=cwd,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_stored(out: Path, n: int, proc: subprocess.Popen, timeout: float = 120) -> None:
    """Wait until ``out`` holds ``n`` episodes (or the process ends, or ``timeout`` passes)."""
    deadline = time.time() + timeout
    while len(_stored(out)) < n and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)


def _interrupt(proc: subprocess.Popen, timeout: float) -> tuple[str, float]:
    """Send one SIGINT and wait for the end: (stderr, seconds it took); killed if it overruns."""
    t0 = time.perf_counter()
    try:
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return stderr, time.perf_counter() - t0


def _agents_dir(tmp_path: Path) -> Path:
    d = tmp_path / "agents"
    d.mkdir()
    (d / "my_agents.py").write_text(AGENTS, encoding="utf-8")
    return d


def _stored(out: Path) -> list[tuple[str, str]]:
    """(key, end reason) of every stored episode, read without the library."""
    db = out / "results.sqlite"
    if not db.exists():
        return []
    try:
        with sqlite3.connect(db) as c:
            return c.execute("SELECT key, end_reason FROM episodes ORDER BY key").fetchall()
    except sqlite3.OperationalError:
        return []


def _one_line_error(stderr: str) -> None:
    assert "Traceback" not in stderr, stderr
    errors = [ln for ln in stderr.splitlines() if ln.startswith("error")]
    assert len(errors) == 1, stderr


# -- 2. user code that hangs or exits ------------------------------------------------------------
def test_a_hanging_agent_factory_is_recorded_as_timeout_and_the_run_ends(tmp_path):
    cwd, out = _agents_dir(tmp_path), tmp_path / "r"
    t0 = time.perf_counter()
    proc = _cli(
        "run",
        "--agent",
        "my_agents:hangs",
        "--limit",
        "2",
        "--concurrency",
        "2",
        "--episode-timeout",
        "2",
        "--out",
        str(out),
        cwd=cwd,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stderr  # ended, and said that nothing ran to a verdict
    assert time.perf_counter() - t0 < 100  # it used to wait forever
    rows = _stored(out)
    assert len(rows) == 2 and {r for _, r in rows} == {"timeout"}, rows
    assert "2 failed" in proc.stderr


def test_a_hanging_agent_is_bounded_through_the_python_api_too(tmp_path):
    import threading

    from replan.api import evaluate_agent

    release = threading.Event()

    def stuck(tools, model):
        release.wait(120)

    t0 = time.perf_counter()
    try:
        res = evaluate_agent(stuck, limit=2, out=tmp_path / "r", episode_timeout_s=1, name="stuck")
    finally:
        release.set()  # let the abandoned threads end with the test
    assert time.perf_counter() - t0 < 60
    assert [e.end_reason for e in res.episodes] == [EndReason.TIMEOUT] * 2
    assert res.summary["stuck"]["failures"] == 2


@pytest.mark.parametrize(
    ("factory", "raised"), [("exits", "SystemExit"), ("interrupts", "KeyboardInterrupt")]
)
def test_a_factory_that_exits_fails_its_episodes_not_the_run(tmp_path, factory, raised):
    cwd, out = _agents_dir(tmp_path), tmp_path / "r"
    proc = _cli(
        "run", "--agent", f"my_agents:{factory}", "--limit", "3", "--out", str(out), cwd=cwd
    )
    assert proc.returncode == 1, proc.stderr  # every episode failed: the run says so
    assert "3 failed" in proc.stderr
    with ResultsStore(out) as store:
        eps = store.episodes()
    assert len(eps) == 3
    assert all(e.end_reason is EndReason.CRASHED and raised in (e.error or "") for e in eps)
    assert all(e.task_id in (e.error or "") for e in eps)  # the error names its task


def test_ctrl_c_stops_the_run_at_once_and_keeps_what_finished(tmp_path):
    cwd, out = _agents_dir(tmp_path), tmp_path / "r"
    proc = _start(
        *("run", "--agent", "my_agents:hangs_from_the_third", "--limit", "5"),
        *("--concurrency", "1", "--out", str(out)),
        cwd=cwd,
    )
    try:
        _wait_stored(out, 2, proc)
        assert len(_stored(out)) == 2, "the first two episodes did not finish"
        time.sleep(0.5)  # the third is now hanging in the agent
    finally:
        stderr, stopped_in = _interrupt(proc, 30)
    assert proc.returncode == 130, stderr
    assert stopped_in < 15
    assert "interrupted" in stderr and "2 finished episode(s)" in stderr, stderr
    assert "Traceback" not in stderr
    rows = _stored(out)
    assert len(rows) == 2 and all(r == "answered" for _, r in rows), rows


def test_a_graph_node_that_never_returns_is_a_timeout_and_the_command_still_exits(tmp_path):
    """Issue 30: Python joins a thread pool's threads at exit, so a node stuck in one kept the
    finished command alive forever; it now exits at once, saying it left the node running."""
    cwd, out = _agents_dir(tmp_path), tmp_path / "r"
    t0 = time.perf_counter()
    proc = _cli(
        *("run", "--agent", "my_agents:node_hangs", "--limit", "1", "--episode-timeout", "2"),
        *("--out", str(out)),
        cwd=cwd,
        timeout=120,
    )
    assert time.perf_counter() - t0 < 100
    assert _stored(out) and {r for _, r in _stored(out)} == {"timeout"}, proc.stderr
    notes = [ln for ln in proc.stderr.splitlines() if "still running" in ln]
    assert len(notes) == 1 and "abandoned" in notes[0], proc.stderr
    assert "Traceback" not in proc.stderr


def test_one_ctrl_c_ends_a_run_whose_graph_node_never_returns(tmp_path):
    """Issue 30: Ctrl-C had to be pressed twice (or wait out the grace) while a node hung."""
    from replan.runner.safety import INTERRUPT_GRACE_S

    cwd, out = _agents_dir(tmp_path), tmp_path / "r"
    proc = _start(
        *("run", "--agent", "my_agents:node_hangs", "--limit", "3", "--concurrency", "1"),
        *("--episode-timeout", "600", "--out", str(out)),
        cwd=cwd,
    )
    try:
        deadline = time.time() + 120
        while not (cwd / "node-started").exists() and time.time() < deadline:
            time.sleep(0.05)
        assert (cwd / "node-started").exists(), "the node never started"
    finally:
        stderr, stopped_in = _interrupt(proc, 60)
    assert proc.returncode == 130, stderr
    assert stopped_in < INTERRUPT_GRACE_S - 2, stopped_in  # not the forced exit of the grace
    assert "Traceback" not in stderr


def test_scoring_runs_under_the_episode_deadline(tmp_path, monkeypatch):
    """Issue 30: a scoring that never ends (an 80 s regex) held the run past every deadline.
    It is abandoned at the episode's deadline; the episode is kept, with the reason."""
    import asyncio
    import threading

    from replan.runner import experiment

    release = threading.Event()

    def stuck(episode, task):
        release.wait(120)
        raise RuntimeError("released at the end of the test")

    monkeypatch.setattr("replan.evaluators.score_one", stuck)  # what score_rows calls
    cfg = experiment.RunConfig(agents=["react"], limit=1, concurrency=1, episode_timeout_s=1)
    t0 = time.perf_counter()
    try:
        outcome = asyncio.run(experiment.arun(cfg, tmp_path / "r"))
    finally:
        release.set()
    assert time.perf_counter() - t0 < 60
    with ResultsStore(tmp_path / "r") as store:
        eps = store.episodes()
        rows = store.feedback(outcome.experiment_id)
    assert len(eps) == 1  # the episode is kept
    errors = [comment for _, key, _, comment in rows if key == "replan.scoring_error"]
    assert len(errors) == 1 and "episode deadline of 1 s" in errors[0], rows


# -- 3. one writer per store -----------------------------------------------------------------------
@pytest.mark.slow  # ~35 s: three runs of the CLI, the first one kept busy for 24 s
def test_a_second_writer_is_refused_and_the_first_run_loses_nothing(tmp_path):
    cwd, out = _agents_dir(tmp_path), tmp_path / "r"
    args = ["run", "--agent", "my_agents:slow", "--limit", "30", "--concurrency", "1"]
    first = _start(*args, "--out", str(out), cwd=cwd)
    try:
        _wait_stored(out, 1, first)
        assert first.poll() is None, "the first run finished before the second could start"
        seconds = [
            _cli(
                *args, "--out", str(out), "--fresh", cwd=cwd, timeout=60
            ),  # the one that lost data
            _cli(*args, "--out", str(out), cwd=cwd, timeout=60),  # the one that redid everything
        ]
        assert first.poll() is None, "the first run must still be running: make it slower"
        _, err_first = first.communicate(timeout=240)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    for second in seconds:
        assert second.returncode == 2, second.stderr
        _one_line_error(second.stderr)
        assert f"pid {first.pid}" in second.stderr and "another replan process" in second.stderr
    assert first.returncode == 0, err_first
    assert "30 episodes (0 already done, 30 run" in err_first
    rows = _stored(out)
    assert len(rows) == 30 and {r for _, r in rows} == {"answered"}  # all it reported is there


def test_the_writer_lock_is_released_when_its_holder_dies(tmp_path):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from replan.runner.store import WriterLock;"
            f"WriterLock({str(tmp_path)!r}).acquire(); print('held', flush=True); time.sleep(600)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(StoreBusy, match=f"pid {holder.pid}"):
            WriterLock(tmp_path).acquire()
    finally:
        holder.kill()  # like kill -9: no cleanup runs
        holder.wait()
    with WriterLock(tmp_path), WriterLock(tmp_path):  # free again, and re-entrant
        pass


# -- 4. a corrupt store ----------------------------------------------------------------------------
@pytest.mark.parametrize("where", ["header", "middle"])
def test_a_corrupt_store_is_one_line_everywhere_and_never_written(tmp_path, where):
    import shutil

    from replan.api import run

    good, bad = tmp_path / "good", tmp_path / "bad"
    run(agents=["react"], limit=3, out=good)
    shutil.copytree(good, bad)
    db = bad / "results.sqlite"
    data = bytearray(db.read_bytes())
    assert len(data) > 8192
    start = 0 if where == "header" else 4096
    data[start : start + 4096] = bytes((i * 37 + 11) % 256 for i in range(4096))
    db.write_bytes(bytes(data))
    before = db.read_bytes()
    with pytest.raises(StoreCorrupt, match=r"corrupt|not a SQLite"):
        ResultsStore(bad)
    for args in (
        ["report", str(bad)],
        ["compare", str(good), str(bad)],
        ["run", "--limit", "3", *QUICK, "--out", str(bad)],
    ):
        proc = _cli(*args, timeout=120)
        assert proc.returncode != 0, (args, proc.stderr)
        _one_line_error(proc.stderr)
        (line,) = [ln for ln in proc.stderr.splitlines() if ln.startswith("error")]
        assert str(db) in line and "mv " in line  # names the file and what to do
    assert db.read_bytes() == before  # nothing was written into it
    assert (
        not (bad / "results.sqlite-wal").exists()
        or (bad / "results.sqlite-wal").stat().st_size == 0
    )


# -- 5. hostile dataset files ----------------------------------------------------------------------
def _pararecover_lines(sample_files: list[Path], n: int = 3) -> list[str]:
    return sample_files[0].read_text(encoding="utf-8").splitlines()[:n]


def _hostile_pararecover(tmp_path: Path, sample_files: list[Path]) -> Path:
    lines = [ln.encode() for ln in _pararecover_lines(sample_files)]
    deep = b'{"id": 77, "query": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    latin1 = '{"id": 78, "query": "caf\u00e9"}'.encode("latin-1")
    data = tmp_path / "hostile.jsonl"
    # line 2: not UTF-8; line 3: nested 100,000 deep; line 5: the id of line 1 again
    data.write_bytes(b"\n".join([lines[0], latin1, deep, lines[1], lines[0], lines[2]]) + b"\n")
    return data


def test_audit_and_run_read_past_hostile_lines(tmp_path, sample_files):
    data = _hostile_pararecover(tmp_path, sample_files)
    audit = _cli("audit", "pararecover", str(data), "--json")
    assert audit.returncode == 0, audit.stderr
    assert "Traceback" not in audit.stderr
    report = json.loads(audit.stdout)
    assert report["instances"] == 3
    by_line = {e["line"]: e["message"] for e in report["line_errors"]}
    assert set(by_line) == {2, 3, 5}
    assert "UTF-8" in by_line[2] and "deep" in by_line[3] and "duplicate id" in by_line[5]
    assert "line 1" in by_line[5]
    run = _cli("run", "--suite", "pararecover", "--path", str(data), "--out", str(tmp_path / "r"))
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    for n in (2, 3, 5):
        assert f"hostile.jsonl:{n}" in run.stderr
    assert len(_stored(tmp_path / "r")) == 3


def test_a_utf16_dataset_is_read(tmp_path, sample_files):
    data = tmp_path / "utf16.jsonl"
    data.write_text("\n".join(_pararecover_lines(sample_files)) + "\n", encoding="utf-16")
    proc = _cli("audit", "pararecover", str(data), "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["instances"] == 3 and report["line_errors"] == []


def _episode_lines(tmp_path: Path) -> list[str]:
    from replan.api import run

    res = run(agents=["react"], limit=4, out=tmp_path / "src")
    tasks = {t.task_id: t for t in ResultsStore(tmp_path / "src").tasks().values()}
    lines = []
    for e in res.episodes:
        e = e.model_copy(
            update={"metadata": {**e.metadata, "task": tasks[e.task_id].model_dump(mode="json")}}
        )
        lines.append(e.to_json())
    return lines


def test_score_reports_every_bad_line_and_scores_the_rest(tmp_path):
    lines = _episode_lines(tmp_path)
    bad_task = json.loads(lines[1])
    bad_task["metadata"]["task"] = {"task_id": bad_task["task_id"], "tools": "not a list"}
    deep = '{"episode_id": "x", "steps": ' + "[" * 50_000 + "]" * 50_000 + "}"
    body = [
        lines[0].encode(),
        json.dumps(bad_task).encode(),  # line 2: an invalid embedded task
        b'{"episode_id": "caf\xe9"}',  # line 3: not UTF-8
        deep.encode(),  # line 4: nested 50,000 deep
        lines[2].encode(),
        lines[0].encode(),  # line 6: the episode of line 1 again
        lines[3].encode(),
    ]
    path = tmp_path / "episodes.jsonl"
    path.write_bytes(b"\n".join(body) + b"\n")
    proc = _cli("score", str(path), "--json")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    result = json.loads(proc.stdout)
    assert result["episodes"] == 3
    by_line = {e["line"]: e["message"] for e in result["input_errors"]}
    assert set(by_line) == {2, 3, 4, 6}, by_line
    assert "metadata['task']" in by_line[2] and "UTF-8" in by_line[3]
    assert "duplicate episode_id" in by_line[6]
    for n in (2, 3, 4, 6):
        assert f"episodes.jsonl:{n}" in proc.stderr


# -- 7. credentials in a URL ----------------------------------------------------------------------
def test_a_key_inside_the_base_url_is_never_recorded(tmp_path):
    from replan.core.redact import redact

    secret = "sk-Zq81URLfakeKEY0042secret"
    assert redact(f"http://user:{secret}@host:8000/v1") == "http://***@host:8000/v1"
    assert redact("postgres://admin:hunter22@db/x") == "postgres://***@db/x"
    assert (
        redact("http://host:8000/v1 and user@example.com")
        == "http://host:8000/v1 and user@example.com"
    )
    out = tmp_path / "r"
    url = f"http://user:{secret}@127.0.0.1:9/v1"  # nothing listens: every call fails fast
    proc = _cli(
        "run",
        "--model",
        "openai:stub-model",
        "--base-url",
        url,
        "--limit",
        "1",
        *QUICK,
        "--out",
        str(out),
        "--json",
        "--model-timeout",
        "2",
        OPENAI_API_KEY="sk-test-not-a-real-key-000",
    )
    assert proc.returncode == 1, proc.stderr  # the one episode failed: said, non-zero
    assert secret not in proc.stdout + proc.stderr
    for f in out.iterdir():
        if f.is_file():
            assert secret.encode() not in f.read_bytes(), f.name
    with ResultsStore(out) as store:
        ((_, cfg),) = store.experiments()
    assert cfg["base_url"] == "http://***@127.0.0.1:9/v1"


def test_the_experiment_id_ignores_url_credentials_and_the_environment(monkeypatch):
    from replan.runner.experiment import RunConfig

    def eid(url: str) -> str:
        return RunConfig(base_url=url).experiment_id()

    plain = RunConfig().experiment_id()
    assert eid("http://u:sk-one1111111111@h/v1") == eid("http://u:sk-two2222222222@h/v1")
    assert eid("http://u:sk-one1111111111@h/v1") != eid("http://h2/v1")
    monkeypatch.setenv("SOME_SECRET_TOKEN", "simulated:competent")  # a key equal to config text
    assert RunConfig().experiment_id() == plain


# -- 8. LangSmith out of reach ---------------------------------------------------------------------
def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_langsmith_unreachable_keeps_the_results_and_says_one_line(tmp_path):
    out = tmp_path / "r"
    proc = _cli(
        "run",
        "--limit",
        "2",
        *QUICK,
        "--out",
        str(out),
        "--langsmith",
        LANGSMITH_API_KEY="lsv2-test-not-real",
        LANGSMITH_ENDPOINT=f"http://127.0.0.1:{_closed_port()}",
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    said = [ln for ln in proc.stderr.splitlines() if "LangSmith" in ln or "--langsmith" in ln]
    assert len(said) == 1 and said[0].startswith("--langsmith: upload to"), proc.stderr
    assert "rerun `replan run --langsmith`" in said[0] and "WARNING" not in proc.stderr
    assert (out / "report.html").is_file()
    assert "designs compared" in proc.stdout  # the summary table came first
    with ResultsStore(out) as store:
        assert len(store.episodes()) == 2
        assert not store.uploaded_keys(f"http://127.0.0.1:{_closed_port()}")


def test_langsmith_down_is_found_in_seconds_and_nothing_is_lost(tmp_path):
    """An endpoint nothing listens on is reported (naming it) well before the client's own
    3–6 s of retries would end; the stored run is untouched and nothing is marked uploaded."""
    import time

    from langsmith import Client

    from replan.api import run
    from replan.runner.langsmith import log_to_langsmith

    out = tmp_path / "r"
    run(agents=["react"], limit=1, out=out)
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    url = f"http://127.0.0.1:{_closed_port()}"
    client = Client(api_url=url, api_key="lsv2-test-not-real", auto_batch_tracing=False)
    start = time.monotonic()
    msg = log_to_langsmith(out, client=client)
    assert time.monotonic() - start < 2.0, msg
    assert msg.startswith(f"--langsmith: upload to {url} failed (LangSmith is unreachable: "), msg
    assert "0 of 1 experiment(s) sent" in msg and "\n" not in msg
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
    with ResultsStore(out) as store:
        assert len(store.episodes()) == 1 and not store.uploaded_keys(url)


class FakeLangSmith:
    """The client calls :func:`log_to_langsmith` makes itself (datasets); uploads are recorded
    by the ``upload`` seam, which can be told to fail on a given experiment."""

    api_url = "http://127.0.0.1:1/fake-langsmith"

    def __init__(self, fail_on: set[str] | None = None):
        self.datasets: set[str] = set()
        self.uploads: list[tuple[str, str, int]] = []
        self.fail_on = fail_on or set()

    def has_dataset(self, dataset_name: str) -> bool:
        return dataset_name in self.datasets

    def create_dataset(self, name: str, description: str = "") -> Any:
        self.datasets.add(name)
        return type("Dataset", (), {"id": name})()

    def create_examples(self, **kw: Any) -> None:
        pass

    def upload(self, design: str, model: str, eps: dict, data: Any, client: Any, out: Path) -> None:
        if design in self.fail_on:
            raise ConnectionError(f"connection reset while sending {design}")
        self.uploads.append((design, model, len(eps)))


def test_a_later_langsmith_run_uploads_only_what_is_missing(tmp_path):
    from replan.api import run
    from replan.runner.langsmith import log_to_langsmith

    out = tmp_path / "r"
    run(agents=["react", "dual_loop"], limit=2, out=out)
    flaky = FakeLangSmith(fail_on={"react"})
    msg = log_to_langsmith(out, client=flaky, upload=flaky.upload)
    assert "failed" in msg and "1 of 2 experiment(s) sent" in msg and "\n" not in msg
    assert flaky.uploads == [("dual_loop", "simulated:competent", 2)]
    fixed = FakeLangSmith()
    fixed.datasets = flaky.datasets
    msg = log_to_langsmith(out, client=fixed, upload=fixed.upload)
    assert fixed.uploads == [("react", "simulated:competent", 2)], msg
    again = FakeLangSmith()
    assert "nothing to send" in log_to_langsmith(out, client=again, upload=again.upload)
    assert again.uploads == []
    run(agents=["react", "dual_loop"], limit=3, out=out)  # one more task for both designs
    more = FakeLangSmith()
    log_to_langsmith(out, client=more, upload=more.upload)
    assert sorted(more.uploads) == [
        ("dual_loop", "simulated:competent", 3),
        ("react", "simulated:competent", 3),
    ]


# -- held behaviours (issue 17 found them sound; these tests keep them so) --------------------------
@pytest.mark.slow  # ~80 s: a clean run, then two interrupted runs and their resumes
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_sigint_or_sigterm_then_rerun_equals_a_clean_run(tmp_path, sig):
    clean, stopped = tmp_path / "clean", tmp_path / "stopped"
    args = ["--limit", "10", "--agents", "react,dual_loop,replanner_loop", "--concurrency", "1"]
    assert _cli("run", "--out", str(clean), *args).returncode == 0
    proc = _start("run", "--out", str(stopped), *args)
    try:
        _wait_stored(stopped, 5, proc)
        assert proc.poll() is None, "the run finished before it could be stopped"
        proc.send_signal(sig)
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert 0 < len(_stored(stopped)) < 30
    assert _cli("run", "--out", str(stopped), *args).returncode == 0
    with ResultsStore(clean) as a, ResultsStore(stopped) as b:
        assert b.snapshot() == a.snapshot()


HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)><a href="https://evil.example/">'


def hostile_answer(tools, model):  # used by name below: an agent whose answer is markup
    from langchain_core.messages import AIMessage
    from langgraph.graph import END, START, MessagesState, StateGraph

    g = StateGraph(MessagesState)
    g.add_node("a", lambda s: {"messages": [AIMessage(content=HOSTILE)]})
    g.add_edge(START, "a")
    g.add_edge("a", END)
    return g.compile()


def hostile_crash(tools, model):
    raise RuntimeError(HOSTILE)


def test_the_report_escapes_hostile_content_and_loads_nothing_from_outside(tmp_path):
    import re

    from replan.api import evaluate_agent
    from replan.report import write_report

    out = tmp_path / "r"
    evaluate_agent(hostile_answer, limit=2, out=out, name=HOSTILE)  # a design named in markup
    evaluate_agent(hostile_crash, limit=2, out=out)
    with ResultsStore(out) as store:
        eps = store.episodes()
    assert any(e.final_answer == HOSTILE for e in eps) and any(
        HOSTILE in (e.error or "") for e in eps
    )
    text = write_report(out).read_text(encoding="utf-8")
    assert text.lower().count("<script") == 1  # the report's own script, nothing injected
    assert "<img src=x" not in text and 'href="https://evil' not in text
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x" in text  # as text
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text, re.I)


def test_api_keys_in_the_environment_never_reach_store_logs_or_report(tmp_path):
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    key = "sk-envKEYfake0042UNIQUEvalue77"

    class Echo(BaseHTTPRequestHandler):  # a server that echoes the key back in its error
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            body = json.dumps({"error": {"message": f"Incorrect API key provided: {key}"}})
            self.send_response(401)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    out = tmp_path / "r"
    try:
        proc = _cli(
            "run",
            "--model",
            "openai:stub-model",
            "--base-url",
            f"http://127.0.0.1:{server.server_address[1]}/v1",
            "--limit",
            "2",
            *QUICK,
            "--out",
            str(out),
            OPENAI_API_KEY=key,
        )
    finally:
        server.shutdown()
        server.server_close()
    assert proc.returncode == 1, proc.stderr  # every episode failed: said, non-zero
    assert key not in proc.stdout + proc.stderr
    rows = _stored(out)
    assert len(rows) == 2 and {r for _, r in rows} == {"model_error"}
    for f in out.rglob("*"):
        if f.is_file():
            assert key.encode() not in f.read_bytes(), f.name


def _mutations(line: str, rng: Any) -> str:
    """One random damage to an episode line: bytes flipped, cut, a field dropped or retyped."""
    kind = rng.randrange(5)
    if kind == 0:
        i = rng.randrange(len(line))
        return line[:i] + chr(rng.randrange(32, 0x2FF)) + line[i + 1 :]
    if kind == 1:
        return line[: rng.randrange(len(line))]
    obj = json.loads(line)
    key = rng.choice(sorted(obj))
    if kind == 2:
        obj.pop(key)
    elif kind == 3:
        obj[key] = rng.choice([None, 0, -1, "", [], {}, "x" * 50, [[[]]], 1e308, True])
    else:
        steps = obj.get("steps") or []
        if steps:
            step = rng.choice(steps)
            skey = rng.choice(sorted(step))
            step[skey] = rng.choice([None, 7, "?", [], {"a": None}])
    return json.dumps(obj)


@pytest.mark.slow  # ~25 s: 4,000 lines scored
def test_thousands_of_mutated_episode_lines_never_crash_replan_score(tmp_path):
    import random

    rng = random.Random(17)
    lines = _episode_lines(tmp_path)
    mutated = [_mutations(rng.choice(lines), rng) for _ in range(4000)]
    path = tmp_path / "mutated.jsonl"
    path.write_text("\n".join(mutated) + "\n", encoding="utf-8")
    proc = _cli("score", str(path), "--json", "--n-boot", "100", timeout=600)
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    if proc.returncode == 0:
        result = json.loads(proc.stdout)
        assert result["episodes"] + len(result["input_errors"]) == 4000
