"""Calibration: which orderings the simulated profiles produce, and which parameter makes each.

The simulated model is a parametric policy, so every ordering it shows follows from a parameter;
these tests name the parameter, check the ordering with it, and check that it goes away when the
parameter is neutralised. Nothing here is evidence about real models or designs.

ToolMaze (seed 002) orderings, on the ReAct design:

- TSR(NP) > TSR(Pm): a fault is one more way to fail, unless the agent always notices it
  (``notice_explicit`` / ``notice_implicit`` = 1), always recovers (``on_fault`` without abort,
  ``find_alternative`` = 1) and an alternative exists -- every built-in profile falls short.
- PRR(P1) > PRR(P2): a retry cures a transient fault, not a permanent one; a permanent one needs
  an alternative, which the agent sees with probability ``on_fault.find_alternative`` < 1.
- PRR(P1) > PRR(P3) and PRR(P2) >= PRR(P4): explicit faults are noticed with ``notice_explicit``,
  implicit ones with ``notice_implicit``, and every built-in profile has the first larger.

Prefix executability (seed 003): TER(dual_loop) > TER(plan_conditioned) holds because the
verifier reports a plan's static errors before anything runs and the planner acts on a finding
with probability ``uptake()`` (= ``fix_invalid_call``, the probability of correcting a call from
a tool's error message). Both designs draw the *same* errors for the same steps (one random
stream per decision), so with ``fix_invalid_call`` = 0 the two designs run the same calls and
the ordering disappears; with no errors at all both are clean.
"""

from __future__ import annotations

from collections import defaultdict

import pytest

from replan.evaluators.perturbation import recovery_record
from replan.evaluators.prefix import prefix_record
from replan.graphs import run_episode
from replan.models import make_model
from replan.models.simulated.profiles import PROFILES, override
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
    """notice_explicit > notice_implicit and find_alternative < 1 give these orderings."""
    prof = PROFILES[profile]
    assert prof.notice_explicit > prof.notice_implicit and prof.on_fault.find_alternative < 1
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


def _clean(suite, profile, designs=("plan_conditioned", "dual_loop")) -> dict[str, list[bool]]:
    clean: dict[str, list[bool]] = defaultdict(list)
    for task in (t for t in suite if t.mode == "NP"):
        for seed in SEEDS:
            for design in designs:
                model = make_model("simulated:competent", task=task, seed=seed)
                model = model.model_copy(update={"profile": profile})
                ep = run_episode(design, model, task, seed=seed)
                clean[design].append(prefix_record(ep, task).clean)
    return clean


@pytest.mark.slow
@pytest.mark.parametrize("profile", PROFILE_NAMES)
def test_dual_loop_is_cleaner_because_findings_are_acted_on(suite, profile: str) -> None:
    """fix_invalid_call > 0 (with errors to find) makes dual_loop cleaner; = 0 removes it."""
    prof = PROFILES[profile]
    clean = _clean(suite, prof)
    assert _mean(clean["dual_loop"]) > _mean(clean["plan_conditioned"]), {
        d: _mean(v) for d, v in clean.items()
    }
    deaf = _clean(suite, override(prof, ["fix_invalid_call=0"]))
    assert deaf["dual_loop"] == deaf["plan_conditioned"]  # run by run, not just on average


@pytest.mark.slow
def test_without_errors_every_design_is_clean(suite) -> None:
    flawless = override(PROFILES["competent"], ["error_scale=0"])
    designs = ("react", "plan_conditioned", "dual_loop", "replanner_loop")
    clean = _clean(suite, flawless, designs)
    assert all(all(v) for v in clean.values()), {d: _mean(v) for d, v in clean.items()}
