"""ToolMaze: every branch of the recovery rule on hand-built travel episodes, C_rec, RC, Avg."""

from __future__ import annotations

import ev_travel as tv
import pytest

from replan.core.trace import Call, Step
from replan.evaluators import score
from replan.evaluators.perturbation import (
    RecoveryRecord,
    c_rec,
    composite_avg,
    recovery_record,
    summarize_toolmaze,
)

BOOKED = "Booked, reference {booking}."


# -- transient faults ------------------------------------------------------------------------
def test_transient_retry_and_use_is_recovered() -> None:
    t = tv.task(mode="P1")
    ep = tv.run(t, [tv.search(fault="explicit"), tv.search(), tv.quote(), tv.book()], answer=BOOKED)
    r = recovery_record(ep, t)
    assert r.exposed and r.recovered and not r.sentinel_propagated
    assert r.success and "search_flights" in r.reason


def test_transient_alternative_of_the_group_is_recovered() -> None:
    t = tv.task(mode="P1")
    ep = tv.run(
        t,
        [
            tv.search(fault="explicit"),
            tv.alt_search(),
            tv.quote(ref="${1b.best_offer.flight_id}"),
            tv.book(),
        ],
        answer=BOOKED,
    )
    r = recovery_record(ep, t)
    assert r.recovered and "find_flight_offers" in r.reason


def test_transient_without_retry_is_not_recovered() -> None:
    t = tv.task(mode="P1")
    ep = tv.run(t, [tv.search(fault="explicit")], answer="The flight service is down.")
    r = recovery_record(ep, t)
    assert r.exposed and r.recovered is False and not r.success


def test_transient_retry_is_recovered_whether_or_not_its_result_is_used() -> None:
    """Seed 002 §3.5: I_recov = 1 for "(1) retrying for transient faults"; nothing asks that the
    retried result be used (replan used to demand it and missed real recoveries: issue 28).
    Not retrying is what fails the rule."""
    t = tv.task(mode="P1")
    ep = tv.run(t, [tv.search(fault="explicit"), tv.search()], answer="I searched again. Bye.")
    r = recovery_record(ep, t)
    assert r.recovered is True and r.verdict == "recovered"
    assert "re-invoked search_flights" in r.reason


def test_implicit_transient_sentinel_in_answer_is_not_recovered() -> None:
    t = tv.task(mode="P3")
    ep = tv.run(
        t,
        [tv.search(fault="implicit", mode="P3"), tv.search(), tv.quote(), tv.book()],
        answer="Booked {booking}; the first fare was 987,654.32 USD.",
    )
    r = recovery_record(ep, t)
    # the booking exists and its id is stated, but the lie reached the user: not recovered, and
    # an answer that states an injected corrupted value is never a success
    assert r.sentinel_propagated and r.recovered is False
    assert r.success is False


def test_implicit_sentinel_in_an_accepted_call_is_not_recovered() -> None:
    t = tv.task(mode="P3")
    ep = tv.run(
        t,
        [
            tv.search(fault="implicit", mode="P3"),
            tv.quote(),
            # the world accepts this booking: the corrupted fare went into a real call
            tv.Act(
                "book_flight",
                {**tv.TRAVELLER, "quote_id": "${2.quote_id}", "traveller_name": "Ana 987654.32"},
                "3x",
            ),
            tv.search(node="1r"),
            tv.quote(ref="${1r.cheapest_flight_id}", node="2r"),
            tv.book(ref="${2r.quote_id}", node="3r"),
        ],
        answer=BOOKED,
    )
    assert ep.steps[2].verdict.ok
    r = recovery_record(ep, t)
    assert r.sentinel_propagated and r.recovered is False


def test_sentinel_in_a_rejected_call_then_a_clean_retry_is_recovered() -> None:
    # seed 002 §3.5: a transient fault is survived by retrying. The call that carried the
    # corrupted value was rejected (9 passengers at most), so nothing used it; the agent then
    # re-ran the search and used its clean result: recovered.
    t = tv.task(mode="P3")
    ep = tv.run(
        t,
        [
            tv.search(fault="implicit", mode="P3"),
            tv.Act(
                "quote_flight",
                {"flight_id": "${1.cheapest_flight_id}", "passengers": 987654.32},
                "2x",
            ),
            tv.search(node="1r"),
            tv.quote(ref="${1r.cheapest_flight_id}"),
            tv.book(),
        ],
        answer=BOOKED,
    )
    assert not ep.steps[1].verdict.ok  # rejected by the world
    r = recovery_record(ep, t)
    assert r.exposed and not r.sentinel_propagated and r.recovered is True


