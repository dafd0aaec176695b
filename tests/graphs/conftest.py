"""Scripted chat models, hand-built tasks and custom worlds for the graph tests."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field, PrivateAttr

from replan.core.task import Checker, RequiredRecord, Task
from replan.core.tools import Effect, ToolSpec
from replan.env.world import World
from replan.nodes.prompts import request_kind

Reply = AIMessage | str | BaseException | Callable[[list[BaseMessage]], Any]


class ScriptedChatModel(BaseChatModel):
    """Returns scripted replies in order (or from ``fn(messages)``); records what it was sent.

    ``bind_tools`` returns the model itself (recording the tool names), so the same script
    serves tool-calling and plain requests. An exception in the script is raised.
    """

    replies: list[Any] = Field(default_factory=list)
    fn: Callable[[list[BaseMessage]], Any] | None = None
    model_name: str = "scripted-model"
    received: list[list[BaseMessage]] = Field(default_factory=list)
    bound: list[list[str]] = Field(default_factory=list)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        self.bound.append([convert_to_openai_tool(t)["function"]["name"] for t in tools])
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        with self._lock:
            self.received.append(list(messages))
            if self.fn is not None:
                item = self.fn(list(messages))
            elif self.replies:
                item = self.replies.pop(0)
            else:
                raise AssertionError(f"script exhausted after {len(self.received) - 1} replies")
        while callable(item) and not isinstance(item, BaseException):
            item = item(list(messages))
        if isinstance(item, BaseException):
            raise item
        if isinstance(item, str):
            item = AIMessage(content=item)
        return ChatResult(generations=[ChatGeneration(message=item)])

    def kinds(self) -> list[str | None]:
        """The request kind of every call received (plan, revise, replan, act)."""
        return [request_kind(m) for m in self.received]


def tool_call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def ai_calls(*calls: dict[str, Any], usage: tuple[int, int] | None = None) -> AIMessage:
    meta = (
        {"input_tokens": usage[0], "output_tokens": usage[1], "total_tokens": sum(usage)}
        if usage
        else None
    )
    return AIMessage(content="", tool_calls=list(calls), usage_metadata=meta)


def last_observation(messages: list[BaseMessage]) -> Any:
    """The JSON of the last tool message (what the agent just observed)."""
    for m in reversed(messages):
        if isinstance(m, ToolMessage):
            return json.loads(m.content)
    raise AssertionError("no tool message")


def plan_text(tasks: list[dict[str, Any]], thought: str = "plan") -> str:
    return f"<thought>{thought}</thought>\n" + json.dumps({"tasks": tasks})


def node(
    nid: str, tool: str | None, args: dict[str, Any] | None = None, deps=("root",), done=False
):
    out: dict[str, Any] = {"id": nid, "desc": nid, "dep": list(deps), "status": done}
    if tool:
        out["name"] = tool
        out["para"] = args or {}
    return out


ROOT = {"id": "root", "desc": "request", "dep": [], "status": True}


def response(*deps: str) -> dict[str, Any]:
    return {"id": "response", "desc": "answer", "dep": list(deps), "status": False}


TRAVELLER = "Ana Silva"
EMAIL = "ana@example.com"
FLIGHT_ARGS = {"origin": "LIS", "destination": "KIX", "date": "2026-12-03"}

#: The travel chain as a plan: search -> quote -> book, references between them.
TRAVEL_PLAN = [
    ROOT,
    node("1", "search_flights", FLIGHT_ARGS),
    node("2", "quote_flight", {"flight_id": "${1.cheapest_flight_id}"}, deps=["1"]),
    node(
        "3",
        "book_flight",
        {"quote_id": "${2.quote_id}", "traveller_name": TRAVELLER, "contact_email": EMAIL},
        deps=["2"],
    ),
    response("3"),
]


def travel_react_policy(messages: list[BaseMessage]) -> AIMessage:
    """A competent ReAct agent for the travel chain: search -> quote -> book -> answer.

    It reads the last observation to fill the next call; every reply reports 10 input and 2
    output tokens.
    """
    usage = {"input_tokens": 10, "output_tokens": 2, "total_tokens": 12}
    seen = [m for m in messages if isinstance(m, ToolMessage)]
    if not seen:
        return AIMessage(
            content="",
            tool_calls=[tool_call("search_flights", FLIGHT_ARGS, "s1")],
            usage_metadata=usage,
        )
    obs = json.loads(seen[-1].content)
    if "cheapest_flight_id" in obs:
        call = tool_call("quote_flight", {"flight_id": obs["cheapest_flight_id"]}, "q1")
    elif "quote_id" in obs:
        args = {"quote_id": obs["quote_id"], "traveller_name": TRAVELLER, "contact_email": EMAIL}
        call = tool_call("book_flight", args, "b1")
    elif "booking_id" in obs:
        return AIMessage(
            content=f"Booked {obs['booking_id']} for {TRAVELLER}.", usage_metadata=usage
        )
    else:
        return AIMessage(content="I could not book the flight.", usage_metadata=usage)
    return AIMessage(content="", tool_calls=[call], usage_metadata=usage)


@pytest.fixture
def travel_task() -> Task:
    return Task(
        task_id="travel-book-1",
        suite="handmade",
        query=f"Book the cheapest flight LIS to KIX on 2026-12-03 for {TRAVELLER} ({EMAIL}).",
        tools=["search_flights", "quote_flight", "book_flight", "find_flight_offers"],
        checker=Checker(
            required_records=[
                RequiredRecord(
                    collection="flight_bookings",
                    where={"traveller": TRAVELLER, "email": EMAIL},
                    mention_key=True,
                )
            ]
        ),
    )


# --- custom worlds -----------------------------------------------------------------------


class CallLog:
    """Start/end times of every implementation call (thread-safe), to prove overlap."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls: list[tuple[str, float, float]] = []

    def add(self, name: str, start: float, end: float) -> None:
        with self.lock:
            self.calls.append((name, start, end))


