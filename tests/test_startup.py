"""A CLI that starts at once (issue 32 §3): the command line, its help and a rerun with nothing
to do load none of the heavy libraries; they load when something runs. CPU times are measured
by ``benchmarks/bench_startup.py``, not here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
HEAVY = ("langchain", "langchain_core", "langgraph", "matplotlib", "ray", "openai", "numpy")

#: runs the ``replan`` command in this process, then prints which heavy modules it loaded
PROBE = """
import json, sys
sys.argv = ["replan", *sys.argv[1:]]
from replan.cli import main
try:
    main()
except SystemExit:
    pass
heavy = {heavy!r}
print(json.dumps(sorted(m for m in heavy if m in sys.modules)), file=sys.__stderr__)
"""


def _loaded(*argv: str, cwd: Path, heavy: tuple[str, ...] = HEAVY) -> list[str]:
    """The ``heavy`` modules a ``replan ARGV`` run loaded (its last stderr line)."""
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=heavy), *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(SRC), "CI": "1"},
        timeout=600,
    )
    return json.loads(proc.stderr.strip().splitlines()[-1])


def test_importing_the_cli_loads_no_heavy_module() -> None:
    code = (
        "import sys, json, replan.cli\n"
        f"print(json.dumps(sorted(m for m in {(*HEAVY, 'asyncio', 'sqlite3')!r} "
        "if m in sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
    )
    assert json.loads(out.stdout) == []


def test_help_and_argument_errors_load_no_heavy_module(tmp_path: Path) -> None:
    assert _loaded("--help", cwd=tmp_path) == []
    assert _loaded("run", "--help", cwd=tmp_path) == []
    assert _loaded("run", "--concurrency", "zero", cwd=tmp_path) == []
    assert _loaded("run", "--prompt", "hints", cwd=tmp_path) == []


def test_a_rerun_with_nothing_to_do_loads_no_heavy_module(tmp_path: Path) -> None:
    argv = ("run", "--limit", "2", "--agents", "react", "--out", str(tmp_path / "r"))
    first = _loaded(*argv, cwd=tmp_path)
    assert "langgraph" in first  # the first run ran the episodes
    assert _loaded(*argv, cwd=tmp_path) == []
    # a report written anew draws its plots without a plotting library (SVG text)
    page = str(tmp_path / "other" / "report.html")
    assert "matplotlib" not in _loaded("report", str(tmp_path / "r"), "-o", page, cwd=tmp_path)
    assert (tmp_path / "other" / "report-pec.svg").is_file()


def test_suite_stats_read_the_stored_figures(tmp_path: Path) -> None:
    """`replan suites stats toolmaze` reads the figures stored with the frozen suite: it parses
    no instance, and loads no tool of the corpus and no graph library."""
    heavy = (*HEAVY, "networkx", "replan.env.corpus.financial.accounts")
    assert _loaded("suites", "stats", "toolmaze", cwd=tmp_path, heavy=heavy) == []
