"""Metric recovery: a known per-call error rate comes back out of TER and FED.

With only ``Type_Error`` enabled at rate p, every call the agent issues is independently
mistyped with probability p. A run is clean iff its first c* calls are all well typed, where c*
is the task's call count when nothing goes wrong (2, 3 or 4 here). So, exactly:

    P(clean) = (1 - p)^c*,    P(FED = k) = (1 - p)^(k-1) * p   for k = 1..c*,

i.e. FED follows a geometric law truncated at c*. The runs go through the real ReAct graph
(``run_episode("react", ...)``) over the world, and FED is measured by replaying each Episode,
independently of the model.
"""

from __future__ import annotations

import math
from collections import Counter

import pytest

from replan.env import task_world
from replan.env.replay import replay
from replan.graphs import run_episode
from replan.models import SimulatedChatModel
from replan.models.simulated.profiles import PROFILES

from .conftest import booking_task, parallel_task, quote_task

P = 0.1
RUNS = {2: 700, 3: 700, 4: 600}  # c* -> runs (2,000 in all)
#: 95% quantiles of chi-square with 2 + 3 + 4 = 9 degrees of freedom (one pooled test)
CHI2_95_DF9 = 16.919


@pytest.mark.slow
def test_type_error_rate_is_recovered_by_ter_and_fed() -> None:
    tasks = {2: quote_task(), 3: booking_task(), 4: parallel_task()}
    profile = PROFILES["competent"].with_only(Type_Error=P)
    feds: dict[int, Counter] = {c: Counter() for c in tasks}
    expected_clean, var, clean = 0.0, 0.0, 0
    seed = 0
    for c_star, task in tasks.items():
        assert task.min_calls == c_star
        for _ in range(RUNS[c_star]):
            seed += 1
            model = SimulatedChatModel(task=task, profile=profile, seed=seed)
            ep = run_episode("react", model, task, seed=seed)
            rep = replay(ep, task_world(task))
            if rep.fed is None:
                assert rep.n == c_star, "a clean run makes exactly c* calls"
                clean += 1
            feds[c_star][rep.fed] += 1
            q = (1 - P) ** c_star
            expected_clean += q
            var += q * (1 - q)
    n = sum(RUNS.values())
    ter = clean / n
    expectation, half = expected_clean / n, 1.96 * math.sqrt(var) / n
    assert abs(ter - expectation) <= half, (ter, expectation, half)

    chi2 = 0.0
    for c_star, counts in feds.items():
        runs = RUNS[c_star]
        probs = {k: (1 - P) ** (k - 1) * P for k in range(1, c_star + 1)}
        probs[None] = (1 - P) ** c_star
        assert set(counts) <= set(probs), "FED never exceeds c*"
        chi2 += sum((counts[k] - runs * p) ** 2 / (runs * p) for k, p in probs.items())
    assert chi2 <= CHI2_95_DF9, chi2
