"""The ``replan`` pytest plugin (entry point ``pytest11``): fault-test your agent in CI.

    def test_agent_survives_rate_limits(replan_chaos):
        result = replan_chaos(make_agent, tools, tasks, modes="P1")
        result.assert_exposed()          # every fault fired: the test tested something
        result.assert_prr(">=", 0.8)     # and the agent recovered from enough of them

``replan_chaos(agent_or_factory, tools, tasks, modes="P1", **options)`` is
:func:`replan.evaluate_in_place` with the results store under the test's ``tmp_path`` and no
table printed (the assertion messages carry the numbers); it returns
:class:`~replan.inplace.evaluate.InPlaceResults`. Offline with
:class:`~replan.inplace.scripted.ScriptedToolModel` (no key, no network).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest


def make_chaos(out_dir: Path) -> Callable[..., Any]:
    """The fixture's function, writing stores under ``out_dir`` (one per call)."""
    calls = {"n": 0}

    def replan_chaos(
        agent_or_factory: Any, tools: Any, tasks: Any, modes: Any = "P1", **options: Any
    ) -> Any:
        from replan.inplace.evaluate import evaluate_in_place

        calls["n"] += 1
        options.setdefault("out", out_dir / f"replan-chaos-{calls['n']}")
        options.setdefault("show", False)
        options.setdefault("n_boot", 500)
        return evaluate_in_place(agent_or_factory, tools, tasks, modes=modes, **options)

    return replan_chaos


@pytest.fixture
def replan_chaos(tmp_path: Path) -> Callable[..., Any]:
    """Run your agent on your tasks under fault modes; assert on PRR / TSR / exposure."""
    return make_chaos(tmp_path)
