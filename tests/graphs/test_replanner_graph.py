"""The planner – tool agent – replanner loop: frontier waves, replans, budgets, determinism."""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from replan.core.plan import Plan, PlanNode
from replan.core.taxonomy import VerdictCode
from replan.core.trace import EndReason, Perturbation
from replan.env import task_world
from replan.env.replay import replay
from replan.env.world import WorldState
from replan.graphs import (
    AgentConfig,
    arun_episode,
    build_graph,
    graph_input,
    run_episode,
    runnable_config,
)
from replan.nodes import frontier
from replan.nodes.frontier import (
    _SLOT,
    OrderedFaults,
    WaveGate,
    done_outputs,
    reconcile,
    unfinished,
)
from replan.nodes.prompts import request_kind


def loop_model(kit, plan: list[dict], replans: list[Any] | None = None, answer: Any = "done"):
    """Plans ``plan``; each replan pops the next of ``replans`` (default: ``plan`` again)."""
    queue = list(replans or [])

    def reply(msgs):
        kind = request_kind(msgs)
        if kind == "plan":
            return kit.plan_text(plan)
        if kind == "replan":
            return queue.pop(0) if queue else kit.plan_text(plan)
        return answer(msgs) if callable(answer) else answer

    return kit.ScriptedChatModel(fn=reply)


def test_clean_travel_plan_runs_in_depth_rounds(kit, travel_task):
    def answer(msgs):
        return kit.travel_react_policy(msgs)  # reads the booking from the transcript

    model = loop_model(kit, kit.TRAVEL_PLAN, answer=answer)
    ep = run_episode("replanner_loop", model, travel_task)
    depth = Plan.parse(kit.plan_text(kit.TRAVEL_PLAN)).depth
    assert depth == 3
    assert ep.end_reason is EndReason.ANSWERED and ep.success is True
    assert ep.rounds == depth and [s.round for s in ep.steps] == [1, 2, 3]
    assert [s.call.node_id for s in ep.steps] == ["1", "2", "3"]
    assert model.kinds() == ["plan", "replan", "replan", "replan", "act"]
    assert [p.source for p in ep.plans] == ["planner", "replanner", "replanner", "replanner"]
    assert [p.round for p in ep.plans] == [0, 1, 2, 3]
    assert ep.metadata["answer_source"] == "model"
    # references were resolved from the outputs of done nodes
    quote = ep.steps[1]
    assert quote.call.args == {"flight_id": "${1.cheapest_flight_id}"}
    assert quote.resolved_args["flight_id"] == ep.steps[0].observation["cheapest_flight_id"]
    # the replanner saw the wave's results and the plan with statuses from execution
    replan_request = model.received[1][-1].content
    assert '"node": "1"' in replan_request and "cheapest_flight_id" in replan_request
    assert '"id": "1"' in replan_request and '"status": true' in replan_request
    # the responder got the executed calls as a ReAct transcript
    respond = model.received[-1]
    assert [m.type for m in respond[2:]] == ["ai", "tool", "ai", "tool", "ai", "tool"]
    assert all(v.ok for v in replay(ep, task_world(travel_task)).verdicts)


def _wide(kit, seconds: list[float], log):
    tools = [kit.sleeper(f"t{i}", s, log) for i, s in enumerate(seconds)]
    plan = [kit.ROOT] + [kit.node(str(i + 1), f"t{i}", {"x": i}) for i in range(len(seconds))]
    plan += [kit.response(*[str(i + 1) for i in range(len(seconds))])]
    return tools, plan


def test_a_width_three_wave_runs_in_one_superstep(kit):
    log = kit.CallLog()
    tools, plan = _wide(kit, [0.3, 0.3, 0.3], log)
    world = kit.custom_world(tools)
    graph = build_graph("replanner_loop", loop_model(kit, plan), world)
    steps_of_tool_agent = [
        ev["step"]
        for ev in graph.stream(
            graph_input("q", world), runnable_config(AgentConfig()), stream_mode="debug"
        )
        if ev["type"] == "task" and ev["payload"]["name"] == "tool_agent"
    ]
    assert len(steps_of_tool_agent) == 3 and len(set(steps_of_tool_agent)) == 1
    starts = [c[1] for c in log.calls]
    ends = [c[2] for c in log.calls]
    assert max(starts) < min(ends)  # all three calls were in flight at the same time


