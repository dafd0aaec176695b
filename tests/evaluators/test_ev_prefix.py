"""Prefix executability: the seed's worked example, invariants, and replayed travel episodes."""

from __future__ import annotations

import itertools

import ev_travel as tv
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replan.core.taxonomy import VerdictCode
from replan.core.trace import Call, Episode, Perturbation, Step, Verdict
from replan.evaluators import score, score_episode
from replan.evaluators.prefix import PrefixRecord, prefix_record, summarize_prefix


def test_seed_worked_example() -> None:
    # seed 003: 200 runs; 10 clean and successful, 138 successful after an invalid call,
    # 52 failed after one
    recs = [(None, 6, True)] * 10 + [(2, 6, True)] * 138 + [(1, 4, False)] * 52
    s = summarize_prefix(recs)
    assert s["prefix.ter"]["value"] == pytest.approx(0.05)
    assert s["prefix.rr"]["value"] == pytest.approx(138 / 190)
    assert s["prefix.rr"]["eligible"] == 190
    assert s["prefix.success"]["value"] == pytest.approx(0.74)
    # AUC-PEC by hand: (10·1 + 138·(1/6) + 52·0) / 200
    assert s["prefix.auc_pec"]["value"] == pytest.approx((10 + 138 / 6) / 200)
    # every aggregate carries an interval around its value
    for key in ("prefix.ter", "prefix.rr", "prefix.success", "prefix.auc_pec"):
        e = s[key]
        assert e["low"] <= e["value"] <= e["high"]


runs = st.lists(
    st.integers(min_value=0, max_value=12).flatmap(
        lambda n: st.tuples(
            st.none() | st.integers(min_value=1, max_value=max(n, 1)).filter(lambda f: f <= n),
            st.just(n),
            st.booleans() | st.none(),
        )
    ),
    min_size=1,
    max_size=60,
)


@given(runs)
@settings(max_examples=200, deadline=None)
def test_invariants(records: list[tuple[int | None, int, bool | None]]) -> None:
    s = summarize_prefix(records, n_boot=200)
    n_runs = len(records)
    ter, auc = s["prefix.ter"]["value"], s["prefix.auc_pec"]["value"]
    assert 0 <= ter <= auc + 1e-12 <= 1 + 1e-12
    assert s["prefix.rr"]["eligible"] == round(n_runs * (1 - ter))
    curve = s["prefix.pec"]
    pec = [row["pec"]["value"] for row in curve]
    assert all(a >= b for a, b in itertools.pairwise(pec))
    for row in curve:
        k = row["k"]
        # the definition, computed independently: FED > k or clean, and n >= k
        valid = sum(1 for fed, n, _ in records if (fed is None or fed > k) and n >= k)
        reach = sum(1 for _, n, _ in records if n >= k)
        assert row["pec"]["value"] == pytest.approx(valid / n_runs)
        if reach:
            assert row["cpec"]["value"] == pytest.approx(valid / reach)
            assert row["cpec"]["value"] >= row["pec"]["value"]
        else:
            assert row["cpec"]["value"] is None


def test_bad_records_are_named() -> None:
    with pytest.raises(ValueError, match=r"prefix record 1: fed must be in 1\.\.n=2"):
        summarize_prefix([(None, 3, True), (3, 2, True)])
    with pytest.raises(ValueError, match="fed must be in"):
        PrefixRecord(n=1, fed=2, success=None)


def test_replay_finds_first_error_and_its_type() -> None:
    t = tv.task()
    bad = tv.Act("quote_flight", {"passengers": 1}, "2")  # flight_id missing
    ep = tv.run(t, [tv.search(), bad, tv.quote(), tv.book()], answer="Booked {booking}")
    rec = prefix_record(ep, t)
    assert (rec.fed, rec.n, rec.source) == (2, 4, "replay")
    assert rec.first_error_code == "missing_param"
    assert rec.first_error_type == "Parameter_Missing"
    assert rec.auc_term == pytest.approx(1 / 4)
    # success was not recorded: the checker decides it on the replayed final state
    assert rec.success is True
    fb = {f.key: f for f in score_episode(ep, t)}
    assert fb["prefix.fed"].score == 2
    assert fb["prefix.first_error_type"].value == "Parameter_Missing"


