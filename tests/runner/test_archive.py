"""An episodes archive (``replan run --archive FILE``): every finished episode is appended as a
line before it is stored, and a run into an empty store (a fresh checkout) takes the archived
episodes instead of running them, storing and scoring them exactly as the first run did. A line
cut off by a kill is named and its episode runs again; nothing else is lost."""

from __future__ import annotations

import asyncio
import json

from typer.testing import CliRunner

from replan.cli import app
from replan.core.trace import Episode
from replan.evaluators import scoring_stamp
from replan.runner.archive import ArchiveBackend, append_episode, read_archive
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


def _stored(out):
    """Every stored episode's text and its current per-run records, by key."""
    with ResultsStore(out) as s:
        return {
            episode_key(e.task_id, e.design, e.model, e.seed): (e.to_json(), records)
            for e, _, records in s.scored_episodes(scoring_stamp())
        }


def _run(out, archive, inner):
    backend = ArchiveBackend(archive, inner, warn=WARNINGS.append)
    asyncio.run(arun(CFG, out, backend=backend))
    return backend


WARNINGS: list[str] = []


def test_a_fresh_store_takes_the_archived_episodes_instead_of_running_them(tmp_path):
    archive = tmp_path / "kept" / "episodes.jsonl"
    first = Counting()
    _run(tmp_path / "a", archive, first)
    assert len(first.ran) == 6
    lines = archive.read_text().splitlines()
    assert len(lines) == 6 and all(json.loads(x)["task_id"] for x in lines)
    stored = _stored(tmp_path / "a")
    # the archive holds exactly the episodes stored, line for line
    assert {
        episode_key(**{k: json.loads(x)[k] for k in ("task_id", "design", "model", "seed")})
        for x in lines
    } == set(stored)
    assert sorted(lines) == sorted(text for text, _ in stored.values())

    second = Counting()
    backend = _run(tmp_path / "b", archive, second)
    assert second.ran == []  # nothing ran again
    assert (backend.restored, backend.to_run) == (6, 0)
    assert _stored(tmp_path / "b") == stored  # same texts, same scores, scored by the same code
    assert len(archive.read_text().splitlines()) == 6  # restoring appends nothing


def test_a_line_cut_off_by_a_kill_is_named_and_its_episode_runs_again(tmp_path):
    archive = tmp_path / "episodes.jsonl"
    _run(tmp_path / "a", archive, Counting())
    lines = archive.read_text().splitlines()
    cut = json.loads(lines[-1])
    archive.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:40])  # a write cut short
    WARNINGS.clear()
    again = Counting()
    _run(tmp_path / "b", archive, again)
    assert again.ran == [episode_key(cut["task_id"], cut["design"], cut["model"], cut["seed"])]
    assert len(WARNINGS) == 1 and f"{archive}:6: not a valid Episode" in WARNINGS[0]
    # the episode run again went onto a line of its own; the cut line stays as it was
    text = archive.read_text().splitlines()
    assert len(text) == 7 and text[5] == lines[-1][:40]
    assert Episode.from_json(text[6]).task_id == cut["task_id"]
    episodes, errors = read_archive(archive)
    assert len(episodes) == 6 and [e.line for e in errors] == [6]
    before, after = _stored(tmp_path / "a"), _stored(tmp_path / "b")
    rerun = episode_key(cut["task_id"], cut["design"], cut["model"], cut["seed"])
    assert {k: v for k, v in after.items() if k != rerun} == {
        k: v for k, v in before.items() if k != rerun
    }
    # the episode run again: the same run (its timings aside)
    old, new = (Episode.from_json(x[rerun][0]) for x in (before, after))
    assert (new.end_reason, new.success, [s.call for s in new.steps]) == (
        old.end_reason,
        old.success,
        [s.call for s in old.steps],
    )


def test_the_last_line_of_an_episode_counts(tmp_path):
    archive = tmp_path / "episodes.jsonl"
    _run(tmp_path / "a", archive, Counting())
    episodes, _ = read_archive(archive)
    key, episode = next(iter(episodes.items()))
    retried = episode.model_copy(update={"episode_id": "the retry"})
    append_episode(archive, retried)
    assert read_archive(archive)[0][key].episode_id == "the retry"


def test_replan_run_archive(tmp_path):
    archive = tmp_path / "episodes.jsonl"
    args = ["run", "--agents", "react", "--limit", "2", "--json", "--archive", str(archive)]
    res = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "a")])
    assert res.exit_code == 0, res.output
    assert len(archive.read_text().splitlines()) == 2
    res = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "b")])
    assert res.exit_code == 0, res.output
    assert _stored(tmp_path / "b") == _stored(tmp_path / "a")
    assert len(archive.read_text().splitlines()) == 2
    res = CliRunner().invoke(app, ["run", "--limit", "1", "--archive", str(tmp_path)])
    assert res.exit_code == 2
    assert f"--archive {tmp_path}: a directory" in res.output