def test_implicit_transient_clean_retry_is_recovered() -> None:
    t = tv.task(mode="P3")
    ep = tv.run(
        t,
        [
            tv.search(fault="implicit", mode="P3"),
            tv.search(node="1r"),
            tv.quote(ref="${1r.cheapest_flight_id}"),
            tv.book(),
        ],
        answer=BOOKED,
    )
    r = recovery_record(ep, t)
    assert r.recovered and not r.sentinel_propagated


# -- permanent faults --------------------------------------------------------------------------
def test_permanent_alternative_path_is_recovered() -> None:
    t = tv.task(mode="P2")
    ep = tv.run(
        t,
        [
            tv.search(fault="explicit", mode="P2"),
            tv.search(fault="explicit", mode="P2"),
            tv.alt_search(),
            tv.quote(ref="${1b.best_offer.flight_id}"),
            tv.book(),
        ],
        answer=BOOKED,
    )
    r = recovery_record(ep, t)
    assert r.permanent and r.recovered
    assert "find_flight_offers" in r.reason


def test_permanent_success_without_a_valid_alternative_path_is_not_recovered() -> None:
    # the recorded success says yes, but no valid path avoiding the victim ran cleanly
    t = tv.task(mode="P2")
    ep = tv.run(
        t, [tv.search(fault="explicit", mode="P2"), tv.alt_search()], answer="ok", success=True
    )
    r = recovery_record(ep, t)
    assert r.success and r.recovered is False
    assert "no valid path avoiding the faulty tool ran cleanly" in r.reason


def test_permanent_recovery_is_independent_of_success() -> None:
    # seed 002 §3.5: "PRR strictly evaluates error recovery independently of final task
    # success". The alternative path ran cleanly (find_flight_offers -> quote -> book), but the
    # answer never states the booking id, so the task fails: recovered, not successful.
    t = tv.task(mode="P2")
    ep = tv.run(
        t,
        [
            tv.search(fault="explicit", mode="P2"),
            tv.alt_search(),
            tv.quote(ref="${1b.best_offer.flight_id}"),
            tv.book(),
        ],
        answer="Done.",
    )
    r = recovery_record(ep, t)
    assert r.success is False and r.recovered is True
    # C_rec still reads success: 1 − c*/max(c, c*)·0 = 1
    assert r.c_rec == 1.0


def test_permanent_failure_is_not_recovered() -> None:
    t = tv.task(mode="P4")
    ep = tv.run(
        t,
        [tv.search(fault="implicit", mode="P4"), tv.quote(), tv.book()],
        answer="Booked {booking}",
    )
    r = recovery_record(ep, t)
    # it trusted the corrupted search and never rerouted: the booking exists, but with the
    # victim permanently faulty only a valid path that avoids it counts as recovery
    assert r.exposed and r.permanent and r.recovered is False


def test_graceful_termination_when_no_path_remains() -> None:
    t = tv.task(mode="P2", level="C1", graceful=True, valid_paths=[])
    stop = tv.run(
        t,
        [tv.search(fault="explicit", mode="P2"), tv.search(fault="explicit", mode="P2")],
        answer="I could not book: the flight search is unavailable.",
    )
    r = recovery_record(stop, t)
    assert r.recovered and r.reason == "terminated gracefully"
    push_on = tv.run(
        t,
        [tv.search(fault="explicit", mode="P2"), tv.quote(ref="FL-LISKIX-20261203-1")],
        answer="I could not book.",
    )
    r2 = recovery_record(push_on, t)
    assert r2.recovered is False  # called a tool downstream of the failed branch


def test_unexposed_run_counts_zero_cost() -> None:
    t = tv.task(mode="P1")
    ep = tv.run(
        t, [tv.alt_search(), tv.quote(ref="${1b.best_offer.flight_id}"), tv.book()], answer=BOOKED
    )
    r = recovery_record(ep, t)
    assert not r.exposed and r.recovered is None and r.rc_term == 0.0


