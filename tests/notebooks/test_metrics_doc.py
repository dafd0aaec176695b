"""Every worked example in docs/metrics.md, recomputed with the evaluators.

The doc keeps each example as a fenced ``json example=<name>`` block (inputs and the numbers the
prose states); here each block is fed to the real evaluators and the results must match.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from replan.core.trace import Call, Episode, Step
from replan.evaluators.perturbation import RecoveryRecord, c_rec, composite_avg, summarize_toolmaze
from replan.evaluators.prefix import summarize_prefix
from replan.evaluators.sde import (
    JudgeResult,
    SDERecord,
    calibrate,
    e5_score,
    summarize_sde,
    tool_use_efficiency,
)
from replan.evaluators.stats import mcnemar, paired_bootstrap, pass_hat_k, wilson

DOC = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"
BLOCK = re.compile(r"```json example=(\w+)\n(.*?)```", re.S)


def examples() -> dict[str, Any]:
    text = DOC.read_text(encoding="utf-8")
    out = {}
    for name, body in BLOCK.findall(text):
        try:
            out[name] = json.loads(body)
        except json.JSONDecodeError as exc:
            raise AssertionError(f"{DOC}: example {name!r} is not valid JSON: {exc}") from exc
    return out


def test_the_doc_has_every_example() -> None:
    assert set(examples()) == {"prefix", "toolmaze", "sde", "stats"}


def test_prefix_example() -> None:
    ex = examples()["prefix"]
    got = summarize_prefix([tuple(r) for r in ex["runs"]])
    want = ex["expect"]
    for key in ("prefix.ter", "prefix.auc_pec", "prefix.rr", "prefix.zero_call"):
        assert got[key]["value"] == pytest.approx(want[key]), key
    assert got["prefix.rr"]["eligible"] == want["eligible"]
    assert [r["pec"]["value"] for r in got["prefix.pec"]] == pytest.approx(want["pec"])
    assert [r["cpec"]["value"] for r in got["prefix.pec"]] == pytest.approx(want["cpec"])
    # the invariant the doc states
    assert got["prefix.ter"]["value"] <= got["prefix.auc_pec"]["value"] <= 1


def test_toolmaze_example() -> None:
    ex = examples()["toolmaze"]
    for c, c_star, ok, want in ex["c_rec"]:
        assert c_rec(c, c_star, ok) == pytest.approx(want)
    recs = []
    for r in ex["mode_P1"]:
        cost = c_rec(r["c"], r["c_star"], r["success"]) if r["exposed"] else None
        recs.append(
            RecoveryRecord(
                "P1",
                None,
                r["success"],
                r["exposed"],
                r.get("recovered"),
                c=r.get("c"),
                c_star=r.get("c_star"),
                c_rec=cost,
            )
        )
    got = summarize_toolmaze(recs)
    for key, want in ex["expect_P1"].items():
        assert got[f"toolmaze.{key}.P1"]["value"] == pytest.approx(want), key
    avg = ex["avg"]
    assert composite_avg(avg["tsr"], avg["prr"], avg["rc"]) == pytest.approx(avg["expect"])


def test_sde_example() -> None:
    ex = examples()["sde"]
    e = ex["episode"]
    ep = Episode(
        episode_id="doc",
        task_id="doc",
        steps=[Step(index=i, round=r, call=Call(tool="t")) for i, r in enumerate(e["step_rounds"])],
        metadata={k: e[k] for k in e if k != "step_rounds"},
    )
    assert e5_score(ep, None, 1.0, True)[0] == pytest.approx(ex["expect_e5"])
    assert e5_score(ep, None, 0.0, True)[0] == ex["expect_e5_unparsable"]
    assert e5_score(ep, None, 1.0, False)[0] == ex["expect_e5_failed"]
    assert tool_use_efficiency(ep, None, True)[0] == pytest.approx(ex["expect_tool_use_efficiency"])
    rec = SDERecord("doc", True, script=ex["script"], judge=JudgeResult(scores=ex["judge"]))
    assert rec.dimensions() == pytest.approx(ex["expect_dimensions"])
    runs = [
        SDERecord(f"r{i}", s, replans=n, invalid_replans=k)
        for i, (s, n, k) in enumerate(ex["replans"])
    ]
    agg = summarize_sde(runs)
    assert agg["sde.pass@1"]["value"] == pytest.approx(ex["expect_pass@1"])
    assert agg["sde.invalid_dag_rate"]["value"] == pytest.approx(ex["expect_invalid_dag_rate"])
    cal = ex["calibration"]
    overall = calibrate(cal["human"], cal["model"], items=("S1", "D1"))["overall"]
    for key, want in cal["expect_overall"].items():
        assert overall[key] == pytest.approx(want)


def test_stats_example() -> None:
    ex = examples()["stats"]
    k, n, value, low, high = ex["wilson"]
    w = wilson(k, n)
    assert (w.value, w.low, w.high) == pytest.approx((value, low, high))
    m = ex["mcnemar"]
    got = mcnemar(m["a"], m["b"])
    assert {key: got[key] for key in m["expect"]} == m["expect"]
    p = ex["pass_hat_k"]
    assert pass_hat_k(p["outcomes"], p["k"])["value"] == pytest.approx(p["expect"])
    b = ex["paired_bootstrap"]
    got_b = paired_bootstrap(b["a"], b["b"])
    for key, want in b["expect"].items():
        assert got_b[key] == pytest.approx(want), key


def test_a_wrong_number_in_the_doc_would_fail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check is real: a doc whose TER is off by one run fails the prefix test."""
    bad = DOC.read_text(encoding="utf-8").replace('"prefix.ter": 0.5', '"prefix.ter": 0.75')
    doc = tmp_path / "metrics.md"
    doc.write_text(bad, encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "DOC", doc)
    with pytest.raises(AssertionError):
        test_prefix_example()
