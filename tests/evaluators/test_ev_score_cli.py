"""``replan score`` end to end, plus the scoring entry points it relies on (groups, compare)."""

from __future__ import annotations

import json
from pathlib import Path

import ev_travel as tv
import pytest
from typer.testing import CliRunner

from replan.cli import app
from replan.evaluators import compare, score

BOOKED = "Booked {booking}"


def _runs() -> tuple[list, list]:
    t1 = tv.task("a", mode="P1")
    t2 = tv.task("b")
    eps = [
        tv.run(
            t1,
            [tv.search(fault="explicit"), tv.search(), tv.quote(), tv.book()],
            answer=BOOKED,
            episode_id="1",
            design="react",
        ),
        tv.run(
            t1, [tv.search(fault="explicit")], answer="down", episode_id="2", design="dual_loop"
        ),
        tv.run(
            t2,
            [tv.search(), tv.book(ref="FQ-EXPIRED1")],
            answer="no",
            episode_id="3",
            design="react",
        ),
        tv.run(
            t2,
            [tv.search(), tv.quote(), tv.book()],
            answer=BOOKED,
            episode_id="4",
            design="dual_loop",
        ),
    ]
    return eps, [t1, t2]


def _write(tmp_path: Path) -> tuple[Path, Path, list, list]:
    eps, tasks = _runs()
    ep_file = tmp_path / "episodes.jsonl"
    lines = [eps[0].to_json(), "{broken json", eps[1].to_json(), ""]
    # the last two carry their task inside the episode, as the runner may embed it
    for ep, t in ((eps[2], tasks[1]), (eps[3], tasks[1])):
        lines.append(
            ep.model_copy(update={"metadata": {"task": t.model_dump(mode="json")}}).to_json()
        )
    lines.append('{"episode_id": "x"}')
    ep_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    task_file = tmp_path / "tasks.jsonl"
    task_file.write_text(tasks[0].model_dump_json() + "\n", encoding="utf-8")
    return ep_file, task_file, eps, tasks


def test_score_json(tmp_path: Path) -> None:
    ep_file, task_file, eps, tasks = _write(tmp_path)
    res = CliRunner().invoke(
        app, ["score", str(ep_file), "--tasks", str(task_file), "--json", "--n-boot", "300"]
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)  # exactly one JSON object on stdout
    assert out["episodes"] == 4
    assert out["verdict_sources"] == {"replay": 4}
    expected = score(eps, tasks, n_boot=300)
    for key in ("prefix.ter", "prefix.auc_pec", "prefix.rr", "toolmaze.prr.P1", "sde.pass@1"):
        assert out[key] == pytest.approx(expected[key]), key
    assert out["prefix.ter"]["value"] == pytest.approx(3 / 4)
    lines = {e["line"] for e in out["input_errors"]}
    assert lines == {2, 7}
    assert f"{ep_file}:2:" in res.stderr and f"{ep_file}:7:" in res.stderr


def test_score_table(tmp_path: Path) -> None:
    ep_file, task_file, _, _ = _write(tmp_path)
    res = CliRunner().invoke(
        app, ["score", str(ep_file), "--tasks", str(task_file), "--by", "design", "--n-boot", "200"]
    )
    assert res.exit_code == 0, res.output
    assert "prefix.ter" in res.stdout and "toolmaze.prr.P1" in res.stdout
    assert "Parameter_Invalid" in res.stdout  # the first-error type table
    assert "design = dual_loop" in res.stdout


def test_score_without_valid_episode_fails(tmp_path: Path) -> None:
    f = tmp_path / "e.jsonl"
    f.write_text("nope\n", encoding="utf-8")
    res = CliRunner().invoke(app, ["score", str(f), "--json"])
    assert res.exit_code == 1
    assert "no valid episode" in res.stderr


def test_score_groups_and_pass_k() -> None:
    eps, tasks = _runs()
    again = [e.model_copy(update={"seed": 1, "episode_id": e.episode_id + "s1"}) for e in eps]
    out = score(eps + again, tasks, by="design", n_boot=200)
    assert set(out["groups"]) == {"react", "dual_loop"}
    assert out["groups"]["react"]["prefix.ter"]["value"] == pytest.approx(1 / 2)
    # every (task, design) succeeds on both seeds or on neither: pass^2 = share succeeding
    assert out["pass^k"]["k"] == 2
    assert out["pass^k"]["value"] == pytest.approx(2 / 4)
    with pytest.raises(ValueError, match="not an Episode field"):
        score(eps, tasks, by="colour")


