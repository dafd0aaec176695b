"""An episodes file that a run appends to as episodes finish and that a later run resumes from.

A results store lives in one directory. A long run on a real model (hours on a CPU) may have to
go on in another checkout or on another machine, where only files that were committed or copied
survive. With an archive (``replan run --archive FILE``, ``bench_real_model.py --archive FILE``)
every episode the run finishes is appended to FILE as one Episode JSON line (the format of
``replan export episodes`` and the input of ``replan score``), pushed to disk before it is
stored, and episodes of the selection already stored but not yet in FILE (a run begun without
it) are added at the start; a later run given the same FILE stores the archived episodes of its
selection, scored by the same code as a fresh one, instead of running them again
(:func:`~replan.runner.experiment.arun` does both).

What is taken from the file follows the resume rules: an infrastructure failure (model error,
crash, timeout) runs again unless failures are kept (``--no-retry-failed``), ``--fresh`` takes
nothing, and an archived episode that another experiment made (another version of the task, a
different query, mode or suite, other budgets) is named and run again. The file is only ever
appended to: a line that cannot be read (a write cut off by a kill, an edit) is named as
``file:line: why`` and its episode runs again, and where one episode has several lines (a
failure run again), the last one counts.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from replan.core.jsonl import LineError, iter_models, text_encoding
from replan.core.trace import Episode, is_failure
from replan.runner.store import StoreError, episode_key


class ArchiveError(StoreError):
    """The archive file cannot be appended to (checked before anything runs)."""


def check_archive(path: str | Path) -> None:
    """Raise :class:`ArchiveError` (one line) unless ``path`` can take appended UTF-8 lines:
    a file (made, with its folder, if missing) that is not a directory nor in another encoding."""
    p = Path(path)
    if p.is_dir():
        raise ArchiveError(f"--archive {p}: a directory; give a .jsonl file")
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        with p.open("ab"):
            pass
    except OSError as exc:
        raise ArchiveError(f"--archive {p}: cannot append to it ({exc.strerror or exc})") from None
    if p.stat().st_size and text_encoding(p) != "utf-8":
        raise ArchiveError(
            f"--archive {p}: a {text_encoding(p)} file; an archive is UTF-8 JSON Lines "
            "(save it as UTF-8)"
        )


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


def mismatch(episode: Episode, task: Any, budgets: Mapping[str, Any]) -> str | None:
    """Why an archived episode is not a run of this task under this run's budgets (None: it
    is). An episode that never ran (a failure record) carries no budgets; they are not asked."""
    for name in ("suite", "mode", "query"):
        if getattr(episode, name) != getattr(task, name):
            return f"its {name} differs from the task's"
    if episode.budgets and dict(episode.budgets) != dict(budgets):
        return f"it ran under other budgets ({episode.budgets})"
    return None


def take_archived(
    archived: Mapping[str, Episode],
    jobs: Sequence[Any],
    *,
    budgets: Mapping[str, Any],
    retry_failed: bool,
    warn: Callable[[str], None],
) -> tuple[list[tuple[Any, Episode]], list[Any]]:
    """Split ``jobs`` into those the archive answers, with their episodes, and those to run."""
    taken: list[tuple[Any, Episode]] = []
    rest: list[Any] = []
    for job in jobs:
        episode = archived.get(job.key)
        if episode is None or (retry_failed and is_failure(episode)):
            rest.append(job)
            continue
        why = mismatch(episode, job.task.parse(), budgets)
        if why:
            warn(f"archive: {job.key}: {why}; it runs again")
            rest.append(job)
            continue
        taken.append((job, episode))
    return taken, rest


def add_missing(
    path: str | Path, archived: Mapping[str, Episode], stored: Iterable[Episode]
) -> int:
    """Append the stored episodes the archive lacks (or holds in another version); how many."""
    n = 0
    for episode in stored:
        key = episode_key(episode.task_id, episode.design, episode.model, episode.seed)
        if key not in archived or archived[key].to_json() != episode.to_json():
            append_episode(path, episode)
            n += 1
    return n


__all__ = [
    "ArchiveError",
    "add_missing",
    "append_episode",
    "check_archive",
    "mismatch",
    "read_archive",
    "take_archived",
]
