"""One front door: every run option is declared once (``RunOptions``) and reaches the runner the
same from ``replan run`` and from ``replan.run``; the backend is built by the runner."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import replan
from replan.cli import app
from replan.runner import experiment
from replan.runner.options import RunOptions, parse_pairs

#: for every option, a value other than its default, and the ``replan run`` flags that set it
CASES: dict[str, tuple[Any, list[str]]] = {
    "suite": ("pararecover-synth", ["--suite", "pararecover-synth"]),
    "agents": (["react", "dual_loop"], ["--agents", "react,dual_loop"]),
    "models": (
        ["simulated:novice", "simulated:expert"],
        ["-m", "simulated:novice", "-m", "simulated:expert"],
    ),
    "seeds": (3, ["--seeds", "3"]),
    "limit": (7, ["--limit", "7"]),
    "filter": (["C2", "P3"], ["--filter", "c2,P3"]),
    "per_cell": (5, ["--per-cell", "5"]),
    "prompt": ("hint", ["--prompt", "hint"]),
    "suite_options": ({"seed": 2, "per_level": 4}, ["-S", "seed=2", "-S", "per_level=4"]),
    "budgets": (
        {"max_steps": 9, "plan_format": "structured"},
        ["-B", "max_steps=9", "-B", "plan_format=structured"],
    ),
    "base_url": ("http://127.0.0.1:9/v1", ["--base-url", "http://127.0.0.1:9/v1"]),
    "agent_factory": ("json:dumps", ["--agent", "json:dumps"]),
    "concurrency": (11, ["--concurrency", "11"]),
    "episode_timeout_s": (12.5, ["--episode-timeout", "12.5"]),
    "model_timeout_s": (3.0, ["--model-timeout", "3"]),
    "max_in_flight": (2, ["--max-in-flight", "2"]),
    "requests_per_minute": (30.0, ["--rpm", "30"]),
    "tokens_per_minute": (9000.0, ["--tpm", "9000"]),
    "out": (Path("elsewhere"), ["--out", "elsewhere"]),
    "backend": ("ray", ["--backend", "ray"]),
    "workers": (3, ["--workers", "3"]),
    "address": ("ray://head:10001", ["--address", "ray://head:10001"]),
    "archive": (Path("kept.jsonl"), ["--archive", "kept.jsonl"]),
    "resume": (False, ["--fresh"]),
    "retry_failed": (False, ["--no-retry-failed"]),
}


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[RunOptions]:
    """The options each run hands the runner (nothing runs)."""
    monkeypatch.chdir(tmp_path)
    seen: list[RunOptions] = []

    async def fake_arun(cfg: RunOptions, out_dir: Any = None, check: Any = None, **_: Any) -> Any:
        if check is not None:  # as on a new store: checked before anything runs
            check()
        seen.append(cfg)
        return experiment.RunOutcome("x", Path(cfg.out), 0, 0, 0, 0, 0.0)

    monkeypatch.setattr(experiment, "arun", fake_arun)
    monkeypatch.setattr("replan.runner.preflight.check_backend", lambda name: None)
    monkeypatch.setattr("replan.cli.run.finish", lambda *a, **k: {})
    return seen


def test_every_option_has_a_case() -> None:
    """A new option is one field and one CLI line: this table names its flag."""
    assert set(CASES) == set(RunOptions.model_fields)


@pytest.mark.parametrize("field", sorted(CASES))
def test_every_option_reaches_the_runner_from_the_cli_and_from_replan_run(
    field: str, captured: list[RunOptions]
) -> None:
    value, argv = CASES[field]
    res = CliRunner().invoke(app, ["run", *argv])
    assert res.exit_code == 0, res.output
    replan.run(**{field: value})
    from_cli, from_api = captured
    assert getattr(from_cli, field) == value
    assert from_cli == from_api  # every other option at the same default too


def test_help_text_and_default_come_from_the_declaration() -> None:
    res = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "400"})
    text = " ".join(res.output.split())
    for name in ("concurrency", "retry_failed", "suite_options", "budgets"):
        desc = RunOptions.model_fields[name].description
        assert " ".join(desc.split())[:40] in text, name
    assert "[default: 4]" in text  # concurrency: typed once, in RunOptions


def test_a_wrong_option_is_one_line_from_the_cli_and_a_value_error_from_python(
    captured: list[RunOptions],
) -> None:
    res = CliRunner().invoke(app, ["run", "-B", "max_stepz=3"])
    assert res.exit_code == 2 and "max_stepz" in res.output and "Traceback" not in res.output
    res = CliRunner().invoke(app, ["run", "-S", "perlevel=3"])
    assert res.exit_code == 2 and "did you mean 'per_level'" in res.output
    with pytest.raises(ValueError, match="max_stepz"):
        replan.run(budgets={"max_stepz": 3})
    with pytest.raises(ValueError, match="concurency"):
        replan.run(concurency=3)
    assert captured == []  # nothing ran


def test_pairs_read_json_values_else_text() -> None:
    assert parse_pairs(["a=1", "b=true", "c=x y", "d=[1, 2]", "e="], "-S") == {
        "a": 1,
        "b": True,
        "c": "x y",
        "d": [1, 2],
        "e": "",
    }
    with pytest.raises(ValueError, match="-S 'novalue'"):
        parse_pairs(["novalue"], "-S")


def test_the_experiment_id_is_what_it_was() -> None:
    """Resume finds stores of earlier versions: the id hashes the same fields the same way as
    the dataclass did (computed here by hand from those fields)."""
    opts = RunOptions(agents=["react"], limit=5, filter=["C2"], concurrency=9, workers=2)
    ident = {
        "suite": "toolmaze",
        "agents": ["react"],
        "models": ["simulated:competent"],
        "seeds": 1,
        "limit": 5,
        "filter": ["C2"],
        "per_cell": 3,
        "prompt": "standard",
        "suite_options": {},
        "budgets": {},
        "base_url": None,
        "agent_factory": None,
    }
    expected = hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:12]
    assert opts.experiment_id() == expected


def test_the_backend_is_built_from_the_options() -> None:
    from replan.runner.backends import make_backend
    from replan.runner.process_backend import ProcessBackend
    from replan.runner.ray_backend import RayBackend

    assert isinstance(make_backend(RunOptions()), experiment.LocalBackend)
    assert make_backend(RunOptions(workers=3)).workers == 3
    assert isinstance(make_backend(RunOptions(workers=0)), ProcessBackend)
    ray = make_backend(RunOptions(backend="ray", address="ray://h:1"))
    assert isinstance(ray, RayBackend) and ray.address == "ray://h:1"
