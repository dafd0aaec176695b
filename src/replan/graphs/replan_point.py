"""The run from a replan point (ParaRecover): the replanner's reply executed to the response node.

A ParaRecover(-synth) instance starts mid-run, at the replanner: the previous plan and the last
wave's results are given (:func:`replan.suites.pararecover.start_from_task`). This graph is that
run, as a LangGraph graph like every other design::

    START → replanner → parse → wave ⇄ wave → END
                                  ↘ replan ↗            (only with a follow-up ``replan``)

``replanner`` asks the model for the updated plan once (``replay_task``; skipped when the plan is
given, ``continue_plan``); ``parse`` reads it (the parse verdict is the S5 verdict); each
``wave`` runs the frontier of ready call nodes through the one tool wrapper
(:class:`~replan.env.tool_wrapper.FaultSession`, its simulator side: a tool simulator of
:mod:`replan.env.simulators` judges and plays the calls, the session records them as ``Step`` s,
as a ReAct tool node's session does) — a round is one wave; a failed call ends the run unless a
``replan`` callback writes the next plan. The result is a :class:`Continuation` (what E5, Pass@1
and tool-use efficiency need) and, for ``replay_task``, the :class:`~replan.core.trace.Episode`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from pydantic import BaseModel, ConfigDict, Field

from replan.core.plan import Plan
from replan.core.task import Task
from replan.core.tools import ToolSpec
from replan.core.trace import Call, EndReason, Episode, PlanVersion, Step, Usage, Verdict
from replan.env.checker import abandoned_calls
from replan.env.simulators import PendingCall, ToolSimulator, check_call
from replan.env.tool_wrapper import FaultSession, SimulatorCalls
from replan.nodes.llm import model_label
from replan.nodes.prompts import replanner_messages
from replan.suites.pararecover import (
    ReplanStart,
    default_simulator,
    match_last_wave,
    start_from_task,
)


class SimStep(BaseModel):
    round: int
    node: str
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    positional: list[Any] | None = None
    ok: bool
    result: Any = None
    verdict: Verdict | None = None


class Continuation(BaseModel):
    """The run after a replan, to completion or failure (what E5, Pass@1 and tool-use
    efficiency need). ``rounds_total`` is T: rounds already executed + waves run + 1 for the
    response (only when it is reached)."""

    success: bool
    end_reason: Literal[
        "answered", "gave_up", "call_failed", "round_budget", "unparsable_plan", "stuck"
    ]
    rounds_executed: int
    rounds_after: int = 0
    rounds_total: int = 0
    calls_executed: int = 0
    calls_after: int = 0
    optimal_rounds: int | None = None  # G
    min_calls: int | None = None  # c*
    steps: list[SimStep] = Field(default_factory=list)
    replans: int = 0
    error: str | None = None

    @property
    def calls_total(self) -> int:
        return self.calls_executed + self.calls_after


class ReplanState(BaseModel):
    """What a follow-up replanner sees during a continuation (after a failed wave)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    query: str
    tools: list[ToolSpec]
    plan: Plan
    last_wave: list[SimStep]
    round: int


def gives_up(start: ReplanStart, plan: Plan) -> str | None:
    """Why a plan that reached its response gave up instead of recovering, else ``None``.

    Structural, never a phrase list: the replan dropped a pending call node of the previous
    plan without a replacement (:func:`~replan.env.checker.abandoned_calls`), whatever its
    words. Reaching the response that way is not a recovery: the run ends ``gave_up``
    (Pass@1 = 0, E5 = 0).
    """
    if not isinstance(start.plan, Plan):
        return None
    dropped = abandoned_calls(start.plan, plan, start.executed)
    if not dropped:
        return None
    return f"the replan gave up: it dropped the pending calls {dropped} with no replacement"


class ReplanPointState(TypedDict, total=False):
    """The state of the replan-point graph."""

    reply: Plan | str  # the updated plan, or the text it is parsed from
    text: str  # the replanner's reply as written (``replay_task``)
    error: str | None  # the model's failure (``replay_task``)
    model_calls: int
    plan: Plan
    executed: dict[str, Any]  # node id -> output of the nodes that ran cleanly
    ran_tool: dict[str, str]  # node id -> the tool it ran
    steps: list[SimStep]
    records: list[Step]  # the wrapper's record: the given steps, then one per call run here
    rounds: int
    replans: int
    failed_wave: list[SimStep]  # the wave that failed, for the follow-up replanner
    result: Continuation


