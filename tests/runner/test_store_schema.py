"""The results store owns its schema version and its reset: a store of another version is refused
in one line with nothing changed, a store from before the version was recorded is upgraded with
its rows kept, and a clear that fails leaves every row."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from replan.cli import app
from replan.core.trace import Episode
from replan.runner.store import SCHEMA_VERSION, FeedbackRow, ResultsStore, StoreError


def _store_with_one_episode(out: Path) -> Path:
    with ResultsStore(out) as store:
        store.ensure_experiment("exp", {"suite": "hand-built"})
        ep = Episode(episode_id="e1", task_id="t1", design="react", model="m", seed=0)
        store.save_episode(
            "exp", ep, [FeedbackRow("prefix.fed", 1.0)], records={"prefix": {}}, stamp="s"
        )
    return out / ResultsStore.FILENAME


def _rows(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as c:
        return [
            *c.execute("SELECT key, episode FROM episodes"),
            *c.execute("SELECT episode_key, key, score FROM feedback"),
            *c.execute("SELECT id FROM experiments"),
        ]


def test_a_new_store_records_its_schema_version(tmp_path: Path) -> None:
    db = _store_with_one_episode(tmp_path)
    with sqlite3.connect(db) as c:
        assert c.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_a_store_of_another_version_is_refused_in_one_line_and_left_alone(
    tmp_path: Path,
) -> None:
    db = _store_with_one_episode(tmp_path)
    with sqlite3.connect(db) as c:
        c.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    before = db.read_bytes()
    with pytest.raises(StoreError) as exc:
        ResultsStore(tmp_path)
    msg = str(exc.value)
    assert "\n" not in msg and f"schema version {SCHEMA_VERSION + 1}" in msg
    assert "newer replan" in msg and str(db) in msg
    assert db.read_bytes() == before
    res = CliRunner().invoke(app, ["report", str(tmp_path)])
    assert res.exit_code == 1 and f"schema version {SCHEMA_VERSION + 1}" in res.stderr
    assert res.stderr.strip().count("\n") == 0, res.stderr
    assert db.read_bytes() == before


def test_a_store_from_before_the_version_is_upgraded_with_its_rows(tmp_path: Path) -> None:
    db = _store_with_one_episode(tmp_path)
    with sqlite3.connect(db) as c:  # the layout before records were stored: no scores table
        c.execute("DROP TABLE scores")
        c.execute("PRAGMA user_version = 0")
    rows = _rows(db)
    with ResultsStore(tmp_path) as store:
        [(ep, _, records)] = store.scored_episodes("s")
        assert ep.episode_id == "e1" and records is None  # no records yet: scored on reading
    assert _rows(db) == rows
    with sqlite3.connect(db) as c:
        assert c.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_records_are_used_only_for_the_episode_text_and_code_that_made_them(
    tmp_path: Path,
) -> None:
    _store_with_one_episode(tmp_path)
    with ResultsStore(tmp_path) as store:
        assert store.scored_episodes("s")[0][2] == {"prefix": {}}
        assert store.scored_episodes("other code")[0][2] is None
        ep = Episode(episode_id="e1", task_id="t1", design="react", model="m", seed=0)
        ep.final_answer = "rewritten without records (an older replan, say)"
        store.save_episode("exp", ep, [])
        assert store.scored_episodes("s")[0][2] is None


def test_a_clear_that_fails_leaves_every_row(tmp_path: Path) -> None:
    db = _store_with_one_episode(tmp_path)
    rows = _rows(db)
    with sqlite3.connect(db) as c:  # the last delete of the clear fails (a full disk, say)
        c.execute(
            "CREATE TRIGGER no_delete BEFORE DELETE ON experiments "
            "BEGIN SELECT RAISE(ABORT, 'disk full'); END"
        )
    with ResultsStore(tmp_path) as store, pytest.raises(sqlite3.IntegrityError):
        store.clear()
    assert _rows(db) == rows
    with sqlite3.connect(db) as c:
        c.execute("DROP TRIGGER no_delete")
    with ResultsStore(tmp_path) as store:
        assert store.clear()["episodes"] == 1
    assert _rows(db) == []
    with sqlite3.connect(db) as c:
        assert c.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