def test_steps_of_a_wave_are_ordered_by_plan_node_id(kit):
    log = kit.CallLog()
    # node 1 is the slowest, node 10 the fastest: completion order is the reverse of id order
    tools = [
        kit.sleeper("slow", 0.3, log),
        kit.sleeper("mid", 0.15, log),
        kit.sleeper("fast", 0, log),
    ]
    plan = [
        kit.ROOT,
        kit.node("10", "fast", {"x": 10}),
        kit.node("1", "slow", {"x": 1}),
        kit.node("2", "mid", {"x": 2}),
        kit.response("1", "2", "10"),
    ]
    ep = run_episode(
        "replanner_loop",
        loop_model(kit, plan),
        kit.custom_task(tools),
        world=kit.custom_world(tools),
    )
    assert [c[0] for c in sorted(log.calls, key=lambda c: c[2])] == ["fast", "mid", "slow"]
    assert [s.call.node_id for s in ep.steps] == ["1", "2", "10"]
    assert [s.index for s in ep.steps] == [0, 1, 2]


def test_round_count_equals_depth_on_a_diamond(kit):
    tools = [kit.sleeper(f"t{i}", 0) for i in range(4)]
    plan = [
        kit.ROOT,
        kit.node("1", "t0", {"x": 1}),
        kit.node("2", "t1", {"x": "${1.value}"}, deps=["1"]),
        kit.node("3", "t2", {"x": "${1.value}"}, deps=["1"]),
        kit.node("4", "t3", {"x": "${3.value}"}, deps=["2", "3"]),
        kit.response("4"),
    ]
    ep = run_episode(
        "replanner_loop",
        loop_model(kit, plan),
        kit.custom_task(tools),
        world=kit.custom_world(tools),
    )
    assert Plan.parse(kit.plan_text(plan)).depth == 3  # 1 | 2,3 | 4
    assert ep.rounds == 3 and [s.round for s in ep.steps] == [1, 2, 2, 3]
    assert [s.observation["value"] for s in ep.steps] == [2, 3, 3, 4]  # x+1 along the chain


def test_effectful_calls_in_one_wave_are_deterministic_and_replayable(kit):
    log = kit.CallLog()
    tools = [kit.sleeper("mk", 0.05, log, effect=True), kit.sleeper("look", 0.05, log)]
    plan = [
        kit.ROOT,
        kit.node("1", "mk", {"x": 1}),
        kit.node("2", "look", {"x": 2}),
        kit.node("3", "mk", {"x": 3}),
        kit.node("4", "look", {"x": 4}),
        kit.response("1", "2", "3", "4"),
    ]

    def run(parallel):
        world = kit.custom_world(tools)
        ep = run_episode(
            "replanner_loop",
            loop_model(kit, plan),
            kit.custom_task(tools),
            world=world,
            config=AgentConfig(max_parallel=parallel),
        )
        return ep, world

    (seq, seq_world), (par, par_world) = run(1), run(None)
    assert [s.observation for s in par.steps] == [s.observation for s in seq.steps]
    # each call saw the state left by the effectful calls before it in node order
    assert [s.observation["version"] for s in par.steps] == [0, 1, 1, 2]
    assert par_world.state.collections == seq_world.state.collections
    assert len(par_world.state.records("made")) == 2
    rep = replay(par, kit.custom_world(tools))
    assert all(v.ok for v in rep.verdicts)
    assert rep.final_state.collections == par_world.state.collections


def test_max_parallel_one_runs_a_wave_one_call_at_a_time(kit):
    log = kit.CallLog()
    tools, plan = _wide(kit, [0.05, 0.05, 0.05], log)
    run_episode(
        "replanner_loop",
        loop_model(kit, plan),
        kit.custom_task(tools),
        world=kit.custom_world(tools),
        config=AgentConfig(max_parallel=1),
    )
    calls = sorted(log.calls, key=lambda c: c[1])
    assert all(a[2] <= b[1] for a, b in itertools.pairwise(calls))


