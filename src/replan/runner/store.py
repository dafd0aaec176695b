"""The results store: one SQLite file (WAL) per output directory.

Tables: ``experiments`` (config), ``tasks`` (the Task JSON each episode ran), ``episodes`` (the
full Episode JSON plus indexed columns), ``feedback`` (one row per episode and metric key). An
episode and its feedback are committed in one transaction as soon as the episode finishes, so a
crash loses at most the episodes in flight and a rerun resumes by skipping finished keys.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replan.core.task import Task
from replan.core.trace import Episode

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
CREATE TABLE IF NOT EXISTS feedback (
    episode_key TEXT NOT NULL REFERENCES episodes(key),
    key TEXT NOT NULL,
    score REAL,
    value TEXT,
    comment TEXT,
    PRIMARY KEY (episode_key, key)
);
"""

#: end reasons that mean the episode did not run to a verdict of its own (still stored, counted
#: as failures, and reported separately)
FAILURE_END_REASONS = frozenset({"model_error", "crashed", "timeout"})


@dataclass(frozen=True)
class FeedbackRow:
    key: str
    score: float | None
    comment: str = ""
    value: Any = None


def episode_key(task_id: str, design: str, model: str, seed: int) -> str:
    """The identity of one episode in an experiment: what resume skips on."""
    return f"{task_id}|{design}|{model}|{seed}"


class ResultsStore:
    """Thread-safe access to ``DIR/results.sqlite``."""

    FILENAME = "results.sqlite"

    def __init__(self, out_dir: str | Path):
        self.dir = Path(out_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / self.FILENAME
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.executescript(SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

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
        with self._tx() as c:
            c.execute(
                "INSERT OR IGNORE INTO experiments(id, config) VALUES (?, ?)",
                (experiment_id, json.dumps(config, sort_keys=True)),
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
    ) -> str:
        """Store one finished episode with its feedback, atomically; returns its key."""
        key = episode_key(episode.task_id, episode.design, episode.model, episode.seed)
        rows = [
            (key, f.key, f.score, None if f.value is None else json.dumps(f.value), f.comment)
            for f in feedback
        ]
        with self._tx() as c:
            c.execute("DELETE FROM feedback WHERE episode_key = ?", (key,))
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
                    episode.to_json(),
                ),
            )
            c.executemany(
                "INSERT OR REPLACE INTO feedback(episode_key, key, score, value, comment) VALUES (?,?,?,?,?)",
                rows,
            )
        return key

    # -- reading ----------------------------------------------------------------------------------
    def done_keys(self, experiment_id: str | None = None) -> set[str]:
        with self._lock:
            if experiment_id is None:
                cur = self._conn.execute("SELECT key FROM episodes")
            else:
                cur = self._conn.execute(
                    "SELECT key FROM episodes WHERE experiment_id = ?", (experiment_id,)
                )
            return {r[0] for r in cur.fetchall()}

    def experiments(self) -> list[tuple[str, dict[str, Any]]]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT id, config FROM experiments ORDER BY created_at, id"
            ).fetchall()
        return [(r[0], json.loads(r[1])) for r in rows]

    def tasks(self) -> dict[str, Task]:
        with self._lock:
            rows = self._conn.execute("SELECT task FROM tasks").fetchall()
        out = {}
        for (text,) in rows:
            t = Task.model_validate_json(text)
            out[t.task_id] = t
        return out

    def episodes(self, experiment_id: str | None = None) -> list[Episode]:
        q = "SELECT episode FROM episodes"
        params: tuple[Any, ...] = ()
        if experiment_id is not None:
            q += " WHERE experiment_id = ?"
            params = (experiment_id,)
        with self._lock:
            rows = self._conn.execute(q + " ORDER BY key", params).fetchall()
        return [Episode.from_json(r[0]) for r in rows]

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