# -- costs ----------------------------------------------------------------------------------------
def test_c_rec_by_hand() -> None:
    assert c_rec(5, 3, True) == pytest.approx(0.4)
    assert c_rec(5, 3, False) == 1.0
    assert c_rec(2, 3, True) == 0.0
    assert c_rec(0, 0, True) == 0.0
    with pytest.raises(ValueError):
        c_rec(-1, 2, True)


def test_c_star_is_per_trajectory_not_the_tasks_fixed_value() -> None:
    # The fault meets book_flight, after this run had already searched and quoted cleanly; the
    # task's fixed metadata value (3: counted for a fault on the search) must not be used.
    # c*(τ) by hand (seed 002 eq. 3), executed = {search_flights, quote_flight}, transient
    # fault (the victim is called again):
    #   path search -> quote -> book:      left {book}               = 1
    #   path find_offers -> quote -> book: left {find_offers, book}  = 2     => c* = 1
    # c = calls after the first perturbed response = 2 (a second quote, then the booking).
    # C_rec = 1 − 1/max(2, 1) = 0.5 (the run succeeded); with the fixed c* = 3 it would be
    # 1 − 3/max(2, 3) = 0.
    t = tv.task(mode="P1", metadata={"min_calls_after_fault": 3})
    ep = tv.run(
        t,
        [
            tv.search(),
            tv.quote(),
            tv.book(fault="explicit"),
            tv.quote(node="2b"),
            tv.book(ref="${2b.quote_id}", node="3b"),
        ],
        answer=BOOKED,
    )
    r = recovery_record(ep, t)
    assert r.success and r.exposed and r.recovered
    assert (r.c, r.c_star) == (2, 1)
    assert r.c_rec == pytest.approx(0.5)


def test_c_star_under_a_permanent_fault_avoids_the_victim() -> None:
    # P2 on search_flights with nothing run before: only find_offers -> quote -> book is left,
    # c* = 3; the run needed 3 calls after the fault: C_rec = 1 − 3/3 = 0.
    t = tv.task(mode="P2", metadata={"min_calls_after_fault": 9})
    ep = tv.run(
        t,
        [
            tv.search(fault="explicit", mode="P2"),
            tv.alt_search(),
            tv.quote(ref="${1b.best_offer.flight_id}"),
            tv.book(),
        ],
        answer=BOOKED,
    )
    r = recovery_record(ep, t)
    assert (r.c, r.c_star, r.c_rec) == (3, 3, 0.0)
    # without a path list the task's fixed value is the fallback, then min_calls
    t2 = tv.task(mode="P2", metadata={"min_calls_after_fault": 9}, valid_paths=[])
    assert recovery_record(ep, t2).c_star == 9
    t3 = tv.task(mode="P2", valid_paths=[], min_calls=None)
    r3 = recovery_record(ep, t3)
    assert r3.c_rec is None and r3.rc_term is None


def test_a_run_with_no_call_is_not_exposed() -> None:
    t = tv.task(mode="P1")
    ep = tv.run(t, [], answer="Booked.")
    r = recovery_record(ep, t)
    assert r.exposed is False and r.recovered is None and r.rc_term == 0.0
    assert "never reached" in r.reason
    s = summarize_toolmaze([r], n_boot=200)
    assert s["toolmaze.not_exposed"] == {"value": 1, "n": 1}
    assert s["toolmaze.prr.P1"]["value"] is None  # nothing to recover from


# -- aggregation -------------------------------------------------------------------------------
def test_composite_avg_reproduces_the_paper() -> None:
    # ToolMaze Table 2, MiniMax-M2.7 (w/o hint): Avg 25.03; Gemini-3.1-Pro (w/ hint): 52.95
    tsr = {"NP": 56.50, "P1": 36.50, "P2": 22.75, "P3": 9.50, "P4": 7.25}
    prr = {"P1": 48.61, "P2": 24.16, "P3": 11.38, "P4": 9.22}
    rc = {"P1": 56.59, "P2": 72.65, "P3": 83.14, "P4": 86.66}
    to01 = lambda d: {k: v / 100 for k, v in d.items()}  # noqa: E731
    assert 100 * composite_avg(to01(tsr), to01(prr), to01(rc)) == pytest.approx(25.03, abs=0.01)
    tsr = {"NP": 68.75, "P1": 65.25, "P2": 42.50, "P3": 43.25, "P4": 34.00}
    prr = {"P1": 90.21, "P2": 53.09, "P3": 54.98, "P4": 29.36}
    rc = {"P1": 29.73, "P2": 52.59, "P3": 49.38, "P4": 63.53}
    assert 100 * composite_avg(to01(tsr), to01(prr), to01(rc)) == pytest.approx(52.95, abs=0.01)


