"""One tool wrapper: our designs' tool node, the world tools of a user graph and the wrapper's own
session record the same Steps for the same calls, faults included; builders take tools and a
model as ``create_agent`` does."""

from __future__ import annotations

import asyncio
import json

import pytest
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from replan.core.task import PerturbationProfile
from replan.core.trace import Call
from replan.env import task_world
from replan.env.perturb import Perturber
from replan.env.tool_wrapper import FaultSession, StepBudgetExceeded, WorldCalls
from replan.graphs import build_graph
from replan.graphs.inputs import agent_inputs
from replan.nodes.config import AgentConfig
from replan.nodes.episode import fixed
from replan.nodes.executor import make_tools_node
from replan.nodes.prompts import request_kind
from replan.nodes.tools import world_of, world_session, world_tools

CALLS = [
    ("search_flights", {"origin": "LIS", "destination": "KIX", "date": "2026-12-03"}),
    ("quote_flight", {"flight_id": "FL-LISKIX-20261203-1", "seats": 2}),  # unknown parameter
    ("search_flights", {"origin": "LIS", "destination": "KIX", "date": "2026-12-03"}),
    ("quote_flight", {"flight_id": "FL-LISKIX-20261203-1", "passengers": 2}),
]


def _faulty_world(task):
    """The task's world with a P1 http_503 on search_flights (its first invocation only)."""
    profile = PerturbationProfile(mode="P1", victim="search_flights", kind="http_503")
    return task_world(task, Perturber(profile))


def _record(step):
    pert = step.perturbation
    return (
        step.index,
        step.call.tool,
        step.call.args,
        step.verdict.code.value,
        json.dumps(step.observation, sort_keys=True),
        pert.kind if pert else None,
    )


def _tool_calls():
    return [
        {"name": n, "args": a, "id": f"c{i}", "type": "tool_call"} for i, (n, a) in enumerate(CALLS)
    ]


def test_design_tool_node_and_user_graph_record_the_same_steps(travel_task):
    # our designs: the ReAct tool node over the graph state's snapshot
    world = _faulty_world(travel_task)
    node = make_tools_node(fixed(None, world), AgentConfig())  # type: ignore[arg-type]  # no model read
    update = node(
        {"messages": [AIMessage(content="", tool_calls=_tool_calls())], "world": world.state}
    )
    ours = [_record(s) for s in update["steps"]]

    # a user's graph: the world tools in a LangGraph ToolNode, one call per turn
    world2 = _faulty_world(travel_task)
    session = world_session(world2, commit=True)
    graph = (
        StateGraph(MessagesState)
        .add_node("tools", ToolNode(world_tools(world2, session)))
        .add_edge(START, "tools")
        .compile()
    )
    for tc in _tool_calls():
        graph.invoke({"messages": [AIMessage(content="", tool_calls=[tc])]})
    theirs = [_record(s) for s in session.steps]

    assert ours == theirs
    # the fault is the world's, decided in the wrapper's session: first invocation only
    assert [r[5] for r in ours] == ["http_503", None, None, None]
    assert [r[3] for r in ours] == ["ok", "unknown_param", "ok", "ok"]
    assert update["world"] == world2.state  # the same world state at the end


def test_a_world_session_numbers_rounds_budgets_and_reports(travel_task):
    world = task_world(travel_task)
    events = []
    session = FaultSession(
        world=WorldCalls(world, state=world.state),
        first_index=5,
        round=3,
        max_steps=2,
        observe=lambda event, **f: events.append((event, f["index"], f["round"])),
    )
    first = session.step(Call(tool=CALLS[3][0], args=CALLS[3][1]))
    session.step(Call(tool="no_such_tool", args={}))
    assert [(s.index, s.round) for s in session.steps] == [(5, 3), (6, 3)]
    assert session.steps[1].verdict.code.value == "unknown_tool"
    assert events == [("call", 5, 3), ("verdict", 5, 3), ("call", 6, 3), ("verdict", 6, 3)]
    # the session's state moved, the world itself did not (no commit)
    assert session.state.get("flight_quotes", first.observation["quote_id"]) is not None
    assert world.state == world.initial_state
    with pytest.raises(StepBudgetExceeded):
        session.step(Call(tool=CALLS[0][0], args=CALLS[0][1]))
    assert session.budget_hit and len(session.steps) == 2


