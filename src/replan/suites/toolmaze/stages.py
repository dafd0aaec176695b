"""The records the ToolMaze generator passes between its stages, public so each stage is a
module of its own: :class:`PathRun` (a path executed in a clean world, what
:mod:`~replan.suites.toolmaze.derive_checker` derives the checker from) and :class:`BaseTask`
(a generated task before it is crossed with the perturbation modes)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from replan.core.plan import Plan
from replan.core.task import Checker
from replan.env.world import WorldState
from replan.suites.toolmaze.assembly import Unit


@dataclass
class PathRun:
    """One path executed in a clean world."""

    plan: Plan
    tools: list[str]
    outputs: dict[str, Any]
    state: WorldState
    ok: bool
    error: str | None = None
    failed: str | None = None  # node id of the failing call
    failed_param: str | None = None


@dataclass
class BaseTask:
    """A task before it is crossed with the perturbation modes."""

    base_id: str
    level: str
    index: int
    domain: str
    query: str
    tools: list[str]
    world_seed: int
    units: list[Unit]
    paths: list[dict[str, Any]]  # {"tools", "plan", "calls", "rounds", "choice"}
    runs: list[PathRun]
    checker: Checker
    facts: list[tuple[Any, str]]  # (value, 'tool:field')
    victim_unit: int
    victim_node: str  # s* node id of the victim (C1) or of the group's first s* tool
    victim_tools: list[str]
    slot: str | None
    literals: dict[str, Any]
    victim_field: str | None = None  # the s* victim's output field an implicit fault corrupts
    #: goal-level queries: what the query asks for ([kind, is an action]) and the kinds it gives
    goal: dict[str, Any] | None = None