def test_an_unparsable_replan_ends_the_episode(kit, travel_task):
    model = loop_model(kit, kit.TRAVEL_PLAN, replans=["<thought>hmm</thought> {broken"])
    ep = run_episode("replanner_loop", model, travel_task)
    assert ep.end_reason is EndReason.UNPARSABLE_PLAN
    assert [s.call.node_id for s in ep.steps] == ["1"]
    last = ep.plans[-1]
    assert (last.source, last.parse_ok, last.thought, last.round) == ("replanner", False, "hmm", 1)
    assert last.parse_error.startswith("invalid_json") and ep.error == last.parse_error
    assert ep.final_answer is None and ep.success is False


def test_an_unparsable_first_plan_ends_the_episode(kit, travel_task):
    model = kit.ScriptedChatModel(replies=["no plan today"])
    ep = run_episode("replanner_loop", model, travel_task)
    assert ep.end_reason is EndReason.UNPARSABLE_PLAN and ep.steps == []
    assert ep.plans[0].parse_ok is False


def test_executed_nodes_are_kept_and_changes_recorded(kit, travel_task):
    changed = [
        {**n, "para": {**n["para"], "destination": "DEN"}, "status": True} if n["id"] == "1" else n
        for n in kit.TRAVEL_PLAN
    ]
    model = loop_model(
        kit, kit.TRAVEL_PLAN, replans=[kit.plan_text(changed)], answer=kit.travel_react_policy
    )
    ep = run_episode("replanner_loop", model, travel_task)
    first_replan = ep.plans[1]
    (finding,) = [f for f in first_replan.findings if f.node == "1"]
    assert finding.code is VerdictCode.EXECUTED_NODE_CHANGED and finding.severity == "error"
    assert "kept as it ran" in finding.message
    # the replanner's own plan is recorded as written; execution kept node 1 as it ran
    assert first_replan.plan["tasks"][1]["para"]["destination"] == "DEN"
    assert [s.call.node_id for s in ep.steps] == ["1", "2", "3"]
    assert ep.steps[0].call.args["destination"] == "KIX"
    assert ep.success is True


def test_reconcile_restores_removed_nodes_and_resets_false_done(kit):
    current = Plan.parse(kit.plan_text(kit.TRAVEL_PLAN))
    proposed = Plan.parse(
        kit.plan_text(
            [
                kit.ROOT,
                kit.node("2", "quote_flight", {"flight_id": "FL-LISKIX-20261203-1"}, done=True),
                kit.node("3", "book_flight", {"quote_id": "${2.quote_id}"}, deps=["2"]),
                kit.response("3"),
            ]
        )
    )
    merged, findings = reconcile(current, proposed, {"1": {"cheapest_flight_id": "x"}})
    assert merged.ids == ["root", "2", "3", "1", "response"]
    assert merged.node("1").status == "done" and merged.node("2").status == "pending"
    assert {(f.node, f.severity) for f in findings} == {("1", "error"), ("2", "warning")}
    assert merged.frontier(["1"]) == ["2"]


def test_a_reroute_of_a_done_node_runs_it_again(kit):
    # node 1 ran with search_flights; the replan names another tool for node 1 (a wrongly
    # chosen tool replaced): worked by hand, node 1 is pending again and no longer done, while
    # an arguments-only change would have kept it as it ran
    current = Plan.parse(kit.plan_text(kit.TRAVEL_PLAN))
    rerouted = [
        {**n, "name": "find_flight_offers", "status": True} if n["id"] == "1" else n
        for n in kit.TRAVEL_PLAN
    ]
    outputs = {"1": {"cheapest_flight_id": "x"}}
    merged, findings = reconcile(current, Plan.parse(kit.plan_text(rerouted)), outputs)
    assert merged.node("1").tool == "find_flight_offers" and merged.node("1").status == "pending"
    assert [(f.node, f.severity) for f in findings] == [("1", "warning")]
    assert done_outputs(merged, outputs, {"1": "search_flights"}) == {}
    assert done_outputs(current, outputs, {"1": "search_flights"}) == outputs
    assert merged.next_wave(done_outputs(merged, outputs, {"1": "search_flights"}))[0] == ["1"]


