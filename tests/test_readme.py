"""Every code block of the README and of ``docs/*.md`` runs: bash blocks as shell commands,
Python blocks with exec.

The README's two quickstart blocks are special: the main-job block runs for real in a fresh
virtual environment (slow), and the test-command block must be exactly what `.ci/run` runs
(running it here would run this test suite inside itself). A block that talks to an
OpenAI-compatible endpoint (``--base-url URL``) runs against replan's fake server. ``text``
blocks show output and are not run; ``json example=...`` blocks of docs/metrics.md are
recomputed by ``tests/notebooks/test_metrics_doc.py``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README_LIMIT = (
    12_000  # UTF-8 bytes (wc -c; the table's box lines count 3 each): ten minutes' reading
)
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^( *)```(\S*)([^\n]*)\n(.*?)^\1```[ \t]*$", re.S | re.M)


def blocks(path: Path) -> list[tuple[str, str, str]]:
    """``(language, info, body)`` of each fenced block, the body de-indented to its fence."""
    out = []
    for indent, lang, info, body in FENCE.findall(path.read_text(encoding="utf-8")):
        lines = [
            line[len(indent) :] if line.startswith(indent) else line for line in body.split("\n")
        ]
        out.append((lang, info.strip(), "\n".join(lines)))
    return out


def _name(path: Path) -> str:
    return str(path.relative_to(REPO))


BLOCKS = {_name(p): blocks(p) for p in PAGES}
README_BASH = [b for lang, _, b in BLOCKS["README.md"] if lang == "bash"]
QUICK_RUN, QUICK_TEST = README_BASH[:2]
BASH = [
    pytest.param(page, body, id=f"{page}-{i}")
    for page, found in BLOCKS.items()
    for i, (lang, _, body) in enumerate(found)
    if lang == "bash" and body not in (QUICK_RUN, QUICK_TEST)
]
PYTHON = [
    pytest.param(page, body, id=f"{page}-{i}")
    for page, found in BLOCKS.items()
    for i, (lang, _, body) in enumerate(found)
    if lang == "python"
]
DOC_PAGES = ("cli", "models", "inplace", "extending", "performance", "metrics", "decisions")


def test_every_block_is_covered():
    """A block is run here (bash, python), recomputed elsewhere (json example=) or output (text)."""
    for page, found in BLOCKS.items():
        for lang, info, _ in found:
            assert lang in {"bash", "python", "text"} or (
                lang == "json" and page == "docs/metrics.md" and info.startswith("example=")
            ), (page, lang, info)
    assert len(BASH) >= 2 and len(PYTHON) >= 6


def test_readme_is_short():
    size = len((REPO / "README.md").read_bytes())
    assert size <= README_LIMIT, f"README.md has {size} bytes; move detail into docs/"


def test_readme_links_every_docs_page_and_notebook():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for name in DOC_PAGES:
        assert (REPO / "docs" / f"{name}.md").exists(), name
    for page in sorted((REPO / "docs").glob("*.md")):
        assert f"](docs/{page.name}" in readme, page.name
    for notebook in sorted((REPO / "notebooks").glob("*.ipynb")):
        assert f"](notebooks/{notebook.name})" in readme, notebook.name


def _anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_relative_links_resolve(page):
    """Every relative link of a page names a file that exists, and a heading where it has #."""
    text = page.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        dest = (page.parent / file).resolve() if file else page
        assert dest.exists(), f"{_name(page)}: {target}"
        if anchor and dest.suffix == ".md":
            headings = re.findall(r"^#+ (.*)$", dest.read_text(encoding="utf-8"), re.M)
            assert anchor in {_anchor(h) for h in headings}, f"{_name(page)}: {target}"


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_named_repository_paths_exist(page):
    """A file or folder of the repository that a page names in backticks exists (it moves with
    the code; a placeholder such as ``<domain>`` is left alone)."""
    text = page.read_text(encoding="utf-8")
    for path in re.findall(r"`((?:src|tests|benchmarks|notebooks|docs)/[^`\s:<>]*)`?", text):
        assert (REPO / path).exists(), f"{_name(page)}: {path}"


def test_no_block_writes_to_a_fixed_tmp_path():
    """A fixed /tmp path would let one user's (or test run's) output be reused by the next."""
    for found in BLOCKS.values():
        for _, _, body in found:
            assert "/tmp/" not in body, body


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


def _endpoint(script: str, server) -> str:
    """A block written for a real endpoint (``OPENAI_API_KEY=... --model openai:NAME
    --base-url URL``), pointed at the fake server."""
    return (
        script.replace("OPENAI_API_KEY=...", "OPENAI_API_KEY=fake")
        .replace("openai:NAME", "openai:fake")
        .replace("--base-url URL", f"--base-url {server.base_url}")
    )


@pytest.mark.parametrize(("page", "block"), BASH)
def test_bash_blocks(page, block, tmp_path):
    """Each block runs, and writes nothing into the checkout (outputs go to ``mktemp -d``)."""
    from replan.models.fake_openai import FakeOpenAI

    before = _untracked()
    bindir = str(Path(sys.executable).parent)
    script = block.replace(".venv/bin/", bindir + "/")
    with FakeOpenAI(latency_s=0.0) as server:
        proc = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", _endpoint(script, server)],
            cwd=REPO,
            capture_output=True,
            text=True,
            env={**os.environ, "CI": "1", "TMPDIR": str(tmp_path)},  # mktemp -d lands in tmp_path
            timeout=600,
        )
    assert proc.returncode == 0, f"{page}: {proc.stderr[-2000:]}"
    assert _untracked() <= before, sorted(_untracked() - before)


@pytest.mark.parametrize(("page", "block"), PYTHON)
def test_python_blocks(page, block, tmp_path, monkeypatch):
    import tempfile

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # tempfile.mkdtemp() under tmp_path
    exec(compile(block, page, "exec"), {"__name__": "__readme__"})


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
