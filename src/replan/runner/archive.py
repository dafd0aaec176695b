"""An episodes file that a run appends to as episodes finish and that a later run resumes from.

A results store lives in one directory. A long run on a real model (hours on a CPU) may have to
go on in another checkout or on another machine, where only files that were committed or copied
survive. With an archive (``replan run --archive FILE``, ``bench_real_model.py --archive FILE``)
every episode the run finishes is appended to FILE as one Episode JSON line (the format of
``replan export episodes`` and the input of ``replan score``), flushed to disk before it is
stored; a later run given the same FILE stores the archived episodes of its selection, scored
by the same code as a fresh one, instead of running them again.

The file is only ever appended to. A line that cannot be read (a write cut off by a kill, an
edit) is reported as ``file:line: why`` and its episode runs again; where one episode has
several lines (an infrastructure failure retried), the last one counts. ``replan export
episodes DIR --out FILE`` starts an archive from what a store already holds.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from replan.core.jsonl import LineError, iter_models
from replan.core.trace import Episode
from replan.runner.experiment import Backend, Job, OnDone, RunConfig
from replan.runner.store import episode_key


def read_archive(path: str | Path) -> tuple[dict[str, Episode], list[LineError]]:
    """The archived episodes by store key (the last line of each key), and the lines that could
    not be read. A file that does not exist yet is an empty archive."""
    p = Path(path)
    if not p.exists():
        return {}, []
    episodes: dict[str, Episode] = {}
    errors: list[LineError] = []
    for _, item in iter_models(p, Episode, "Episode"):
        if isinstance(item, LineError):
            errors.append(item)
        else:
            episodes[episode_key(item.task_id, item.design, item.model, item.seed)] = item
    return episodes, errors


def append_episode(path: str | Path, episode: Episode) -> None:
    """Append one episode as a line and push it to disk before returning (a kill after this
    call cannot lose it; a kill during it leaves at most one unreadable last line)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    line = episode.to_json() + "\n"  # compact JSON: newlines inside strings are escaped
    with p.open("ab") as fh:
        if fh.tell() and not _ends_with_newline(p):
            fh.write(b"\n")  # a line cut off by a kill stays alone on its line
        fh.write(line.encode("utf-8"))
        fh.flush()
        os.fsync(fh.fileno())


def _ends_with_newline(p: Path) -> bool:
    with p.open("rb") as fh:
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"


def _warn(text: str) -> None:
    print(text, file=sys.stderr)


class ArchiveBackend:
    """A backend that takes the jobs the archive already holds from the archive, runs the rest
    on ``inner`` (none: they are not run), and appends every episode ``inner`` finishes to the
    archive before the run stores it."""

    def __init__(
        self,
        path: str | Path,
        inner: Backend | None,
        *,
        warn: Callable[[str], None] = _warn,
    ):
        self.path = Path(path)
        self.inner = inner
        self.warn = warn
        #: episodes taken from the archive, and left to run, by the last :meth:`run`
        self.restored = 0
        self.to_run = 0

    @property
    def limiter(self) -> Any:
        """The inner backend's model-call limiter (the progress line reads it)."""
        return getattr(self.inner, "limiter", None)

    async def run(
        self, jobs: Sequence[Job], cfg: RunConfig, agent: Callable[..., Any] | None, on_done: OnDone
    ) -> None:
        archived, errors = read_archive(self.path)
        for err in errors:
            self.warn(f"{err} (skipped: that episode runs again)")
        rest = []
        for job in jobs:
            episode = archived.get(job.key)
            if episode is None:
                rest.append(job)
            else:
                on_done(job, episode)
                self.restored += 1
        self.to_run = len(rest)
        if self.inner is None or not rest:
            return

        def archive_then_store(job: Job, episode: Episode, *scored: Any) -> None:
            append_episode(self.path, episode)
            on_done(job, episode, *scored)

        await self.inner.run(rest, cfg, agent, archive_then_store)


__all__ = ["ArchiveBackend", "append_episode", "read_archive"]
