"""LangChain tools bound to a World: every call reaches the world, is judged and recorded."""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor

from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from replan.core.trace import Episode
from replan.env import task_world
from replan.env.replay import replay
from replan.nodes.tools import tool_args_schema, world_session, world_tools


def _tools(task):
    world = task_world(task)
    session = world_session(world, commit=True)
    return world, session, {t.name: t for t in world_tools(world, session)}


def _has_x_key(value) -> bool:
    if isinstance(value, dict):
        return any(str(k).startswith("x-") or _has_x_key(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_x_key(v) for v in value)
    return False


def test_one_tool_per_spec_with_the_specs_schema(travel_task):
    world, _, tools = _tools(travel_task)
    assert set(tools) == set(travel_task.tools)
    quote = tools["quote_flight"]
    spec = world.tools["quote_flight"]
    assert quote.description == spec.description
    assert quote.args_schema == tool_args_schema(spec)
    assert set(quote.args_schema["properties"]) == {"flight_id", "passengers"}
    assert quote.args_schema["required"] == ["flight_id"]
    assert _has_x_key(spec.parameters) and not _has_x_key(quote.args_schema)


def test_invalid_calls_reach_the_world_and_are_recorded(travel_task):
    world, session, tools = _tools(travel_task)
    bad = [
        ({"flight_id": "FL-LISKIX-20261203-1", "seats": 2}, "unknown_param", "seats"),
        ({"passengers": 2}, "missing_param", "flight_id"),
        ({"flight_id": 12345}, "type_mismatch", "flight_id"),
        ({"flight_id": "FL-LISKIX-20261203-1", "passengers": 0}, "invalid_value", "passengers"),
    ]
    for args, code, _ in bad:
        out = json.loads(tools["quote_flight"].invoke(args))
        assert out["error"] == code
    assert [s.verdict.code.value for s in session.steps] == [c for _, c, _ in bad]
    assert [s.verdict.param for s in session.steps] == [p for _, _, p in bad]
    assert world.state == world.initial_state  # an invalid call changes no state


def test_a_valid_call_changes_the_world_and_keeps_the_tool_call_id(travel_task):
    world, session, tools = _tools(travel_task)
    msg = tools["quote_flight"].invoke(
        {
            "name": "quote_flight",
            "args": {"flight_id": "FL-LISKIX-20261203-1", "passengers": 2},
            "id": "call-7",
            "type": "tool_call",
        }
    )
    assert msg.tool_call_id == "call-7"
    out = json.loads(msg.content)
    assert world.state.get("flight_quotes", out["quote_id"])["status"] == "open"
    (step,) = session.steps
    assert step.call.call_id == "call-7" and step.verdict.ok and step.observation == out

    async def call_async():
        return await tools["search_flights"].ainvoke(
            {
                "name": "search_flights",
                "args": {"origin": "LIS", "destination": "OPO", "date": "2026-12-04"},
                "id": "call-8",
                "type": "tool_call",
            }
        )

    asyncio.run(call_async())
    assert [s.call.call_id for s in session.steps] == ["call-7", "call-8"]


def test_parallel_calls_are_safe_and_replay_exactly(travel_task):
    world, session, tools = _tools(travel_task)
    flights = [f"FL-LISKIX-202612{d:02d}-{i}" for d in range(1, 7) for i in (1, 2, 3)]

    def quote(fid):
        return json.loads(tools["quote_flight"].invoke({"flight_id": fid}))["quote_id"]

    with ThreadPoolExecutor(max_workers=8) as pool:
        ids = list(pool.map(quote, flights))
    assert len(set(ids)) == len(flights)
    assert [s.index for s in session.steps] == list(range(len(flights)))
    assert world.state.version == len(flights)
    assert all(world.state.get("flight_quotes", q)["status"] == "open" for q in ids)
    # the recorded order is the order the world changed in: a replay reproduces the state
    episode = Episode(episode_id="e", task_id=travel_task.task_id, steps=session.steps)
    rep = replay(episode, task_world(travel_task))
    assert all(v.ok for v in rep.verdicts)
    assert rep.final_state.collections == world.state.collections


def test_tool_node_runs_world_tools_in_parallel(travel_task):
    _, session, tools = _tools(travel_task)
    graph = (
        StateGraph(MessagesState)
        .add_node("tools", ToolNode(list(tools.values())))
        .add_edge(START, "tools")
        .compile()
    )
    calls = [
        {
            "name": "search_flights",
            "args": {"origin": "LIS", "destination": d, "date": "2026-12-03"},
            "id": f"c{i}",
            "type": "tool_call",
        }
        for i, d in enumerate(["KIX", "DEN", "NBO", "YUL"])
    ]
    result = graph.invoke({"messages": [AIMessage(content="", tool_calls=calls)]})
    assert [m.tool_call_id for m in result["messages"][1:]] == ["c0", "c1", "c2", "c3"]
    assert sorted(s.call.call_id for s in session.steps) == ["c0", "c1", "c2", "c3"]
    assert all(s.verdict.ok for s in session.steps)


def test_a_model_is_bound_to_tool_schemas_converted_once(travel_task):
    """Every episode binds its world's tools; the schemas are converted once per distinct tool
    (one object for every episode) and are what converting the episode's own tools gives."""
    from langchain_core.utils.function_calling import convert_to_openai_tool

    from replan.nodes.tools import openai_tools

    first, second = task_world(travel_task), task_world(travel_task)
    schemas = openai_tools(first)
    assert schemas == [convert_to_openai_tool(t) for t in world_tools(second)]
    assert all(a is b for a, b in zip(openai_tools(second), schemas, strict=True))
