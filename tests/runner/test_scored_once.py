"""The store is the truth: ``replan run`` scores each episode once, at storage; the summary, the
report and compare read the stored records; stores without them are scored once and say so."""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

import replan.evaluators.scoring as ev
from replan.cli import app
from replan.report.summary import summarize
from replan.runner.store import ResultsStore

SMALL = ["--limit", "3", "--agents", "react,replanner_loop", "--concurrency", "2"]


@pytest.fixture
def replays(monkeypatch: pytest.MonkeyPatch) -> Counter:
    """How often each episode (task, design, seed) is replayed to be scored: every scoring goes
    through ``evaluators.score_one``, which replays the episode once."""
    seen: Counter = Counter()
    real = ev.episode_verdicts

    def counting(episode, task, world):  # type: ignore[no-untyped-def]
        seen[(episode.task_id, episode.design, episode.seed)] += 1
        return real(episode, task, world)

    monkeypatch.setattr(ev, "episode_verdicts", counting)
    monkeypatch.setenv("CI", "1")
    return seen


def _cli(*args: str) -> str:
    res = CliRunner().invoke(app, list(args))
    assert res.exit_code == 0, res.output
    return res.stderr


def _keys(out: Path) -> set[tuple[str, str, int]]:
    with ResultsStore(out) as store:
        return {(e.task_id, e.design, e.seed) for e in store.episodes()}


def test_run_scores_each_episode_once_and_readers_never_again(
    tmp_path: Path, replays: Counter
) -> None:
    out = tmp_path / "r"
    _cli("run", "--out", str(out), *SMALL)  # runs, stores, summarizes, writes the report
    stored = _keys(out)
    assert len(stored) == 6
    assert set(replays) == stored and set(replays.values()) == {1}, replays
    before = dict(replays)
    summary = summarize(out)
    assert set(summary) == {"react", "replanner_loop"}
    _cli("report", str(out))
    _cli("compare", str(out), str(out))
    _cli("run", "--out", str(out), *SMALL)  # nothing left to run
    assert dict(replays) == before  # nothing was scored again


def test_missing_or_older_scores_are_scored_once_and_stored(
    tmp_path: Path, replays: Counter
) -> None:
    out = tmp_path / "r"
    _cli("run", "--out", str(out), *SMALL)
    expected = summarize(out)
    with sqlite3.connect(out / ResultsStore.FILENAME) as c:
        keys = [k for (k,) in c.execute("SELECT episode_key FROM scores ORDER BY 1")]
        c.execute("DELETE FROM scores WHERE episode_key IN (?, ?)", keys[:2])  # a store of old
        c.execute("UPDATE scores SET stamp = 'older code' WHERE episode_key = ?", (keys[2],))
    replays.clear()
    err = _cli("report", str(out))
    assert sum(replays.values()) == 3 and set(replays.values()) == {1}, replays
    lines = [ln for ln in err.splitlines() if "scored them once" in ln]
    assert len(lines) == 1 and "3 episode(s)" in lines[0] and "stored them" in lines[0], err
    replays.clear()
    assert summarize(out) == expected  # the same numbers, from the records stored just now
    _cli("report", str(out))
    assert not replays


@pytest.mark.filterwarnings("ignore:'upload_runs' parameter is in beta")
def test_langsmith_upload_reads_the_stored_records(tmp_path: Path, replays: Counter) -> None:
    """``--langsmith`` hands LangSmith's evaluators the records stored with each episode: the
    upload (offline here: upload_results=False, a client on a port nothing listens on) scores
    nothing again, and its feedback is what the store holds."""
    import socket

    from langsmith import Client

    from replan.runner.langsmith import log_to_langsmith

    out = tmp_path / "r"
    _cli("run", "--out", str(out), *SMALL)
    before = dict(replays)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = Client(api_url=f"http://127.0.0.1:{port}", api_key="test", auto_batch_tracing=False)
    msg = log_to_langsmith(out, client=client, upload_results=False)
    assert msg.startswith("--langsmith: logged 2 experiment(s)"), msg
    assert dict(replays) == before  # nothing was replayed to be scored