def test_compare_pairs_by_task_and_seed() -> None:
    t = tv.task("c")
    a, b = [], []
    for seed in range(6):
        a.append(
            tv.run(
                t,
                [tv.search(), tv.quote(), tv.book()],
                answer=BOOKED,
                seed=seed,
                episode_id=f"a{seed}",
            )
        )
        bad = [tv.search(), tv.Act("quote_flight", {"flight_id": 3}, "2")]
        b.append(tv.run(t, bad, answer="no", seed=seed, episode_id=f"b{seed}"))
    r = compare(a, b, [t], n_boot=300)
    assert r["pairs"] == 6
    assert (r["success"]["a_only"], r["success"]["b_only"]) == (6, 0)
    assert r["success"]["p_value"] == pytest.approx(2 / 64)  # exact: 2·(1/2)^6
    assert r["clean"]["a_only"] == 6
    assert r["prefix.auc"]["difference"] == pytest.approx(1 - 1 / 2)


# --- one rule for infrastructure failures, in `replan run` and `replan score` (issue 12) ------
def _pararecover_runs() -> tuple[list, list]:
    from replay_models import run_protocol

    from replan.nodes.config import RetrySettings
    from replan.samples import PARARECOVER_SAMPLE
    from replan.suites import pararecover as pr

    tasks = pr.load_tasks(PARARECOVER_SAMPLE / "LEVEL-1/LEVEL-1_augmented.jsonl")[:6]
    eps = []
    for i, t in enumerate(tasks):
        # every third replanner call fails for the infrastructure; the others hand the
        # instance's plan back unchanged (some complete, some fail on the labelled error)
        text = ConnectionError("endpoint down") if i % 3 == 2 else t.replan_point.plan
        eps.append(run_protocol(t, text, retry=RetrySettings(max_attempts=1)))
    return eps, tasks


def test_run_summary_and_score_agree_on_the_same_episodes(tmp_path):
    """The run summary (``replan run``, via the report's units) and ``replan score`` read the
    same stored episodes with one rule: infrastructure failures count as failed runs in the
    success rate and are left out of E5, TER and the invalid-DAG rate."""
    from replan.core.trace import EndReason
    from replan.evaluators import score_one
    from replan.report.summary import summarize
    from replan.runner.store import ResultsStore

    eps, tasks = _pararecover_runs()
    failed = [e for e in eps if e.end_reason is EndReason.MODEL_ERROR]
    ran = [e for e in eps if e.end_reason is not EndReason.MODEL_ERROR]
    assert len(failed) == 2 and len(ran) == 4
    out = tmp_path / "run"
    with ResultsStore(out) as store:
        store.ensure_experiment("x", {})
        store.save_tasks(tasks)
        for e in eps:
            store.save_episode("x", e, [])
    row = summarize(out)["replanner_loop"]
    ep_file, task_file = tmp_path / "episodes.jsonl", tmp_path / "tasks.jsonl"
    ep_file.write_text("".join(e.to_json() + "\n" for e in eps), encoding="utf-8")
    task_file.write_text("".join(t.model_dump_json() + "\n" for t in tasks), encoding="utf-8")
    res = CliRunner().invoke(
        app, ["score", str(ep_file), "--tasks", str(task_file), "--json"], catch_exceptions=False
    )
    assert res.exit_code == 0, res.output
    scored = json.loads(res.stdout)
    # the same numbers through both paths
    assert row["E5"]["value"] == pytest.approx(scored["sde.E5"]["value"])
    assert row["TER"]["value"] == pytest.approx(scored["prefix.ter"]["value"])
    assert row["TSR"]["value"] == pytest.approx(scored["toolmaze.tsr"]["value"])
    assert row["failures"] == scored["failures"] == 2
    # worked out from the per-run records of the runs that reached a verdict, by hand
    per_run = [score_one(e, t) for e, t in zip(eps, tasks, strict=True) if e in ran]
    e5 = [s.sde.script["E5"] for s in per_run]
    assert scored["sde.E5"]["value"] == pytest.approx(sum(e5) / len(e5))
    successes = sum(bool(e.success) for e in ran)
    assert scored["sde.pass@1"]["value"] == pytest.approx(successes / 6)  # failures fail
    assert scored["sde.invalid_dag_rate"]["value"] == 0.0  # a crash is not an invalid DAG
    assert scored["sde.invalid_dag_rate"]["n"] == 4