def test_precondition_failure_is_parameter_invalid() -> None:
    t = tv.task()
    stale = tv.book(ref="FQ-EXPIRED1")  # an expired quote: schema-valid, precondition fails
    ep = tv.run(t, [tv.search(), stale], answer="could not book")
    rec = prefix_record(ep, t)
    assert (rec.fed, rec.first_error_code, rec.first_error_type) == (
        2,
        "precondition_failed",
        "Parameter_Invalid",
    )
    assert rec.success is False


def test_injected_fault_is_not_an_invalid_call() -> None:
    t = tv.task(mode="P1")
    ep = tv.run(t, [tv.search(fault="explicit"), tv.search(), tv.quote(), tv.book()])
    rec = prefix_record(ep, t)
    assert rec.clean and rec.n == 4


def test_replay_overrules_recorded_verdicts() -> None:
    # a user's trace that recorded every call as ok: replay still finds the invalid one
    t = tv.task()
    ep = tv.run(t, [tv.search(), tv.Act("quote_flight", {"flight": "x"}, "2")])
    lying = ep.model_copy(
        update={"steps": [s.model_copy(update={"verdict": Verdict.okay()}) for s in ep.steps]}
    )
    assert prefix_record(lying, t).fed == 2
    assert prefix_record(lying).clean  # no task: only the (wrong) recorded verdicts remain


def test_recorded_fallback_without_task() -> None:
    steps = [
        Step(index=0, call=Call(tool="a"), verdict=Verdict(code=VerdictCode.TIMEOUT)),
        Step(
            index=1,
            call=Call(tool="b"),
            perturbation=Perturbation(
                mode="P1", explicit=True, permanent=False, kind="http_404", victim="b"
            ),
        ),
        Step(index=2, call=Call(tool="c"), verdict=Verdict(code=VerdictCode.TYPE_MISMATCH)),
    ]
    ep = Episode(episode_id="u1", task_id="unknown", steps=steps, success=True)
    rec = prefix_record(ep)
    assert (rec.fed, rec.n, rec.source, rec.first_error_type) == (3, 3, "recorded", "Type_Error")


def test_empty_run_is_clean_and_scores_one() -> None:
    ep = Episode(episode_id="e0", task_id="x", success=False)
    rec = prefix_record(ep)
    assert rec.clean and rec.auc_term == 1.0
    s = summarize_prefix([rec])
    assert s["prefix.ter"]["value"] == 1.0 and s["prefix.pec"] == []


def test_score_aggregates_travel_runs() -> None:
    t = tv.task()
    good = tv.run(
        t, [tv.search(), tv.quote(), tv.book()], answer="Booked {booking}", episode_id="g"
    )
    late = tv.run(
        t,
        [tv.search(), tv.quote(), tv.Act("book_flight", {"quote_id": "${2.quote_id}"}, "3")],
        answer="no",
        episode_id="l",
    )
    fixed = tv.run(
        t,
        [tv.search(), tv.Act("quote_flight", {"flight_id": 7}, "2"), tv.quote(), tv.book()],
        answer="Booked {booking}",
        episode_id="f",
    )
    out = score([good, late, fixed], [t], n_boot=300)
    # by hand: clean = {good}; late: FED 3 of 3, failed; fixed: FED 2 of 4, succeeded
    assert out["prefix.ter"]["value"] == pytest.approx(1 / 3)
    assert out["prefix.auc_pec"]["value"] == pytest.approx((1 + 2 / 3 + 1 / 4) / 3)
    assert out["prefix.rr"]["value"] == pytest.approx(1 / 2)
    assert out["prefix.first_error_types"]["Parameter_Missing"]["count"] == 1
    assert out["prefix.first_error_types"]["Type_Error"]["count"] == 1
    assert out["verdict_sources"] == {"replay": 3}
