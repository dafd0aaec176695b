"""Frontier execution of a plan DAG: dispatch, tool agents, replanner, responder.

A round is one frontier wave. ``dispatch`` sends every ready call node (``Plan.frontier``) to a
``tool_agent`` in one superstep (``langgraph.types.Send``); LangGraph runs those branches
concurrently, and their steps, outputs and world snapshots merge through the state's reducers.
The ``replanner`` then sees the wave's results and writes the updated DAG; executed nodes are
kept as they ran (a change is recorded as a finding). When only the response node is left, the
``respond`` node writes the answer.

Determinism under concurrency (:class:`WaveGate`): the calls of one wave mean what they would
mean run one at a time in plan-node order — the order their Steps are recorded in, and the
order in which a replay re-executes them. A call runs in the state left by the *effectful*
calls (tools with effects) before it in that order, and injected faults are decided in that
order too (:class:`OrderedFaults`: which call is a group's first, which invocation is the
first). Calls of effect-free tools, the common case for sources and processors, overlap fully.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import copy
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.runnables import Runnable, RunnableLambda
from langgraph.errors import GraphBubbleUp
from langgraph.graph import END
from langgraph.types import Command, Send

from replan.core.plan import RESPONSE, ROOT, Plan, PlanNode
from replan.core.task import ReplanPoint
from replan.core.taxonomy import VerdictCode
from replan.core.tools import ToolSpec, canonical_json
from replan.core.trace import Call, EndReason, Finding, Step
from replan.env.checker import abandoned_calls
from replan.env.simulators import check_call
from replan.env.tool_wrapper import RAW_ARGS_KEY
from replan.env.verifier import node_args
from replan.env.world import FaultInjector, World, WorldState
from replan.nodes.config import AgentConfig
from replan.nodes.episode import EpisodeInputs, InputSource
from replan.nodes.events import emit
from replan.nodes.executor import bound_model, text_of
from replan.nodes.llm import ModelCallError, call_model
from replan.nodes.planner import announce, plan_version, request_plan
from replan.nodes.prompts import replanner_messages, responder_messages
from replan.nodes.state import AgentState, Node, ended, finish, out_of_time, world_delta
from replan.nodes.tools import as_tool_call, observation_text, world_session

#: After the running rest of a crashed wave has finished, how long the crashed member still
#: waits before its error reaches LangGraph: LangGraph saves a sibling's result in a done
#: callback just after its node returns, and a run that stops before that loses it. A margin,
#: not a guarantee: a sibling descheduled for longer under CPU load can still lose the race.
CRASH_SETTLE_S = 0.05

#: How long a wave member waits for the members before it (a safety net against a stalled
#: branch; a healthy wave never comes close).
GATE_TIMEOUT_S = 600.0


class GateTimeout(RuntimeError):
    """A wave member waited :data:`GATE_TIMEOUT_S` for other members (a stalled branch)."""


class WaveGate:
    """Orders the calls of one wave (positions 0..n-1 in plan-node order).

    ``state_for(i)`` blocks until every effectful call before ``i`` has finished and returns
    the state ``i`` must run in; ``intercept_turn(i)`` blocks until every call before ``i`` has
    passed its fault decision (or finished without one). With a ``limit``, a member also waits
    until fewer than ``limit`` members before it are unfinished. Waiting only ever targets
    earlier positions, and LangGraph starts a superstep's branches in the order they were sent
    (its pools are FIFO), so the earliest unfinished member can always run: no deadlock. A
    member that crashes waits for the members that have *entered* (started running), never
    for one still queued behind a full pool.
    """

    def __init__(
        self,
        base: WorldState,
        effectful: list[bool],
        limit: int | None = None,
        timeout_s: float | None = None,
    ):
        self.base = base
        self.effectful = effectful
        self.limit = limit
        self.timeout_s = GATE_TIMEOUT_S if timeout_s is None else timeout_s
        self._cond = threading.Condition()
        self._finished: dict[int, WorldState] = {}
        self._intercepted: set[int] = set()
        self._entered: set[int] = set()

    def _wait(self, ready: Any, what: str, position: int) -> None:
        if not self._cond.wait_for(ready, timeout=self.timeout_s):
            raise GateTimeout(
                f"wave member {position} waited {self.timeout_s:g}s for other members ({what})"
            )

    def state_for(self, position: int) -> WorldState:
        """Wait for the effectful calls before ``position`` (and for a free slot when the wave
        has a ``limit``); the state the call at ``position`` runs in."""
        before = [j for j in range(position) if self.effectful[j]]

        def ready() -> bool:
            if not all(j in self._finished for j in before):
                return False
            if self.limit is None:
                return True
            running = sum(1 for j in range(position) if j not in self._finished)
            return running < self.limit

        with self._cond:
            self._wait(ready, "effects and free slots", position)
            return self._finished[before[-1]] if before else self.base

    def intercept_turn(self, position: int) -> None:
        with self._cond:
            self._wait(
                lambda: all(j in self._intercepted for j in range(position)), "faults", position
            )

    def mark_intercepted(self, position: int) -> None:
        with self._cond:
            self._intercepted.add(position)
            self._cond.notify_all()

    def finish(self, position: int, state: WorldState) -> None:
        with self._cond:
            self._intercepted.add(position)
            self._finished[position] = state
            self._cond.notify_all()

    def enter(self, position: int) -> None:
        """``position`` has started running (a crashed member waits for it)."""
        with self._cond:
            self._entered.add(position)

    def wait_for_the_rest(self, position: int) -> None:
        """Block until every member that has entered has finished (``position`` has).

        A member that crashes calls this before its error reaches LangGraph. LangGraph stops
        a superstep at its first failed task and keeps the writes only of tasks already done;
        a sibling still running then may lose its result, and a resumed run calls its tool
        again (a side effect twice). Members still queued (a wave wider than the pool) are not
        waited for: LangGraph cancels them, they never ran, and a wait for them could never end
        while the crashed members hold the pool. Members that enter meanwhile are waited for.
        """
        with self._cond:
            self._wait(
                lambda: all(j in self._finished for j in self._entered if j != position),
                "the running rest of a wave that crashed",
                position,
            )


_SLOT: contextvars.ContextVar[tuple[WaveGate, int] | None] = contextvars.ContextVar(
    "replan_wave_slot", default=None
)


class OrderedFaults:
    """A fault injector wrapper that decides faults in wave order and one call at a time."""

    def __init__(self, inner: FaultInjector):
        self.inner = inner
        self._lock = threading.Lock()

    def intercept(self, spec: ToolSpec, args: Mapping[str, Any]) -> Any:
        slot = _SLOT.get()
        if slot is not None:
            slot[0].intercept_turn(slot[1])
        try:
            with self._lock:
                return self.inner.intercept(spec, args)
        finally:
            if slot is not None:
                slot[0].mark_intercepted(slot[1])


def ordered_world(world: World) -> World:
    """A view of ``world`` (same tools, seed, initial state, same kind of world: a simulated
    one stays simulated) whose faults are wave-ordered."""
    view = copy.copy(world)
    view.state = world.initial_state
    view.faults = OrderedFaults(world.faults) if world.faults is not None else None
    return view


def wave_world(inputs: EpisodeInputs) -> World:
    """The episode's :func:`ordered_world` (one per episode: its fault order is shared by the
    calls of every wave)."""
    return inputs.once("ordered_world", lambda: ordered_world(inputs.world))


class WaveGates:
    """The open gate of each run of one graph, keyed ``<run id>:<round>``.

    Plain objects, never checkpointed. A run keeps only its current round's gate (opening the
    next round drops the previous one), so a wave resumed in the same graph after an
    interruption finds its gate with the finished members marked. A wave resumed by another
    graph instance (another process) finds none: its remaining calls then run against the
    wave's starting state without ordering, and their effects still merge (as deltas).
    """

    def __init__(self) -> None:
        self._gates: dict[str, WaveGate] = {}
        self._lock = threading.Lock()

    def open(self, key: str, gate: WaveGate) -> None:
        run = key.rsplit(":", 1)[0]
        with self._lock:
            for old in [k for k in self._gates if k.rsplit(":", 1)[0] == run]:
                del self._gates[old]
            self._gates[key] = gate

    def get(self, key: str) -> WaveGate | None:
        with self._lock:
            return self._gates.get(key)

    def close(self, run: str) -> None:
        with self._lock:
            for old in [k for k in self._gates if k.rsplit(":", 1)[0] == run]:
                del self._gates[old]


def wave_gates(inputs: EpisodeInputs) -> WaveGates:
    """The episode's wave gates (one set per episode, as when each episode had its own graph)."""
    return inputs.once("wave_gates", WaveGates)


