"""Calibration: on the ToolMaze-style suite the simulated profiles reproduce the seeds' orderings.

ToolMaze (seed 002): success drops under perturbation, TSR(NP) > TSR(Pm); transient explicit
faults are recovered more often than permanent ones, PRR(P1) > PRR(P2); and implicit faults
less often than explicit ones, PRR(P1) > PRR(P3) (the implicit–explicit gap is positive).
Prefix executability (seed 003): Dual-Loop runs are clean more often than plan-conditioned
ReAct runs, TER(dual_loop) > TER(plan_conditioned), because the verifier catches the
planner's static errors before anything executes.

None of this is programmed as such: the model only knows its profile, and these orderings
emerge from the faults' mechanics and the designs' mechanics.
"""

from __future__ import annotations

from collections import defaultdict

import pytest

from replan.evaluators.prefix import prefix_record
from replan.evaluators.toolmaze import recovery_record
from replan.graphs import run_episode
from replan.models import make_model
from replan.suites.toolmaze import generate, task_injector

PROFILE_NAMES = ("novice", "competent", "expert")
SEEDS = (0, 1)


@pytest.fixture(scope="module")
def suite():
    return generate(limit=6)


def _mean(xs: list[bool]) -> float:
    assert xs, "no runs"
    return sum(xs) / len(xs)


@pytest.mark.slow
@pytest.mark.parametrize("profile", PROFILE_NAMES)
def test_toolmaze_orderings_hold_for_every_profile(suite, profile: str) -> None:
    tsr: dict[str, list[bool]] = defaultdict(list)
    prr: dict[str, list[bool]] = defaultdict(list)
    for task in suite:
        for seed in SEEDS:
            model = make_model(f"simulated:{profile}", task=task, seed=seed)
            ep = run_episode("react", model, task, faults=task_injector(task), seed=seed)
            rec = recovery_record(ep, task)
            tsr[task.mode].append(rec.success)
            if rec.exposed:
                prr[task.mode].append(bool(rec.recovered))
    t = {m: _mean(v) for m, v in tsr.items()}
    r = {m: _mean(v) for m, v in prr.items()}
    for mode in ("P1", "P2", "P3", "P4"):
        assert t["NP"] > t[mode], (profile, t)
    assert r["P1"] > r["P2"], (profile, r)
    assert r["P1"] > r["P3"], (profile, r)
    assert r["P2"] >= r["P4"], (profile, r)


@pytest.mark.slow
@pytest.mark.parametrize("profile", PROFILE_NAMES)
def test_dual_loop_is_cleaner_than_plan_conditioned_react(suite, profile: str) -> None:
    clean: dict[str, list[bool]] = defaultdict(list)
    for task in (t for t in suite if t.mode == "NP"):
        for seed in SEEDS:
            for design in ("plan_conditioned", "dual_loop"):
                model = make_model(f"simulated:{profile}", task=task, seed=seed)
                ep = run_episode(design, model, task, seed=seed)
                clean[design].append(prefix_record(ep, task).clean)
    assert _mean(clean["dual_loop"]) > _mean(clean["plan_conditioned"]), {
        d: _mean(v) for d, v in clean.items()
    }
