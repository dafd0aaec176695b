"""The pytest plugin: a passing and a failing agent, run by pytester, offline (scripted model)."""

from __future__ import annotations

import tomllib
from importlib.metadata import entry_points
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]

INNER = """
import ip_shop as shop


def test_agent_with_retry_survives_503(replan_chaos):
    result = replan_chaos(shop.agent(retry=True), shop.TOOLS, shop.TASKS, modes="P1",
                          target="list_orders", kind="http_503")
    result.assert_exposed()
    result.assert_prr(">=", 0.8)


def test_agent_without_retry(replan_chaos):
    result = replan_chaos(shop.agent(), shop.TOOLS, shop.TASKS, modes="P1",
                          target="list_orders", kind="http_503")
    result.assert_prr(">=", 0.8)
"""


def test_entry_point_is_declared() -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["project"]["entry-points"]["pytest11"] == {"replan": "replan.inplace.pytest_plugin"}


def test_replan_chaos_passes_and_fails(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_inner=INNER)
    installed = any(ep.name == "replan" for ep in entry_points(group="pytest11"))
    args = ["-q", "-p", "no:cacheprovider"]
    if not installed:  # an editable install made before the entry point existed
        args += ["-p", "replan.inplace.pytest_plugin"]
    result = pytester.runpytest_inprocess(*args)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*PRR of 'agent' under P1 = 0.00 [[]0.00, 0.*2 exposed*"])