def _rec(mode: str, success: bool, exposed: bool, recovered: bool | None, crec: float | None):
    return RecoveryRecord(mode, "C2", success, exposed, recovered, c_rec=crec)


def test_summary_per_mode_by_hand() -> None:
    recs = [
        _rec("NP", True, False, None, None),
        _rec("NP", False, False, None, None),
        _rec("P1", True, True, True, 0.25),
        _rec("P1", True, True, True, 0.0),
        _rec("P1", False, True, False, 1.0),
        _rec("P1", True, False, None, None),  # never exposed: adds 0 to RC
        _rec("P2", False, True, False, 1.0),
        _rec("P2", True, True, True, 0.5),
    ]
    s = summarize_toolmaze(recs, n_boot=300)
    assert s["toolmaze.tsr.NP"]["value"] == pytest.approx(0.5)
    assert s["toolmaze.tsr.P1"]["value"] == pytest.approx(0.75)
    assert s["toolmaze.prr.P1"]["value"] == pytest.approx(2 / 3)
    assert s["toolmaze.prr.P1"]["exposed"] == 3
    assert s["toolmaze.rc.P1"]["value"] == pytest.approx((0.25 + 0 + 1 + 0) / 4)
    assert s["toolmaze.prr.P2"]["value"] == pytest.approx(0.5)
    assert s["toolmaze.rc.P2"]["value"] == pytest.approx(0.75)
    avg = ((0.5 + 0.75 + 0.5) / 3 + (2 / 3 + 0.5) / 2 + 1 - (1.25 / 4 + 0.75) / 2) / 3
    assert s["toolmaze.avg"]["value"] == pytest.approx(avg)
    assert s["toolmaze.avg"]["low"] <= avg <= s["toolmaze.avg"]["high"]
    assert "C2/P1" in s["tables"]["toolmaze.by_level_mode"]


def _lrec(level: str, mode: str, success: bool, recovered: bool | None, crec: float | None):
    exposed = recovered is not None
    return RecoveryRecord(mode, level, success, exposed, recovered, c_rec=crec)


def test_per_mode_figures_macro_average_over_levels() -> None:
    # seed 002 §4.2: per-mode TSR, PRR, RC are macro-averaged over C1–C4 and Avg over the
    # C × P cells. Unbalanced cells, by hand:
    #   C1/P1: 4 runs, all succeed, all exposed and recovered, C_rec 0     -> TSR 1, PRR 1, RC 0
    #   C2/P1: 1 run, fails, exposed, not recovered, C_rec 1              -> TSR 0, PRR 0, RC 1
    #   C1/NP: 1 run, succeeds; C2/NP: 1 run, fails                       -> TSR 1 and 0
    recs = [_lrec("C1", "P1", True, True, 0.0) for _ in range(4)]
    recs += [_lrec("C2", "P1", False, False, 1.0)]
    recs += [_lrec("C1", "NP", True, None, None), _lrec("C2", "NP", False, None, None)]
    s = summarize_toolmaze(recs, n_boot=300)
    assert s["toolmaze.tsr.P1"]["value"] == pytest.approx((1 + 0) / 2)  # pooled would be 4/5
    assert s["toolmaze.prr.P1"]["value"] == pytest.approx((1 + 0) / 2)  # pooled 4/5
    assert s["toolmaze.rc.P1"]["value"] == pytest.approx((0 + 1) / 2)  # pooled 1/5
    pooled = s["tables"]["toolmaze.by_mode"]["P1"]["pooled"]
    assert pooled["tsr"]["value"] == pytest.approx(4 / 5)  # kept, labelled, as a variant
    # Avg over the four cells: TSR (1 + 0 + 1 + 0)/4, PRR over P1 cells (1 + 0)/2, RC (0 + 1)/2
    assert s["toolmaze.avg"]["value"] == pytest.approx((0.5 + 0.5 + 1 - 0.5) / 3)
    assert s["toolmaze.tsr"]["value"] == pytest.approx(0.5)
    assert s["toolmaze.prr"]["value"] == pytest.approx(0.5)
    assert s["toolmaze.rc"]["value"] == pytest.approx(0.5)
    # per level: C1 over its modes NP and P1 -> TSR (1 + 1)/2, PRR 1 (P1 only)
    c1 = s["tables"]["toolmaze.by_level"]["C1"]
    assert c1["tsr"]["value"] == pytest.approx(1.0) and c1["prr"]["value"] == pytest.approx(1.0)
    for key in ("toolmaze.tsr.P1", "toolmaze.prr.P1", "toolmaze.rc.P1", "toolmaze.avg"):
        e = s[key]
        assert e["low"] <= e["value"] <= e["high"]


