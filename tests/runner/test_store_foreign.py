"""Never write into what isn't ours (issue 30 §3): a results store is recognised by its own
schema marker before anything is written, and whatever else is at ``DIR/results.sqlite`` (another
application's SQLite file, a folder, a FIFO, a dangling link, a read-only file or folder, a row
changed outside replan) is one line naming the path and what to do, with a non-zero exit."""

from __future__ import annotations

import os
import re
import sqlite3
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from replan.cli import app
from replan.core.trace import Episode
from replan.runner import store as store_module
from replan.runner.store import APPLICATION_ID, FeedbackRow, ResultsStore, StoreError

QUICK = ["--agents", "react", "--concurrency", "1", "--limit", "2"]


def _invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def _one_line(res, *needles: str) -> str:
    """The command failed with exactly one line on stderr, naming each of ``needles``."""
    assert res.exit_code not in (0, None), (res.exit_code, res.output)
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, res.stderr
    assert "Traceback" not in res.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def _foreign_db(path: Path) -> bytes:
    """Another application's SQLite file (a browser history, say); returns its bytes."""
    with sqlite3.connect(path) as c:
        c.execute("CREATE TABLE urls (id INTEGER PRIMARY KEY, url TEXT)")
        c.execute("INSERT INTO urls(url) VALUES ('https://example.org')")
    return path.read_bytes()


def _store_with_one_episode(out: Path) -> Path:
    with ResultsStore(out) as store:
        store.ensure_experiment("exp", {"suite": "hand-built"})
        ep = Episode(episode_id="e1", task_id="t1", design="react", model="m", seed=0)
        store.save_episode("exp", ep, [FeedbackRow("prefix.fed", 1.0)])
    return out / ResultsStore.FILENAME


def test_another_applications_sqlite_file_is_never_written(tmp_path: Path) -> None:
    db = tmp_path / ResultsStore.FILENAME
    before = _foreign_db(db)
    with pytest.raises(StoreError, match="not a replan results store"):
        ResultsStore(tmp_path)
    _one_line(_invoke("report", str(tmp_path)), str(db), "urls")
    _one_line(_invoke("run", *QUICK, "--out", str(tmp_path)), str(db), "another --out")
    _one_line(_invoke("clear", "--yes", str(tmp_path)), str(db))
    assert db.read_bytes() == before  # not a table added, not a byte changed
    with sqlite3.connect(db) as c:
        tables = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert tables == {"urls"}


def test_a_sqlite_file_marked_by_another_application_is_refused(tmp_path: Path) -> None:
    db = tmp_path / ResultsStore.FILENAME
    with sqlite3.connect(db) as c:
        c.execute("PRAGMA application_id = 1234")
    before = db.read_bytes()
    with pytest.raises(StoreError, match="application id 0x4d2"):
        ResultsStore(tmp_path)
    assert db.read_bytes() == before


def test_a_new_store_carries_the_marker_and_an_older_one_gets_it(tmp_path: Path) -> None:
    db = _store_with_one_episode(tmp_path / "new")
    with sqlite3.connect(db) as c:
        assert c.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    old = _store_with_one_episode(tmp_path / "old")
    with sqlite3.connect(old) as c:  # a store written before the marker existed
        c.execute("PRAGMA application_id = 0")
    with ResultsStore(tmp_path / "old") as store:
        assert [e.episode_id for e in store.episodes()] == ["e1"]
    with sqlite3.connect(old) as c:
        assert c.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID


def _folder(p: Path) -> None:
    p.mkdir()


def _fifo(p: Path) -> None:
    os.mkfifo(p)


def _dangling(p: Path) -> None:
    p.symlink_to(p.parent / "gone.sqlite")


@pytest.mark.parametrize(
    ("make", "what"),
    [(_folder, "a folder"), (_fifo, "FIFO"), (_dangling, "dangling symbolic link")],
)
def test_what_is_not_a_file_in_the_stores_place_is_one_line(tmp_path: Path, make, what) -> None:
    db = tmp_path / ResultsStore.FILENAME
    make(db)
    with pytest.raises(StoreError, match=what):
        ResultsStore(tmp_path)
    _one_line(_invoke("report", str(tmp_path)), str(db), what)
    _one_line(_invoke("run", *QUICK, "--out", str(tmp_path)), str(db), what, "move it aside")
    assert not (tmp_path / "gone.sqlite").exists()  # a dangling link is not followed


@pytest.fixture
def no_root_override(monkeypatch: pytest.MonkeyPatch) -> None:
    """Permissions as a normal user sees them, also when the tests run as root (root may
    write into anything, so a read-only file would not be read-only to it)."""
    if os.geteuid() != 0:
        return
    real = os.access

    def access(path, mode, *args, **kwargs):
        if mode & os.W_OK and not os.stat(path).st_mode & stat.S_IWUSR:
            return False
        return real(path, mode, *args, **kwargs)

    monkeypatch.setattr(store_module.os, "access", access)


@pytest.mark.usefixtures("no_root_override")
@pytest.mark.parametrize("which", ["file", "folder"])
def test_a_read_only_store_is_called_read_only_not_corrupt(tmp_path: Path, which: str) -> None:
    out = tmp_path / "r"
    db = _store_with_one_episode(out)
    target = db if which == "file" else out
    mode = target.stat().st_mode
    target.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    try:
        before = db.read_bytes()
        line = _one_line(_invoke("report", str(out)), str(target), "read-only", "chmod u+")
        assert "corrupt" not in line and "mv " not in line
        _one_line(_invoke("run", *QUICK, "--out", str(out)), str(target), "read-only")
        assert db.read_bytes() == before
    finally:
        target.chmod(mode)


def test_a_row_changed_outside_replan_is_one_line_naming_it(tmp_path: Path) -> None:
    db = _store_with_one_episode(tmp_path)
    with sqlite3.connect(db) as c:
        c.execute("UPDATE episodes SET episode = '{\"episode_id\": 5' WHERE key LIKE 't1|%'")
    with (
        ResultsStore(tmp_path) as store,
        pytest.raises(StoreError, match=re.escape("t1|react|m|0")),
    ):
        store.episodes()
    _one_line(_invoke("report", str(tmp_path)), str(db), "t1|react|m|0", "--fresh")


@pytest.mark.usefixtures("no_root_override")
@pytest.mark.parametrize("which", ["file", "read-only folder"])
def test_out_that_is_a_file_or_read_only_is_one_line(tmp_path: Path, which: str) -> None:
    out = tmp_path / "out"
    if which == "file":
        out.write_text("my notes\n", encoding="utf-8")
        _one_line(_invoke("run", *QUICK, "--out", str(out)), str(out), "not a folder")
        assert out.read_text(encoding="utf-8") == "my notes\n"
        return
    out.mkdir()
    out.chmod(0o555)
    try:
        _one_line(_invoke("run", *QUICK, "--out", str(out)), str(out), "read-only")
        assert list(out.iterdir()) == []
    finally:
        out.chmod(0o755)
