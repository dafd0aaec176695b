"""The suite a store ran (name, version, short digest) heads the report, and ``replan compare``
refuses two stores that ran different versions of a suite unless told to compare anyway."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import rp_build as rb
from typer.testing import CliRunner

from replan.cli import app
from replan.report import compare_dirs, write_report
from replan.report.data import SuiteMismatchError, stored_suites
from replan.runner.store import SUITE_RECORD

N_BOOT = 200
V1 = {"name": "toolmaze", "version": "1", "digest": "394551213379613d"}
V2 = {"name": "toolmaze", "version": "2", "digest": "abcdef0123456789"}


def _store(out: Path, record: dict | None) -> Path:
    t = rb.task("t-np")
    eps = [rb.run(t, rb.FULL, design="react", seed=s, answer=rb.BOOKED) for s in range(2)]
    # as a run records it: the suite's identity and its selection
    selection = {"tasks": 1, "tasks_digest": "0123456789abcdef"}
    config = {"suite": "toolmaze"} | ({SUITE_RECORD: record | selection} if record else {})
    return rb.save(out, eps, [t], config=config)


def test_the_report_header_names_the_suite_version_and_digest(tmp_path: Path) -> None:
    out = _store(tmp_path / "r", V1)
    assert stored_suites(out) == [V1]
    text = write_report(out, n_boot=N_BOOT).read_text(encoding="utf-8")
    head = text.split("<nav>")[0]
    assert "suite toolmaze v1 (39455121)" in head
    res = CliRunner().invoke(app, ["report", str(out), "--json", "--n-boot", "200"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["suites"] == [V1]
    # a store from before suites were recorded says so instead of guessing
    old = _store(tmp_path / "old", None)
    assert stored_suites(old) == []
    head = write_report(old, n_boot=N_BOOT).read_text(encoding="utf-8").split("<nav>")[0]
    assert "suite version not recorded" in head


def test_compare_refuses_different_suite_digests_unless_allowed(tmp_path: Path) -> None:
    a, b = _store(tmp_path / "a", V1), _store(tmp_path / "b", V2)
    with pytest.raises(SuiteMismatchError) as err:
        compare_dirs(a, b, n_boot=N_BOOT)
    msg = str(err.value)
    assert "\n" not in msg
    for part in ("toolmaze v1 (39455121)", "toolmaze v2 (abcdef01)", "--allow-suite-mismatch"):
        assert part in msg
    res = compare_dirs(a, b, n_boot=N_BOOT, allow_suite_mismatch=True)
    assert res["suites"] == {"a": [V1], "b": [V2], "same": False}
    (react,) = res["designs"].values()  # compared anyway: the same two paired runs
    assert react["pairs"] == 2
    same = compare_dirs(a, _store(tmp_path / "a2", V1), n_boot=N_BOOT)
    assert same["suites"]["same"] is True
    unknown = compare_dirs(a, _store(tmp_path / "old", None), n_boot=N_BOOT)
    assert unknown["suites"]["same"] is None  # not recorded on one side: cannot tell


def test_compare_cli_exits_on_a_suite_mismatch_and_warns_when_allowed(tmp_path: Path) -> None:
    a, b = _store(tmp_path / "a", V1), _store(tmp_path / "b", V2)
    res = CliRunner().invoke(app, ["compare", str(a), str(b), "--n-boot", "200"])
    assert res.exit_code == 1
    assert "toolmaze v2 (abcdef01)" in res.stderr and "Traceback" not in res.output
    res = CliRunner().invoke(
        app, ["compare", str(a), str(b), "--n-boot", "200", "--allow-suite-mismatch"]
    )
    assert res.exit_code == 0, res.output
    assert "WARNING" in res.stderr and "different suites" in res.stderr
    res = CliRunner().invoke(
        app, ["compare", str(a), str(b), "--n-boot", "200", "--allow-suite-mismatch", "--json"]
    )
    assert json.loads(res.stdout)["suites"]["same"] is False
