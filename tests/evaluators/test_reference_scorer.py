"""An independent reference scorer, written straight from the papers' formulas, against a real
stored run.

The scorer below does not import ``replan``: it reads the results store (SQLite) and the
episodes' and tasks' JSON directly and applies the definitions —

- seed 003: FED = the first call whose verdict blames the agent, n = calls; TER = clean runs / N,
  AUC-PEC = mean of (FED − 1)/n (1 for a clean run or n = 0);
- seed 002 §3.5: pert = the injected fault reached the run; recov = retry (transient), an
  alternative path (permanent), or a wise stop (no path left), with a corrupted value that reached
  an accepted call or the answer meaning not recovered, independently of success;
  C_rec = 1 − c*/max(c, c*)·succ with c* per trajectory (eq. 3); PRR_m = Σ recov·pert / Σ pert;
  RC_m = mean pert·C_rec; per mode macro-averaged over C1–C4, Avg over the C × P cells (§4.2).

``replan`` is used only to produce the run (and, as the code under test, to score it). Every
per-episode FED, C_rec and recovered flag, and every per-design TSR / PRR / RC / TER / AUC-PEC,
must agree.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow  # one real run of 80 episodes (about 45 s on two cores)

DESIGNS = ("react", "dual_loop")
INFRA_FAILURES = {"model_error", "crashed", "timeout"}
NOT_AGENT_ERRORS = {"ok", "empty_result", "timeout"}  # environment faults are not the agent's
PERTURBED = ("P1", "P2", "P3", "P4")
JOIN = r"[-:/.@+_']"  # characters that glue two parts of one value
ALNUM = r"[^\W_]"


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from replan.api import run

    out = tmp_path_factory.mktemp("reference-run")
    # 40 tasks = two per C × P cell (round robin over the cells), two designs
    run("toolmaze", agents=list(DESIGNS), limit=40, out=out, concurrency=2)
    return out


def _read(out: Path) -> tuple[dict[str, dict], list[dict], dict[tuple[str, str], float | None]]:
    con = sqlite3.connect(out / "results.sqlite")
    try:
        tasks = {tid: json.loads(t) for tid, t in con.execute("SELECT task_id, task FROM tasks")}
        eps = [json.loads(e) for (e,) in con.execute("SELECT episode FROM episodes")]
        fb = {(k, m): s for k, m, s in con.execute("SELECT episode_key, key, score FROM feedback")}
    finally:
        con.close()
    return tasks, eps, fb


# -- whole-value matching (an answer "states" a value only as a whole value) -------------------
def _states_text(text: str, value: str) -> bool:
    pat = (
        rf"(?<!{ALNUM})(?<!{ALNUM}{JOIN})"
        + re.escape(value.strip())
        + rf"(?!{ALNUM})(?!{JOIN}{ALNUM})"
    )
    return bool(value.strip()) and re.search(pat, text, re.IGNORECASE) is not None


def _states_number(text: str, value: float) -> bool:
    pat = r"(?<!\d)(?<!\d" + JOIN + r")-?\d[\d,]*(?:\.\d+)?(?!\d)(?!" + JOIN + r"\d)"
    for m in re.finditer(pat, text):
        tok = m.group().replace(",", "")
        for cand in {tok, tok.lstrip("-")}:
            if math.isclose(float(cand), float(value), rel_tol=1e-6, abs_tol=0.006):
                return True
    return False


def _is_num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _leaves(v: Any) -> list[Any]:
    if isinstance(v, dict):
        return [x for y in v.values() for x in _leaves(y)]
    if isinstance(v, list):
        return [x for y in v for x in _leaves(y)]
    return [v]


def _contains(haystack: Any, needle: Any) -> bool:
    for leaf in _leaves(haystack):
        if _is_num(needle):
            if _is_num(leaf) and math.isclose(leaf, needle, rel_tol=1e-9):
                return True
            if isinstance(leaf, str) and _states_number(leaf, needle):
                return True
        elif isinstance(needle, str):
            if isinstance(leaf, str) and _states_text(leaf, needle):
                return True
        elif leaf == needle:
            return True
    return False


# -- the reference per episode ---------------------------------------------------------------
def _ok(step: dict) -> bool:
    return step["verdict"]["code"] == "ok"


def _clean(step: dict) -> bool:
    return _ok(step) and step.get("perturbation") is None


def _args(steps: list[dict]) -> list[Any]:
    out = []
    for s in steps:
        out.append(s["call"]["args"])
        if s.get("resolved_args") is not None:
            out.append(s["resolved_args"])
    return out


def _c_star(task: dict, victim: str, executed: list[str]) -> int | None:
    paths = [p["tools"] for p in task["metadata"].get("paths") or []] or task["valid_paths"]
    if not paths:
        return None
    if task["mode"] in ("P2", "P4"):
        paths = [p for p in paths if victim not in p]
    if not paths:
        return 0  # no path left: the optimum is to stop
    return min(sum((Counter(p) - Counter(executed)).values()) for p in paths)


def reference(ep: dict, task: dict) -> dict[str, Any]:
    steps, answer, succ = ep["steps"], ep.get("final_answer"), bool(ep.get("success"))
    n = len(steps)
    fed = next(
        (k for k, s in enumerate(steps, 1) if s["verdict"]["code"] not in NOT_AGENT_ERRORS), None
    )
    out: dict[str, Any] = {"n": n, "fed": fed, "success": succ, "mode": task["mode"]}
    out["level"] = task["level"]
    first = next((i for i, s in enumerate(steps) if s.get("perturbation")), None)
    out["exposed"] = first is not None
    if first is None:
        return out
    pert = steps[first]["perturbation"]
    victim = pert["victim"]
    executed = [s["call"]["tool"] for s in steps[:first] if _clean(s)]
    later = steps[first + 1 :]
    sentinels = [s["perturbation"].get("sentinel") for s in steps if s.get("perturbation")]
    if task.get("perturbation"):
        sentinels.append(task["perturbation"].get("sentinel"))
    sentinels = [v for v in sentinels if v is not None and not isinstance(v, bool)]
    accepted = [
        s for s in later if _ok(s) and not (s.get("perturbation") or {}).get("explicit", False)
    ]
    propagated = any(
        any(_contains(a, v) for a in _args(accepted)) or (answer and _contains(answer, v))
        for v in sentinels
    )
    members = {victim, *(task.get("faults") or {}).get("victim_tools", [])}
    if propagated:
        recovered = False
    elif task["mode"] in ("P1", "P3"):  # transient: retrying (§3.5 (1)), a clean re-invocation
        recovered = any(s["call"]["tool"] in members and _clean(s) for s in later)
    elif task["checker"].get("graceful"):  # no path left: a wise stop
        forbidden = set(task["checker"].get("forbidden_after_failure") or [])
        words = task["checker"].get("failure_words") or []
        recovered = not any(s["call"]["tool"] in forbidden for s in later) and any(
            w in (answer or "").lower() for w in words
        )
    else:  # permanent: a valid path avoiding the victim ran cleanly
        clean_tools = {s["call"]["tool"] for s in steps if _clean(s)}
        recovered = any(victim not in p and set(p) <= clean_tools for p in task["valid_paths"])
    c, c_star = len(later), _c_star(task, victim, executed)
    out["recovered"] = recovered
    out["c"], out["c_star"] = c, c_star
    if c_star is not None:
        top = max(c, c_star)
        out["c_rec"] = 1 - (1.0 if top == 0 else c_star / top) * (1.0 if succ else 0.0)
    return out


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def aggregates(recs: list[dict]) -> dict[str, Any]:
    """Per-design figures: per C × P cell, then macro over levels (per mode) and over cells."""
    cells: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in recs:
        cells[(r["level"], r["mode"])].append(r)
    tsr = {k: _mean([float(r["success"]) for r in v]) for k, v in cells.items()}
    prr = {
        k: _mean([float(r["recovered"]) for r in v if r["exposed"]])
        for k, v in cells.items()
        if k[1] in PERTURBED and any(r["exposed"] for r in v)
    }
    rc = {
        k: _mean([r["c_rec"] if r["exposed"] else 0.0 for r in v])
        for k, v in cells.items()
        if k[1] in PERTURBED
    }
    out: dict[str, Any] = {}
    for m in {k[1] for k in cells}:
        out[f"tsr.{m}"] = _mean([v for k, v in tsr.items() if k[1] == m])
        if m in PERTURBED:
            out[f"prr.{m}"] = _mean([v for k, v in prr.items() if k[1] == m])
            out[f"rc.{m}"] = _mean([v for k, v in rc.items() if k[1] == m])
    out["prr"], out["rc"] = _mean(list(prr.values())), _mean(list(rc.values()))
    out["avg"] = (_mean(list(tsr.values())) + out["prr"] + 1 - out["rc"]) / 3
    np_runs = [r for r in recs if r["mode"] == "NP"]
    # TER and AUC-PEC score prefixes of actual calls (seed 003 §3): zero-call runs are left out
    acting_np = [r for r in np_runs if r["n"] > 0]
    out["ter.NP"] = _mean([float(r["fed"] is None) for r in acting_np])
    out["auc.NP"] = _mean([1.0 if r["fed"] is None else (r["fed"] - 1) / r["n"] for r in acting_np])
    out["ter"] = _mean([float(r["fed"] is None) for r in recs if r["n"] > 0])
    out["zero.NP"] = _mean([float(r["n"] == 0) for r in np_runs])
    return out


# -- the comparison ----------------------------------------------------------------------------
def test_every_episode_agrees_with_the_reference(stored: Path) -> None:
    tasks, eps, fb = _read(stored)
    assert len(eps) == 40 * len(DESIGNS)
    assert not [e for e in eps if e["end_reason"] in INFRA_FAILURES]
    exposed = 0
    for ep in eps:
        key, ref = ep["episode_id"], reference(ep, tasks[ep["task_id"]])
        assert fb[(key, "prefix.fed")] == ref["fed"], key
        assert fb[(key, "prefix.calls")] == ref["n"], key
        assert fb[(key, "toolmaze.exposed")] == float(ref["exposed"]), key
        if ref["exposed"]:
            exposed += 1
            assert fb[(key, "toolmaze.recovered")] == float(ref["recovered"]), key
            assert fb[(key, "toolmaze.c_rec")] == pytest.approx(ref["c_rec"], abs=1e-12), key
        else:
            assert (key, "toolmaze.recovered") not in fb, key  # never shown as recovered
    assert exposed > 40  # the comparison covers real recoveries, not only clean runs


def test_every_design_agrees_with_the_reference(stored: Path) -> None:
    from replan.evaluators import score
    from replan.report.summary import summarize

    tasks, eps, _ = _read(stored)
    summary = summarize(stored)
    from replan.core.task import Task
    from replan.core.trace import Episode

    typed_tasks = [Task.model_validate(t) for t in tasks.values()]
    for design in DESIGNS:
        mine = [e for e in eps if e["design"] == design]
        ref = aggregates([reference(e, tasks[e["task_id"]]) for e in mine])
        got = score([Episode.model_validate(e) for e in mine], typed_tasks, n_boot=200)
        for m in ("NP", *PERTURBED):
            assert got[f"toolmaze.tsr.{m}"]["value"] == pytest.approx(ref[f"tsr.{m}"]), (design, m)
        for m in PERTURBED:
            for metric in ("prr", "rc"):
                want, have = ref[f"{metric}.{m}"], got[f"toolmaze.{metric}.{m}"]["value"]
                assert (have is None and want is None) or have == pytest.approx(want), (
                    design,
                    metric,
                    m,
                )
        row = summary[design]
        assert row["PRR"]["value"] == pytest.approx(ref["prr"])
        assert row["RC"]["value"] == pytest.approx(ref["rc"])
        assert row["Avg"]["value"] == pytest.approx(ref["avg"])
        assert row["prefix_scope"] == "NP"
        assert row["TER"]["value"] == pytest.approx(ref["ter.NP"])
        assert row["AUC-PEC"]["value"] == pytest.approx(ref["auc.NP"])
        assert row["0-call"]["value"] == pytest.approx(ref["zero.NP"])
        assert got["prefix.ter"]["value"] == pytest.approx(ref["ter"])
        assert "E5" not in row  # ToolMaze does not define E5