def test_calls_that_can_never_run_end_the_run_stuck():
    # built without the parser (which refuses cycles): 1 and 2 wait on each other, so no call
    # is ready although both are pending; by hand, the run cannot reach its response
    nodes = [
        PlanNode(id="root", status="done"),
        PlanNode(id="1", tool="a", deps=["2"]),
        PlanNode(id="2", tool="b", deps=["1"]),
        PlanNode(id="response", deps=["1", "2"]),
    ]
    plan = Plan(nodes=nodes)
    assert plan.next_wave({})[0] == []
    reason, why = unfinished(plan, {})
    assert reason is EndReason.STUCK and "['1', '2']" in why
    assert unfinished(plan, {"1": 1, "2": 2}) is None


def test_round_budget(kit):
    def never_valid(args, ctx):
        return {"value": 1}

    tool = kit.sleeper("t", 0).model_copy(update={"implementation": never_valid})
    plan = [kit.ROOT, kit.node("1", "t", {"y": 1}), kit.response("1")]  # y: unknown parameter
    ep = run_episode(
        "replanner_loop",
        loop_model(kit, plan),
        kit.custom_task([tool]),
        world=kit.custom_world([tool]),
        config=AgentConfig(max_rounds=3),
    )
    assert ep.end_reason is EndReason.ROUND_BUDGET and ep.rounds == 3
    assert [s.verdict.code for s in ep.steps] == [VerdictCode.UNKNOWN_PARAM] * 3
    assert ep.final_answer is None and ep.budgets["max_rounds"] == 3


def test_the_response_falls_back_to_the_plans_results(kit, travel_task):
    model = loop_model(kit, kit.TRAVEL_PLAN, answer=ValueError("responder is down"))
    ep = run_episode("replanner_loop", model, travel_task)
    assert ep.end_reason is EndReason.ANSWERED
    assert ep.metadata["answer_source"] == "plan_results"
    assert "responder is down" in ep.metadata["answer_fallback_reason"]
    booking = ep.steps[-1].observation["booking_id"]
    assert booking in ep.final_answer and ep.final_answer.startswith("Results of the plan")
    assert ep.success is True


def test_tool_less_nodes_and_hallucinated_tools(kit):
    tool = kit.sleeper("t", 0)
    plan = [
        kit.ROOT,
        kit.node("1", None, deps=["root"]),  # a reasoning node: no call
        kit.node("2", "t", {"x": 1}, deps=["1"]),
        kit.node("3", "warp_drive", {"x": 1}),
        kit.response("2", "3"),
    ]
    replan = [n for n in plan if n["id"] != "3"]
    replan[-1] = kit.response("2")
    ep = run_episode(
        "replanner_loop",
        loop_model(kit, plan, replans=[kit.plan_text(replan)]),
        kit.custom_task([tool]),
        world=kit.custom_world([tool]),
    )
    assert [(s.call.node_id, s.verdict.code.value) for s in ep.steps] == [
        ("2", "ok"),
        ("3", "unknown_tool"),
    ]
    assert ep.end_reason is EndReason.ANSWERED and ep.rounds == 1


class FirstCallFails:
    """An explicit transient fault on the first invocation of ``victim`` (a 503)."""

    def __init__(self, victim: str):
        self.victim = victim
        self.calls = 0

    def intercept(self, spec, args):
        if spec.name != self.victim:
            return None
        self.calls += 1
        if self.calls > 1:
            return None
        fault = Perturbation(
            mode="P1", explicit=True, permanent=False, kind="http_503", victim=spec.name
        )
        return type(
            "Fault", (), {"perturbation": fault, "observation": lambda self, out: {"error": "503"}}
        )()


