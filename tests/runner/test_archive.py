"""An episodes archive (``replan run --archive FILE``): every finished episode is appended as a
line before it is stored, and a run into an empty store (a fresh checkout) takes the archived
episodes instead of running them, storing and scoring them exactly as the first run did. What
is taken follows the resume rules (failures run again, ``--fresh`` takes nothing, another
experiment's episode is not this one's); a line cut off by a kill is named and its episode runs
again; nothing else is lost."""

from __future__ import annotations

import asyncio
import json

import pytest
from typer.testing import CliRunner

from replan.cli import app
from replan.core.trace import EndReason, Episode
from replan.evaluators import scoring_stamp
from replan.runner.archive import ArchiveError, append_episode, read_archive
from replan.runner.experiment import LocalBackend, RunConfig, arun
from replan.runner.store import ResultsStore, episode_key

CFG = RunConfig(agents=["react", "replanner_loop"], limit=3, concurrency=2)


class Counting(LocalBackend):
    """A local backend that records which jobs it was handed."""

    def __init__(self) -> None:
        super().__init__(2)
        self.ran: list[str] = []

    async def run(self, jobs, cfg, agent, on_done):
        self.ran.extend(j.key for j in jobs)
        await super().run(jobs, cfg, agent, on_done)


def _key(episode: Episode | dict) -> str:
    get = episode.get if isinstance(episode, dict) else lambda k: getattr(episode, k)
    return episode_key(get("task_id"), get("design"), get("model"), get("seed"))


def _stored(out):
    """Every stored episode's text and its current per-run records, by key."""
    with ResultsStore(out) as s:
        return {
            _key(e): (e.to_json(), records) for e, _, records in s.scored_episodes(scoring_stamp())
        }


def _run(out, archive, cfg=CFG, **options):
    backend, notes = Counting(), []
    cfg = cfg.model_copy(update={"archive": archive, **options})
    outcome = asyncio.run(arun(cfg, out, backend=backend, warn=notes.append))
    return backend.ran, outcome, notes


def test_a_fresh_store_takes_the_archived_episodes_instead_of_running_them(tmp_path):
    archive = tmp_path / "kept" / "episodes.jsonl"  # its folder is made
    ran, _, _ = _run(tmp_path / "a", archive)
    assert len(ran) == 6
    lines = archive.read_text().splitlines()
    stored = _stored(tmp_path / "a")
    # the archive holds exactly the episodes stored, line for line
    assert {_key(json.loads(x)) for x in lines} == set(stored)
    assert sorted(lines) == sorted(text for text, _ in stored.values())

    ran, outcome, notes = _run(tmp_path / "b", archive)
    assert ran == [] and notes == []  # nothing ran again
    assert (outcome.restored, outcome.skipped, outcome.ran) == (6, 6, 0)
    assert _stored(tmp_path / "b") == stored  # same texts, same scores, scored by the same code
    assert archive.read_text().splitlines() == lines  # restoring appends nothing


def test_a_line_cut_off_by_a_kill_is_named_and_its_episode_runs_again(tmp_path):
    archive = tmp_path / "episodes.jsonl"
    _run(tmp_path / "a", archive)
    lines = archive.read_text().splitlines()
    cut = _key(json.loads(lines[-1]))
    archive.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:40])  # a write cut short
    ran, outcome, notes = _run(tmp_path / "b", archive)
    assert ran == [cut] and outcome.restored == 5
    assert len(notes) == 1 and f"{archive}:6: not a valid Episode" in notes[0]
    # the episode run again went onto a line of its own; the cut line stays as it was
    text = archive.read_text().splitlines()
    assert len(text) == 7 and text[5] == lines[-1][:40]
    assert _key(Episode.from_json(text[6])) == cut
    episodes, errors = read_archive(archive)
    assert len(episodes) == 6 and [e.line for e in errors] == [6]
    before, after = _stored(tmp_path / "a"), _stored(tmp_path / "b")
    assert {k: v for k, v in after.items() if k != cut} == {
        k: v for k, v in before.items() if k != cut
    }
    old, new = (Episode.from_json(x[cut][0]) for x in (before, after))
    assert (new.end_reason, new.success, new.calls) == (old.end_reason, old.success, old.calls)


