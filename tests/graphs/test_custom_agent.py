"""A user's own agent (``create_agent``, or any messages graph) dropped in place of ReAct."""

from __future__ import annotations

import json

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from replan.core.trace import EndReason
from replan.env import task_world
from replan.env.replay import replay
from replan.graphs import AgentConfig, run_compiled_agent


def _sloppy_then_competent(kit):
    """Turn 1: a hallucinated tool, a malformed call and a real search; then the chain."""

    def reply(msgs):
        turn = sum(isinstance(m, AIMessage) for m in msgs)
        if turn == 0:
            return AIMessage(
                content="",
                tool_calls=[
                    kit.tool_call("find_cheap_flight", {"to": "KIX"}, "h1"),
                    kit.tool_call("search_flights", kit.FLIGHT_ARGS, "s1"),
                ],
                invalid_tool_calls=[
                    {
                        "name": "quote_flight",
                        "args": "{flight_id: FL",
                        "id": "m1",
                        "error": "bad JSON",
                        "type": "invalid_tool_call",
                    }
                ],
                usage_metadata={"input_tokens": 5, "output_tokens": 1, "total_tokens": 6},
            )
        results = {
            m.tool_call_id: json.loads(m.content)
            for m in msgs
            if isinstance(m, ToolMessage) and m.content.startswith("{")
        }
        if turn == 1:
            fid = results["s1"]["cheapest_flight_id"]
            return kit.ai_calls(kit.tool_call("quote_flight", {"flight_id": fid}, "q1"))
        if turn == 2:
            args = {
                "quote_id": results["q1"]["quote_id"],
                "traveller_name": kit.TRAVELLER,
                "contact_email": kit.EMAIL,
            }
            return kit.ai_calls(kit.tool_call("book_flight", args, "b1"))
        return AIMessage(content=f"Done: booking {results['b1']['booking_id']}.")

    return kit.ScriptedChatModel(fn=reply)


def test_create_agent_drop_in(kit, travel_task):
    model = _sloppy_then_competent(kit)
    ep = run_compiled_agent(lambda tools, m: create_agent(m, tools), model, travel_task)
    assert ep.design == "custom" and ep.model == "scripted-model"
    assert ep.end_reason is EndReason.ANSWERED and ep.success is True
    got = [(s.index, s.round, s.call.tool, s.call.call_id, s.verdict.code.value) for s in ep.steps]
    assert got == [
        (0, 1, "find_cheap_flight", "h1", "unknown_tool"),
        (1, 1, "search_flights", "s1", "ok"),
        (2, 1, "quote_flight", "m1", "unknown_param"),
        (3, 2, "quote_flight", "q1", "ok"),
        (4, 3, "book_flight", "b1", "ok"),
    ]
    assert ep.steps[-1].observation["booking_id"] in ep.final_answer
    assert ep.usage.model_calls == 4 and ep.usage.input_tokens == 5 and ep.usage.tool_calls == 5
    # the user's graph got the world tools and nothing else
    assert set(model.bound[0]) == set(travel_task.tools)
    # the trace means what happened: a replay gives the recorded verdicts
    rep = replay(ep, task_world(travel_task))
    assert [v.code for v in rep.verdicts] == [s.verdict.code for s in ep.steps]


def test_any_compiled_messages_graph_works(kit, travel_task):
    def make_agent(tools, model):
        bound = model.bind_tools(tools)
        builder = StateGraph(MessagesState)
        builder.add_node("model", lambda s: {"messages": [bound.invoke(s["messages"])]})
        builder.add_node("tools", ToolNode(tools))
        builder.add_edge(START, "model")
        builder.add_conditional_edges("model", tools_condition)
        builder.add_edge("tools", "model")
        return builder.compile()

    model = kit.ScriptedChatModel(fn=kit.travel_react_policy)
    ep = run_compiled_agent(make_agent, model, travel_task, design="my_agent")
    assert ep.design == "my_agent" and ep.success is True
    assert [s.round for s in ep.steps] == [1, 2, 3]


def test_a_crashing_user_agent_keeps_its_recorded_calls(kit, travel_task):
    def reply(msgs):
        if any(isinstance(m, ToolMessage) for m in msgs):
            raise KeyError("the agent's own bug")
        return kit.ai_calls(kit.tool_call("search_flights", kit.FLIGHT_ARGS, "s1"))

    model = kit.ScriptedChatModel(fn=reply)
    ep = run_compiled_agent(lambda tools, m: create_agent(m, tools), model, travel_task)
    assert ep.end_reason is EndReason.CRASHED and "KeyError" in ep.error
    assert [s.call.tool for s in ep.steps] == ["search_flights"]
    assert ep.success is False


def test_a_user_agent_that_never_stops_hits_the_step_budget(kit, travel_task):
    model = kit.ScriptedChatModel(
        fn=lambda msgs: kit.ai_calls(kit.tool_call("search_flights", kit.FLIGHT_ARGS, "s"))
    )
    ep = run_compiled_agent(
        lambda tools, m: create_agent(m, tools), model, travel_task, config=AgentConfig(max_steps=3)
    )
    assert ep.end_reason is EndReason.STEP_BUDGET and "3 tool calls" in ep.error
    assert len(ep.steps) == 3 and ep.final_answer is None


def test_the_budget_holds_when_the_agent_swallows_tool_errors(kit, travel_task):
    def make_agent(tools, model):
        bound = model.bind_tools(tools)
        builder = StateGraph(MessagesState)
        builder.add_node("model", lambda s: {"messages": [bound.invoke(s["messages"])]})
        builder.add_node("tools", ToolNode(tools, handle_tool_errors=True))
        builder.add_edge(START, "model")
        builder.add_conditional_edges("model", tools_condition)
        builder.add_edge("tools", "model")
        return builder.compile()

    model = kit.ScriptedChatModel(
        fn=lambda msgs: kit.ai_calls(kit.tool_call("search_flights", kit.FLIGHT_ARGS, "s"))
    )
    ep = run_compiled_agent(make_agent, model, travel_task, config=AgentConfig(max_steps=2))
    assert ep.end_reason is EndReason.STEP_BUDGET and len(ep.steps) == 2