def unfinished(plan: Plan, outputs: Mapping[str, Any]) -> tuple[EndReason, str] | None:
    """``stuck`` when no call is ready but call nodes have not run: they never can (a
    dependency that never ran cleanly and is not in the plan to run)."""
    pending = [n.id for n in plan.call_nodes if n.id not in outputs]
    if not pending:
        return None
    return EndReason.STUCK, f"calls {pending} can never run (their dependencies failed)"


def gave_up(point: ReplanPoint | None, plan: Plan) -> tuple[EndReason, str] | None:
    """``gave_up`` when a run from a replan point reaches its response by dropping pending
    calls of the plan it was given without a replacement (structural, never a phrase list:
    :func:`~replan.env.checker.abandoned_calls`). That is not a recovery: Pass@1 and E5 are
    0. A run that starts fresh has no given plan to owe."""
    if point is None or point.plan is None:
        return None
    given = Plan.parse(point.plan)
    if not isinstance(given, Plan):
        return None
    dropped = abandoned_calls(given, plan, point.outputs)
    if not dropped:
        return None
    return (
        EndReason.GAVE_UP,
        f"the replan gave up: it dropped the pending calls {dropped} with no replacement",
    )


def replans_spent(state: AgentState, cfg: AgentConfig) -> bool:
    """Whether the replanner has written all the plans ``cfg.max_replans`` allows."""
    if cfg.max_replans is None:
        return False
    written = sum(1 for p in state.get("plans") or [] if p.source == "replanner")
    return written >= cfg.max_replans