def test_an_archived_failure_runs_again_unless_failures_are_kept(tmp_path):
    archive = tmp_path / "episodes.jsonl"
    _run(tmp_path / "a", archive)
    episodes, _ = read_archive(archive)
    key, episode = next(iter(episodes.items()))
    append_episode(archive, episode.model_copy(update={"end_reason": EndReason.TIMEOUT}))
    assert read_archive(archive)[0][key].end_reason is EndReason.TIMEOUT  # the last line counts
    ran, outcome, _ = _run(tmp_path / "b", archive)
    assert ran == [key] and outcome.restored == 5
    ran, outcome, _ = _run(tmp_path / "c", archive, retry_failed=False)
    assert ran == [] and outcome.restored == 6  # kept: a local model's failure comes back alike


def test_fresh_takes_nothing_from_the_archive_and_archives_what_it_runs(tmp_path):
    archive = tmp_path / "episodes.jsonl"
    _run(tmp_path / "a", archive)
    ran, outcome, _ = _run(tmp_path / "b", archive, resume=False)
    assert len(ran) == 6 and outcome.restored == 0
    assert len(archive.read_text().splitlines()) == 12


def test_another_experiments_episode_is_named_and_run(tmp_path):
    archive = tmp_path / "episodes.jsonl"
    _run(tmp_path / "a", archive)
    # the same task ids under other budgets; then a ToolMaze generated from another seed
    ran, outcome, notes = _run(
        tmp_path / "b", archive, CFG.model_copy(update=dict(budgets={"max_steps": 3}))
    )
    assert len(ran) == 6 and outcome.restored == 0
    assert all("ran under other budgets" in n for n in notes) and len(notes) == 6
    ran, outcome, notes = _run(
        tmp_path / "c", archive, CFG.model_copy(update=dict(suite_options={"seed": 1}))
    )
    assert len(ran) == 6 and all("its query differs" in n for n in notes)


def test_stored_episodes_the_archive_lacks_are_added_at_the_start(tmp_path):
    asyncio.run(arun(CFG, tmp_path / "a", backend=LocalBackend(2)))  # no archive yet
    archive = tmp_path / "episodes.jsonl"
    ran, outcome, _ = _run(tmp_path / "a", archive)
    assert ran == [] and outcome.skipped == 6
    assert {_key(json.loads(x)) for x in archive.read_text().splitlines()} == set(
        _stored(tmp_path / "a")
    )
    _run(tmp_path / "a", archive)
    assert len(archive.read_text().splitlines()) == 6  # added once


def test_an_archive_that_cannot_take_lines_stops_the_run_before_anything_runs(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(ArchiveError, match="cannot append"):
        _run(tmp_path / "a", tmp_path / "file" / "episodes.jsonl")
    utf16 = tmp_path / "u16.jsonl"
    utf16.write_text('{"a": 1}\n', encoding="utf-16")
    with pytest.raises(ArchiveError, match="a utf-16 file"):
        _run(tmp_path / "a", utf16)
    assert not (tmp_path / "a").exists()


def test_replan_run_archive(tmp_path):
    archive = tmp_path / "episodes.jsonl"
    args = ["run", "--agents", "react", "--limit", "2", "--archive", str(archive)]
    res = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "a")])
    assert res.exit_code == 0, res.output
    assert len(archive.read_text().splitlines()) == 2
    res = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "b")])
    assert res.exit_code == 0, res.output
    assert "2 already done, 2 of them from the archive, 0 run" in res.output
    assert _stored(tmp_path / "b") == _stored(tmp_path / "a")
    assert len(archive.read_text().splitlines()) == 2
    res = CliRunner().invoke(
        app, ["run", "--limit", "1", "--archive", str(tmp_path), "--out", str(tmp_path / "c")]
    )
    assert res.exit_code == 2
    assert f"--archive {tmp_path}: a directory" in res.output
    assert not (tmp_path / "c").exists()