def build_replan_point(
    start: ReplanStart,
    simulator: ToolSimulator,
    *,
    model: Any = None,
    messages: list[Any] | None = None,
    replan: Callable[[ReplanState], str] | None = None,
    max_rounds: int = 40,
) -> CompiledStateGraph:
    """The replan-point run from ``start`` as a compiled graph (see the module docstring).

    With ``model`` (and its ``messages``) the run begins at the replanner; without, the input's
    ``reply`` is the plan. Input: :func:`initial_state`. The run fails when T would pass
    ``max_rounds`` (40, ParaRecover Appendix H).
    """
    tools = {t.name: t for t in start.tools}
    base = Continuation(
        success=False,
        end_reason="unparsable_plan",
        rounds_executed=start.rounds_executed,
        calls_executed=start.calls_executed,
        optimal_rounds=start.optimal_rounds,
        min_calls=start.min_calls,
    )

    def finish(
        end_reason: str,
        rounds: int,
        steps: list[SimStep],
        replans: int,
        **update: Any,
    ) -> Continuation:
        return base.model_copy(
            update={
                "end_reason": end_reason,
                "rounds_after": rounds,
                "calls_after": len(steps),
                "steps": steps,
                "replans": replans,
                **update,
            }
        )

    def done_ids(plan: Plan, executed: Mapping[str, Any], ran_tool: Mapping[str, str]) -> set[str]:
        return {n.id for n in plan.call_nodes if n.id in executed and ran_tool.get(n.id) == n.tool}

    def replanner(state: ReplanPointState) -> ReplanPointState:
        try:
            reply = model.invoke(messages)
        except Exception as exc:  # the model failed: recorded, not raised
            return {"text": "", "error": f"{type(exc).__name__}: {exc}"}
        text = str(reply.content)
        parsed = Plan.parse(text)
        return {
            "model_calls": 1,
            "text": text,
            "reply": parsed if isinstance(parsed, Plan) else text,
        }

    def parse(state: ReplanPointState) -> ReplanPointState:
        reply = state["reply"]
        plan = reply if isinstance(reply, Plan) else Plan.parse(reply)
        if not isinstance(plan, Plan):
            return {"result": base.model_copy(update={"error": plan.reason})}
        return {"plan": plan}

    def wave(state: ReplanPointState) -> ReplanPointState:
        plan, rounds, replans = state["plan"], state["rounds"], state["replans"]
        executed, ran_tool = dict(state["executed"]), dict(state["ran_tool"])
        steps, records = list(state["steps"]), list(state.get("records", []))
        done = done_ids(plan, executed, ran_tool)
        frontier, _ = plan.next_wave(done)
        if not frontier:
            pending = [n.id for n in plan.call_nodes if n.id not in done]
            if pending:
                why = f"calls {pending} can never run (their dependencies failed)"
                return {"result": finish("stuck", rounds, steps, replans, error=why)}
            total = start.rounds_executed + rounds + 1
            ok = total <= max_rounds
            quit_why = gives_up(start, plan)
            end = "round_budget" if not ok else "gave_up" if quit_why else "answered"
            return {
                "result": finish(
                    end,
                    rounds,
                    steps,
                    replans,
                    success=ok and quit_why is None,
                    error=quit_why,
                    rounds_total=total,
                )
            }
        if start.rounds_executed + rounds + 1 >= max_rounds:
            return {"result": finish("round_budget", rounds, steps, replans)}
        rounds += 1
        calls = [
            PendingCall(
                node=i,
                tool=plan.node(i).tool or "",
                args=dict(plan.node(i).args),
                positional=plan.node(i).positional,
                desc=plan.node(i).desc,
            )
            for i in frontier
        ]
        # the replan point's wave is round 1 of the record; the waves run here are 2, 3, ...
        session = FaultSession(
            simulator=SimulatorCalls(simulator, tools), first_index=len(records), round=1 + rounds
        )
        results = session.wave(calls, executed)
        records.extend(session.steps)
        this_wave = []
        for c, r in zip(calls, results, strict=True):
            this_wave.append(
                SimStep(
                    round=rounds,
                    node=c.node,
                    tool=c.tool,
                    args=c.args,
                    positional=c.positional,
                    ok=r.ok,
                    result=r.result,
                    verdict=r.verdict,
                )
            )
            if r.ok:
                executed[c.node] = r.result
                ran_tool[c.node] = c.tool
        steps.extend(this_wave)
        failed = [s for s in this_wave if not s.ok]
        update: ReplanPointState = {
            "executed": executed,
            "ran_tool": ran_tool,
            "steps": steps,
            "records": records,
            "rounds": rounds,
            "failed_wave": this_wave if failed else [],
        }
        if failed and replan is None:
            f = failed[0]
            why = f"{f.tool} (node {f.node}): {f.result}"
            update["result"] = finish("call_failed", rounds, steps, replans, error=why)
        return update

    def follow_up(state: ReplanPointState) -> ReplanPointState:
        assert replan is not None  # routed here only with a follow-up replanner
        plan, executed, ran_tool = state["plan"], state["executed"], state["ran_tool"]
        done = done_ids(plan, executed, ran_tool)
        status = {n.id: ("done" if n.id in done else "pending") for n in plan.call_nodes}
        shown = Plan(
            nodes=[n.model_copy(update={"status": status.get(n.id, n.status)}) for n in plan.nodes],
            thought=plan.thought,
        )
        text = replan(
            ReplanState(
                query=start.query,
                tools=start.tools,
                plan=shown,
                last_wave=state["failed_wave"],
                round=state["rounds"],
            )
        )
        replans = state["replans"] + 1
        nxt = Plan.parse(text)
        if not isinstance(nxt, Plan):
            steps = state["steps"]
            result = finish("unparsable_plan", state["rounds"], steps, replans, error=nxt.reason)
            return {"replans": replans, "result": result}
        return {"plan": nxt, "replans": replans, "failed_wave": []}

    def after_wave(state: ReplanPointState) -> str:
        if state.get("result") is not None:
            return END
        return "replan" if state.get("failed_wave") else "wave"

    def ended_or(nxt: str) -> Callable[[ReplanPointState], str]:
        return lambda state: END if state.get("result") is not None or state.get("error") else nxt

    builder = StateGraph(ReplanPointState)
    builder.add_node("parse", parse)
    builder.add_node("wave", wave)
    if model is not None:
        builder.add_node("replanner", replanner)
        builder.add_edge(START, "replanner")
        builder.add_conditional_edges("replanner", ended_or("parse"), ["parse", END])
    else:
        builder.add_edge(START, "parse")
    builder.add_conditional_edges("parse", ended_or("wave"), ["wave", END])
    if replan is not None:
        builder.add_node("replan", follow_up)
        builder.add_conditional_edges("wave", after_wave, ["wave", "replan", END])
        builder.add_conditional_edges("replan", ended_or("wave"), ["wave", END])
    else:
        builder.add_conditional_edges("wave", after_wave, ["wave", END])
    return builder.compile(name="replan_point")


