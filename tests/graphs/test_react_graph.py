"""The ReAct design end to end: control flow, budgets, errors, streaming, async, checkpoints."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import openai
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from replan.core.trace import EndReason, Episode
from replan.env import task_world
from replan.env.replay import replay
from replan.graphs import (
    AgentConfig,
    RetrySettings,
    arun_episode,
    build_graph,
    graph_input,
    run_episode,
    runnable_config,
)

FAST = RetrySettings(max_attempts=3, initial_wait_s=0, max_wait_s=0, jitter_s=0)


def test_react_books_the_flight_and_records_an_honest_episode(kit, travel_task):
    model = kit.ScriptedChatModel(fn=kit.travel_react_policy)
    ep = run_episode("react", model, travel_task, seed=3)
    assert ep.end_reason is EndReason.ANSWERED and ep.error is None
    assert ep.success is True
    assert [s.call.tool for s in ep.steps] == ["search_flights", "quote_flight", "book_flight"]
    assert [s.round for s in ep.steps] == [1, 2, 3] and [s.index for s in ep.steps] == [0, 1, 2]
    assert all(s.verdict.ok for s in ep.steps)
    assert [s.call.call_id for s in ep.steps] == ["s1", "q1", "b1"]
    booking = ep.steps[-1].observation["booking_id"]
    assert booking in ep.final_answer
    assert (ep.design, ep.model, ep.seed, ep.task_id, ep.mode) == (
        "react",
        "scripted-model",
        3,
        travel_task.task_id,
        "NP",
    )
    assert ep.usage.model_calls == 4 and ep.usage.tool_calls == 3
    assert (ep.usage.input_tokens, ep.usage.output_tokens) == (40, 8)
    assert ep.budgets["max_steps"] == 25 and ep.plans == []
    # the tools were bound to the model; the trace replays clean against a fresh world
    assert set(model.bound[0]) == set(travel_task.tools)
    assert all(v.ok for v in replay(ep, task_world(travel_task)).verdicts)
    assert Episode.from_json(ep.to_json()) == ep


def test_tool_errors_come_back_as_tool_messages(kit, travel_task):
    def policy(msgs):
        turns = sum(isinstance(m, AIMessage) for m in msgs)
        if turns == 0:
            return AIMessage(
                content="",
                tool_calls=[
                    kit.tool_call("quote_flight", {"flight": "FL-LISKIX-20261203-1"}, "a"),
                    kit.tool_call("teleport", {"to": "KIX"}, "b"),
                ],
                invalid_tool_calls=[
                    {
                        "name": "search_flights",
                        "args": '{"origin": "LIS",',
                        "id": "c",
                        "error": "truncated JSON",
                        "type": "invalid_tool_call",
                    }
                ],
            )
        return AIMessage(content="I could not do it.")

    model = kit.ScriptedChatModel(fn=policy)
    ep = run_episode("react", model, travel_task)
    assert ep.end_reason is EndReason.ANSWERED
    assert [s.verdict.code.value for s in ep.steps] == [
        "unknown_param",
        "unknown_tool",
        "unknown_param",
    ]
    assert [s.call.tool for s in ep.steps] == ["quote_flight", "teleport", "search_flights"]
    assert all(s.round == 1 for s in ep.steps)
    seen = [m for m in model.received[1] if isinstance(m, ToolMessage)]
    assert [m.tool_call_id for m in seen] == ["a", "b", "c"]
    replies = [json.loads(m.content) for m in seen]
    assert [r["error"] for r in replies] == ["unknown_param", "unknown_tool", "unknown_param"]
    assert "could not be read" in replies[2]["message"]
    assert ep.success is False


def test_react_stops_at_its_step_budget(kit, travel_task):
    model = kit.ScriptedChatModel(
        fn=lambda msgs: kit.ai_calls(kit.tool_call("search_flights", kit.FLIGHT_ARGS, "x"))
    )
    ep = run_episode("react", model, travel_task, config=AgentConfig(max_steps=4))
    assert ep.end_reason is EndReason.STEP_BUDGET
    assert len(ep.steps) == 4 and ep.final_answer is None
    assert ep.usage.model_calls == 5  # the fifth request for a call hits the budget
    assert ep.budgets["max_steps"] == 4 and "4 tool calls" in ep.error


def test_a_turn_that_overruns_the_budget_executes_only_what_fits(kit, travel_task):
    calls = [kit.tool_call("search_flights", kit.FLIGHT_ARGS, f"x{i}") for i in range(3)]
    model = kit.ScriptedChatModel(fn=lambda msgs: kit.ai_calls(*calls))
    ep = run_episode("react", model, travel_task, config=AgentConfig(max_steps=5))
    assert ep.end_reason is EndReason.STEP_BUDGET
    assert [s.call.call_id for s in ep.steps] == ["x0", "x1", "x2", "x0", "x1"]
    assert [s.round for s in ep.steps] == [1, 1, 1, 2, 2]
    assert "1 call(s) of the last turn not executed" in ep.error


def _rate_limited():
    req = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    return openai.RateLimitError(
        "Rate limit reached", response=httpx.Response(429, request=req), body=None
    )


def test_a_model_that_keeps_failing_ends_the_episode_with_model_error(kit, travel_task):
    model = kit.ScriptedChatModel(fn=lambda msgs: _rate_limited())
    ep = run_episode("react", model, travel_task, config=AgentConfig(retry=FAST))
    assert ep.end_reason is EndReason.MODEL_ERROR
    assert "RateLimitError" in ep.error and "gave up after 3" in ep.error
    assert len(model.received) == 3 and ep.steps == [] and ep.success is False


def test_transient_failures_are_retried_inside_the_run(kit, travel_task):
    failures = {"left": 2}

    def flaky(msgs):
        if failures["left"]:
            failures["left"] -= 1
            return _rate_limited()
        return kit.travel_react_policy(msgs)

    model = kit.ScriptedChatModel(fn=flaky)
    ep = run_episode("react", model, travel_task, config=AgentConfig(retry=FAST))
    assert ep.end_reason is EndReason.ANSWERED and ep.success is True
    assert len(model.received) == 6 and ep.usage.model_calls == 4


def test_a_crashing_node_returns_a_crashed_episode(kit):
    def broken(args, ctx):
        raise ZeroDivisionError("division by zero in the tool")

    tool = kit.sleeper("ok_tool", 0)
    bad = tool.model_copy(update={"name": "bad_tool", "implementation": broken})
    task = kit.custom_task([tool, bad])
    world = kit.custom_world([tool, bad])
    turns = iter(
        [
            kit.ai_calls(kit.tool_call("ok_tool", {"x": 1}, "a")),
            kit.ai_calls(kit.tool_call("bad_tool", {"x": 1}, "b")),
        ]
    )
    model = kit.ScriptedChatModel(fn=lambda msgs: next(turns))
    ep = run_episode("react", model, task, world=world)
    assert ep.end_reason is EndReason.CRASHED
    assert "bad_tool" in ep.error and "ZeroDivisionError" in ep.error
    assert [s.call.tool for s in ep.steps] == ["ok_tool"]  # what ran before the crash is kept


def test_wall_time_budget(kit, travel_task):
    def slow(msgs):
        time.sleep(0.15)
        return kit.travel_react_policy(msgs)

    model = kit.ScriptedChatModel(fn=slow)
    ep = run_episode("react", model, travel_task, config=AgentConfig(max_wall_s=0.2))
    assert ep.end_reason is EndReason.TIMEOUT
    assert 1 <= len(ep.steps) < 3 and "wall-time budget" in ep.error


def test_progress_events_on_the_custom_stream(kit, travel_task):
    events: list[dict] = []
    model = kit.ScriptedChatModel(fn=kit.travel_react_policy)
    run_episode("react", model, travel_task, on_event=events.append)
    kinds = [e["event"] for e in events]
    assert kinds == ["round_started", "call", "verdict"] * 3 + ["answer", "end"]
    verdicts = [e for e in events if e["event"] == "verdict"]
    assert [(e["tool"], e["code"], e["ok"]) for e in verdicts] == [
        ("search_flights", "ok", True),
        ("quote_flight", "ok", True),
        ("book_flight", "ok", True),
    ]
    assert events[-1] == {"event": "end", "reason": "answered", "error": None}
    # the same events straight from the compiled graph
    world = task_world(travel_task)
    graph = build_graph("react", kit.ScriptedChatModel(fn=kit.travel_react_policy), world)
    direct = list(
        graph.stream(
            graph_input(travel_task.query, world),
            runnable_config(AgentConfig()),
            stream_mode="custom",
        )
    )
    assert [e["event"] for e in direct] == kinds


def test_arun_episode_matches_run_episode(kit, travel_task):
    sync = run_episode("react", kit.ScriptedChatModel(fn=kit.travel_react_policy), travel_task)
    events: list[dict] = []
    asyn = asyncio.run(
        arun_episode(
            "react",
            kit.ScriptedChatModel(fn=kit.travel_react_policy),
            travel_task,
            on_event=events.append,
        )
    )
    assert asyn.end_reason is EndReason.ANSWERED and asyn.success is True
    assert [s.model_dump(exclude={"duration_s"}) for s in asyn.steps] == [
        s.model_dump(exclude={"duration_s"}) for s in sync.steps
    ]
    assert events[-1]["event"] == "end"


def test_an_interrupted_episode_resumes_from_its_last_superstep(kit, travel_task):
    saver = InMemorySaver()
    world = task_world(travel_task)
    first = kit.ScriptedChatModel(fn=kit.travel_react_policy)
    graph = build_graph("react", first, world, checkpointer=saver)
    config = runnable_config(AgentConfig(), "thread-1")
    graph.invoke(graph_input(travel_task.query, world), config, interrupt_before=["tools"])
    graph.invoke(None, config, interrupt_before=["tools"])  # one more superstep pair
    paused = graph.get_state(config)
    assert paused.next == ("tools",)
    assert [s.call.tool for s in paused.values["steps"]] == ["search_flights"]
    # a new graph (as after a restart) picks the thread up where it stopped
    second = kit.ScriptedChatModel(fn=kit.travel_react_policy)
    ep = run_episode("react", second, travel_task, checkpointer=saver, thread_id="thread-1")
    assert ep.end_reason is EndReason.ANSWERED and ep.success is True
    assert [s.call.tool for s in ep.steps] == ["search_flights", "quote_flight", "book_flight"]
    assert len(first.received) == 2 and len(second.received) == 2  # no turn was repeated
    assert ep.usage.model_calls == 4 and ep.metadata["thread_id"] == "thread-1"
    # asking again for a finished thread returns the same episode without running anything
    again = run_episode("react", second, travel_task, checkpointer=saver, thread_id="thread-1")
    assert again.steps == ep.steps and len(second.received) == 2


def test_api_keys_never_reach_the_episode(kit, travel_task, monkeypatch):
    key = "sk-proj-THISISAFAKEKEY1234567890"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    req = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    denied = openai.AuthenticationError(
        f"Incorrect API key provided: {key}", response=httpx.Response(401, request=req), body=None
    )
    model = kit.ScriptedChatModel(fn=lambda msgs: denied, model_name="gpt-test")
    ep = run_episode("react", model, travel_task, config=AgentConfig(retry=FAST))
    assert ep.end_reason is EndReason.MODEL_ERROR and "AuthenticationError" in ep.error
    assert len(model.received) == 1  # a 401 is not retried
    assert key not in ep.to_json() and "THISISAFAKEKEY" not in ep.to_json()
    assert ep.model == "gpt-test"
