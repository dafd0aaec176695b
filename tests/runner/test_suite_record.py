"""Every run records the suite it ran (name, version, digest); a results folder never mixes two
versions of one suite; the identity is in ``replan run --json`` and the summary's header."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from replan.cli import app
from replan.runner.experiment import RunConfig, arun
from replan.runner.store import SUITE_RECORD, ResultsStore, SuiteMismatch
from replan.suites import versions as sv

PIN = sv.suite_versions()["toolmaze"]
CFG = dict(suite="toolmaze", agents=["react"], limit=2, concurrency=1)


def _run(out: Path, **kw):  # type: ignore[no-untyped-def]
    return asyncio.run(arun(RunConfig(**{**CFG, **kw}), out))


def _records(out: Path) -> dict[str, dict]:
    with ResultsStore(out) as store:
        return {eid: cfg.get(SUITE_RECORD) for eid, cfg in store.experiments()}


def test_a_run_records_the_suite_version_and_digest_of_its_tasks(tmp_path: Path) -> None:
    out = tmp_path / "r"
    outcome = _run(out)
    with ResultsStore(out) as store:
        ran = list(store.tasks().values())
    expected = {
        "name": "toolmaze",
        "version": PIN["version"],
        "digest": PIN["digest"],
        "tasks": 2,
        "tasks_digest": sv.suite_digest(ran),
    }
    assert outcome.suite == expected
    assert _records(out) == {outcome.experiment_id: expected}
    again = _run(out)  # a resume reads the record back
    assert again.ran == 0 and again.suite == expected


def _seed_other_version(out: Path, version: str = "0", digest: str = "00000000deadbeef") -> None:
    """A store holding an experiment that ran another version of toolmaze."""
    with ResultsStore(out) as store:
        record = {"name": "toolmaze", "version": version, "digest": digest}
        store.ensure_experiment("older", {"suite": "toolmaze", SUITE_RECORD: record})


def test_another_version_of_the_suite_in_the_same_folder_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "r"
    _seed_other_version(out)
    with pytest.raises(SuiteMismatch) as err:
        _run(out)
    msg = str(err.value)
    assert "\n" not in msg
    for part in ("'toolmaze'", "version 0", "00000000deadbeef", f"version {PIN['version']}"):
        assert part in msg
    assert PIN["digest"] in msg and "--out" in msg
    with ResultsStore(out) as store:  # nothing of the refused run was written
        assert [e for e, _ in store.experiments()] == ["older"] and not store.tasks()
    # another suite in the same folder is not a conflict
    _seed_other_version(tmp_path / "p")
    with ResultsStore(tmp_path / "p") as store:
        store.ensure_experiment("x", {"suite": "other", SUITE_RECORD: {"name": "other"}})


def test_an_experiment_stored_without_a_record_gets_one(tmp_path: Path) -> None:
    """A store written before suites were recorded: the experiment's config gains the record
    on its next run, the rest of the config kept."""
    record = {"name": "toolmaze", "version": "1", "digest": "394551213379613d"}
    with ResultsStore(tmp_path) as store:
        store.ensure_experiment("e", {"suite": "toolmaze", "seeds": 1})
        assert store.suite_record("e") == {}
        store.ensure_experiment("e", {"suite": "toolmaze", "seeds": 1, SUITE_RECORD: record})
        assert store.suite_record("e") == record
        assert dict(store.experiments())["e"] == {
            "suite": "toolmaze",
            "seeds": 1,
            SUITE_RECORD: record,
        }
        assert store.suite_record("missing") == {}


def test_resuming_after_the_suite_changed_is_refused(tmp_path: Path, monkeypatch) -> None:
    """Same command, same experiment id, but the package now pins the next toolmaze version:
    the stored selection is not reused and the new version does not mix into the old results."""
    out = tmp_path / "r"
    _run(out)
    pins = sv.suite_versions()
    now = pins["toolmaze"]["version"]
    nxt = str(int(now) + 1)
    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(sv.frozen_path("toolmaze"), data / f"toolmaze-v{nxt}.jsonl.gz")
    pins["toolmaze"] = {**pins["toolmaze"], "version": nxt, "digest": "1111222233334444"}
    vfile = tmp_path / "versions.json"
    vfile.write_text(json.dumps(pins))
    monkeypatch.setattr(sv, "VERSIONS_FILE", vfile)
    monkeypatch.setattr(sv, "DATA_DIR", data)
    pattern = rf"version {now} .*version {nxt} \(digest 1111222233334444\)"
    with pytest.raises(SuiteMismatch, match=pattern):
        _run(out)


def test_a_task_stored_with_another_definition_is_refused(tmp_path: Path) -> None:
    """Tasks handed to a run (version 'custom') may vary between runs, but a stored task is
    never redefined under the episodes that ran it."""
    from replan.suites import load_suite

    out = tmp_path / "r"
    tasks = load_suite("toolmaze", levels="C1", modes="NP", per_level=1)
    cfg = RunConfig(**CFG)
    first = asyncio.run(arun(cfg, out, tasks=tasks))
    assert first.suite["version"] == "custom"
    assert first.suite["digest"] == sv.suite_digest(tasks)
    changed = [tasks[0].model_copy(update={"query": tasks[0].query + " Quickly."})]
    with pytest.raises(SuiteMismatch, match=r"toolmaze-C1-000-NP.*another definition"):
        asyncio.run(arun(cfg, out, tasks=changed))


def test_run_json_and_header_name_the_suite(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("CI", "1")
    out = tmp_path / "r"
    args = ["run", "--out", str(out), "--limit", "2", "--agents", "react", "--concurrency", "1"]
    res = CliRunner().invoke(app, [*args, "--json"])
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)["suite"]
    assert {k: got[k] for k in ("name", "version", "digest", "tasks")} == {
        "name": "toolmaze",
        "version": PIN["version"],
        "digest": PIN["digest"],
        "tasks": 2,
    }
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    header = next(ln for ln in res.stdout.splitlines() if ln.startswith("suite "))
    assert header.startswith(f"suite toolmaze v{PIN['version']} ({PIN['digest'][:8]}) · ")
    # a folder holding another version: one line naming both, exit 2 like every store error
    other = tmp_path / "o"
    _seed_other_version(other)
    res = CliRunner(env={"COLUMNS": "2000"}).invoke(app, ["run", "--out", str(other), *args[3:]])
    assert res.exit_code == 2
    err = res.stderr.strip()
    assert err.startswith("error: ") and "\n" not in err
    assert "version 0" in err and "--out" in err and "Traceback" not in res.output