def make_replan_point_node(inputs: InputSource) -> Node:
    """Node: enter a run that starts at a replan point (``state["replan_point"]``, a
    :class:`~replan.core.task.ReplanPoint`) — the given plan (plan version 0), the clean
    outputs so far, and the last wave as the steps of round ``rounds_executed``, each judged as
    the world judges its calls (:func:`~replan.env.simulators.check_call` against its tools).
    Later waves continue the round numbering. The episode's ``rounds_executed`` /
    ``calls_executed`` (metadata) count what ran before that wave, so the efficiency scores
    count the whole trajectory."""

    def replan_point(state: AgentState) -> dict[str, Any]:
        point = state.get("replan_point")
        if point is None or point.plan is None:
            raise ValueError("the replan-point entry needs a 'replan_point' with a plan")
        tools = inputs().world.tools
        parsed = Plan.parse(point.plan)
        plan = parsed if isinstance(parsed, Plan) else None
        rnd = point.rounds_executed
        wave = point.last_wave
        nodes = plan.nodes_run_by([c.name for c in wave]) if plan else [None] * len(wave)
        steps = []
        for i, (c, node) in enumerate(zip(wave, nodes, strict=True)):
            args = c.arguments if isinstance(c.arguments, dict) else {"args": c.arguments}
            steps.append(
                Step(
                    index=i,
                    round=rnd,
                    call=Call(tool=c.name, args=args, node_id=node),
                    verdict=check_call(
                        tools, c.name, c.arguments if c.arguments is not None else {}
                    ),
                    observation=c.results,
                )
            )
        before = 1 if wave else 0
        return {
            "plan": plan,
            "plan_text": point.plan,
            "outputs": dict(point.outputs),
            # what ran before is what the given plan names (a reroute of it runs again)
            "ran": {n: plan.node(n).tool or "" for n in point.outputs if plan and plan.get(n)},
            "steps": steps,
            "round": rnd,
            "plans": [plan_version(0, rnd, "planner", point.plan, parsed)],
            "meta": {
                "rounds_executed": rnd - before,
                "calls_executed": (point.calls_executed or 0) - len(wave),
            },
        }

    return replan_point


