"""Every failure says why (issue 30 §4): the reasons of failed episodes, Ctrl-C in one line,
text from outside printed as it is, a bad dataset line named and skipped, secrets in query
parameters masked. Commands run in-process (typer's CliRunner) except Ctrl-C, which needs a real
process and a real SIGINT."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from replan.cli import app
from replan.core.redact import redact, redact_url

QUICK = ["--agents", "react", "--concurrency", "1"]


def _invoke(*args: str, **env: str):
    return CliRunner(env={"COLUMNS": "200", **env}).invoke(app, list(args))


# -- a factory that raises: each reason once with its count, non-zero when nothing ran --------
FACTORIES = textwrap.dedent(
    """
    def broken(tools, model):
        raise RuntimeError("factory exploded: no GPU [/] here")
    """
)


def test_a_factory_that_raises_says_why_once_and_exits_non_zero(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "my_factories.py").write_text(FACTORIES, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "r"
    res = _invoke("run", "--agent", "my_factories:broken", "--limit", "4", "--out", str(out))
    assert res.exit_code == 1, res.output
    assert "4 failed" in res.stderr
    reasons = [ln for ln in res.stderr.splitlines() if "factory exploded" in ln]
    assert len(reasons) == 1, res.stderr  # one line for the one cause, with its count
    assert re.search(
        r"\b4 failed: crashed: RuntimeError: factory exploded: no GPU \[/\] here", reasons[0]
    )
    (last,) = [ln for ln in res.stderr.splitlines() if ln.startswith("error")]
    assert "none of the 4 episode(s)" in last
    res = _invoke(
        "run", "--agent", "my_factories:broken", "--limit", "4", "--out", str(out), "--json"
    )
    assert res.exit_code == 1
    summary = json.loads(res.stdout)
    assert summary["failures"] == [
        {"reason": "crashed: RuntimeError: factory exploded: no GPU [/] here", "episodes": 4}
    ]


def test_a_run_where_something_ran_still_exits_zero(tmp_path: Path) -> None:
    res = _invoke("run", *QUICK, "--limit", "2", "--out", str(tmp_path / "r"))
    assert res.exit_code == 0, res.output
    assert "0 failed" in res.stderr and "error" not in res.stderr


# -- Ctrl-C: one line, exit 130 -----------------------------------------------------------------
@pytest.mark.slow  # ~25 s: a real run interrupted while graphs are in flight, then resumed
def test_ctrl_c_while_graphs_run_is_one_line_and_exit_130(tmp_path: Path) -> None:
    out = tmp_path / "r"
    env = {**os.environ, "CI": "1", "PYTHONUNBUFFERED": "1", "REPLAN_PROGRESS_EVERY": "0.2"}
    cmd = [sys.executable, "-m", "replan.cli", "run", "--seeds", "5", "--concurrency", "8"]
    proc = subprocess.Popen(
        [*cmd, "--out", str(out)],
        env=env,
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.time() + 120
        while time.time() < deadline and proc.poll() is None and _stored(out) < 40:
            time.sleep(0.1)
        assert proc.poll() is None, "the run ended before it could be interrupted"
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, stderr
    lines = [ln for ln in stderr.splitlines() if ln.strip() and not ln.startswith("progress:")]
    assert len(lines) == 1 and lines[0].startswith("interrupted: "), stderr


def _stored(out: Path) -> int:
    try:
        with sqlite3.connect(out / "results.sqlite") as c:
            return c.execute("SELECT COUNT(*) FROM episodes").fetchone()[0]
    except sqlite3.Error:
        return 0


# -- text from outside is printed as it is --------------------------------------------------------
def test_markup_in_an_out_folder_or_input_path_is_printed_as_it_is(
    tmp_path: Path, sample_files: list[Path]
) -> None:
    out = tmp_path / "x[/]y"
    res = _invoke("run", *QUICK, "--limit", "2", "--out", str(out))
    assert res.exit_code == 0, res.output
    assert f"-> {out}" in res.stderr and f"report: {out}" in res.stderr
    data = tmp_path / "p[/]q" / "d[bold].jsonl"
    data.parent.mkdir(parents=True)
    lines = sample_files[0].read_text(encoding="utf-8").splitlines()[:2]
    data.write_text("\n".join([*lines, "not json [/]"]) + "\n", encoding="utf-8")
    res = _invoke("audit", "pararecover", str(data))
    assert res.exit_code == 0, res.output
    assert f"skipped {data}:3: not valid JSON" in res.stderr
    from replan.core.trace import Episode

    episode = Episode(episode_id="ep[/]1", task_id="toolmaze-C1-000-NP", design="react", model="m")
    episodes = tmp_path / "episodes.jsonl"
    episodes.write_text(episode.to_json() + "\n" + episode.to_json() + "\n", encoding="utf-8")
    res = _invoke("score", str(episodes))
    assert res.exit_code == 0, res.output
    assert "duplicate episode_id 'ep[/]1'" in res.stderr


def test_no_cli_console_reads_markup() -> None:
    """Every console of the commands comes from ``replan.cli.terminal`` (no markup, no emoji):
    a new command cannot bring back a print that reads ``[/]`` in a path as markup."""
    import replan.cli as cli

    root = Path(cli.__file__).parent
    for path in sorted(root.glob("*.py")):
        if path.name == "terminal.py":
            continue
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"\bConsole\(", text), f"{path.name}: use plain_console()"
        assert "[/]" not in text, f"{path.name}: markup in a printed string; use labelled()"


# -- a bad tool schema or a lone surrogate: that line is named and skipped -----------------------
def _with_bad_line(tmp_path: Path, sample_files: list[Path], edit) -> tuple[Path, int]:
    lines = sample_files[0].read_text(encoding="utf-8").splitlines()[:10]
    lines[3] = edit(lines[3])
    path = tmp_path / "ten.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, len(lines)


def _object_type(line: str) -> str:
    record = json.loads(line)
    tools = json.loads(record["tool_list"])
    first = next(iter(tools[0]["parameters"]))
    tools[0]["parameters"][first]["type"] = {"oops": 1}
    record["tool_list"] = json.dumps(tools)
    return json.dumps(record)


def _lone_surrogate(line: str) -> str:
    record = json.loads(line)
    return line.replace(f'"id": {json.dumps(record["id"])}', '"id": "a\\ud800b"', 1)


@pytest.mark.parametrize(
    ("edit", "why"),
    [(_object_type, "not a valid JSON Schema"), (_lone_surrogate, "\\ud800 escape without")],
)
def test_a_bad_line_is_named_and_the_others_are_used(
    tmp_path: Path, sample_files: list[Path], edit, why: str
) -> None:
    data, n = _with_bad_line(tmp_path, sample_files, edit)
    res = _invoke("audit", "pararecover", str(data), "--json")
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report["instances"] == n - 1
    [(line, message)] = [(e["line"], e["message"]) for e in report["line_errors"]]
    assert line == 4 and why in message, message
    out = tmp_path / "r"
    res = _invoke(
        *("run", "--suite", "pararecover", "--path", str(data)),
        *("--agents", "replanner_loop", "--out", str(out)),
    )
    assert res.exit_code == 0, res.output
    assert _stored(out) == n - 1
    res = _invoke("report", str(out))  # the store holds nothing it cannot read back
    assert res.exit_code == 0, res.output


# -- secrets in query parameters ------------------------------------------------------------------
@pytest.mark.parametrize(
    "url",
    [
        "https://example.openai.azure.com/v1?key=abc123secretvalue&api-version=2024-02",
        "https://host/v1?api-version=1&subscription-key=0123456789abcdef",
        "https://host/v1?access_token=tok-99887766&x=1",
        "https://host/v1?sig=Zm9vYmFy%2Fx&se=2030",
    ],
)
def test_secret_query_parameters_are_masked(url: str) -> None:
    secret = re.search(r"(?:key|token|sig)=([^&]+)", url).group(1)
    for masked in (redact(url), redact_url(url)):
        assert secret not in masked, masked
        assert "=***" in masked
    assert "api-version=" in redact("https://h/v1?key=s3cr3tvalue&api-version=2024-02")
    assert "2024-02" in redact("https://h/v1?key=s3cr3tvalue&api-version=2024-02")


def test_every_userinfo_is_masked() -> None:
    assert redact_url("http://alice@host/v1") == "http://***@host/v1"
    assert "pw99" not in redact_url("redis://bob:pw99@host:6379/0")


def test_a_key_in_the_base_url_reaches_no_file(tmp_path: Path) -> None:
    out = tmp_path / "r"
    secret, sub = "SEKRETKEY99887766", "SUBKEY55443322"
    res = _invoke(
        *("run", "--agents", "react", "--model", "openai:gpt-4o-mini", "--limit", "1"),
        *("--base-url", f"http://127.0.0.1:9/v1?key={secret}&subscription-key={sub}"),
        *("--model-timeout", "2", "--out", str(out)),
        OPENAI_API_KEY="sk-test-000000000000",
    )
    assert res.exit_code == 1, res.output  # nothing reached the endpoint
    assert "1 failed: model_error" in res.stderr
    for path in out.iterdir():
        data = path.read_bytes()
        assert secret.encode() not in data and sub.encode() not in data, path
    assert secret not in res.output and sub not in res.output


def test_the_lock_file_names_the_command_without_its_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from replan.runner.store import WriterLock

    argv = ["replan", "run", "--base-url", "https://h/v1?subscription-key=SUBKEY55443322"]
    monkeypatch.setattr(sys, "argv", argv)
    with WriterLock(tmp_path) as lock:
        text = lock.path.read_text(encoding="utf-8")
    assert "SUBKEY55443322" not in text and "subscription-key=***" in text
