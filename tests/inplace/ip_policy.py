"""A scripted chat model whose every reply is a pure function of the conversation it is shown.

It stands in for an LLM in the reproductions of public example agents (``ip_sql``,
``ip_travel``): like a real model it sees only its messages (system prompt, question, tool
results), never the fault schedule, so what it does under a fault follows from what the fault
made the tools say. ``bind_tools`` returns the model itself (the policy knows the tools by name).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult

Policy = Callable[[list[BaseMessage]], AIMessage]


class PolicyModel(BaseChatModel):
    """Replies ``policy(messages)``."""

    policy: Any
    model_name: str = "policy"

    @property
    def _llm_type(self) -> str:
        return "replan-test-policy"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> PolicyModel:
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        msg = self.policy(list(messages))
        return ChatResult(generations=[ChatGeneration(message=msg)])


def call(name: str, args: dict[str, Any], messages: Sequence[BaseMessage]) -> AIMessage:
    """A tool call with a fresh id (as a provider gives one)."""
    cid = f"call_{uuid.uuid4().hex[:12]}"
    return AIMessage(
        content="", tool_calls=[{"name": name, "args": args, "id": cid, "type": "tool_call"}]
    )


def say(text: str) -> AIMessage:
    return AIMessage(content=text)


def question(messages: Sequence[BaseMessage]) -> str:
    return next((str(m.content) for m in messages if isinstance(m, HumanMessage)), "")


def system(messages: Sequence[BaseMessage]) -> str:
    return next((str(m.content) for m in messages if isinstance(m, SystemMessage)), "")


def results(messages: Sequence[BaseMessage], tool: str) -> list[str]:
    """The contents of every tool message of ``tool``, in order."""
    names = {
        tc["id"]: tc["name"] for m in messages if isinstance(m, AIMessage) for tc in m.tool_calls
    }
    return [
        str(m.content)
        for m in messages
        if isinstance(m, ToolMessage) and (m.name or names.get(m.tool_call_id)) == tool
    ]


def parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def is_service_error(text: str) -> bool:
    """A result that says the service failed (an HTTP-like error, a timeout, a raised fault
    shown as ``Error: ...``), as a model reads it."""
    low = text.lower()
    return any(w in low for w in ("unavailable", "timed out", "timeout", "http 5", "http 4"))
