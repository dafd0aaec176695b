"""Extending replan is one file: a suite, a design, a metric or a model kind registered from a
module of the user's own (here written to ``tmp_path`` and named in ``$REPLAN_PLUGINS``) is picked
up by ``replan suites``, ``replan run`` (preflight, runner, scoring, table) without editing any
file of replan."""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from replan.cli import app
from replan.core import registry as core_registry
from replan.core.registry import PLUGINS_ENV, PluginError, Registry
from replan.evaluators.metric import METRICS
from replan.graphs.registry import DESIGN_REGISTRY
from replan.models.registry import MODEL_KINDS
from replan.suites import SUITES

runner = CliRunner()

TOY = '''
"""A user's extension of replan: one suite, one design, one metric, one model kind."""

from dataclasses import dataclass

from replan.evaluators.metric import Column, Paired, metric
from replan.evaluators.stats import Feedback
from replan.graphs import build_react
from replan.graphs.registry import design
from replan.models import make_model
from replan.models.registry import model_kind
from replan.suites import load_suite, suite

BUILT = []  # designs compiled, model specs built: what the test checks was really used


@suite("toy-suite", description="two ToolMaze C1 tasks renamed", default_designs=("toy_design",))
def load(*, limit: int | None = None) -> list:
    tasks = load_suite("toolmaze", levels="C1", modes="NP,P1", limit=1)
    out = [t.model_copy(update={"suite": "toy-suite", "task_id": "toy-" + t.task_id}) for t in tasks]
    return out[:limit] if limit is not None else out


@design("toy_design")
def build_toy(*args, **kwargs):
    BUILT.append("toy_design")
    return build_react(*args, **kwargs)


@dataclass
class AnswerRecord:
    words: int


def answer_summary(records, *, seed=0, n_boot=0, failures=0):
    n = len(records)
    mean = sum(r.words for r in records) / n if n else None
    return {"toy.answer_words": {"value": mean, "low": None, "high": None, "n": n}}


@metric(
    "toy",
    feedback=lambda r: [Feedback("toy.answer_words", float(r.words))],
    summarize=answer_summary,
    load=lambda data: AnswerRecord(**data),
    keys={"toy.answer_words": "words in the final answer"},
    columns=(Column("words", lambda u: u.aggregate.get("toy.answer_words"), "answer words"),),
    paired=(Paired("toy.answer_words", "answer words", lambda r: float(r.words)),),
)
def answer_record(ctx):
    BUILT.append("toy metric")
    return AnswerRecord(len((ctx.episode.final_answer or "").split()))


@model_kind("toy", example="toy:<profile>")
def build_toy_model(rest, *, spec, task=None, corpus=None, seed=0, **kw):
    BUILT.append(spec)
    return make_model("simulated:" + (rest or "competent"), task=task, corpus=corpus, seed=seed)
'''


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The toy module, importable and named in ``$REPLAN_PLUGINS``; unregistered afterwards."""
    name = f"toy_replan_plugin_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(TOY), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(PLUGINS_ENV, name)
    monkeypatch.chdir(tmp_path)
    yield name
    SUITES.unregister("toy-suite")
    DESIGN_REGISTRY.unregister("toy_design")
    METRICS.unregister("toy")
    MODEL_KINDS.unregister("toy")
    core_registry._imported_plugins.discard(name)
    sys.modules.pop(name, None)


def test_a_plugged_in_suite_design_metric_and_model_run_end_to_end(
    plugin: str, tmp_path: Path
) -> None:
    listed = runner.invoke(app, ["suites", "list", "--json"])
    assert listed.exit_code == 0, listed.output
    rows = {r["name"]: r for r in json.loads(listed.stdout)["suites"]}
    assert rows["toy-suite"]["designs"] == ["toy_design"] and rows["toy-suite"]["options"] == [
        "limit"
    ]

    out = tmp_path / "results"
    # no --agents: the suite's default design; the model through the toy kind
    got = runner.invoke(
        app, ["run", "--suite", "toy-suite", "--model", "toy:expert", "--out", str(out), "--json"]
    )
    assert got.exit_code == 0, got.output
    summary = json.loads(got.stdout)
    assert list(summary["designs"]) == ["toy_design"]
    assert summary["designs"]["toy_design"]["episodes"] == 2

    toy = sys.modules[plugin]
    assert toy.BUILT.count("toy_design") == 2 and toy.BUILT.count("toy:expert") == 2

    from replan.runner.store import ResultsStore

    with ResultsStore(out) as store:
        eps = store.episodes()
    assert {(e.suite, e.design, e.model) for e in eps} == {
        ("toy-suite", "toy_design", "toy:expert")
    }
    assert sorted(e.task_id for e in eps) == ["toy-toolmaze-C1-000-NP", "toy-toolmaze-C1-000-P1"]
    assert all(e.end_reason.value in ("answered", "gave_up") for e in eps), eps

    # the toy metric: scored once per episode, stored as feedback, a column of the table
    assert toy.BUILT.count("toy metric") == 2
    words = {e.episode_id: len((e.final_answer or "").split()) for e in eps}
    with ResultsStore(out) as store:
        stored = {k: v for k, key, v, _ in store.feedback() if key == "toy.answer_words"}
    assert stored == {k: float(v) for k, v in words.items()}
    row = summary["designs"]["toy_design"]
    assert row["words"]["value"] == pytest.approx(sum(words.values()) / 2)
    assert row["words"]["n"] == 2

    from replan.evaluators.langsmith import FEEDBACK_KEYS, evaluators, summary_evaluators

    assert "toy_evaluator" in [f.__name__ for f in evaluators()]
    assert "toy_summary" in [f.__name__ for f in summary_evaluators()]
    assert FEEDBACK_KEYS["toy.answer_words"] == "words in the final answer"

    from replan.evaluators import compare

    paired = compare(eps, eps)["toy.answer_words"]  # a design against itself: no difference
    assert paired["n"] == 2 and paired["difference"] == 0.0

    table = runner.invoke(app, ["report", str(out)])  # the HTML report has the column too
    assert table.exit_code == 0, table.output
    assert '<th title="answer words">words</th>' in (out / "report.html").read_text()


def test_a_plugged_in_design_is_offered_by_preflight(plugin: str, tmp_path: Path) -> None:
    bad = runner.invoke(app, ["run", "--agents", "toy_desing", "--out", str(tmp_path / "r")])
    assert bad.exit_code == 2
    assert "did you mean 'toy_design'" in bad.stderr


def test_a_broken_plugin_is_one_clear_error(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "broken_replan_plugin.py").write_text("raise RuntimeError('boom')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(PLUGINS_ENV, "broken_replan_plugin")
    try:
        with pytest.raises(PluginError, match=r"broken_replan_plugin.*RuntimeError: boom"):
            SUITES.names()
    finally:
        core_registry._imported_plugins.discard("broken_replan_plugin")


def test_registry_names_order_and_duplicates() -> None:
    reg: Registry[int] = Registry("thing")
    reg.register("b", 1, module="m1")
    reg.register("a", 2, module="m1")
    assert reg.names() == ["b", "a"] and reg.get("a") == 2 and "a" in reg
    reg.register("a", 3, module="m1")  # the same module again (a reload): replaced
    assert reg.get("a") == 3
    with pytest.raises(ValueError, match="registered twice: in m1 and in m2"):
        reg.register("a", 4, module="m2")
    with pytest.raises(ValueError, match="unknown thing 'c'; known: b, a"):
        reg.get("c")
    reg.unregister("a")
    assert reg.names() == ["b"]


def test_listing_order_does_not_depend_on_which_module_was_imported_first() -> None:
    """A test (or a user) importing one suite's module directly registers it early; the listing
    still reads toolmaze, toolmaze-guided, pararecover, pararecover-synth."""
    import subprocess

    code = (
        "import replan.suites.pararecover_synth, replan.suites.pararecover\n"
        "from replan.suites import SUITES\n"
        "print(','.join(SUITES.names()[:4]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "toolmaze,toolmaze-guided,pararecover,pararecover-synth", out


def test_builtins_are_registered_by_their_own_files() -> None:
    assert SUITES.names()[:4] == [
        "toolmaze",
        "toolmaze-guided",
        "pararecover",
        "pararecover-synth",
    ]
    assert {s.load.__module__ for _, s in SUITES.items()} >= {
        "replan.suites.toolmaze",
        "replan.suites.pararecover",
        "replan.suites.pararecover_synth",
    }
    assert set(DESIGN_REGISTRY.names()) >= {
        "react",
        "plan_conditioned",
        "dual_loop",
        "replanner_loop",
    }
    assert DESIGN_REGISTRY.get("react").build.__module__ == "replan.graphs.react"
    assert [n for n, k in MODEL_KINDS.items() if k.any_prefix] == ["provider"]
    from replan.evaluators.metric import metrics

    assert [(m.name, m.record.__module__) for m in metrics()][:3] == [
        ("toolmaze", "replan.evaluators.perturbation"),
        ("prefix", "replan.evaluators.prefix"),
        ("sde", "replan.evaluators.sde.record"),
    ]
