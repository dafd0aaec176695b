"""Every code block of the README runs: bash blocks as shell commands, Python blocks with exec.

The two quickstart blocks are special: the main-job block runs for real in a fresh virtual
environment (slow), and the test-command block must be exactly what `.ci/run` runs (running it
here would run this test suite inside itself).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```(\w+)\n(.*?)```", README, re.S)
BASH = [b for lang, b in BLOCKS if lang == "bash"]
PYTHON = [b for lang, b in BLOCKS if lang == "python"]
QUICK_RUN, QUICK_TEST, *OTHER_BASH = BASH


def test_every_block_is_covered():
    assert {lang for lang, _ in BLOCKS} <= {"bash", "python", "text"}
    assert len(BASH) >= 3 and PYTHON


def test_no_block_writes_to_a_fixed_tmp_path():
    """A fixed /tmp path would let one user's (or test run's) output be reused by the next."""
    for _, block in BLOCKS:
        assert "/tmp/" not in block, block


def test_quickstart_test_command_is_what_ci_runs():
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    for part in QUICK_TEST.strip().split(" && "):
        assert part.strip() in ci, part


def _untracked() -> set[str]:
    """Files git does not know and does not ignore (where the checkout is a git repository)."""
    proc = subprocess.run(
        ["git", "ls-files", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    return set(proc.stdout.split()) if proc.returncode == 0 else set()


@pytest.mark.parametrize("block", OTHER_BASH)
def test_bash_blocks(block, tmp_path):
    """Each block runs, and writes nothing into the checkout (outputs go to ``mktemp -d``)."""
    before = _untracked()
    bindir = str(Path(sys.executable).parent)
    script = block.replace(".venv/bin/", bindir + "/")
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "CI": "1", "TMPDIR": str(tmp_path)},  # mktemp -d lands in tmp_path
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert _untracked() <= before, sorted(_untracked() - before)


@pytest.mark.parametrize("block", PYTHON)
def test_python_blocks(block, tmp_path, monkeypatch):
    import tempfile

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # tempfile.mkdtemp() under tmp_path
    exec(compile(block, "README.md", "exec"), {"__name__": "__readme__"})


@pytest.mark.slow
def test_quickstart_main_job_in_a_fresh_venv(tmp_path):
    """The README's first command, as a new user runs it (a fresh venv; pip's cache helps)."""
    script = QUICK_RUN.strip().replace("pip install -e .", f"pip install -q -e {REPO}")
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "CI": "1"},
        timeout=1200,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "replan_loop" not in proc.stdout
    for design in ("react", "plan_conditioned", "dual_loop", "replanner_loop"):
        assert design in proc.stdout
    assert (tmp_path / "replan-results" / "report.html").exists()