def test_the_fault_hits_the_first_in_node_order_and_only_the_replanner_retries(kit):
    """The tool returned an error (a 503): the node ran, and re-running it is the replanner's
    decision, never the executor's. A replanner that keeps the plan trusts the error (nothing
    runs again); one that adds a retry node ``1.1`` gets it run in the next wave."""
    tool = kit.sleeper("t", 0.05)
    plan = [
        kit.ROOT,
        kit.node("1", "t", {"x": 1}),
        kit.node("2", "t", {"x": 2}),
        kit.response("1", "2"),
    ]
    retry = [
        kit.ROOT,
        kit.node("1", "t", {"x": 1}),
        kit.node("2", "t", {"x": 2}),
        kit.node("1.1", "t", {"x": 1}),
        kit.response("1.1", "2"),
    ]
    for _ in range(3):
        world = kit.custom_world([tool], faults=FirstCallFails("t"))
        ep = run_episode(
            "replanner_loop", loop_model(kit, plan), kit.custom_task([tool]), world=world
        )
        assert [(s.round, s.call.node_id) for s in ep.steps] == [(1, "1"), (1, "2")]
        assert ep.steps[0].perturbation is not None and ep.steps[0].observation == {"error": "503"}
        world = kit.custom_world([tool], faults=FirstCallFails("t"))
        model = loop_model(kit, plan, replans=[kit.plan_text(retry)])
        ep = run_episode("replanner_loop", model, kit.custom_task([tool]), world=world)
        assert [(s.round, s.call.node_id) for s in ep.steps] == [(1, "1"), (1, "2"), (2, "1.1")]
        assert ep.steps[2].perturbation is None and ep.steps[2].observation["value"] == 2


def test_wave_gate_orders_faults_and_effects_whatever_the_thread_order():
    base = WorldState()
    gate = WaveGate(base, effectful=[True, False, True])
    order: list[int] = []

    class Recording:
        def intercept(self, spec, args):
            order.append(args["pos"])

    faults = OrderedFaults(Recording())
    seen: dict[int, int] = {}

    def member(pos: int) -> None:
        token = _SLOT.set((gate, pos))
        try:
            state = gate.state_for(pos)
            seen[pos] = state.version
            faults.intercept(None, {"pos": pos})
            time.sleep(0.01)
            gate.finish(
                pos, WorldState(version=state.version + 1) if gate.effectful[pos] else state
            )
        finally:
            _SLOT.reset(token)

    threads = [threading.Thread(target=member, args=(p,)) for p in (2, 1, 0)]
    for t in threads:
        t.start()
        time.sleep(0.02)  # the last member starts first
    for t in threads:
        t.join(5)
    assert order == [0, 1, 2]
    assert seen == {0: 0, 1: 1, 2: 1}  # 1 and 2 see the effect of 0; nothing sees 2's


def _run_async(*args: Any, **kwargs: Any) -> Any:
    return asyncio.run(arun_episode(*args, **kwargs))


@pytest.mark.parametrize("run", [run_episode, _run_async], ids=["sync", "async"])
def test_a_crashed_wave_resumes_without_rerunning_finished_calls(kit, run):
    """c crashes while a and b still run: the crash waits for them, so their results are saved
    (and their verdicts streamed) before the run stops, and the resumed run calls c alone."""
    log = kit.CallLog()
    events: list[dict] = []
    state = {"failed": False}

    def flaky(args, ctx):
        if not state["failed"]:
            state["failed"] = True
            raise RuntimeError("disk full")
        return {"value": 0}

    tools = [kit.sleeper("a", 0.05, log), kit.sleeper("b", 0.05, log)]
    boom = kit.sleeper("c", 0).model_copy(update={"implementation": flaky})
    tools.append(boom)
    plan = [
        kit.ROOT,
        kit.node("1", "a"),
        kit.node("2", "b"),
        kit.node("3", "c"),
        kit.response("1", "2", "3"),
    ]
    saver = InMemorySaver()
    task = kit.custom_task(tools)
    first = run(
        "replanner_loop",
        loop_model(kit, plan),
        task,
        world=kit.custom_world(tools),
        checkpointer=saver,
        thread_id="t1",
        on_event=events.append,
    )
    assert first.end_reason is EndReason.CRASHED and "disk full" in first.error
    assert sorted(e["node"] for e in events if e["event"] == "verdict") == ["1", "2"]
    second = run(
        "replanner_loop",
        loop_model(kit, plan),
        task,
        world=kit.custom_world(tools),
        checkpointer=saver,
        thread_id="t1",
    )
    assert second.end_reason is EndReason.ANSWERED
    assert [s.call.node_id for s in second.steps] == ["1", "2", "3"]
    assert sorted(c[0] for c in log.calls) == ["a", "b"]  # a and b ran once, before the crash


