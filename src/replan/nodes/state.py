"""The graph state every design shares, its reducers, and the bookkeeping nodes.

The state *is* the trace: steps, plan versions, usage and the world state live in LangGraph
channels, so a checkpointer captures everything an Episode needs and an interrupted episode
resumes from its last superstep with its trace intact. The World object only holds the tools,
the seed and the fault injector; nodes execute calls against the state's ``world`` snapshot
(``World.execute(..., state=..., commit=False)``) and return the new snapshot.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages

from replan.core.plan import Plan
from replan.core.task import ReplanPoint
from replan.core.trace import EndReason, PlanVersion, Step, Usage
from replan.env.world import WorldState
from replan.nodes.config import AgentConfig
from replan.nodes.episode import InputSource
from replan.nodes.events import emit


def merge_steps(left: list[Step] | None, right: list[Step] | None) -> list[Step]:
    """Concatenate and order by step index (parallel branches of a wave arrive in any order).

    A step whose index is already present replaces the old one, so re-running a branch after
    an interruption never records a call twice.
    """
    by_index = {s.index: s for s in left or []}
    for s in right or []:
        by_index[s.index] = s
    return [by_index[i] for i in sorted(by_index)]


def merge_plans(
    left: list[PlanVersion] | None, right: list[PlanVersion] | None
) -> list[PlanVersion]:
    """Plan versions by index; a later write of the same index (verifier findings) replaces."""
    by_index = {p.index: p for p in left or []}
    for p in right or []:
        by_index[p.index] = p
    return [by_index[i] for i in sorted(by_index)]


def add_usage(left: Usage | None, right: Usage | None) -> Usage:
    """Sum two usage records."""
    a, b = left or Usage(), right or Usage()
    return Usage(
        model_calls=a.model_calls + b.model_calls,
        input_tokens=a.input_tokens + b.input_tokens,
        output_tokens=a.output_tokens + b.output_tokens,
        tool_calls=a.tool_calls + b.tool_calls,
        wall_time_s=a.wall_time_s + b.wall_time_s,
    )


@dataclass(frozen=True)
class WorldDelta:
    """The records one call changed (``None``: deleted) and the versions it added.

    Parallel tool agents write deltas, not whole states: LangGraph applies a superstep's writes
    in the order the branches were sent (plan-node order), so the deltas of a wave compose into
    exactly the state a one-at-a-time run reaches — and no branch's effects can be lost, even
    when a wave resumes after an interruption with some branches already done.
    """

    changes: Mapping[str, Mapping[str, Mapping[str, Any] | None]]
    versions: int = 1


def world_delta(base: WorldState, new: WorldState) -> WorldDelta | None:
    """What ``new`` changed relative to ``base`` (``None`` when nothing changed)."""
    if new is base or new.version == base.version:
        return None
    changes: dict[str, dict[str, Mapping[str, Any] | None]] = {}
    for col in {*base.collections, *new.collections}:
        old_recs = base.collections.get(col, {})
        new_recs = new.collections.get(col, {})
        if old_recs is new_recs:
            continue
        diff: dict[str, Mapping[str, Any] | None] = {
            k: v for k, v in new_recs.items() if k not in old_recs or old_recs[k] != v
        }
        diff.update({k: None for k in old_recs if k not in new_recs})
        if diff:
            changes[col] = diff
    return WorldDelta(changes=changes, versions=new.version - base.version)


def apply_delta(state: WorldState, delta: WorldDelta) -> WorldState:
    cols: dict[str, Mapping[str, Mapping[str, Any]]] = dict(state.collections)
    for col, diff in delta.changes.items():
        recs = dict(cols.get(col, {}))
        for key, rec in diff.items():
            if rec is None:
                recs.pop(key, None)
            else:
                recs[key] = rec
        cols[col] = recs
    return WorldState(collections=cols, version=state.version + delta.versions)


def merge_world(left: WorldState | None, right: WorldState | WorldDelta | None) -> WorldState:
    """A whole state replaces (graph input, the sequential ReAct tool node); a delta applies."""
    base = left if left is not None else WorldState()
    if right is None:
        return base
    if isinstance(right, WorldDelta):
        return apply_delta(base, right)
    return right


def merge_dict(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    return {**(left or {}), **(right or {})}


class AgentState(TypedDict, total=False):
    """The state of every agent graph (designs use the fields they need)."""

    query: str
    run_id: str
    started_at: float
    world: Annotated[WorldState | WorldDelta, merge_world]
    steps: Annotated[list[Step], merge_steps]
    plans: Annotated[list[PlanVersion], merge_plans]
    usage: Annotated[Usage, add_usage]
    round: int
    end_reason: EndReason | None
    error: str | None
    final_answer: str | None
    meta: Annotated[dict[str, Any], merge_dict]
    # ReAct executor
    messages: Annotated[list[AnyMessage], add_messages]
    plan_text: str | None
    # planners
    plan: Plan | None
    plan_messages: list[AnyMessage]
    # replanner loop: outputs of done plan nodes (the bindings of later references)
    outputs: Annotated[dict[str, Any], merge_dict]
    ran: Annotated[dict[str, str], merge_dict]  # node id -> the tool it ran cleanly
    # a run that starts mid-run, at the replanner (input; the loop enters there)
    replan_point: ReplanPoint | None


#: A node function of an agent graph: the state in, a state update out.
Node = Callable[[AgentState], dict[str, Any]]


def make_start_node(inputs: InputSource) -> Node:
    """Node: stamp the run (id, start time) unless a resumed run already has them; without a
    ``world`` in the input, the run starts from the episode world's current state."""

    def start(state: AgentState) -> dict[str, Any]:
        if not state.get("query"):
            raise ValueError("agent graph input needs a 'query' (the user's request)")
        out: dict[str, Any] = {}
        if not state.get("run_id"):
            out["run_id"] = uuid.uuid4().hex
        if not state.get("started_at"):
            out["started_at"] = time.time()
        if "world" not in state:
            out["world"] = inputs().world.state
        return out

    return start


def ended(state: AgentState) -> bool:
    """Whether an earlier node already ended the episode."""
    return state.get("end_reason") is not None


def out_of_time(state: AgentState, cfg: AgentConfig) -> dict[str, Any] | None:
    """The update that ends the episode when its wall-time budget is spent, else ``None``."""
    if cfg.max_wall_s is None:
        return None
    elapsed = time.time() - (state.get("started_at") or time.time())
    if elapsed <= cfg.max_wall_s:
        return None
    return finish(
        EndReason.TIMEOUT, error=f"wall-time budget of {cfg.max_wall_s:g}s spent ({elapsed:.1f}s)"
    )


def finish(reason: EndReason, *, error: str | None = None, **update: Any) -> dict[str, Any]:
    """The state update that ends an episode, announced on the custom stream."""
    emit("end", reason=reason.value, error=error)
    return {"end_reason": reason, "error": error, **update}


__all__ = [
    "AgentState",
    "Node",
    "WorldDelta",
    "add_usage",
    "apply_delta",
    "ended",
    "finish",
    "make_start_node",
    "merge_dict",
    "merge_plans",
    "merge_steps",
    "merge_world",
    "out_of_time",
    "world_delta",
]
