"""The results store: one SQLite file (WAL) per output directory.

Tables: ``experiments`` (config), ``tasks`` (the Task JSON each episode ran), ``episodes`` (the
full Episode JSON plus indexed columns), ``feedback`` (one row per episode and metric key) and
``scores`` (per episode, the per-run records every aggregate is computed from, with the stamp of
the scoring code that made them and a digest of the episode text they score). An episode, its
feedback and its records are committed in one transaction as soon as the episode finishes, so a
crash loses at most the episodes in flight and a rerun resumes by skipping finished keys.

The store owns its schema: it is marked by ``PRAGMA application_id`` (:data:`APPLICATION_ID`)
and the version is ``PRAGMA user_version`` (:data:`SCHEMA_VERSION`). Before anything is written
the file is recognised (:func:`check_store_file`): absent, empty, a store of ours, or one from
before the marker (its tables are replan's own); anything else (another application's SQLite
file, a folder, a FIFO, a dangling link, a read-only file or folder, a corrupt file) is refused
with one line naming the path and what to do. A store written before the version was recorded
(0) is upgraded in place by adding what is new, any other version is refused with one line. The
only way to empty a store is :meth:`ResultsStore.clear` (``replan clear``, which asks first): one
transaction, so a failed clear leaves every row.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import stat
import sys
import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from replan.core.redact import redact, redact_value
from replan.core.task import Task
from replan.core.trace import FAILURE_END_REASONS, Episode

try:  # POSIX; elsewhere a store has no writer lock
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

T = TypeVar("T")

SCHEMA = """
CREATE TABLE IF NOT EXISTS experiments (
    id TEXT PRIMARY KEY,
    config TEXT NOT NULL,
    created_at TEXT NOT NULL DEFAULT (datetime('now'))
);
CREATE TABLE IF NOT EXISTS tasks (
    task_id TEXT PRIMARY KEY,
    suite TEXT NOT NULL,
    level TEXT,
    mode TEXT,
    task TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS episodes (
    key TEXT PRIMARY KEY,
    experiment_id TEXT NOT NULL REFERENCES experiments(id),
    task_id TEXT NOT NULL,
    design TEXT NOT NULL,
    model TEXT NOT NULL,
    seed INTEGER NOT NULL,
    mode TEXT,
    level TEXT,
    end_reason TEXT NOT NULL,
    success INTEGER,
    failed INTEGER NOT NULL DEFAULT 0,
    episode TEXT NOT NULL,
    created_at TEXT NOT NULL DEFAULT (datetime('now'))
);
CREATE INDEX IF NOT EXISTS episodes_by_experiment ON episodes(experiment_id, design, model);
CREATE TABLE IF NOT EXISTS uploads (
    episode_key TEXT NOT NULL,
    target TEXT NOT NULL,
    uploaded_at TEXT NOT NULL DEFAULT (datetime('now')),
    PRIMARY KEY (episode_key, target)
);
CREATE TABLE IF NOT EXISTS feedback (
    episode_key TEXT NOT NULL REFERENCES episodes(key),
    key TEXT NOT NULL,
    score REAL,
    value TEXT,
    comment TEXT,
    PRIMARY KEY (episode_key, key)
);
CREATE TABLE IF NOT EXISTS selections (
    experiment_id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    task_ids TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS scores (
    episode_key TEXT PRIMARY KEY REFERENCES episodes(key),
    stamp TEXT NOT NULL,
    episode_digest TEXT NOT NULL,
    records TEXT NOT NULL
);
"""
#: the layout :data:`SCHEMA` creates (``PRAGMA user_version``); 0 is a store from before the
#: version was recorded (no ``scores`` table), which opening upgrades
SCHEMA_VERSION = 2
#: ``PRAGMA application_id`` of a replan results store (``rpln``): the marker that tells it from
#: another application's SQLite file before anything is written
APPLICATION_ID = 0x72706C6E
#: the tables of a store: a store written before :data:`APPLICATION_ID` was set is recognised
#: by holding only these, ``experiments`` and ``episodes`` among them
STORE_TABLES = frozenset(
    {"experiments", "tasks", "episodes", "uploads", "feedback", "selections", "scores"}
)


@dataclass(frozen=True)
class FeedbackRow:
    key: str
    score: float | None
    comment: str = ""
    value: Any = None

    @classmethod
    def of(cls, feedback: Any) -> FeedbackRow:
        """The row of an evaluator's ``Feedback`` (anything with key, score, comment, value)."""
        return cls(
            key=feedback.key,
            score=feedback.score,
            comment=feedback.comment or "",
            value=getattr(feedback, "value", None),
        )


def _why(exc: BaseException) -> str:
    """The first reason of an error on one short line (a pydantic error's first field)."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            first = errors()[0]
            return f"{'.'.join(str(x) for x in first.get('loc', ())) or 'value'}: {first['msg']}"
        except Exception:  # not pydantic's: fall back to the text
            pass
    return (str(exc).splitlines() or [type(exc).__name__])[0][:200]


def text_digest(text: str) -> str:
    """The digest of an episode's stored text, kept beside its records: records are used only
    for the very text they scored (an episode rewritten since, by any writer, is scored again)."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def episode_key(task_id: str, design: str, model: str, seed: int) -> str:
    """The identity of one episode in an experiment: what resume skips on."""
    return f"{task_id}|{design}|{model}|{seed}"


class StoreError(ValueError):
    """A results store that cannot be used; the message is one line naming the file and the fix."""


class StoreCorrupt(StoreError):
    """``results.sqlite`` is not a sound SQLite database: nothing is read from or written to it."""


class SuiteMismatch(StoreError):
    """The store holds results of another version of the same suite (or another definition of
    a task): mixing them would score and compare different questions as one."""


#: the key of an experiment's stored config that records the suite it ran: name, version and
#: content digest (:func:`replan.suites.versions.suite_identity`), plus how many tasks it
#: selected and their digest
SUITE_RECORD = "suite_id"


class StoreBusy(StoreError):
    """Another process is writing the store (it holds the writer lock)."""


SQLITE_HEADER = b"SQLite format 3\x00"


#: (path, size, mtime) of store files found sound in this process
_SOUND: set[tuple[str, int, int]] = set()


def _kind_of(path: Path) -> str | None:
    """What is at ``path`` when it is not a regular file (``None`` when absent or a file, or a
    link to one): a store is a file or nothing."""
    try:
        st = path.lstat()
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        if not path.exists():
            return f"a dangling symbolic link (to {os.readlink(path)})"
        st = path.stat()
    if stat.S_ISREG(st.st_mode):
        return None
    if stat.S_ISDIR(st.st_mode):
        return "a folder"
    if stat.S_ISFIFO(st.st_mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(st.st_mode):
        return "a socket"
    return "a device, not a regular file"


def check_store_dir(out_dir: str | Path) -> Path:
    """Create ``out_dir`` when absent and return it; :class:`StoreError` (one line) when it is
    not a folder, cannot be created or cannot be written (a store is written beside itself)."""
    out = Path(out_dir)
    if (out.exists() or out.is_symlink()) and not out.is_dir():
        raise StoreError(
            f"{out}: not a folder ({_kind_of(out) or 'a file'}); a results store is a folder: "
            "give --out a folder path"
        )
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(
            f"{out}: cannot create the results folder ({exc.strerror or exc}); use another --out"
        ) from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise StoreError(
            f"{out}: the results folder is read-only; make it writable (chmod u+w {out}) or copy "
            "it and use the copy"
        )
    return out


def check_store_file(path: str | Path) -> None:
    """Raise :class:`StoreError` (one line naming ``path`` and the fix) unless ``path`` is
    absent, empty, or a sound, writable replan results store.

    Nothing is written here. What is at ``path`` must be a regular file (not a folder, a FIFO,
    a dangling link); writable; a SQLite database (the header is read first: garbage there
    makes SQLite refuse it); sound (``PRAGMA quick_check`` on a read-only connection finds
    garbage in the middle: :class:`StoreCorrupt`); and replan's (:data:`APPLICATION_ID`, or
    only replan's tables from before the marker, or no tables at all): another application's
    database is never written into. A file found sound is not checked again in this process
    while its size and modification time stay the same (a command opens its store several
    times; ``quick_check`` reads the whole file).
    """
    path = Path(path)
    kind = _kind_of(path)
    if kind is not None:
        raise StoreError(
            f"{path}: {kind} is where the results store goes; nothing was written: move it "
            "aside or use another --out"
        )
    if not path.is_file() or path.stat().st_size == 0:
        return
    st = path.stat()
    seen = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if seen in _SOUND:
        return
    if not os.access(path, os.R_OK | os.W_OK):
        raise StoreError(
            f"{path}: the results store is read-only; make it writable (chmod u+rw {path}) or "
            "copy its folder and use the copy"
        )
    fix = (
        f"move it aside (mv {path} {path}.corrupt) and rerun to start a new store, "
        "or restore a copy"
    )
    with path.open("rb") as fh:
        header = fh.read(len(SQLITE_HEADER))
    if header != SQLITE_HEADER:
        raise StoreCorrupt(f"{path}: not a SQLite database (bad header); {fix}")
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            rows = conn.execute("PRAGMA quick_check").fetchall()
            app_id = conn.execute("PRAGMA application_id").fetchone()[0]
            tables = {
                name: {c[1] for c in conn.execute(f"PRAGMA table_info({_quoted(name)})")}
                for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                if not name.startswith("sqlite_")
            }
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise StoreCorrupt(f"{path}: the results store is corrupt ({exc}); {fix}") from None
    problems = [str(r[0]) for r in rows if r and r[0] != "ok"]
    if problems:
        more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
        raise StoreCorrupt(f"{path}: the results store is corrupt ({problems[0]}{more}); {fix}")
    foreign = _foreign(app_id, tables)
    if foreign:
        raise StoreError(
            f"{path}: not a replan results store ({foreign}); nothing was written to it: use "
            "another --out, or move the file aside"
        )
    _SOUND.add(seen)


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _foreign(app_id: int, tables: Mapping[str, set[str]]) -> str:
    """Why a sound SQLite database is not a replan store ('' when it is one, or is empty)."""
    if app_id == APPLICATION_ID:
        return ""
    if app_id:
        return f"another application's SQLite database, application id {app_id:#x}"
    if not tables:
        return ""  # nothing in it to harm: it becomes a store
    ours = (
        set(tables) <= STORE_TABLES
        and {"experiments", "episodes"} <= set(tables)
        and {"key", "experiment_id", "episode"} <= tables["episodes"]
    )
    if ours:  # written before the marker was set
        return ""
    names = sorted(tables)
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    return f"another application's SQLite database, with tables {shown}"


#: writer locks this process holds: lock-file path -> [open file, how many holders]
_WRITERS: dict[str, list[Any]] = {}
_WRITERS_LOCK = threading.Lock()


class WriterLock:
    """The one-writer lock of ``out_dir``'s store; :meth:`acquire` raises :class:`StoreBusy` at once.

    An exclusive ``flock`` on ``DIR/results.sqlite.lock``, which names the holder (pid and
    command line); the OS drops it when the holder dies, even by ``kill -9``, so a stale lock
    never blocks a rerun. Re-entrant within a process (a run and its ``--fresh`` share it).
    """

    def __init__(self, out_dir: str | Path):
        self.dir = Path(out_dir)
        self.path = self.dir / (ResultsStore.FILENAME + ".lock")
        self._held = False

    def acquire(self) -> WriterLock:
        check_store_dir(self.dir)
        key = str(self.path.resolve())
        with _WRITERS_LOCK:
            held = _WRITERS.get(key)
            if held is not None:
                held[1] += 1
            else:
                try:
                    fh = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - held past here
                except OSError as exc:
                    raise StoreError(
                        f"{self.path}: cannot open the writer lock ({exc.strerror or exc}); "
                        "move it aside or use another --out"
                    ) from None
                if fcntl is not None:
                    try:
                        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                    except OSError:
                        fh.seek(0)
                        holder = fh.read().strip() or "pid unknown"
                        fh.close()
                        raise StoreBusy(
                            f"{self.dir}: another replan process is writing this results store "
                            f"({holder}); wait for it to finish or use another --out"
                        ) from None
                fh.seek(0)
                fh.truncate()
                fh.write(f"pid {os.getpid()}: {redact(' '.join(sys.argv))[:300]}\n")
                fh.flush()
                _WRITERS[key] = [fh, 1]
        self._held = True
        return self

    def release(self) -> None:
        if not self._held:
            return
        self._held = False
        key = str(self.path.resolve())
        with _WRITERS_LOCK:
            held = _WRITERS[key]
            held[1] -= 1
            if held[1] == 0:
                del _WRITERS[key]
                held[0].close()  # closing the file releases the flock

    def __enter__(self) -> WriterLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def writer_lock(out_dir: str | Path) -> WriterLock:
    """``with writer_lock(DIR):`` hold the store's one-writer lock (see :class:`WriterLock`)."""
    return WriterLock(out_dir)


class ResultsStore:
    """Thread-safe access to ``DIR/results.sqlite``."""

    FILENAME = "results.sqlite"

    def __init__(self, out_dir: str | Path):
        self.dir = check_store_dir(out_dir)
        self.path = self.dir / self.FILENAME
        self._lock = threading.Lock()
        check_store_file(self.path)  # recognised as ours (or new) before anything is written
        try:
            self._open()
        except sqlite3.Error as exc:
            if getattr(self, "_conn", None) is not None:
                self._conn.close()
            raise StoreError(
                f"{self.path}: the results store cannot be opened ({exc}); check the disk and "
                "the file's permissions, or use another --out"
            ) from None

    def _open(self) -> None:
        self._conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        version = self._conn.execute("PRAGMA user_version").fetchone()[0]
        if version not in (0, SCHEMA_VERSION):  # checked before anything is written
            self._conn.close()
            newer = (
                " (written by a newer replan: upgrade replan)" if version > SCHEMA_VERSION else ""
            )
            raise StoreError(
                f"{self.path}: results store schema version {version}, this replan reads version "
                f"{SCHEMA_VERSION}{newer}; nothing was changed, use another --out"
            )
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.executescript(SCHEMA)
        if version != SCHEMA_VERSION:
            self._conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        if self._conn.execute("PRAGMA application_id").fetchone()[0] != APPLICATION_ID:
            self._conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def _read(self, what: str, key: str, parse: Callable[[str], T], text: str) -> T:
        """One stored row parsed; a row that cannot be read (changed outside replan) is one
        line naming the store, the row and the fix, not a traceback."""
        try:
            return parse(text)
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
            raise StoreError(
                f"{self.path}: the stored {what} {key!r} cannot be read ({_why(exc)}); it was "
                "changed outside replan: rerun it with `replan run ... --fresh`, or move the "
                "store aside"
            ) from None

    def __enter__(self) -> ResultsStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    # -- writing ----------------------------------------------------------------------------------
    def ensure_experiment(self, experiment_id: str, config: dict[str, Any]) -> None:
        """Record an experiment's config (once).

        A config that records its suite (:data:`SUITE_RECORD`) is checked first, in the same
        transaction: a store never holds two versions (or digests) of one suite, whichever
        experiment ran them (:class:`SuiteMismatch`, nothing written); tasks handed in directly
        (version ``custom``) are checked task by task instead (:meth:`check_tasks`). An
        experiment stored without a record (by an older replan) gets this one."""
        record = config.get(SUITE_RECORD)
        with self._tx() as c:
            stored = {
                eid: self._read("experiment", eid, json.loads, text)
                for eid, text in c.execute("SELECT id, config FROM experiments").fetchall()
            }
            if record:
                self._check_suite(record, stored)
            c.execute(
                "INSERT OR IGNORE INTO experiments(id, config) VALUES (?, ?)",
                (experiment_id, json.dumps(redact_value(config), sort_keys=True)),
            )
            if record and experiment_id in stored and SUITE_RECORD not in stored[experiment_id]:
                c.execute(
                    "UPDATE experiments SET config = ? WHERE id = ?",
                    (
                        json.dumps({**stored[experiment_id], SUITE_RECORD: record}, sort_keys=True),
                        experiment_id,
                    ),
                )

    def _check_suite(self, record: Mapping[str, Any], stored: Mapping[str, dict[str, Any]]) -> None:
        if record.get("version") == "custom":
            return
        for cfg in stored.values():
            old = cfg.get(SUITE_RECORD) or {}
            if old.get("name") != record.get("name") or old.get("version") == "custom":
                continue
            if (old.get("version"), old.get("digest")) != (
                record.get("version"),
                record.get("digest"),
            ):
                raise SuiteMismatch(
                    f"{self.dir}: suite {record.get('name')!r} version {old.get('version')} "
                    f"(digest {old.get('digest')}) is stored here and this run's is version "
                    f"{record.get('version')} (digest {record.get('digest')}); results of two "
                    "suite versions must not mix: run into a new --out folder (or empty this "
                    f"one with `replan clear {self.dir}`)"
                )

    def check_tasks(self, tasks: Iterable[Task]) -> None:
        """Raise :class:`SuiteMismatch` when one of ``tasks`` is stored under its id with another
        definition (the episodes stored for it would be scored against the new one)."""
        with self._lock:
            rows = self._conn.execute("SELECT task_id, task FROM tasks").fetchall()
        stored = dict(rows)
        for t in tasks:
            text = stored.get(t.task_id)
            if text is None or text == t.model_dump_json():
                continue
            try:
                old = Task.model_validate_json(text)
            except ValueError:  # an unreadable row holds no definition to keep: it is rewritten
                continue
            if old != t:
                raise SuiteMismatch(
                    f"{self.dir}: task {t.task_id!r} of suite {t.suite!r} is stored here with "
                    "another definition; results of two versions of a suite must not mix: run "
                    f"into a new --out folder (or empty this one with `replan clear {self.dir}`)"
                )

    def save_tasks(self, tasks: Iterable[Task]) -> None:
        with self._tx() as c:
            c.executemany(
                "INSERT OR REPLACE INTO tasks(task_id, suite, level, mode, task) VALUES (?,?,?,?,?)",
                [(t.task_id, t.suite, t.level, t.mode, t.model_dump_json()) for t in tasks],
            )

    def save_episode(
        self,
        experiment_id: str,
        episode: Episode,
        feedback: Iterable[FeedbackRow],
        level: str | None = None,
        *,
        records: Mapping[str, Any] | None = None,
        stamp: str | None = None,
    ) -> str:
        """Store one finished episode with its feedback, atomically; returns its key.

        ``records`` (with the ``stamp`` of the scoring code that made them) are the per-run
        records the feedback was computed from (``EpisodeScore.records()``), what the summary,
        the report and compare aggregate."""
        key = episode_key(episode.task_id, episode.design, episode.model, episode.seed)
        text = episode.to_json()
        with self._tx() as c:
            c.execute("DELETE FROM uploads WHERE episode_key = ?", (key,))  # a new result
            c.execute(
                "INSERT OR REPLACE INTO episodes(key, experiment_id, task_id, design, model, seed,"
                " mode, level, end_reason, success, failed, episode) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    key,
                    experiment_id,
                    episode.task_id,
                    episode.design,
                    episode.model,
                    episode.seed,
                    episode.mode,
                    level,
                    episode.end_reason.value,
                    None if episode.success is None else int(episode.success),
                    int(episode.end_reason.value in FAILURE_END_REASONS),
                    text,
                ),
            )
            self._write_scores(c, key, feedback, records, stamp, text_digest(text))
        return key

    @staticmethod
    def _write_scores(
        c: sqlite3.Connection,
        key: str,
        feedback: Iterable[FeedbackRow],
        records: Mapping[str, Any] | None,
        stamp: str | None,
        digest: str,
    ) -> None:
        """Replace an episode's feedback rows and records (inside the caller's transaction)."""
        c.execute("DELETE FROM feedback WHERE episode_key = ?", (key,))
        c.execute("DELETE FROM scores WHERE episode_key = ?", (key,))
        c.executemany(
            "INSERT OR REPLACE INTO feedback(episode_key, key, score, value, comment) VALUES (?,?,?,?,?)",
            [
                (key, f.key, f.score, None if f.value is None else json.dumps(f.value), f.comment)
                for f in feedback
            ],
        )
        if records is not None and stamp is not None:
            c.execute(
                "INSERT INTO scores(episode_key, stamp, episode_digest, records) VALUES (?,?,?,?)",
                (key, stamp, digest, json.dumps(records)),
            )

    def save_scores(
        self,
        stamp: str,
        scored: Iterable[tuple[str, str, Sequence[FeedbackRow], Mapping[str, Any]]],
    ) -> int:
        """Store new feedback and records for episodes already stored, given as ``(key, digest
        of the episode text scored, feedback rows, records)``, in one transaction; an episode
        deleted since is skipped. Returns how many were stored; :class:`StoreError` (nothing
        stored) when the store cannot be written."""
        n = 0
        try:
            with self._tx() as c:
                for key, digest, feedback, records in scored:
                    if c.execute("SELECT 1 FROM episodes WHERE key = ?", (key,)).fetchone():
                        self._write_scores(c, key, feedback, records, stamp, digest)
                        n += 1
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: could not store the scores ({exc})") from None
        return n

    def save_selection(self, experiment_id: str, source: str, task_ids: list[str]) -> None:
        """Record which tasks an experiment selected from which source (``source`` names the
        data, e.g. a file's size and mtime), so a resume can skip generating the suite."""
        with self._tx() as c:
            c.execute(
                "INSERT OR REPLACE INTO selections(experiment_id, source, task_ids) VALUES (?,?,?)",
                (experiment_id, source, json.dumps(task_ids)),
            )

    def selection(self, experiment_id: str, source: str) -> list[Task] | None:
        """The tasks ``experiment_id`` selected from ``source``, in order; ``None`` when it
        never ran, the source changed, or a task is missing."""
        with self._lock:
            row = self._conn.execute(
                "SELECT source, task_ids FROM selections WHERE experiment_id = ?",
                (experiment_id,),
            ).fetchone()
        if row is None or row[0] != source:
            return None
        try:
            ids = json.loads(row[1])
        except ValueError:  # an unreadable selection: the suite is selected again
            return None
        tasks = self.tasks()
        if any(t not in tasks for t in ids):
            return None
        return [tasks[t] for t in ids]

    def clear(self) -> dict[str, int]:
        """Delete every experiment, task, episode, feedback and score row (``replan clear``, an
        explicit command that asks first); returns how many rows of each table were deleted.

        The store's reset, and the only one: nothing deletes its files. One transaction, so a
        clear that fails (the store busy, a full disk) leaves every row; the file stays, empty,
        valid and at :data:`SCHEMA_VERSION`."""
        tables = ("scores", "feedback", "episodes", "selections", "tasks", "experiments")
        with self._tx() as c:
            counts = {t: c.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in tables}
            for t in tables:
                c.execute(f"DELETE FROM {t}")
            c.execute("DELETE FROM uploads")
        return counts

    def fingerprint(self) -> list[Any]:
        """A cheap summary of the store's contents that changes whenever an episode, its
        feedback or records, an experiment or a task is written (for caches of derived
        results)."""
        with self._lock:
            return list(
                self._conn.execute(
                    "SELECT (SELECT COUNT(*) FROM episodes), (SELECT MAX(rowid) FROM episodes),"
                    " (SELECT COUNT(*) FROM feedback), (SELECT MAX(rowid) FROM feedback),"
                    " (SELECT COUNT(*) FROM scores), (SELECT MAX(rowid) FROM scores),"
                    " (SELECT COUNT(*) FROM experiments),"
                    " (SELECT COUNT(*) || ':' || TOTAL(LENGTH(task)) FROM tasks)"
                ).fetchone()
            )

    def mark_uploaded(self, keys: Iterable[str], target: str) -> None:
        """Record that these episodes reached ``target`` (e.g. a LangSmith endpoint)."""
        with self._tx() as c:
            c.executemany(
                "INSERT OR REPLACE INTO uploads(episode_key, target) VALUES (?, ?)",
                [(k, target) for k in keys],
            )

    def uploaded_keys(self, target: str) -> set[str]:
        """Keys of the episodes already sent to ``target``."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT episode_key FROM uploads WHERE target = ?", (target,)
            ).fetchall()
        return {r[0] for r in rows}

    # -- reading ----------------------------------------------------------------------------------
    def done_keys(self, experiment_id: str | None = None, *, with_failed: bool = True) -> set[str]:
        """Keys of stored episodes; ``with_failed=False`` leaves out infrastructure failures
        (:data:`FAILURE_END_REASONS`), which a resume runs again."""
        q = "SELECT key FROM episodes WHERE 1=1"
        params: tuple[Any, ...] = ()
        if experiment_id is not None:
            q += " AND experiment_id = ?"
            params = (experiment_id,)
        if not with_failed:
            q += " AND failed = 0"
        with self._lock:
            return {r[0] for r in self._conn.execute(q, params).fetchall()}

    def failed_keys(self) -> set[str]:
        """Keys of stored infrastructure failures (model error, crash, timeout)."""
        with self._lock:
            cur = self._conn.execute("SELECT key FROM episodes WHERE failed = 1")
            return {r[0] for r in cur.fetchall()}

    def failure_reasons(self, keys: Collection[str] | None = None) -> list[tuple[str, int]]:
        """``(reason, how many)`` of the stored infrastructure failures (of ``keys``), most
        frequent first: the reason is the end reason and the first line of the episode's
        error (``crashed: RuntimeError: no GPU``), so one cause shows once with its count."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT key, task_id, end_reason, CASE WHEN json_valid(episode) THEN"
                " json_extract(episode, '$.error') END FROM episodes WHERE failed = 1"
            ).fetchall()
        wanted = None if keys is None else set(keys)
        counts: dict[str, int] = {}
        for key, task_id, end, error in rows:
            if wanted is not None and key not in wanted:
                continue
            first = (str(error or "").strip().splitlines() or ["no error recorded"])[0]
            # the same cause on every task reads the same: the task's name is left out
            first = first.replace(task_id, "<task>") if task_id else first
            if first.startswith("task <task>"):  # "task T, design D: why" -> "why"
                first = first.partition(": ")[2] or first
            reason = f"{end}: {redact(first)[:300]}"
            counts[reason] = counts.get(reason, 0) + 1
        return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))

    def experiments(self) -> list[tuple[str, dict[str, Any]]]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT id, config FROM experiments ORDER BY created_at, id"
            ).fetchall()
        return [
            (r[0], redact_value(self._read("experiment", r[0], json.loads, r[1]))) for r in rows
        ]

    def suite_record(self, experiment_id: str) -> dict[str, Any]:
        """The suite an experiment ran (:data:`SUITE_RECORD`); ``{}`` when none was recorded."""
        with self._lock:
            row = self._conn.execute(
                "SELECT config FROM experiments WHERE id = ?", (experiment_id,)
            ).fetchone()
        if not row:
            return {}
        return dict(
            self._read("experiment", experiment_id, json.loads, row[0]).get(SUITE_RECORD) or {}
        )

    def tasks(self) -> dict[str, Task]:
        with self._lock:
            rows = self._conn.execute("SELECT task_id, task FROM tasks").fetchall()
        out = {}
        for task_id, text in rows:
            t = self._read("task", task_id, Task.model_validate_json, text)
            out[t.task_id] = t
        return out

    def episodes(self, experiment_id: str | None = None) -> list[Episode]:
        q = "SELECT key, episode FROM episodes"
        params: tuple[Any, ...] = ()
        if experiment_id is not None:
            q += " WHERE experiment_id = ?"
            params = (experiment_id,)
        with self._lock:
            rows = self._conn.execute(q + " ORDER BY key", params).fetchall()
        return [self._read("episode", k, Episode.from_json, text) for k, text in rows]

    def scored_episodes(
        self, stamp: str, keys: Collection[str] | None = None
    ) -> list[tuple[Episode, str, dict[str, Any] | None]]:
        """``(episode, digest of its stored text, records)`` of every stored episode (or of
        ``keys``), in key order; records are ``None`` where none are stored, where the scoring
        code that made them is not ``stamp``, or where they scored an earlier text of the
        episode."""
        return list(self.iter_scored_episodes(stamp, keys))

    def iter_scored_episodes(
        self,
        stamp: str,
        keys: Collection[str] | None = None,
        *,
        page: int = 256,
        slim: bool = False,
    ) -> Iterator[tuple[Episode, str, dict[str, Any] | None]]:
        """:meth:`scored_episodes` one at a time, read ``page`` rows per query (by key), so a
        reader that keeps only what it needs of each episode holds one page of texts at once.
        ``slim``: an episode whose records are current comes without its steps and plans (SQLite
        drops them from the JSON text, so they are never parsed: most of an episode's text and
        of the time it takes to read); one to be scored again comes whole."""
        wanted = None if keys is None else set(keys)
        last = ""
        lean = "json_remove(e.episode, '$.steps', '$.plans')" if slim else "NULL"
        # a page holding a text that is not JSON is read again with this: NULL for that text,
        # which is then parsed (and refused) whole (checking every text first costs 40% more)
        checked = f"CASE WHEN json_valid(e.episode) THEN {lean} END"
        query = (
            "SELECT e.key, e.episode, s.stamp, s.episode_digest, s.records, {} FROM episodes e"
            " LEFT JOIN scores s ON s.episode_key = e.key WHERE e.key > ? ORDER BY e.key LIMIT ?"
        )
        while True:
            with self._lock:
                try:
                    rows = self._conn.execute(query.format(lean), (last, page)).fetchall()
                except sqlite3.OperationalError as exc:
                    if not slim or "JSON" not in str(exc):
                        raise
                    rows = self._conn.execute(query.format(checked), (last, page)).fetchall()
            if not rows:
                return
            last = rows[-1][0]
            for key, text, made_by, scored_digest, records, lean_text in rows:
                if wanted is not None and key not in wanted:
                    continue
                digest = text_digest(text)
                current = made_by == stamp and scored_digest == digest
                ep = self._read(
                    "episode", key, Episode.from_json, lean_text if current and lean_text else text
                )
                yield (
                    ep,
                    digest,
                    self._read("scores of", key, json.loads, records) if current else None,
                )

    def episodes_by_key(self, keys: Iterable[str]) -> dict[str, Episode]:
        """The stored episodes of ``keys`` (those that exist), read in pages of 500."""
        wanted = list(dict.fromkeys(keys))
        out: dict[str, Episode] = {}
        for i in range(0, len(wanted), 500):
            part = wanted[i : i + 500]
            with self._lock:
                rows = self._conn.execute(
                    f"SELECT key, episode FROM episodes WHERE key IN ({','.join('?' * len(part))})",
                    part,
                ).fetchall()
            out.update((k, self._read("episode", k, Episode.from_json, text)) for k, text in rows)
        return out

    def feedback(
        self, experiment_id: str | None = None
    ) -> list[tuple[str, str, float | None, str]]:
        """(episode key, metric key, score, comment) rows, ordered."""
        q = (
            "SELECT f.episode_key, f.key, f.score, f.comment FROM feedback f JOIN episodes e "
            "ON e.key = f.episode_key"
        )
        params: tuple[Any, ...] = ()
        if experiment_id is not None:
            q += " WHERE e.experiment_id = ?"
            params = (experiment_id,)
        with self._lock:
            return [tuple(r) for r in self._conn.execute(q + " ORDER BY 1, 2", params).fetchall()]

    def snapshot(self) -> dict[str, Any]:
        """Everything that defines the results (for equality checks between two runs)."""
        with self._lock:
            eps = self._conn.execute(
                "SELECT key, task_id, design, model, seed, end_reason, success FROM episodes ORDER BY key"
            ).fetchall()
        return {"episodes": [tuple(r) for r in eps], "feedback": self.feedback()}
