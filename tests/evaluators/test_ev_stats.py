"""Intervals and paired tests: known values, determinism, coverage of a known rate."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from replan.evaluators.stats import (
    bootstrap_mean,
    mcnemar,
    paired_bootstrap,
    pass_hat_k,
    resample_sums,
    rng_for,
    wilson,
)


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [
        # published Wilson 95% intervals (e.g. Newcombe 1998, Table I; Brown-Cai-DasGupta)
        (0, 10, 0.0, 0.2775),
        (10, 10, 0.7225, 1.0),
        (5, 10, 0.2366, 0.7634),
        (81, 263, 0.2553, 0.3662),
    ],
)
def test_wilson_matches_published_values(k: int, n: int, low: float, high: float) -> None:
    est = wilson(k, n)
    assert est.value == pytest.approx(k / n)
    assert est.low == pytest.approx(low, abs=5e-4)
    assert est.high == pytest.approx(high, abs=5e-4)


def test_wilson_undefined_and_bad_input() -> None:
    est = wilson(0, 0)
    assert est.value is None and est.low is None and est.high is None
    with pytest.raises(ValueError, match="successes <= n"):
        wilson(3, 2)


def test_bootstrap_is_seeded_and_keyed() -> None:
    rnd = random.Random(1)
    vals = [rnd.random() for _ in range(300)]
    a = bootstrap_mean(vals, key="m", seed=3)
    assert a == bootstrap_mean(vals, key="m", seed=3)
    assert a != bootstrap_mean(vals, key="m", seed=4)
    assert a.low < a.value < a.high
    assert a.value == pytest.approx(sum(vals) / len(vals))


def test_bootstrap_interval_matches_normal_theory_on_bernoulli() -> None:
    # 2,000 Bernoulli(0.3) draws: the bootstrap interval of the mean ~ p ± 1.96·sqrt(p(1-p)/n)
    rnd = random.Random(7)
    vals = [1.0 if rnd.random() < 0.3 else 0.0 for _ in range(2000)]
    est = bootstrap_mean(vals, key="bern", seed=0, n_boot=4000)
    p = est.value
    half = 1.96 * math.sqrt(p * (1 - p) / len(vals))
    assert est.low == pytest.approx(p - half, abs=0.004)
    assert est.high == pytest.approx(p + half, abs=0.004)


def test_resampling_paths_agree() -> None:
    # many distinct values take the chunked index path; few take the multinomial path; both
    # must give the same spread of the resampled mean (sd = sigma/sqrt(n))
    rng = np.random.default_rng(0)
    cont = rng.normal(0, 1, size=6000)  # > 4096 distinct values
    disc = np.round(cont, 1)  # ~70 distinct values
    for arr in (cont, disc):
        sums, n = resample_sums(arr, 600, rng_for(0, "x"))
        sd = float(np.std(sums[:, 0] / n))
        assert sd == pytest.approx(np.std(arr) / math.sqrt(n), rel=0.12)


def test_mcnemar_exact_and_chi_square() -> None:
    # 1 vs 9 discordant pairs: exact two-sided p = 2·(C(10,0)+C(10,1))/2^10
    a = [True] * 1 + [False] * 9 + [True] * 5
    b = [False] * 1 + [True] * 9 + [True] * 5
    r = mcnemar(a, b)
    assert (r["a_only"], r["b_only"], r["both"]) == (1, 9, 5)
    assert r["method"] == "exact binomial"
    assert r["p_value"] == pytest.approx(2 * 11 / 1024)
    # 30 vs 10: chi2 = (|30-10|-1)^2/40 = 9.025, p = 0.002663 (chi-square, 1 df)
    a = [True] * 30 + [False] * 10
    b = [False] * 30 + [True] * 10
    r = mcnemar(a, b)
    assert r["statistic"] == pytest.approx(9.025)
    assert r["p_value"] == pytest.approx(0.002663, abs=2e-6)
    with pytest.raises(ValueError, match="differ in length"):
        mcnemar([True], [])


def test_paired_bootstrap() -> None:
    b = [0.1 * i for i in range(20)]
    r = paired_bootstrap([x + 0.25 for x in b], b)
    assert r["difference"] == pytest.approx(0.25)
    assert r["low"] == pytest.approx(0.25) and r["high"] == pytest.approx(0.25)
    rnd = random.Random(2)
    a = [rnd.gauss(0, 1) for _ in range(400)]
    c = [x + rnd.gauss(0, 0.1) for x in a]  # no real difference
    r = paired_bootstrap(a, c, seed=1)
    assert r["low"] < 0 < r["high"]
    assert r["p_value"] > 0.05


def test_pass_hat_k_convention() -> None:
    outcomes = {
        "a": [True, True, False],  # C(2,2)/C(3,2) = 1/3
        "b": [True, True, True],  # 1
        "c": [True],  # fewer than k seeds: skipped
    }
    r = pass_hat_k(outcomes, 2)
    assert r["value"] == pytest.approx((1 / 3 + 1) / 2)
    assert (r["tasks"], r["skipped_tasks"]) == (2, 1)
    r3 = pass_hat_k(outcomes, 3)
    assert r3["value"] == pytest.approx(0.5)
    # k = 1 is the plain success rate over tasks' seeds
    assert pass_hat_k(outcomes, 1)["value"] == pytest.approx((2 / 3 + 1 + 1) / 3)