def test_any_entrance_of_a_world_session_runs_the_call_in_the_world(travel_task):
    """``run`` / ``arun`` (the entrances of wrapped tools and the middleware) on a world session:
    the world runs the call, never the ``execute`` a caller passes."""
    world = task_world(travel_task)
    session = world_session(world, state=world.state)

    def never():
        raise AssertionError("a world session runs the call itself")

    name, args = CALLS[3]
    msg = session.run(None, Call(tool=name, args=args, call_id="x"), never)
    assert msg.tool_call_id == "x" and msg.status == "success"
    assert json.loads(msg.content) == session.steps[0].observation
    text = asyncio.run(session.arun(None, Call(tool="no_such_tool", args={}), never))
    assert json.loads(text)["error"] == "unknown_tool"  # no call id: the text itself
    assert [s.index for s in session.steps] == [0, 1]


@tool
def exchange_rate(base: str, quote: str) -> dict:
    """The exchange rate from ``base`` to ``quote``."""
    if base == quote:
        raise ValueError("base and quote are the same currency")
    return {"rate": 1.25, "pair": f"{base}/{quote}"}


def test_builders_take_a_user_s_tools_like_create_agent(kit):
    model = kit.ScriptedChatModel(
        replies=[
            kit.ai_calls(kit.tool_call("exchange_rate", {"base": "EUR", "quote": "EUR"}, "a")),
            kit.ai_calls(
                kit.tool_call("exchange_rate", {"base": "EUR", "quote": "USD", "x": 1}, "b")
            ),
            kit.ai_calls(kit.tool_call("exchange_rate", {"base": "EUR", "quote": "USD"}, "c")),
            "EUR/USD is 1.25",
        ]
    )
    graph = build_graph("react", model, [exchange_rate])
    out = graph.invoke({"query": "What is the EUR/USD rate?"})
    steps = out["steps"]
    assert [s.verdict.code.value for s in steps] == ["invalid_value", "unknown_param", "ok"]
    assert "same currency" in steps[0].verdict.message  # the tool's own error, judged invalid
    assert steps[2].observation == {"rate": 1.25, "pair": "EUR/USD"}
    assert out["final_answer"] == "EUR/USD is 1.25"
    assert model.bound[0] == ["exchange_rate"]


def test_tools_given_to_a_builder(travel_task):
    world = task_world(travel_task)
    assert world_of(world) is world
    assert world_of(world_tools(world)) is world  # a World's own tools: that World
    assert set(world_of(list(world.tools.values())).tools) == set(world.tools)
    with pytest.raises(ValueError, match="mix"):
        world_of([*world_tools(world), exchange_rate])
    with pytest.raises(ValueError, match="repeat"):
        world_of([exchange_rate, exchange_rate])
    with pytest.raises(ValueError, match="plays one task"):
        agent_inputs("simulated:competent", world)  # a spec string goes through make_model
    with pytest.raises(TypeError, match="model spec string"):
        agent_inputs(42, world)  # type: ignore[arg-type]


@tool
def convert(amount: float, rate: float) -> float:
    """``amount`` converted at ``rate``."""
    return round(amount * rate, 2)


def test_the_replanner_loop_runs_a_user_s_tools_with_references(kit):
    plan = [
        kit.ROOT,
        kit.node("1", "exchange_rate", {"base": "EUR", "quote": "USD"}),
        kit.node("2", "convert", {"amount": 100, "rate": "${1.rate}"}, deps=["1"]),
        kit.response("2"),
    ]

    def reply(msgs):
        return kit.plan_text(plan) if request_kind(msgs) in ("plan", "replan") else "125.0 USD"

    graph = build_graph("replanner_loop", kit.ScriptedChatModel(fn=reply), [exchange_rate, convert])
    out = graph.invoke({"query": "100 EUR in USD?"})
    steps = out["steps"]
    assert [(s.call.tool, s.round, s.verdict.ok) for s in steps] == [
        ("exchange_rate", 1, True),
        ("convert", 2, True),
    ]
    assert steps[1].resolved_args == {"amount": 100, "rate": 1.25}  # the reference, resolved
    assert steps[1].observation == 125.0
    assert out["final_answer"] == "125.0 USD"


def test_a_model_spec_string_builds_the_model(monkeypatch):
    pytest.importorskip("langchain_openai")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-never-sent")  # nothing is invoked
    model, world = agent_inputs("openai:gpt-4o-mini", [exchange_rate])
    assert type(model).__name__ == "ChatOpenAI" and model.model_name == "gpt-4o-mini"
    assert list(world.tools) == ["exchange_rate"]
    graph = build_graph("dual_loop", "openai:gpt-4o-mini", [exchange_rate, convert])
    assert {"planner", "verifier", "tools"} <= set(graph.get_graph().nodes)