def make_dispatch_node(inputs: InputSource, cfg: AgentConfig) -> Callable[[AgentState], Command]:
    """Node: start a round — send every ready call node to a tool agent, or go respond."""

    def dispatch(state: AgentState) -> Command:
        episode = inputs()
        gates = wave_gates(episode)
        gates.close(state["run_id"])  # the previous wave is over
        if ended(state):
            return Command(goto=END)
        if late := out_of_time(state, cfg):
            return Command(goto=END, update=late)
        plan = state.get("plan")
        if plan is None:  # the first plan did not parse: there is nothing to execute
            last = (state.get("plans") or [None])[-1]
            why = last.parse_error if last is not None else "no plan"
            return Command(goto=END, update=finish(EndReason.UNPARSABLE_PLAN, error=why))
        outputs = done_outputs(plan, state.get("outputs") or {}, state.get("ran") or {})
        wave, tool_less = plan.next_wave(outputs)
        settled: dict[str, Any] = dict.fromkeys(tool_less)
        outputs.update(settled)
        calls = [plan.node(n) for n in wave]
        if not calls:
            why = unfinished(plan, outputs) or gave_up(state.get("replan_point"), plan)
            if why is not None:
                reason, error = why
                return Command(goto=END, update={"outputs": settled, **finish(reason, error=error)})
            return Command(goto="respond", update={"outputs": settled})
        rnd = (state.get("round") or 0) + 1
        if rnd > cfg.max_rounds:
            return Command(
                goto=END,
                update={
                    "outputs": settled,
                    **finish(
                        EndReason.ROUND_BUDGET,
                        error=f"round budget of {cfg.max_rounds} waves spent",
                    ),
                },
            )
        base = state["world"]
        tools = episode.world.tools
        effectful = [bool((s := tools.get(n.tool or "")) and s.effects) for n in calls]
        key = f"{state['run_id']}:{rnd}"
        gates.open(key, WaveGate(base, effectful, cfg.max_parallel))
        emit("round_started", round=rnd, nodes=[n.id for n in calls])
        first = len(state.get("steps") or [])
        sends = [
            Send(
                "tool_agent",
                {
                    "node": n.model_dump(),
                    "round": rnd,
                    "index": first + i,
                    "position": i,
                    "gate": key,
                    "bindings": outputs,
                    "world": base,
                },
            )
            for i, n in enumerate(calls)
        ]
        return Command(goto=sends, update={"round": rnd, "outputs": settled})

    return dispatch


#: LangGraph worker threads a sync run needs for a wave (its default pool is
#: ``min(32, cores + 4)``: 6 on a 2-core runner); tool calls wait on I/O, not on cores.
WAVE_THREADS = 32


