"""Prefix executability: a worked example on replayed episodes, invariants, per-mode figures."""

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

BOOKED = "Booked, reference {booking}."


def test_worked_example_on_real_episodes() -> None:
    """Seed 003's metrics on four replayed travel runs, every expected value worked out by hand.

    clean:  search, quote, book                 -> clean, n = 3, success (booking stated)
    broke:  search, quote(passengers=12), quote, book
            -> call 2 breaks the 9-passenger limit: FED 2, n 4, success
    failed: book first (its quote does not exist) -> FED 1, n 1, no success
    idle:   no call at all                       -> clean by definition, n 0, no success
    """
    t = tv.task()
    clean = tv.run(t, [tv.search(), tv.quote(), tv.book()], answer=BOOKED, episode_id="c")
    broke = tv.run(
        t,
        [
            tv.search(),
            tv.Act(
                "quote_flight", {"flight_id": "${1.cheapest_flight_id}", "passengers": 12}, "2x"
            ),
            tv.quote(),
            tv.book(),
        ],
        answer=BOOKED,
        episode_id="b",
    )
    failed = tv.run(t, [tv.book(ref="FQ-NOPE")], answer="sorry", episode_id="f")
    idle = tv.run(t, [], answer="Booked.", episode_id="i")
    out = score([clean, broke, failed, idle], [t], n_boot=300)
    # zero-call runs are left out of TER and AUC-PEC (seed 003 scores prefixes of actual
    # calls) and counted in their own column: TER = {clean} / {clean, broke, failed}
    assert out["prefix.ter"]["value"] == pytest.approx(1 / 3)
    assert out["prefix.zero_call"]["value"] == pytest.approx(1 / 4)
    assert out["prefix.zero_call"]["count"] == 1
    # AUC-PEC terms of the runs with calls: 1, (2 − 1)/4, (1 − 1)/1
    assert out["prefix.auc_pec"]["value"] == pytest.approx((1 + 1 / 4 + 0) / 3)
    # RR: eligible = N·(1 − TER) = 2 (broke, failed), one succeeded
    assert out["prefix.rr"]["value"] == pytest.approx(1 / 2)
    assert out["prefix.rr"]["eligible"] == 2
    # executable before the first error: 3, 1, 0, 0; lengths 3, 4, 1, 0
    pec = {row["k"]: row for row in out["prefix.pec"]}
    assert pec[1]["pec"]["value"] == pytest.approx(2 / 4)  # clean and broke valid through 1
    assert pec[1]["cpec"]["value"] == pytest.approx(2 / 3)  # idle does not reach call 1
    assert pec[2]["pec"]["value"] == pytest.approx(1 / 4)  # only clean
    assert pec[4]["cpec"]["value"] == pytest.approx(0.0)  # only broke reaches 4, broken at 2
    assert out["prefix.first_error_types"]["Parameter_Invalid"]["count"] == 2
    for key in ("prefix.ter", "prefix.rr", "prefix.auc_pec", "prefix.zero_call"):
        e = out[key]
        assert e["low"] <= e["value"] <= e["high"]


def test_prefix_figures_per_mode_and_headline_on_np() -> None:
    """Under P3 a call that carried the corrupted value fails and counts as the agent's error;
    the prefix figures are reported per mode and the headline is on NP (by hand: NP TER 1)."""
    t_np, t_p3 = tv.task("np"), tv.task("p3", mode="P3")
    np_run = tv.run(t_np, [tv.search(), tv.quote(), tv.book()], answer=BOOKED, episode_id="n")
    p3_run = tv.run(
        t_p3,
        [
            tv.search(fault="implicit", mode="P3"),
            tv.Act(
                "quote_flight",
                {"flight_id": "${1.cheapest_flight_id}", "passengers": 987654.32},
                "2x",
            ),
            tv.quote(),
            tv.book(),
        ],
        answer=BOOKED,
        episode_id="p",
    )
    out = score([np_run, p3_run], [t_np, t_p3], n_boot=300)
    assert out["prefix.ter"]["value"] == pytest.approx(1 / 2)  # pooled over both modes
    by_mode = out["tables"]["prefix.by_mode"]
    assert by_mode["NP"]["prefix.ter"]["value"] == 1.0
    assert by_mode["P3"]["prefix.ter"]["value"] == 0.0
    assert by_mode["P3"]["prefix.after_fault"] == {"value": 1, "n": 1}
    assert by_mode["NP"]["prefix.zero_call"]["value"] == 0.0
    head = out["prefix.headline"]
    assert head["scope"] == "NP" and head["prefix.ter"]["value"] == 1.0
    # one mode only: the headline is every run
    only = score([p3_run], [t_p3], n_boot=200)["prefix.headline"]
    assert only["scope"] == "all runs" and only["prefix.ter"]["value"] == 0.0


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
    acting = sum(1 for _, n, _ in records if n > 0)
    ter, auc = s["prefix.ter"]["value"], s["prefix.auc_pec"]["value"]
    if acting == 0:  # only zero-call runs: nothing for TER and AUC-PEC to score
        assert ter is None and auc is None
    else:
        assert 0 <= ter <= auc + 1e-12 <= 1 + 1e-12
        assert s["prefix.rr"]["eligible"] == round(acting * (1 - ter))
    assert s["prefix.zero_call"]["count"] == n_runs - acting
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


