"""Replay an Episode against a task's world: verdicts per call, FED, and the final state.

Works on traces from any agent, ours or a user's: only the recorded calls, their node ids and
observations are needed. A call is *executable* iff its verdict is ``ok`` in the state produced
by the executable calls before it. Injected faults are not the agent's invalid calls: a call
recorded as meeting an explicit fault (404, timeout, ...) is executable but changed no state,
exactly as when it ran. References bind to what the agent observed (a corrupted value stays
corrupted), so replay reproduces what the agent's calls really meant.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from replan.core.trace import Episode, Verdict
from replan.env.world import World, WorldState


@dataclass
class Replay:
    verdicts: list[Verdict] = field(default_factory=list)
    final_state: WorldState = field(default_factory=WorldState)
    outputs: list[Any] = field(default_factory=list)  # clean outputs (None where not executable)

    @property
    def n(self) -> int:
        return len(self.verdicts)

    @property
    def fed(self) -> int | None:
        """First error depth: 1-based index of the first non-executable call; None if clean."""
        for i, v in enumerate(self.verdicts, start=1):
            if not v.ok:
                return i
        return None

    @property
    def clean(self) -> bool:
        return self.fed is None


def replay(episode: Episode, world: World) -> Replay:
    """Replay ``episode``'s calls from ``world``'s initial state (the world is not changed).

    Calls of one round (a parallel wave) ran together: a call sees the outputs of earlier
    rounds only, as when it ran, so a reference to a node of its own wave is unbound. A trace
    without round information (every step in round 0) is replayed strictly in order.
    """
    state = world.initial_state
    bindings: dict[str, Any] = {}
    waves = any(s.round != 0 for s in episode.steps)
    pending: dict[str, Any] = {}  # outputs of the current round, visible from the next one
    current = episode.steps[0].round if episode.steps else 0
    out = Replay(final_state=state)
    for step in episode.steps:
        if waves and step.round != current:
            bindings.update(pending)
            pending, current = {}, step.round
        pert = step.perturbation
        if pert is not None and pert.explicit:
            verdict, _ = world.check(step.call, bindings, state)
            output = None
        else:
            res = world.execute(step.call, bindings, state=state, commit=False)
            verdict, output = res.verdict, res.output
            if res.ok:
                state = res.state
        out.verdicts.append(verdict)
        out.outputs.append(output)
        if verdict.ok and step.call.node_id:
            (pending if waves else bindings)[step.call.node_id] = step.observation
    out.final_state = state
    return out