def _in_own_thread(fn: Any, *args: Any) -> asyncio.Future:
    """Run ``fn(*args)`` in a new thread (with the caller's context); await its result.

    A wave member may block while earlier members run, so async runs give each member its own
    thread instead of a bounded pool that a wide wave could fill with waiting members.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future = loop.create_future()
    context = contextvars.copy_context()  # keeps LangGraph's config (the stream writer)

    def settle(ok: bool, value: Any) -> None:
        if not future.done():
            (future.set_result if ok else future.set_exception)(value)

    def run() -> None:
        try:
            result = context.run(fn, *args)
        except BaseException as exc:
            loop.call_soon_threadsafe(settle, False, exc)
        else:
            loop.call_soon_threadsafe(settle, True, result)

    threading.Thread(target=run, name="replan-wave", daemon=True).start()
    return future


def _let_the_wave_finish(gate: WaveGate, position: int, state: WorldState) -> None:
    """A crashed member's last act before its error propagates: release the members waiting on
    it, then let the running rest of the wave finish so that LangGraph saves their results (a
    stalled one ends the wait at the gate's timeout, and the crash propagates as it was)."""
    gate.finish(position, state)
    with contextlib.suppress(GateTimeout):
        gate.wait_for_the_rest(position)
        time.sleep(CRASH_SETTLE_S)


def make_tool_agent(inputs: InputSource) -> Runnable:
    """Node (one per frontier node): execute the node's call with its references resolved,
    through the one tool wrapper's session (:func:`replan.nodes.tools.world_session`).

    Sync runs execute in LangGraph's worker pool (sized by ``runnable_config``); async runs
    give each call its own thread rather than asyncio's default executor. Either way LangGraph
    runs at most ``max_concurrency`` members at once (``runnable_config``: ``WAVE_THREADS``);
    the rest of a wider wave waits in its queue.
    """

    def tool_agent(task: dict[str, Any]) -> dict[str, Any]:
        node = PlanNode.model_validate(task["node"])
        rnd, position = int(task["round"]), int(task["position"])
        episode = inputs()
        world = wave_world(episode)
        spec = world.tools.get(node.tool or "")
        if node.positional is not None and not world.binds_positional:
            args = {**node.args, RAW_ARGS_KEY: node.positional}  # the world judges the list
        else:
            args = node_args(node, spec)
        call = Call(tool=node.tool or "", args=args, node_id=node.id, call_id=f"r{rnd}_{node.id}")
        gate = wave_gates(episode).get(task["gate"])
        base: WorldState = task["world"]
        new_state = base
        token = _SLOT.set((gate, position)) if gate is not None else None
        try:
            if gate is not None:
                gate.enter(position)
                base = new_state = gate.state_for(position)
            session = world_session(
                world,
                state=base,
                bindings=task["bindings"],
                first_index=int(task["index"]),
                round=rnd,
            )
            step = session.step(call)
            new_state = session.state
        except Exception as exc:
            if gate is not None and not isinstance(exc, (GateTimeout, GraphBubbleUp)):
                _let_the_wave_finish(gate, position, new_state)
            raise
        finally:
            if gate is not None:
                gate.finish(position, new_state)
                _SLOT.reset(token)  # type: ignore[arg-type]
        update: dict[str, Any] = {"steps": [step]}
        # the node ran when the world accepted the call; whether what the tool returned (an
        # error, a 503, a wrong value) is usable is the replanner's judgement, never the
        # injector's record (which no node reads)
        if step.verdict.ok:
            update["outputs"] = {node.id: step.observation}
            update["ran"] = {node.id: node.tool or ""}
        delta = world_delta(base, new_state)
        if delta is not None:
            update["world"] = delta
        return update

    async def atool_agent(task: dict[str, Any]) -> dict[str, Any]:
        return await _in_own_thread(tool_agent, task)

    return RunnableLambda(tool_agent, afunc=atool_agent, name="tool_agent")


def observation_record(step: Step) -> dict[str, Any]:
    """One line of "results of the last wave" as the replanner reads it."""
    return {
        "node": step.call.node_id,
        "tool": step.call.tool,
        "args": step.call.args,
        "result": step.observation,
    }


def with_status(plan: Plan, outputs: Mapping[str, Any], failed: set[str]) -> Plan:
    """``plan`` with each node's status from execution: done, failed (last try) or pending."""
    nodes = []
    for n in plan.nodes:
        status = "done" if n.id in outputs else "failed" if n.id in failed else "pending"
        if n.id == ROOT and not n.is_call:
            status = "done"
        nodes.append(n if n.status == status else n.model_copy(update={"status": status}))
    return Plan(nodes=nodes, thought=plan.thought)


def done_outputs(
    plan: Plan | None, outputs: Mapping[str, Any], ran: Mapping[str, str]
) -> dict[str, Any]:
    """The outputs of the nodes done *as ``plan`` has them*: a call node counts as done only
    when it ran cleanly with the tool the plan now names (``ran``: node id -> the tool it ran;
    a node rerouted to another tool runs again)."""
    if plan is None:
        return dict(outputs)
    out = {}
    for nid, value in outputs.items():
        node = plan.get(nid)
        if node is None or not node.is_call or ran.get(nid, node.tool) == node.tool:
            out[nid] = value
    return out


def _signature(n: PlanNode) -> str:
    return canonical_json([n.tool, n.args, n.positional])


def reconcile(
    current: Plan, proposed: Plan, outputs: Mapping[str, Any]
) -> tuple[Plan, list[Finding]]:
    """The replanner's plan with executed nodes kept exactly as they ran.

    Executed (done) nodes whose arguments the replan changed (error; only deps or status:
    warning) or that it removed are restored and reported; a done node whose *tool* the replan
    changed is a reroute (a wrongly chosen tool replaced): it is pending and runs again with
    the new tool (warning; :func:`done_outputs` no longer counts its old output). Nodes the
    replan marks done that never ran are reset to pending (warning). Statuses come from
    execution, never from the model. Raises ``ValueError`` if the reconciled plan is not a DAG.
    """
    findings: list[Finding] = []

    def note(node: str, message: str, severity: str = "error") -> None:
        findings.append(
            Finding(
                node=node,
                code=VerdictCode.EXECUTED_NODE_CHANGED,
                message=message,
                severity=severity,  # type: ignore[arg-type]
            )
        )

    done = {nid for nid in outputs if current.get(nid) is not None}
    nodes: list[PlanNode] = []
    for n in proposed.nodes:
        old = current.get(n.id)
        if n.id in done and old is not None and n.is_call and n.tool != old.tool:
            note(
                n.id,
                f"node {n.id} already ran as {old.tool}; the replan reroutes it to {n.tool}: "
                "it runs again",
                "warning",
            )
            nodes.append(n.model_copy(update={"status": "pending"}))
        elif n.id in done and old is not None:
            if _signature(n) != _signature(old):
                note(
                    n.id,
                    f"node {n.id} already ran as {old.tool}({canonical_json(old.args)}); the "
                    f"replan changed it to {n.tool}({canonical_json(n.args)}): kept as it ran",
                )
            elif n.deps != old.deps or n.status != "done":
                what = "its dependencies" if n.deps != old.deps else "its status to not done"
                note(n.id, f"node {n.id} already ran; the replan changed {what}", "warning")
            nodes.append(old.model_copy(update={"status": "done"}))
        elif n.id == ROOT and not n.is_call:
            nodes.append(n.model_copy(update={"status": "done"}))
        else:
            if n.status == "done":
                note(n.id, f"node {n.id} is marked done but never ran: it will run", "warning")
            nodes.append(n.model_copy(update={"status": "pending"}))
    kept = {n.id for n in nodes}
    restored = [current.node(nid) for nid in current.ids if nid in done and nid not in kept]
    for old in restored:
        note(old.id, f"node {old.id} already ran; the replan removed it: kept as it ran")
    if restored:
        at = next((i for i, n in enumerate(nodes) if n.id == RESPONSE), len(nodes))
        nodes[at:at] = [o.model_copy(update={"status": "done"}) for o in restored]
    return Plan.from_nodes(nodes, thought=proposed.thought), findings


def replan_request(
    state: AgentState, current: Plan | None, wave: list[Step]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """What the replanner is shown: the plan with statuses from execution and the last wave's
    records — except for the first replan at a replan point, which sees the instance as it
    is given (its plan as written, statuses included, and its last wave as recorded), as
    ParaRecover's replanner does. A given plan that does not parse is shown as its text."""
    point = state.get("replan_point")
    first = point is not None and not any(p.source == "replanner" for p in state.get("plans") or [])
    if first and point.plan is not None:
        parsed = Plan.parse(point.plan)
        shown = parsed.to_pararecover() if isinstance(parsed, Plan) else {"text": point.plan}
        seen = [{"tool": c.name, "args": c.arguments, "result": c.results} for c in point.last_wave]
        return shown, seen
    assert current is not None  # only a replan point's own plan can fail to parse
    return current.to_pararecover(), [observation_record(s) for s in wave]


def make_replanner_node(inputs: InputSource, cfg: AgentConfig) -> Node:
    """Node: read the last wave's results and write the updated DAG (parse verdict recorded)."""

    def replanner(state: AgentState) -> dict[str, Any]:
        if late := out_of_time(state, cfg):
            return late
        episode = inputs()
        specs = list(episode.world.tools.values())
        rnd = state.get("round") or 0
        given: Plan | None = state.get("plan")
        outputs = done_outputs(given, state.get("outputs") or {}, state.get("ran") or {})
        wave = [s for s in state.get("steps") or [] if s.round == rnd]
        failed_steps = [s for s in wave if s.call.node_id not in outputs]
        if replans_spent(state, cfg):  # no more plans: the waves run on, a failure ends it
            if not failed_steps:
                return {}
            f = failed_steps[0]
            return finish(
                EndReason.CALL_FAILED,
                error=f"{f.call.tool} (node {f.call.node_id}): {f.observation}",
            )
        failed = {s.call.node_id for s in failed_steps}
        current = with_status(given, outputs, failed) if given is not None else None
        shown, seen = replan_request(state, current, wave)
        messages = replanner_messages(
            state["query"], specs, shown, seen, round_index=rnd, hint=cfg.hint
        )
        try:
            text, parsed, reply = request_plan(episode.model, messages, cfg)
        except ModelCallError as exc:
            return finish(EndReason.MODEL_ERROR, error=exc.message)
        pv = plan_version(len(state.get("plans") or []), rnd, "replanner", text, parsed)
        if not isinstance(parsed, Plan):
            announce(pv)
            return {
                "plans": [pv],
                "usage": reply.usage,
                **finish(EndReason.UNPARSABLE_PLAN, error=pv.parse_error),
            }
        try:
            merged, findings = reconcile(current, parsed, outputs) if current else (parsed, [])
        except ValueError as exc:
            pv = pv.model_copy(
                update={"parse_ok": False, "parse_error": f"after keeping executed nodes: {exc}"}
            )
            announce(pv)
            return {
                "plans": [pv],
                "usage": reply.usage,
                **finish(EndReason.UNPARSABLE_PLAN, error=pv.parse_error),
            }
        pv = pv.model_copy(update={"findings": findings})
        announce(pv)
        return {"plans": [pv], "plan": merged, "usage": reply.usage}

    return replanner


def transcript(steps: list[Step]) -> list[BaseMessage]:
    """Executed calls as a ReAct transcript: per round, one AI message and its tool results."""
    out: list[BaseMessage] = []
    for rnd in sorted({s.round for s in steps}):
        wave = [s for s in steps if s.round == rnd]
        calls = [as_tool_call(s.call, s.resolved_args) for s in wave]
        out.append(AIMessage(content="", tool_calls=calls))
        out += [
            ToolMessage(
                content=observation_text(s.observation),
                tool_call_id=c["id"],
                name=s.call.tool,
            )
            for s, c in zip(wave, calls, strict=True)
        ]
    return out


def answer_from_results(plan: Plan, outputs: Mapping[str, Any]) -> str:
    """A plain answer built from the plan's results (the response node's inputs, else all)."""
    response = plan.get(RESPONSE)
    ids = [d for d in (response.deps if response else []) if outputs.get(d) is not None]
    if not ids:
        ids = [n.id for n in plan.nodes if outputs.get(n.id) is not None]
    if not ids:
        return "No results: none of the planned calls succeeded."
    lines = []
    for nid in ids:
        node = plan.get(nid)
        label = f"{nid} ({node.tool})" if node is not None and node.tool else nid
        lines.append(f"- {label}: {observation_text(outputs[nid])}")
    return "Results of the plan:\n" + "\n".join(lines)


def write_answer(
    inputs: InputSource, cfg: AgentConfig, messages: list[BaseMessage]
) -> tuple[str, str | None, dict[str, Any]]:
    """The model's answer (``""`` when it gives none), why it gave none, and the usage update."""
    try:
        reply = call_model(bound_model(inputs()), messages, retry=cfg.retry)
    except ModelCallError as exc:
        return "", exc.message, {}
    update = {"usage": reply.usage}
    if getattr(reply.output, "tool_calls", None):
        return "", "the model called tools instead of answering", update
    answer = text_of(reply.output)
    return answer, None if answer else "the model returned an empty answer", update


def make_responder_node(inputs: InputSource, cfg: AgentConfig) -> Node:
    """Node: the model writes the final answer from the results; if it cannot (or the replan
    budget is spent, :func:`replans_spent`), the plan's results are the answer.
    ``meta.answer_source`` records which (``model``/``plan_results``)."""

    def respond(state: AgentState) -> dict[str, Any]:
        if late := out_of_time(state, cfg):
            return late
        plan: Plan = state["plan"]  # type: ignore[assignment]
        outputs = state.get("outputs") or {}
        messages = responder_messages(
            state["query"], transcript(state.get("steps") or []), plan.to_text(), hint=cfg.hint
        )
        update: dict[str, Any] = {}
        answer, why = "", None
        if replans_spent(state, cfg):
            why = "the replan budget is spent: the plan's results are the answer"
        else:
            answer, why, update = write_answer(inputs, cfg, messages)
        source = "model" if answer else "plan_results"
        if not answer:
            answer = answer_from_results(plan, outputs)
        emit("answer", source=source)
        meta: dict[str, Any] = {"answer_source": source}
        if why:
            meta["answer_fallback_reason"] = why
        return {**update, "meta": meta, **finish(EndReason.ANSWERED, final_answer=answer)}

    return respond


__all__ = [
    "WAVE_THREADS",
    "OrderedFaults",
    "WaveGate",
    "WaveGates",
    "answer_from_results",
    "done_outputs",
    "gave_up",
    "make_dispatch_node",
    "make_replan_point_node",
    "make_replanner_node",
    "make_responder_node",
    "make_tool_agent",
    "observation_record",
    "ordered_world",
    "reconcile",
    "replan_request",
    "replans_spent",
    "transcript",
    "unfinished",
    "wave_gates",
    "wave_world",
    "with_status",
    "write_answer",
]
