"""No false certainty (issue 30 §4): where too few independent units leave a bootstrap nothing
to resample (one run; one run per C × P cell), an estimate keeps its value and n and has no
interval, in the estimate, the terminal table and the report, instead of ``0.50 [0.50, 0.50]``.
Expected values are worked out by hand."""

from __future__ import annotations

from replan.evaluators.perturbation import RecoveryRecord, summarize_toolmaze
from replan.evaluators.stats import bootstrap_mean, has_interval, paired_bootstrap
from replan.report.html import fmt_estimate as html_estimate
from replan.report.summary import fmt_estimate


def test_one_value_has_a_mean_and_no_interval() -> None:
    est = bootstrap_mean([0.25], key="k")
    assert (est.value, est.low, est.high, est.n) == (0.25, None, None, 1)
    assert not has_interval(est)
    two = bootstrap_mean([0.0, 1.0], key="k")  # two units: an interval, and a wide one
    assert two.value == 0.5 and two.low == 0.0 and two.high == 1.0


def test_one_pair_has_a_difference_and_no_interval_or_test() -> None:
    res = paired_bootstrap([1.0], [0.0])
    assert res["difference"] == 1.0
    assert res["low"] is None and res["high"] is None and res["p_value"] is None


def _run(level: str, mode: str, success: bool) -> RecoveryRecord:
    return RecoveryRecord(mode=mode, level=level, success=success, exposed=False)


def test_one_run_per_cell_gives_the_macro_value_and_no_interval() -> None:
    # four cells with one run each, two of them solved: TSR = mean(1, 0, 1, 0) = 0.5
    runs = [
        _run("C1", "NP", True),
        _run("C2", "P1", False),
        _run("C3", "P2", True),
        _run("C4", "P3", False),
    ]
    tsr = summarize_toolmaze(runs, n_boot=200)["toolmaze.tsr"]
    assert tsr["value"] == 0.5 and tsr["n"] == 4
    assert tsr["low"] is None and tsr["high"] is None
    # a second run in one cell gives the resampling something to vary: an interval again
    tsr = summarize_toolmaze([*runs, _run("C1", "NP", False)], n_boot=200)["toolmaze.tsr"]
    assert tsr["low"] is not None and tsr["low"] < tsr["high"]


def test_an_estimate_without_an_interval_prints_its_n() -> None:
    est = {"value": 0.5, "low": None, "high": None, "n": 4, "method": "bootstrap"}
    assert fmt_estimate(est) == "0.50 n=4"
    assert "[" not in html_estimate(est) and "n=4" in html_estimate(est)
    with_ci = {"value": 0.5, "low": 0.25, "high": 0.75, "n": 9, "method": "bootstrap"}
    assert fmt_estimate(with_ci) == "0.50 [0.25, 0.75]"