# LangGraph cancels the queued members of a failed async step before they start (and warns)
@pytest.mark.filterwarnings("ignore:coroutine 'arun_with_retry' was never awaited")
@pytest.mark.parametrize("run", [run_episode, _run_async], ids=["sync", "async"])
def test_a_wave_wider_than_the_pool_that_crashes_ends_at_once(kit, run, monkeypatch):
    """Every member of a 40-call wave crashes: the crashed members fill LangGraph's pool of
    WAVE_THREADS and must not wait for members still queued behind them (which never start)."""
    monkeypatch.setattr(frontier, "GATE_TIMEOUT_S", 10.0)  # a regression fails in seconds

    def boom(args, ctx):
        time.sleep(0.01)
        raise RuntimeError("disk full")

    tool = kit.sleeper("c", 0).model_copy(update={"implementation": boom})
    width = frontier.WAVE_THREADS + 8
    ids = [str(i + 1) for i in range(width)]
    plan = [kit.ROOT, *(kit.node(i, "c", {"x": int(i)}) for i in ids), kit.response(*ids)]
    t0 = time.perf_counter()
    ep = run(
        "replanner_loop",
        loop_model(kit, plan),
        kit.custom_task([tool]),
        world=kit.custom_world([tool]),
    )
    assert ep.end_reason is EndReason.CRASHED and "disk full" in ep.error
    assert time.perf_counter() - t0 < 10.0  # (a wait for the queued members: >= 10 s)


@pytest.mark.parametrize("design", ["react", "plan_conditioned", "dual_loop", "replanner_loop"])
def test_every_design_yields_a_scored_episode(kit, travel_task, design):
    def reply(msgs):
        kind = request_kind(msgs)
        if kind in ("plan", "revise", "replan"):
            return kit.plan_text(kit.TRAVEL_PLAN)
        return kit.travel_react_policy(msgs)

    ep = run_episode(design, kit.ScriptedChatModel(fn=reply), travel_task)
    assert ep.design == design and ep.end_reason is EndReason.ANSWERED and ep.success is True
    assert [s.call.tool for s in ep.steps] == ["search_flights", "quote_flight", "book_flight"]
    assert ep.usage.tool_calls == 3 and ep.usage.wall_time_s > 0


def test_async_waves_overlap_too(kit):
    log = kit.CallLog()
    tools, plan = _wide(kit, [0.2] * 8, log)
    ep = asyncio.run(
        arun_episode(
            "replanner_loop",
            loop_model(kit, plan),
            kit.custom_task(tools),
            world=kit.custom_world(tools),
        )
    )
    assert ep.end_reason is EndReason.ANSWERED and ep.rounds == 1
    assert [s.call.node_id for s in ep.steps] == [str(i) for i in range(1, 9)]
    assert max(c[1] for c in log.calls) < min(c[2] for c in log.calls)


def test_a_compiled_graph_runs_from_the_query_alone(kit, travel_task):
    world = task_world(travel_task)
    graph = build_graph("replanner_loop", loop_model(kit, kit.TRAVEL_PLAN), world)
    out = graph.invoke({"query": travel_task.query})
    assert out["end_reason"] is EndReason.ANSWERED and len(out["steps"]) == 3
    assert len(out["world"].records("flight_bookings")) == 1
    assert world.state == world.initial_state  # the graph state holds the run, not the World