def sleeper(
    name: str, seconds: float, log: CallLog | None = None, effect: bool = False
) -> ToolSpec:
    """A source tool that sleeps ``seconds`` and echoes its input ``x`` (an integer)."""

    def impl(args: dict[str, Any], ctx: Any) -> dict[str, Any]:
        t0 = time.perf_counter()
        time.sleep(seconds)
        if log is not None:
            log.add(name, t0, time.perf_counter())
        return {
            "value": args.get("x", 0) + 1,
            "id": ctx.new_id(name.upper()),
            "version": ctx.state.version,
        }

    return ToolSpec(
        name=name,
        description=f"sleeps {seconds}s and returns x + 1",
        parameters={
            "type": "object",
            "properties": {"x": {"type": "integer", "x-kind": "count"}},
            "required": [],
        },
        returns={
            "type": "object",
            "properties": {
                "value": {"type": "integer"},
                "id": {"type": "string"},
                "version": {"type": "integer"},
            },
        },
        category="action" if effect else "source",
        effects=[Effect(op="create", collection="made", key="id", fields={"x": "$arg.x"})]
        if effect
        else [],
        implementation=impl,
    )


def custom_task(tools: Sequence[ToolSpec], query: str = "run the tools") -> Task:
    return Task(task_id="custom-1", suite="handmade", query=query, tools=[t.name for t in tools])


def custom_world(tools: Sequence[ToolSpec], faults: Any = None) -> World:
    return World(list(tools), seed=7, faults=faults)


@pytest.fixture
def kit():
    """The helpers above as one namespace (tests import nothing from conftest directly)."""
    import types

    return types.SimpleNamespace(
        ScriptedChatModel=ScriptedChatModel,
        CallLog=CallLog,
        ai_calls=ai_calls,
        tool_call=tool_call,
        last_observation=last_observation,
        plan_text=plan_text,
        node=node,
        ROOT=ROOT,
        response=response,
        TRAVELLER=TRAVELLER,
        EMAIL=EMAIL,
        FLIGHT_ARGS=FLIGHT_ARGS,
        TRAVEL_PLAN=TRAVEL_PLAN,
        travel_react_policy=travel_react_policy,
        sleeper=sleeper,
        custom_task=custom_task,
        custom_world=custom_world,
    )