def test_score_reports_modes_and_levels() -> None:
    t1, t2 = tv.task("a", mode="P1"), tv.task("b", mode="P2", level="C3")
    e1 = tv.run(
        t1,
        [tv.search(fault="explicit"), tv.search(), tv.quote(), tv.book()],
        answer=BOOKED,
        episode_id="1",
    )
    e2 = tv.run(t2, [tv.search(fault="explicit", mode="P2")], answer="down", episode_id="2")
    out = score([e1, e2], [t1, t2], n_boot=200)
    assert out["toolmaze.prr.P1"]["value"] == 1.0
    assert out["toolmaze.prr.P2"]["value"] == 0.0
    assert out["toolmaze.rc.P2"]["value"] == 1.0  # exposed, failed: C_rec = 1
    assert set(out["tables"]["toolmaze.by_level"]) == {"C2", "C3"}
    assert set(out["tables"]["prefix.by_mode"]) == {"P1", "P2"}


def test_recovery_without_task_uses_the_steps() -> None:
    t = tv.task(mode="P1")
    ep = tv.run(
        t,
        [tv.search(fault="explicit"), tv.search(), tv.quote(), tv.book()],
        answer=BOOKED,
        success=True,
    )
    r = recovery_record(ep.model_copy(update={"mode": None}))
    assert r.mode == "P1" and r.recovered and r.c_rec is None
    extra = Step(index=9, call=Call(tool="search_flights", args={}))
    assert recovery_record(ep.model_copy(update={"steps": [extra]})).exposed is False


def test_infrastructure_failures_count_in_their_own_cell_and_tsr_stays_the_macro() -> None:
    """By hand: C1/P1 has 3 runs, 1 a success (1/3); C2/P1 has 1 success and 1 run that failed
    for the infrastructure (1/2). TSR, the macro over cells, = (1/3 + 1/2) / 2 = 5/12; pooled it
    would read 2/5, and leaving the failure out 2/3. RC and PRR do not see the failure."""
    from replan.evaluators.perturbation import RecoveryRecord, summarize_toolmaze
    from replan.evaluators.perturbation import _summarize as family_summary

    def rec(level: str, success: bool, exposed: bool = False, **kw) -> RecoveryRecord:
        return RecoveryRecord("P1", level, success, exposed, **kw)

    ran = [
        rec("C1", True, exposed=True, recovered=True, c=4, c_star=2, c_rec=0.5),
        rec("C1", False),
        rec("C1", False),
        rec("C2", True),
    ]
    crashed = rec("C2", False, exposed=True, recovered=False, c=1, c_star=3, c_rec=1.0)
    out = family_summary(ran, n_boot=200, failures=1, failed=[crashed])
    assert out["toolmaze.tsr"]["value"] == pytest.approx(5 / 12)
    assert out["toolmaze.tsr"]["failures"] == 1
    alone = summarize_toolmaze(ran, n_boot=200)
    # RC: per cell the mean of pert·C_rec: C1 (0.5 + 0 + 0)/3, C2 0/1 -> (1/6 + 0)/2 = 1/12
    assert out["toolmaze.rc"]["value"] == pytest.approx(1 / 12) == alone["toolmaze.rc"]["value"]
    assert out["toolmaze.prr"]["value"] == alone["toolmaze.prr"]["value"] == 1.0
    assert out["toolmaze.not_exposed"] == alone["toolmaze.not_exposed"]
    cell = out["tables"]["toolmaze.by_level_mode"]["C2/P1"]
    assert cell["runs"] == 2 and cell["tsr"]["value"] == 0.5 and cell["not_exposed"] == 1
    # only a count, no records: the cells are unknown, so TSR is pooled and says so
    pooled = family_summary(ran, n_boot=200, failures=1)
    assert pooled["toolmaze.tsr"]["value"] == pytest.approx(2 / 5)
    assert "pooled" in pooled["toolmaze.tsr"]["average"]
