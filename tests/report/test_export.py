"""``replan export sft|dpo``: the replanner request rebuilt exactly, the JSONL layouts, and the
paper's thresholds (SFT: score > 10 of 15; DPO: both >= 3, gap > 5) on hand-computed scores."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import rp_build as rb
from langchain_core.callbacks import BaseCallbackHandler
from typer.testing import CliRunner

from replan.cli import app
from replan.env import task_world
from replan.nodes.prompts import FAILURE_HINT, replanner_messages, request_kind
from replan.runner.export import chat, export_dpo, export_sft, replanner_request

T = rb.task("t-a", mode="P1", level="C2")
T_B = rb.task("t-b", mode="P1", level="C2")

# Item scores (S1..S5, D1..D5, E1..E5) and their 15-point scores, by hand:
FULL15 = rb.items([1.0] * 15)  # 15
MID = rb.items([1, 1, 1, 1, 1] + [0.5] * 5 + [0] * 5)  # 5 + 2.5 + 0 = 7.5
TEN = rb.items([1, 1, 1, 1, 1] + [1, 1, 1, 1, 1] + [0] * 5)  # exactly 10: not > 10
LOW = rb.items([0.5] * 5 + [0] * 10)  # 2.5: below the DPO floor of 3
# 14 items scored (D1 missing), sum 9.8 -> 15 * 9.8 / 14 = 10.5 > 10; read as 0 it would be 9.8
PARTIAL = rb.items([1, 1, 1, 1, 1, None, 1, 1, 1, 0, 0, 0, 0, 1, 0.8])
NO_JUDGE = {"S5": 1.0, "E5": 1.0}  # what a run without a judge stores


def _store(tmp_path: Path) -> Path:
    """Task t-a: five runs with the same request (plan, 503 on the search) and different
    replans; one run of t-a that met a missing-parameter error instead (another request); a
    t-b run scored without a judge."""
    spec = [
        ("t-a", 0, "REPLAN full15", FULL15, True),
        ("t-a", 1, "REPLAN mid", MID, True),
        ("t-a", 2, "REPLAN ten", TEN, True),
        ("t-a", 3, "REPLAN low", LOW, True),
        ("t-a", 4, "REPLAN partial", PARTIAL, True),
        ("t-a", 5, "REPLAN other request", FULL15, False),
        ("t-b", 0, "REPLAN no judge", NO_JUDGE, True),
    ]
    eps, fb = [], {}
    for task_id, seed, text, items, fault in spec:
        t = T if task_id == "t-a" else T_B
        ep = rb.replan_episode(t, seed, text, first_fault=fault)
        eps.append(ep)
        fb[ep.episode_id] = rb.sde_rows(items, auto={"S2": 1.0, "D4": 0.5})
    # a react run of t-a: no replanner output, nothing to export
    react = rb.run(T, [rb.search(), rb.quote(), rb.book()], design="react", answer=rb.BOOKED)
    eps.append(react)
    fb[react.episode_id] = rb.sde_rows({"E5": 1.0})
    return rb.save(tmp_path, eps, [T, T_B], fb)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(ln) for ln in path.read_text(encoding="utf-8").splitlines()]


def _expected_prompt() -> list[dict[str, str]]:
    """The replanner request after wave 1 of a t-a run, built by hand from the prompt API."""
    tools = list(task_world(T).tools.values())
    obs = {"node": "1", "tool": "search_flights", "args": rb.ROUTE, "result": rb.ERROR_503}
    msgs = replanner_messages(T.query, tools, rb.EXPECTED_PLAN_AFTER_WAVE_1, [obs], round_index=1)
    return chat(msgs)


def test_replanner_request_rebuilt_from_the_episode() -> None:
    ep = rb.replan_episode(T, 0, "REPLAN")
    assert chat(replanner_request(ep, T, 1)) == _expected_prompt()
    hinted = ep.model_copy(update={"model": "simulated:novice+hint"})
    system = chat(replanner_request(hinted, T, 1))[0]["content"]
    assert "Tools can fail." in system  # the failure-aware variant, from the model label
    with pytest.raises(ValueError, match="plan 0 is not a replanner output"):
        replanner_request(ep, T, 0)
    with pytest.raises(ValueError, match="its task is not in the store"):
        replanner_request(ep, None, 1)


def test_sft_threshold_and_layout(tmp_path: Path) -> None:
    out = _store(tmp_path)
    s = export_sft(out)  # defaults: all 15 items, score > 10
    rows = _lines(out / "sft.jsonl")
    # eligible (15 items): full15 x2 (different requests), mid, ten, low; only 15 > 10
    assert s.written == len(rows) == 2
    assert s.episodes == 8 and s.steps == 7 and s.complete == 5 and s.eligible == 5
    assert s.excluded == {
        "no replanner output": 1,
        "fewer than 15 of the 15 items scored": 2,  # partial (14 items), no judge (2 items)
    }
    assert s.details == {"not_above_min_avg": 3, "duplicates": 0}
    assert s.item_counts["S5"] == 7 and s.item_counts["E5"] == 7
    assert s.item_counts["D1"] == 5 and s.item_counts["S1"] == 6
    for row in rows:
        assert list(row) == ["messages"]
        assert [m["role"] for m in row["messages"]] == ["system", "user", "assistant"]
        assert row["messages"][2]["content"] == "REPLAN full15" or (
            row["messages"][2]["content"] == "REPLAN other request"
        )
    first = next(r for r in rows if r["messages"][2]["content"] == "REPLAN full15")
    assert first["messages"][:2] == _expected_prompt()


def test_sft_missing_items_are_left_out_not_zero(tmp_path: Path) -> None:
    out = _store(tmp_path)
    s = export_sft(out, tmp_path / "sft14.jsonl", min_items=14, with_meta=True)
    got = {r["messages"][2]["content"]: r["metadata"] for r in _lines(tmp_path / "sft14.jsonl")}
    assert set(got) == {"REPLAN full15", "REPLAN other request", "REPLAN partial"}
    assert got["REPLAN partial"]["score"] == pytest.approx(10.5)
    assert "D1" not in got["REPLAN partial"]["items"]
    assert got["REPLAN partial"]["sources"]["S5"] == "script"
    assert got["REPLAN partial"]["sources"]["S1"] == "judge"
    assert s.written == 3
    # a higher bar: 10.5 is not > 11
    assert export_sft(out, tmp_path / "x.jsonl", min_items=14, min_avg=11).written == 2


def test_sft_use_auto_fills_missing_judged_items(tmp_path: Path) -> None:
    out = _store(tmp_path)
    # the no-judge run: S5 = E5 = 1 plus auto S2 = 1, D4 = 0.5 -> 4 items, 15 * 3.5 / 4 = 13.125
    s = export_sft(out, tmp_path / "auto.jsonl", min_items=4, use_auto=True, with_meta=True)
    rows = {r["messages"][2]["content"]: r["metadata"] for r in _lines(tmp_path / "auto.jsonl")}
    meta = rows["REPLAN no judge"]
    assert meta["score"] == pytest.approx(13.125)
    assert meta["sources"] == {"S2": "auto", "S5": "script", "D4": "auto", "E5": "script"}
    # partial (D1 missing, no auto D1): 15 * 9.8 / 14 = 10.5 -> kept
    assert "REPLAN partial" in rows
    assert s.item_counts["S2"] == 7 and s.item_counts["D4"] == 7


def test_dpo_pairs_same_task_same_request_with_floor_and_gap(tmp_path: Path) -> None:
    out = _store(tmp_path)
    s = export_dpo(out)  # floor 3, gap > 5, all 15 items
    rows = _lines(out / "dpo.jsonl")
    # same request of t-a: full15 (15), mid (7.5), ten (10), low (2.5, under the floor).
    # gaps: 15-7.5 = 7.5 ok; 15-10 = 5 not > 5; 10-7.5 = 2.5 no; low is out (15-2.5 would pass).
    # full15 of seed 5 saw another request: it pairs with nothing.
    assert s.written == len(rows) == 1
    row = rows[0]
    assert list(row) == ["prompt", "chosen", "rejected"]
    assert row["prompt"] == _expected_prompt()
    assert row["chosen"] == [{"role": "assistant", "content": "REPLAN full15"}]
    assert row["rejected"] == [{"role": "assistant", "content": "REPLAN mid"}]
    assert s.details["tasks"] == 1 and s.details["tasks_with_several_requests"] == 1
    assert s.details["below_min_score"] == 1
    # what the empty-export hint reports: the widest gap between different responses to one
    # request among those above the floor, by hand 15 - 7.5
    assert s.details["largest_gap"] == 7.5
    # a gap of more than 3: 15-10 = 5 now passes too; 10-7.5 still does not
    s3 = export_dpo(out, tmp_path / "gap3.jsonl", min_gap=3, with_meta=True)
    pairs = {
        (r["chosen"][0]["content"], r["rejected"][0]["content"]): r["metadata"]["gap"]
        for r in _lines(tmp_path / "gap3.jsonl")
    }
    assert pairs == {("REPLAN full15", "REPLAN mid"): 7.5, ("REPLAN full15", "REPLAN ten"): 5.0}
    assert s3.written == 2
    # no floor: low joins (15 - 2.5, 10 - 2.5 = 7.5 > 5, 7.5 - 2.5 = 5 not > 5)
    s0 = export_dpo(out, tmp_path / "floor0.jsonl", min_score=0)
    pairs0 = {
        (r["chosen"][0]["content"], r["rejected"][0]["content"])
        for r in _lines(tmp_path / "floor0.jsonl")
    }
    assert pairs0 == {
        ("REPLAN full15", "REPLAN mid"),
        ("REPLAN full15", "REPLAN low"),
        ("REPLAN ten", "REPLAN low"),
    }
    assert s0.written == 3


def test_export_cli(tmp_path: Path) -> None:
    out = _store(tmp_path)
    runner = CliRunner()
    res = runner.invoke(app, ["export", "sft", str(out), "--min-avg", "10", "--json"])
    assert res.exit_code == 0, res.output
    obj = json.loads(res.stdout)
    assert obj["written"] == 2 and obj["out"] == str(out / "sft.jsonl")
    assert obj["item_counts"]["E5"] == 7 and obj["steps_with_all_items"] == 5
    res = runner.invoke(
        app,
        [
            "export",
            "dpo",
            str(out),
            "--min-score",
            "3",
            "--min-gap",
            "5",
            "--out",
            str(tmp_path / "p.jsonl"),
        ],
    )
    assert res.exit_code == 0, res.output
    assert "1 pair(s) -> " in res.stdout
    assert len(_lines(tmp_path / "p.jsonl")) == 1
    res = runner.invoke(app, ["export", "sft", str(tmp_path / "nope")])
    assert res.exit_code == 1 and "not a results directory" in res.stderr


class _Recorder(BaseCallbackHandler):
    def __init__(self) -> None:
        self.requests: list[list[Any]] = []

    def on_chat_model_start(self, serialized: Any, messages: list[list[Any]], **kw: Any) -> None:
        self.requests.append(messages[0])


@pytest.mark.parametrize("hint", [False, True])
def test_rebuilt_request_equals_what_the_graph_sent(hint: bool) -> None:
    """Run the real replanner_loop graph (simulated model) and compare every replanner request
    it sent with the one rebuilt from the recorded Episode."""
    from replan.env.perturb import injector_for
    from replan.graphs import AgentConfig, run_episode
    from replan.models.simulated import SimulatedChatModel

    checked = 0
    for mode in ("P1", "P4"):
        t = rb.task(f"g-{mode}", mode=mode)
        for seed, profile in ((0, "novice"), (1, "novice"), (2, "competent")):
            rec = _Recorder()
            model = SimulatedChatModel(task=t, profile=profile, seed=seed, callbacks=[rec])
            ep = run_episode(
                "replanner_loop",
                model,
                t,
                faults=injector_for(t),
                seed=seed,
                config=AgentConfig(hint=hint),
            )
            sent = [m for m in rec.requests if request_kind(m) == "replan"]
            idx = [i for i, pv in enumerate(ep.plans) if pv.source == "replanner"]
            assert len(sent) == len(idx)
            for msgs, i in zip(sent, idx, strict=True):
                assert chat(replanner_request(ep, t, i, hint=hint)) == chat(msgs)
                checked += 1
    assert checked >= 6


def test_export_reads_the_prompt_variant_from_the_experiment(tmp_path: Path) -> None:
    ep = rb.replan_episode(T, 0, "REPLAN hinted")
    rb.save(
        tmp_path,
        [ep],
        [T],
        {ep.episode_id: rb.sde_rows(FULL15)},
        config={"suite": "hand-built", "prompt": "hint"},
    )
    assert export_sft(tmp_path).written == 1
    system = _lines(tmp_path / "sft.jsonl")[0]["messages"][0]["content"]
    assert system.endswith(FAILURE_HINT)


# -- issue 16: an empty export never replaces a good one; the defaults use what a run has ------
def test_empty_export_never_replaces_a_good_file(tmp_path: Path) -> None:
    out = _store(tmp_path)
    runner = CliRunner()
    assert runner.invoke(app, ["export", "sft", str(out)]).exit_code == 0
    good = (out / "sft.jsonl").read_bytes()
    assert len(_lines(out / "sft.jsonl")) == 2
    # nothing scores more than 15: the selection is empty
    res = runner.invoke(app, ["export", "sft", str(out), "--min-avg", "15"])
    assert res.exit_code == 1
    assert (out / "sft.jsonl").read_bytes() == good
    assert "no examples selected" in res.stderr
    # 8 episodes: 1 has no replanner output, 2 lack items, the 5 usable ones score <= 15
    assert "1  no replanner output" in res.stderr
    assert "2  fewer than 15 of the 15 items scored" in res.stderr
    assert "5  score not above --min-avg 15" in res.stderr
    assert "--force" in res.stderr
    res = runner.invoke(app, ["export", "sft", str(out), "--min-avg", "15", "--force"])
    assert res.exit_code == 0 and (out / "sft.jsonl").read_bytes() == b""
    assert sorted(p.name for p in out.iterdir() if "sft" in p.name) == ["sft.jsonl"]


def test_a_failed_export_leaves_the_old_file_whole(tmp_path: Path, monkeypatch) -> None:
    import replan.runner.export as ex

    out = _store(tmp_path)
    export_sft(out, min_items=4)
    good = (out / "sft.jsonl").read_bytes()
    calls = {"n": 0}
    real = json.dumps

    def dumps(obj: Any, **kw: Any) -> str:
        if isinstance(obj, dict) and "messages" in obj:
            calls["n"] += 1
            if calls["n"] == 2:
                raise OSError("disk full")
        return real(obj, **kw)

    monkeypatch.setattr(ex.json, "dumps", dumps)
    with pytest.raises(OSError, match="disk full"):
        export_sft(out, min_items=4)
    assert (out / "sft.jsonl").read_bytes() == good
    assert [p.name for p in out.iterdir() if p.name.endswith(".tmp")] == []


def _main_job(tmp_path: Path, *args: str) -> Path:
    out = tmp_path / "run"
    res = CliRunner().invoke(
        app, ["run", "--out", str(out), "--agents", "replanner_loop", "--json", *args]
    )
    assert res.exit_code == 0, res.output
    return out


def test_defaults_export_the_steps_a_run_without_a_judge_scored(tmp_path: Path) -> None:
    """A main-job run (no judge) scores S5, E5 and the six sde.auto.* items; the defaults use
    those 8, so `replan export sft DIR` writes examples (it wrote none before)."""
    out = _main_job(tmp_path, "--limit", "12")
    res = CliRunner().invoke(app, ["export", "sft", str(out), "--json", "--with-meta"])
    assert res.exit_code == 0, res.output
    obj = json.loads(res.stdout)
    assert obj["thresholds"]["min_items"] == 8 and obj["thresholds"]["use_auto"] is True
    assert obj["written"] > 0
    for row in _lines(out / "sft.jsonl"):
        meta = row["metadata"]
        assert set(meta["sources"].values()) == {"script", "auto"}
        assert meta["score"] > 10
    # the DPO defaults on a one-seed run: no task has two trajectories of the same request,
    # and the output says so instead of silently writing nothing
    res = CliRunner().invoke(app, ["export", "dpo", str(out)])
    assert res.exit_code == 0
    assert "no pairs selected" in res.stderr
    assert "no other step with the same task and request to pair with" in res.stderr


def test_export_episodes_feeds_replan_score(tmp_path: Path) -> None:
    out = _main_job(tmp_path, "--limit", "3")
    runner = CliRunner()
    res = runner.invoke(app, ["export", "episodes", str(out), "--json"])
    assert res.exit_code == 0, res.output
    obj = json.loads(res.stdout)
    assert obj["episodes"] == 3 and obj["tasks"] == 3
    res = runner.invoke(app, ["score", obj["out"], "--tasks", obj["tasks_out"], "--json"])
    assert res.exit_code == 0, res.output
    scored = json.loads(res.stdout)
    assert scored["episodes"] == 3 and scored["input_errors"] == []
