"""Running a plan against a world, wave by wave."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from replan.core.leaves import scalar_leaves
from replan.core.plan import Plan
from replan.core.trace import Call
from replan.env.waves import run_wave
from replan.env.world import ExecResult, World


# ---------------------------------------------------------------------------------------------
# execution of a plan against a world
@dataclass
class PlanExecution:
    steps: list[tuple[str, ExecResult]] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    failed: str | None = None
    error: str | None = None
    perturbed: list[str] = field(default_factory=list)

    @property
    def calls(self) -> int:
        return len(self.steps)


def execute_plan(
    plan: Plan,
    world: World,
    *,
    done: Mapping[str, Any] | None = None,
    retry_perturbed: bool = False,
    stop_on_perturbation: bool = False,
) -> PlanExecution:
    """Run ``plan``'s pending call nodes wave by wave (:func:`replan.env.waves.run_wave`; ids in
    order within a wave).

    ``done`` maps node ids already executed to their outputs (they are skipped and bound).
    With ``retry_perturbed`` a call whose response was perturbed is issued once more (the
    transient-fault recovery); with ``stop_on_perturbation`` execution stops right after a
    perturbed response. Stops at the first call that is not ``ok``.
    """
    out = PlanExecution(outputs=dict(done or {}))
    ran = set(out.outputs)
    stopped = False

    def visit(nid: str, call: Call, res: ExecResult, again: Callable[[], ExecResult]) -> bool:
        nonlocal stopped
        out.steps.append((nid, res))
        if not res.ok:
            out.failed, out.error = nid, res.verdict.message
            return False
        if res.perturbation is not None:
            out.perturbed.append(nid)
            if stop_on_perturbation:
                out.outputs[nid] = res.observation
                stopped = True
                return False
            if retry_perturbed:
                res = again()
                out.steps.append((nid, res))
                if not res.ok:
                    out.failed, out.error = nid, res.verdict.message
                    return False
        out.outputs[nid] = res.observation
        return True

    while True:
        wave = run_wave(plan, world, ran, out.outputs, visit)
        if not wave.calls or stopped or out.failed is not None:
            return out
        ran.update(wave.settled)
        ran.update(wave.calls)


def answer_from_outputs(outputs: Mapping[str, Any], node_ids: Iterable[str] | None = None) -> str:
    """A plain answer stating every scalar field of the given outputs (for tests and demos)."""
    parts = []
    for nid in node_ids if node_ids is not None else outputs:
        for path, v in scalar_leaves(outputs.get(nid)):
            parts.append(f"{'.'.join(path)}: {v}")
    return "Done. " + "; ".join(parts)
