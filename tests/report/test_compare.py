"""``replan compare DIR_A DIR_B``: paired deltas between two stores, verdicts in words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import rp_build as rb
from typer.testing import CliRunner

from replan.cli import app
from replan.report import compare_dirs
from replan.report.data import verdict

N_BOOT = 400


def _stores(tmp_path: Path) -> tuple[Path, Path]:
    """A: model m-old, react succeeds on seeds 0-1 of 8 (it stops after the search on the
    others); B: model m-new, react succeeds on all 8; B also ran dual_loop, A a task B lacks."""
    t, extra = rb.task("t-np"), rb.task("t-extra")
    eps_a = [
        rb.run(
            t,
            rb.FULL if s < 2 else [rb.search()],
            design="react",
            seed=s,
            model="m-old",
            answer=rb.BOOKED if s < 2 else "Here are the flights.",
        )
        for s in range(8)
    ]
    eps_a.append(rb.run(extra, rb.FULL, design="react", seed=0, model="m-old", answer=rb.BOOKED))
    eps_b = [
        rb.run(t, rb.FULL, design="react", seed=s, model="m-new", answer=rb.BOOKED)
        for s in range(8)
    ]
    eps_b.append(rb.run(t, rb.FULL, design="dual_loop", seed=0, model="m-new", answer=rb.BOOKED))
    a = rb.save(tmp_path / "a", eps_a, [t, extra])
    b = rb.save(tmp_path / "b", eps_b, [t])
    return a, b


def test_compare_dirs_paired_deltas_and_verdicts(tmp_path: Path) -> None:
    a, b = _stores(tmp_path)
    res = compare_dirs(a, b, n_boot=N_BOOT)
    assert res["paired_by"] == "design"  # a model change: each side has one model per design
    assert res["delta"] == "B - A"
    assert res["tasks"] == {
        "shared": 1,
        "only_a": ["t-extra"],
        "only_b": [],
        "definition_differs": [],
    }
    assert res["only_a"] == [] and res["only_b"] == ["dual_loop"]
    react = res["designs"]["react"]
    assert (react["model_a"], react["model_b"]) == ("m-old", "m-new")
    assert react["pairs"] == 8 and react["unpaired_a"] == 1 and react["unpaired_b"] == 0
    s = react["metrics"]["success"]
    # 6 pairs where only B succeeded, 2 where both did: exact McNemar p = 2 * 0.5^6
    assert s["a"] == pytest.approx(0.25) and s["b"] == pytest.approx(1.0)
    assert s["delta"] == pytest.approx(0.75)
    assert s["p_value"] == pytest.approx(2 * 0.5**6)
    # the exact conditional interval: all 6 discordant pairs favour B, Clopper–Pearson for
    # π = 6/6 is [0.025^(1/6), 1], times d/n = 6/8 on the 2π − 1 scale
    assert s["low"] == pytest.approx(0.75 * (2 * 0.025 ** (1 / 6) - 1))
    assert s["high"] == pytest.approx(0.75)
    assert s["verdict"] == "B has a higher success rate than A (p = 0.031)"
    c = react["metrics"]["clean"]
    assert c["delta"] == 0 and c["p_value"] == 1.0
    assert c["verdict"] == "no significant difference in clean-run rate between B and A (p = 1.000)"
    # E5 = S·min(1, 3/T): B 1 everywhere; A 1 on seeds 0-1 (3 rounds), 0 on the failures
    e5 = react["metrics"]["sde.E5"]
    assert e5["n"] == 8 and e5["delta"] == pytest.approx(0.75)
    assert e5["verdict"].startswith("B has a higher E5 (round efficiency) than A (p ")
    # NP tasks are never exposed to a fault: no C_rec to pair
    assert react["metrics"]["toolmaze.c_rec"]["n"] == 0
    assert react["metrics"]["toolmaze.c_rec"]["verdict"].startswith("no paired runs")


def test_compare_cli_json_prints_exactly_one_object(tmp_path: Path) -> None:
    a, b = _stores(tmp_path)
    res = CliRunner().invoke(app, ["compare", str(a), str(b), "--json", "--n-boot", "400"])
    assert res.exit_code == 0, res.output
    lines = [ln for ln in res.stdout.splitlines() if ln.strip()]
    assert len(lines) == 1
    obj = json.loads(lines[0])
    assert obj["designs"]["react"]["metrics"]["success"]["verdict"].startswith("B has a higher")


def test_compare_cli_table(tmp_path: Path) -> None:
    a, b = _stores(tmp_path)
    res = CliRunner().invoke(app, ["compare", str(a), str(b), "--n-boot", "400"])
    assert res.exit_code == 0, res.output
    assert "react: B has a higher success rate than A (p = 0.031)" in res.stdout
    assert "1 tasks only in A: t-extra" in res.stderr


def test_compare_needs_one_model_per_design_or_the_same_models(tmp_path: Path) -> None:
    t = rb.task("t-np")
    a = rb.save(
        tmp_path / "a",
        [rb.run(t, rb.FULL, design="react", seed=0, model=m, answer=rb.BOOKED) for m in "xy"],
        [t],
    )
    b = rb.save(
        tmp_path / "b",
        [rb.run(t, rb.FULL, design="react", seed=0, model="z", answer=rb.BOOKED)],
        [t],
    )
    with pytest.raises(ValueError, match=r"holds 2 models for design react \(x, y\)"):
        compare_dirs(a, b)
    res = CliRunner().invoke(app, ["compare", str(a), str(tmp_path / "missing")])
    assert res.exit_code == 1
    assert "not a replan results directory" in res.stderr


def test_verdict_words() -> None:
    assert (
        verdict("dual_loop", "react", "clean-run rate", 0.2, 0.003, 40)
        == "dual_loop has a higher clean-run rate than react (p = 0.003)"
    )
    assert (
        verdict("B", "A", "recovery cost (C_rec)", -0.1, 0.0004, 30, bootstrap=True)
        == "B has a lower recovery cost (C_rec) than A (p < 0.001)"
    )
    assert verdict("x", "y", "AUC-PEC", 0.5, 0.0, 3, bootstrap=True).startswith(
        "too few paired runs (n = 3)"
    )
    assert verdict("x", "y", "success rate", 0.1, 0.2, 50).startswith("no significant difference")
    assert verdict("x", "y", "success rate", None, None, 0).startswith("no paired runs")


def _cp_bounds(k: int, d: int, alpha: float = 0.05) -> tuple[float, float]:
    """Clopper–Pearson bounds by brute force over a fine grid of π (a reference that shares no
    code with the report): the smallest/largest π that the two one-sided exact tests accept."""
    from math import comb

    def tail_le(x: int, p: float) -> float:
        return sum(comb(d, i) * p**i * (1 - p) ** (d - i) for i in range(x + 1))

    grid = [i / 20000 for i in range(20001)]
    ok = [p for p in grid if tail_le(k, p) > alpha / 2 and 1 - tail_le(k - 1, p) > alpha / 2]
    return (0.0 if k == 0 else min(ok)), (1.0 if k == d else max(ok))


@pytest.mark.parametrize(
    ("a_only", "b_only", "n"),
    [(0, 4, 8), (1, 3, 4), (0, 8, 40), (2, 9, 30), (5, 5, 12), (1, 6, 10), (0, 6, 20)],
)
def test_success_interval_is_the_mcnemar_tests_own(a_only: int, b_only: int, n: int) -> None:
    """The interval shown for a rate difference excludes 0 exactly when the McNemar p-value is
    below alpha (issue: p = 0.125 beside a bootstrap interval [-0.500, -0.049])."""
    from math import comb

    from replan.report.data import mcnemar_exact

    r = mcnemar_exact(a_only, b_only, n)
    d = a_only + b_only
    k = min(a_only, b_only)
    p = min(1.0, 2 * sum(comb(d, i) for i in range(k + 1)) / 2**d)
    lo_pi, hi_pi = _cp_bounds(a_only, d)
    assert r["p_value"] == pytest.approx(p)
    assert r["difference"] == pytest.approx((a_only - b_only) / n)
    assert r["low"] == pytest.approx(d / n * (2 * lo_pi - 1), abs=2e-4)
    assert r["high"] == pytest.approx(d / n * (2 * hi_pi - 1), abs=2e-4)
    excludes_zero = r["low"] > 0 or r["high"] < 0
    assert excludes_zero == (r["p_value"] < 0.05)


def test_compare_table_shows_one_test_per_row(tmp_path: Path) -> None:
    """4 discordant pairs of 8, all for B: exact p = 0.125, so the interval must hold 0."""
    t = rb.task("t-np")
    eps_a = [
        rb.run(
            t,
            rb.FULL if s < 4 else [rb.search()],
            design="react",
            seed=s,
            model="m-old",
            answer=rb.BOOKED if s < 4 else "Here are the flights.",
        )
        for s in range(8)
    ]
    eps_b = [
        rb.run(t, rb.FULL, design="react", seed=s, model="m-new", answer=rb.BOOKED)
        for s in range(8)
    ]
    a = rb.save(tmp_path / "a", eps_a, [t])
    b = rb.save(tmp_path / "b", eps_b, [t])
    s = compare_dirs(a, b, n_boot=N_BOOT)["designs"]["react"]["metrics"]["success"]
    assert s["p_value"] == pytest.approx(0.125)
    assert s["low"] < 0 < s["high"]
    assert s["method"].startswith("McNemar")
    res = CliRunner().invoke(app, ["compare", str(a), str(b), "--n-boot", "400"])
    assert "no significant difference in success rate between B and A (p = 0.125)" in res.stdout