def initial_state(
    start: ReplanStart, reply: Plan | str | None = None, recorded: Iterable[Step] = ()
) -> ReplanPointState:
    """The graph's input: nothing run after the replan point yet (``recorded``: the steps the
    record starts with, the replan point's wave for ``replay_task``)."""
    state: ReplanPointState = {
        "executed": dict(start.executed),
        "ran_tool": dict(start.executed_tools),
        "steps": [],
        "records": list(recorded),
        "rounds": 0,
        "replans": 0,
        "failed_wave": [],
        "model_calls": 0,
        "error": None,
    }
    if reply is not None:
        state["reply"] = reply
    return state


def _invoke(graph: CompiledStateGraph, state: ReplanPointState, max_rounds: int) -> Any:
    # a wave or a follow-up replan is one superstep each; waves are bounded by ``max_rounds``
    return graph.invoke(state, {"recursion_limit": 2 * max_rounds + 10})


def continue_plan(
    start: ReplanStart,
    new_plan: Plan | str,
    simulator: ToolSimulator | None = None,
    *,
    replan: Callable[[ReplanState], str] | None = None,
    max_rounds: int = 40,
) -> Continuation:
    """Execute the replanner's plan from ``start`` to the response node.

    Waves run frontier by frontier through ``simulator`` (default:
    :func:`~replan.suites.pararecover.default_simulator`). A failed call ends the run
    (``call_failed``) unless ``replan(state: ReplanState) -> str`` is given, which then writes
    the next plan. The run fails when T would pass ``max_rounds`` (40, ParaRecover Appendix H).
    """
    graph = build_replan_point(
        start, simulator or default_simulator(start), replan=replan, max_rounds=max_rounds
    )
    return _invoke(graph, initial_state(start, new_plan), max_rounds)["result"]