def test_empty_run_is_left_out_of_ter_and_auc_pec() -> None:
    ep = Episode(episode_id="e0", task_id="x", success=False)
    rec = prefix_record(ep)
    assert rec.clean and rec.n == 0
    s = summarize_prefix([rec])
    # no run with a call: TER and AUC-PEC have nothing to score (seed 003 §3 scores prefixes
    # of the calls a run made); the run shows in the zero-call column
    assert s["prefix.ter"]["value"] is None and s["prefix.ter"]["n"] == 0
    assert s["prefix.auc_pec"]["value"] is None and s["prefix.pec"] == []
    assert s["prefix.zero_call"]["value"] == 1.0 and s["prefix.zero_call"]["count"] == 1
    # the literal reading on request: a zero-call run is clean and its AUC term is 1
    old = summarize_prefix([rec], zero_calls="clean")
    assert old["prefix.ter"]["value"] == 1.0 and old["prefix.auc_pec"]["value"] == 1.0


def test_zero_call_runs_do_not_lift_ter_by_hand() -> None:
    """Runs (FED, n): (None, 0), (None, 0), (2, 3), (None, 2), (1, 4). Worked by hand: the three
    runs with calls give TER 1/3 and AUC-PEC (1/3 + 1 + 0)/3 = 4/9; zero-call share 2/5; RR
    eligible 2 (FED defined), one of them successful."""
    runs = [(None, 0, True), (None, 0, False), (2, 3, True), (None, 2, False), (1, 4, False)]
    s = summarize_prefix(runs, n_boot=200)
    assert s["prefix.ter"]["value"] == pytest.approx(1 / 3) and s["prefix.ter"]["n"] == 3
    assert s["prefix.auc_pec"]["value"] == pytest.approx(4 / 9)
    assert s["prefix.zero_call"]["value"] == pytest.approx(2 / 5)
    assert s["prefix.rr"]["eligible"] == 2 and s["prefix.rr"]["value"] == pytest.approx(1 / 2)
    lit = summarize_prefix(runs, n_boot=200, zero_calls="clean")
    assert lit["prefix.ter"]["value"] == pytest.approx(3 / 5)
    assert lit["prefix.auc_pec"]["value"] == pytest.approx((1 + 1 + 1 / 3 + 1 + 0) / 5)


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


def test_a_reference_into_the_same_parallel_wave_is_not_executable() -> None:
    """Calls of one round ran together: quote_flight could not see the search of its own wave
    (the executor answered unbound_reference), so replay makes it the first invalid call even
    if a trace recorded it as ok. In separate rounds the same calls are clean; a trace without
    round information (every step in round 0) is replayed in order."""
    t = tv.task()
    same_wave = tv.run(t, [tv.search(round=1), tv.quote(round=1), tv.book(round=2)], answer=BOOKED)
    assert same_wave.steps[1].verdict.ok  # the hand-built trace claims it ran
    rec = prefix_record(same_wave, t)
    assert (rec.fed, rec.first_error_code) == (2, "unbound_reference")
    waves = tv.run(t, [tv.search(round=1), tv.quote(round=2), tv.book(round=3)], answer=BOOKED)
    assert prefix_record(waves, t).clean
    no_rounds = tv.run(t, [tv.search(round=0), tv.quote(round=0), tv.book(round=0)])
    assert prefix_record(no_rounds, t).clean
