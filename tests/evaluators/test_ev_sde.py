"""ParaRecover SDE: script items, execution metrics, sde-auto, the judge (fake model), calibration."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import ev_travel as tv
import pytest
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool

from replan.core.plan import Plan
from replan.core.trace import EndReason, Episode, PlanVersion
from replan.evaluators import score
from replan.evaluators.sde import (
    SDEJudge,
    calibrate,
    judge_scores,
    load_labels,
    plan_edits,
    replan_context,
    sde_auto,
    sde_record,
    summarize_sde,
)

ROOT = {"id": "root", "desc": "book the flight", "dep": [], "status": True}


def node(nid: str, tool: str, para: dict[str, Any], dep: list[str], done: bool = False) -> dict:
    return {"id": nid, "name": tool, "para": para, "desc": tool, "dep": dep, "status": done}


def plan(*nodes: dict, response_dep: list[str] | None = None, response_done: bool = False) -> str:
    resp = {
        "id": "response",
        "desc": "answer",
        "dep": response_dep or ["3"],
        "status": response_done,
    }
    return json.dumps({"tasks": [ROOT, *nodes, resp]})


N1 = node("1", "search_flights", dict(tv.ROUTE), ["root"])
N1_DONE = {**N1, "status": True}
N2_BAD = node("2", "quote_flight", {"flight": "${1.cheapest_flight_id}"}, ["1"])
N2_GOOD = node("2", "quote_flight", {"flight_id": "${1.cheapest_flight_id}"}, ["1"])
N3 = node("3", "book_flight", {"quote_id": "${2.quote_id}", **tv.TRAVELLER}, ["2"])
GOOD_THOUGHT = (
    "Node 2 failed: quote_flight has no parameter 'flight' (unknown_param); the parameter is "
    "flight_id. Node 3 (book_flight) depends on node 2's quote_id, so it must wait for the fix."
)


def episode(
    replan_text: str,
    thought: str = GOOD_THOUGHT,
    *,
    end_reason: EndReason = EndReason.ANSWERED,
    answer: str = "Booked {booking}",
    episode_id: str = "sde",
) -> tuple[Any, Episode]:
    """Planner plan (round 0) with a bad quote node; wave 0 searches, wave 1 fails the quote;
    the replanner writes ``replan_text`` (round 2); waves 2 and 3 quote and book."""
    t = tv.task()
    plans = [
        PlanVersion(index=0, round=0, source="planner", text=plan(N1, N2_BAD, N3)),
        PlanVersion(index=1, round=1, source="replanner", text=plan(N1_DONE, N2_BAD, N3)),
        PlanVersion(index=2, round=2, source="replanner", thought=thought, text=replan_text),
    ]
    acts = [
        tv.search(round=0),
        tv.Act("quote_flight", {"flight": "${1.cheapest_flight_id}"}, "2", round=1),
        tv.quote(round=2),
        tv.book(round=3),
    ]
    ep = tv.run(t, acts, answer=answer, plans=plans, end_reason=end_reason, episode_id=episode_id)
    return t, ep


GOOD = plan(N1_DONE, N2_GOOD, N3)


# -- script items and execution metrics ----------------------------------------------------------
def test_scored_replan_is_the_first_after_the_failure() -> None:
    t, ep = episode(GOOD)
    ctx = replan_context(ep, t)
    assert ctx is not None and ctx.target.index == 2
    assert [s.call.tool for s in ctx.window] == ["quote_flight"]
    assert ctx.failed_nodes == {"2"}


def test_replan_rounds_numbered_by_the_wave_they_follow() -> None:
    # the other round convention: a replan's round is the wave it follows (v1 after wave 0)
    t, ep = episode(GOOD)
    renumbered = [
        pv.model_copy(update={"round": r}) for pv, r in zip(ep.plans, (0, 0, 1), strict=True)
    ]
    ctx = replan_context(ep.model_copy(update={"plans": renumbered}), t)
    assert ctx is not None and ctx.target.index == 2
    assert [s.call.tool for s in ctx.window] == ["quote_flight"]
    assert [s.call.tool for s in ctx.before] == ["search_flights", "quote_flight"]


def test_s5_e5_and_efficiency() -> None:
    t, ep = episode(GOOD)
    rec = sde_record(ep, t)
    assert rec.success is None or rec.success is True
    rec = sde_record(ep, t, success=True)
    assert rec.script["S5"] == 1.0
    assert rec.script["E5"] == pytest.approx(3 / 4)  # G = 3 optimal rounds, T = 4 rounds used
    assert rec.tool_use_efficiency == pytest.approx(3 / 4)  # 3 gt calls, 4 made
    # rounds already executed in the instance count in T
    ep2 = ep.model_copy(update={"metadata": {"rounds_executed": 2}})
    assert sde_record(ep2, t, success=True).script["E5"] == pytest.approx(3 / 6)


@pytest.mark.parametrize(
    ("text", "end", "success", "expected"),
    [
        (plan(N1_DONE, {**N2_GOOD, "dep": ["3"]}, N3), EndReason.ANSWERED, True, 0.0),  # cycle
        (GOOD, EndReason.ROUND_BUDGET, True, 0.0),
        (GOOD, EndReason.ANSWERED, False, 0.0),
    ],
)
def test_e5_zero_rules(text: str, end: EndReason, success: bool, expected: float) -> None:
    t, ep = episode(text, end_reason=end)
    rec = sde_record(ep, t, success=success)
    assert rec.script["E5"] == expected
    if "cycle" in rec.script_reasons["S5"]:
        assert rec.script["S5"] == 0.0


def test_e5_undefined_without_g() -> None:
    _, ep = episode(GOOD)
    t = tv.task(optimal_rounds=None)
    assert sde_record(ep, t, success=True).script["E5"] is None


def test_invalid_dag_rate_and_pass_at_1() -> None:
    eps = []
    for i, text in enumerate([GOOD, "<thought>x</thought> not a plan", GOOD]):
        t, ep = episode(text, episode_id=f"e{i}")
        eps.append(ep)
    out = score(eps, [t], n_boot=200)
    # 3 episodes × 2 replanner outputs; one fails to parse
    assert out["sde.invalid_dag_rate"]["value"] == pytest.approx(1 / 6)
    assert out["sde.invalid_dag_rate"]["n"] == 6
    assert out["sde.pass@1"]["value"] == 1.0
    assert out["sde.E5"]["value"] == pytest.approx((0.75 + 0 + 0.75) / 3)


def test_an_infrastructure_failure_is_never_an_invalid_dag() -> None:
    # the replanner's endpoint died: the episode holds an empty replanner version
    t, ok = episode(GOOD, episode_id="ok")
    _, bad = episode(GOOD, episode_id="crash", end_reason=EndReason.MODEL_ERROR)
    crash = bad.model_copy(
        update={"plans": [*bad.plans[:2], bad.plans[2].model_copy(update={"text": ""})]}
    )
    rec = sde_record(crash, t)
    assert (rec.replans, rec.invalid_replans) == (1, 0)  # only the replan that was written
    # an unreadable replan written by a run that then crashed is still an invalid DAG
    junk = bad.model_copy(
        update={"plans": [*bad.plans[:2], bad.plans[2].model_copy(update={"text": "not a plan"})]}
    )
    assert (sde_record(junk, t).replans, sde_record(junk, t).invalid_replans) == (2, 1)
    out = score([ok, crash], [t], n_boot=200)
    # by hand: the crashed run is left out of the process metrics (2 replans of `ok`, both
    # valid), and counts as a failed run in Pass@1 (1 success of 2 runs)
    assert out["sde.invalid_dag_rate"]["value"] == 0.0 and out["sde.invalid_dag_rate"]["n"] == 2
    assert out["sde.pass@1"]["value"] == pytest.approx(1 / 2)
    assert out["sde.E5"]["value"] == pytest.approx(0.75) and out["failures"] == 1


# -- sde-auto ------------------------------------------------------------------------------------
def auto(text: str, thought: str = GOOD_THOUGHT) -> dict[str, float | None]:
    t, ep = episode(text, thought)
    ctx = replan_context(ep, t)
    assert ctx is not None
    return {k: v for k, (v, _) in sde_auto(ctx).items()}


def test_auto_good_replan_scores_one() -> None:
    assert auto(GOOD) == {"S2": 1.0, "S3": 1.0, "S4": 1.0, "E1": 1.0, "E3": 1.0, "D4": 1.0}


def test_auto_unaddressed_fault() -> None:
    a = auto(plan(N1_DONE, N2_BAD, N3), "Something went wrong, try again.")
    assert a["S3"] == 0.0  # unknown parameter 'flight' is still there
    assert a["E1"] == 0.0  # the faulty call is kept unchanged
    assert a["D4"] == 0.0  # no affected node named, no impact acknowledged


def test_auto_status_errors() -> None:
    assert auto(plan(N1, N2_GOOD, N3))["S4"] == 0.5  # node 1 ran cleanly but is pending again
    assert auto(plan(N1_DONE, {**N2_GOOD, "status": True}, N3))["S4"] == 0.0  # failed, "done"
    assert auto(plan(N1_DONE, N2_GOOD, N3, response_done=True))["S4"] == 0.0


def test_auto_status_history_handed_to_the_replanner() -> None:
    # a ParaRecover-style instance: node 1 ran before the episode (no step), the previous plan
    # marks it done; the replanner keeping it done is right, marking an unrun node done is not
    t = tv.task()
    bad_quote = tv.Act("quote_flight", {"flight": "x"}, "2", round=1)

    def s4(prev: str, new: str) -> float | None:
        plans = [
            PlanVersion(index=0, round=0, source="planner", text=prev),
            PlanVersion(index=1, round=2, source="replanner", thought="node 2", text=new),
        ]
        ep = tv.run(t, [bad_quote], plans=plans)
        ctx = replan_context(ep, t)
        assert ctx is not None
        return sde_auto(ctx)["S4"][0]

    assert s4(plan(N1_DONE, N2_BAD, N3), GOOD) == 1.0
    assert s4(plan(N1, N2_BAD, N3), GOOD) == 0.0


def test_auto_dependency_error() -> None:
    # node 3 uses node 2's output but depends only on root
    assert (
        auto(plan(N1_DONE, N2_GOOD, {**N3, "dep": ["root"]}, response_dep=["2", "3"]))["S2"] == 0.0
    )


def test_auto_edit_minimality_and_goal_coverage() -> None:
    n1_changed = {**N1_DONE, "para": {**tv.ROUTE, "max_stops": 1}}
    assert auto(plan(n1_changed, N2_GOOD, N3))["E1"] == 0.5  # one unjustified edit
    # goal tools (gold plan): search, quote, book; what ran cleanly before counts as covered
    assert auto(plan(N1_DONE, N2_GOOD, response_dep=["2"]))["E3"] == 0.5  # 2 of 3
    assert auto(plan(N1_DONE, response_dep=["1"]))["E3"] == 0.0  # 1 of 3


def test_auto_impact_in_words_only() -> None:
    assert auto(GOOD, "The quote failed; this will affect downstream steps.")["D4"] == 0.5


def test_plan_edits() -> None:
    a = Plan.parse(plan(N1, N2_BAD, N3))
    b = Plan.parse(plan(N1_DONE, N2_GOOD, response_dep=["2"]))
    assert isinstance(a, Plan) and isinstance(b, Plan)
    e = plan_edits(a, b)
    assert e == {"added": set(), "removed": {"3"}, "modified": {"2", "response"}}


# -- the judge -----------------------------------------------------------------------------------
def item(score: Any, reason: str = "ok") -> dict[str, Any]:
    return {"score": score, "reason": reason}


def replies(s: Any = 1, d: Any = 0.5, e: Any = 1) -> dict[str, dict[str, Any]]:
    return {
        "StructuralIntegrity": {k: item(s) for k in ("S1", "S2", "S3", "S4")},
        "DiagnosticReasoning": {k: item(d) for k in ("D1", "D2", "D3", "D4", "D5")},
        "EvolutionaryStrategy": {k: item(e) for k in ("E1", "E2", "E3", "E4")},
    }


class ScriptedJudge(BaseChatModel):
    """A fake chat model that answers structured-output requests from a script.

    ``script[schema]`` is a list of argument dicts returned in turn (the last one repeats)."""

    script: dict[str, list[dict[str, Any]]]
    seen: list[str]

    @property
    def _llm_type(self) -> str:
        return "scripted-judge"

    def bind_tools(self, tools: Any, *, tool_choice: Any = None, **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        name = kwargs["tools"][0]["function"]["name"]
        self.seen.append(name)
        queue = self.script[name]
        args = queue.pop(0) if len(queue) > 1 else queue[0]
        msg = AIMessage(
            content="", tool_calls=[{"name": name, "args": args, "id": f"c{len(self.seen)}"}]
        )
        return ChatResult(generations=[ChatGeneration(message=msg)])


def scripted(**per_schema: list[dict[str, Any]]) -> ScriptedJudge:
    return ScriptedJudge(script=per_schema, seen=[])


def test_judge_scores_and_dimensions() -> None:
    t, ep = episode(GOOD)
    r = replies()
    model = scripted(**{k: [v] for k, v in r.items()})
    rec = sde_record(ep, t, success=True, judge=SDEJudge(model, wait_s=0))
    assert rec.judge is not None and rec.judge.scores["S1"] == 1.0
    assert rec.judge.scores["D3"] == 0.5
    dims = rec.dimensions()
    assert dims["SI"] == pytest.approx(100.0)  # S1..S4 = 1, S5 = 1 (script)
    assert dims["DR"] == pytest.approx(50.0)
    assert dims["ES"] == pytest.approx(100 * (4 + 0.75) / 5)  # E5 = 3/4 by script
    assert dims["Avg"] == pytest.approx((100 + 50 + 95) / 3)
    # the judge saw the evidence: the failing call and the updated plan
    assert sorted(set(model.seen)) == [
        "DiagnosticReasoning",
        "EvolutionaryStrategy",
        "StructuralIntegrity",
    ]


def test_invalid_reply_is_retried() -> None:
    t, ep = episode(GOOD)
    r = replies()
    bad = {**r["StructuralIntegrity"], "S2": item(0.7)}  # not an anchor: fails validation
    model = scripted(
        StructuralIntegrity=[bad, r["StructuralIntegrity"]],
        DiagnosticReasoning=[r["DiagnosticReasoning"]],
        EvolutionaryStrategy=[r["EvolutionaryStrategy"]],
    )
    rec = sde_record(ep, t, success=True, judge=SDEJudge(model, attempts=3, wait_s=0))
    assert rec.judge is not None
    assert rec.judge.attempts["structural"] == 2
    assert rec.judge.scores["S2"] == 1.0


def test_failed_judge_items_are_missing_not_zero() -> None:
    t, ep = episode(GOOD)
    r = replies()
    model = scripted(
        StructuralIntegrity=[{**r["StructuralIntegrity"], "S1": item("high")}],
        DiagnosticReasoning=[r["DiagnosticReasoning"]],
        EvolutionaryStrategy=[r["EvolutionaryStrategy"]],
    )
    rec = sde_record(ep, t, success=True, judge=SDEJudge(model, attempts=2, wait_s=0))
    assert rec.judge is not None
    assert all(rec.judge.scores[i] is None for i in ("S1", "S2", "S3", "S4"))
    assert "structural" in rec.judge.errors
    assert rec.missing_items == 4
    assert rec.dimensions()["SI"] == pytest.approx(100.0)  # only S5 (= 1) remains
    out = summarize_sde([rec], n_boot=100)
    assert out["sde.S1"]["value"] is None and out["sde.S1"]["missing"] == 1
    assert out["sde.Avg"]["missing_items"] == 4


def test_agreement_between_judge_and_auto() -> None:
    recs = []
    for i, (text, thought) in enumerate(
        [(GOOD, GOOD_THOUGHT), (plan(N1_DONE, N2_BAD, N3), "Something went wrong.")]
    ):
        t, ep = episode(text, thought, episode_id=f"a{i}")
        r = replies()  # the judge gives S2 = S3 = S4 = 1, E1 = E3 = 1, D4 = 0.5 to both
        model = scripted(**{k: [v] for k, v in r.items()})
        recs.append(sde_record(ep, t, success=True, judge=SDEJudge(model, wait_s=0)))
    out = summarize_sde(recs, n_boot=200)
    # auto S3: 1 (good) and 0 (bad) vs judge 1 and 1 -> EMA 1/2, MAE 1/2
    assert out["sde.agreement.S3"]["ema"]["value"] == pytest.approx(0.5)
    assert out["sde.agreement.S3"]["mae"]["value"] == pytest.approx(0.5)
    # auto D4: 1 and 0 vs judge 0.5 and 0.5 -> EMA 0, MAE 0.5
    assert out["sde.agreement.D4"]["ema"]["value"] == 0.0
    assert out["sde.agreement.D4"]["mae"]["value"] == pytest.approx(0.5)
    assert out["sde.SI"]["value"] == pytest.approx(100.0)
    assert set(judge_scores(recs)) == {"a0", "a1"}


def test_model_without_structured_output_is_refused() -> None:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

    t, ep = episode(GOOD)
    judge = SDEJudge(GenericFakeChatModel(messages=iter(["{}"])), wait_s=0)
    with pytest.raises(TypeError, match="structured output"):
        sde_record(ep, t, judge=judge)


# -- calibration ---------------------------------------------------------------------------------
def test_calibration_table(tmp_path: Path) -> None:
    human = tmp_path / "human.csv"
    human.write_text("id,S1,D1\nx,1,0.5\ny,0,1\nz,0.5,\n", encoding="utf-8")
    model = tmp_path / "model.jsonl"
    rows = [
        {"id": "x", "item": "S1", "score": 1},
        {"id": "x", "item": "D1", "score": 1},
        {"id": "y", "item": "S1", "score": 0.5},
        {"id": "y", "item": "D1", "score": 1},
        {"id": "z", "item": "S1", "score": 0.5},
    ]
    model.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    table = calibrate(load_labels(human), load_labels(model))
    # S1: pairs (1,1), (0,.5), (.5,.5) -> EMA 2/3, MAE 1/6, means 0.5 and 2/3
    assert table["S1"]["ema"] == pytest.approx(2 / 3)
    assert table["S1"]["mae"] == pytest.approx(1 / 6)
    assert table["S1"]["human_mean"] == pytest.approx(0.5)
    assert table["S1"]["model_mean"] == pytest.approx(2 / 3)
    # D1: pairs (.5,1), (1,1) -> EMA 1/2, MAE 1/4
    assert table["D1"]["ema"] == pytest.approx(0.5) and table["D1"]["mae"] == pytest.approx(0.25)
    assert table["overall"]["ema"] == pytest.approx((2 / 3 + 0.5) / 2)
    lo, hi = table["S1"]["ema_interval"]
    assert lo < 2 / 3 < hi  # Wilson interval of 2 of 3
    lo, hi = table["S1"]["mae_interval"]
    assert lo <= 1 / 6 <= hi


def test_bad_label_lines_are_named(tmp_path: Path) -> None:
    f = tmp_path / "labels.jsonl"
    f.write_text('{"id": "a", "S1": 1}\n{"id": "b", "S1": 0.3}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"labels.jsonl:2 S1: score 0.3 is not one of"):
        load_labels(f)
    g = tmp_path / "labels.csv"
    g.write_text("id,item,score\na,S9,1\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"labels.csv:2: unknown item 'S9'"):
        load_labels(g)


def test_e5_columns_follow_where_runs_start_not_the_suite_name() -> None:
    """E5 and tool-use efficiency are ParaRecover's (recovery from a replan point): a unit shows
    them when some run started at a replan point, whatever its suite is called."""
    from types import SimpleNamespace

    from replan.core.task import ReplanPoint
    from replan.evaluators.metric import METRICS, OMIT

    e5 = next(c for c in METRICS.get("sde").columns if c.label == "E5")

    def unit(*runs: tuple[str, object, dict]) -> SimpleNamespace:
        scores = [
            SimpleNamespace(task=task, episode=SimpleNamespace(suite=suite, metadata=meta))
            for suite, task, meta in runs
        ]
        return SimpleNamespace(scores=scores, aggregate={"sde.E5": {"value": 0.5}})

    fresh = SimpleNamespace(replan_point=None)
    mid = SimpleNamespace(replan_point=ReplanPoint(rounds_executed=2))
    assert e5.value(unit(("my-suite", fresh, {}))) is OMIT
    assert e5.value(unit(("my-suite", mid, {}))) == {"value": 0.5}
    assert e5.value(unit(("toolmaze", None, {"rounds_executed": 1}))) == {"value": 0.5}