def _step_verdict(tools: Mapping[str, ToolSpec], name: str, args: Any) -> Verdict:
    """The agent's side of a recorded call: :func:`check_call` against the instance's tool
    list. A result that failed for another reason (a timeout, an empty response) is the tool's
    fault, not the agent's, and keeps an ``ok`` verdict."""
    return check_call(tools, name, args if args is not None else {})


def replay_task(
    task: Task,
    model: Any,
    *,
    design: str = "replanner_loop",
    seed: int = 0,
    hint: bool = False,
    simulator: ToolSimulator | None = None,
) -> Episode:
    """Run the replanner once on a ParaRecover(-synth) task and continue to the end.

    The model gets the replanner request (the previous plan and the last wave's results); its
    reply is parsed (the parse verdict is the S5 verdict) and executed wave by wave with the
    task's tool simulator. A failed call after the replan ends the run: the follow-up replans of
    a long rollout are not simulated. Steps hold the recorded last wave (round 1) and the calls
    after the replan (rounds 2, 3, ...), all one run of the replan-point graph; ``metadata`` carries the rounds and calls executed
    before the recorded wave, so E5 and tool-use efficiency count the whole trajectory.
    """
    start = start_from_task(task)
    tools = {t.name: t for t in start.tools}
    plan_json = (
        start.plan.to_pararecover() if isinstance(start.plan, Plan) else {"text": start.plan_text}
    )
    messages = replanner_messages(
        start.query,
        start.tools,
        plan_json,
        start.observations(),
        round_index=start.rounds_executed,
        hint=hint,
    )
    nodes = match_last_wave(start.plan, start.last_wave) if isinstance(start.plan, Plan) else {}
    node_of = {id(c): n for n, c in nodes.items()}
    recorded: list[Step] = []
    for c in start.last_wave:
        args = c.arguments if isinstance(c.arguments, dict) else {"args": c.arguments}
        recorded.append(
            Step(
                index=len(recorded),
                round=1,
                call=Call(tool=c.name, args=args, node_id=node_of.get(id(c))),
                verdict=_step_verdict(tools, c.name, c.arguments),
                observation=c.results,
            )
        )
    graph = build_replan_point(
        start, simulator or default_simulator(start, seed), model=model, messages=messages
    )
    final = _invoke(graph, initial_state(start, recorded=recorded), 40)
    text, error = final.get("text", ""), final.get("error")
    usage = Usage(model_calls=final.get("model_calls", 0))
    # the replan point's wave, then every call the graph ran, as the tool wrapper recorded them
    steps: list[Step] = list(final["records"])
    parsed = Plan.parse(text)
    plans = [
        PlanVersion(
            index=0,
            round=1,
            source="planner",
            text=start.plan_text,
            thought=start.plan.thought if isinstance(start.plan, Plan) else "",
            parse_ok=isinstance(start.plan, Plan),
        ),
        PlanVersion(
            index=1,
            round=2,
            source="replanner",
            text=text,
            thought=parsed.thought if isinstance(parsed, Plan) else getattr(parsed, "thought", ""),
            plan=parsed.to_pararecover() if isinstance(parsed, Plan) else None,
            parse_ok=isinstance(parsed, Plan),
            parse_error=None if isinstance(parsed, Plan) else parsed.reason,
        ),
    ]
    if error is not None:
        end, cont = EndReason.MODEL_ERROR, None
    else:
        cont = final["result"]
        end = EndReason(cont.end_reason)  # the real end reason, never folded into gave_up
        error = cont.error
    wave = 1 if start.last_wave else 0
    usage.tool_calls = len(steps)
    return Episode(
        episode_id=f"{task.task_id}|{design}|{seed}",
        task_id=task.task_id,
        suite=task.suite,
        design=design,
        model=model_label(model),
        seed=seed,
        mode=task.mode,
        query=task.query,
        steps=steps,
        plans=plans,
        final_answer=("completed the plan" if cont is not None and cont.success else None),
        end_reason=end,
        error=error,
        success=bool(cont is not None and cont.success),
        usage=usage,
        metadata={
            "rounds_executed": start.rounds_executed - wave,
            "calls_executed": start.calls_executed - len(start.last_wave),
            "continuation": cont.end_reason if cont is not None else None,
        },
    )
