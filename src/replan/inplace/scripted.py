"""A scripted tool-calling chat model, so fault tests of your agent run offline in CI.

It is not a language model and decides nothing about your tools: it follows a fixed plan of
tool calls (each call's arguments may be computed from the results so far) and writes a fixed
answer from those results. What it does when a call fails is stated, not learned:

- ``on_error="continue"`` (default): it goes on with the next call as if nothing happened,
  and when a later argument cannot be computed (the result it needs is an error) it gives up
  with an answer that says so;
- ``on_error="retry"``: it re-issues the failed call up to ``retries`` times, then continues;
- ``on_error="reroute"``: a plan step may name alternatives, ``(("rates_a", "rates_b"), args)``;
  after a failed call it calls the next alternative with the same arguments, then continues.

So a scripted run shows what your *tools, middleware and graph* do around the model — a retry
middleware's effect is mechanical and honest — and the same test runs unchanged with a real
model. The plan position is read from the conversation (stateless), so one model instance
serves any number of episodes, in parallel.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Sequence
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult

Args = dict[str, Any] | Callable[[list[Any]], dict[str, Any]]
Answer = str | Callable[[list[Any]], str]


def _call(fn: Callable[..., Any], results: list[Any], question: str) -> Any:
    """``fn(results)``, or ``fn(results, question)`` when it takes two arguments."""
    try:
        n = len(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        n = 1
    return fn(results, question) if n >= 2 else fn(results)


def _parsed(msg: ToolMessage) -> Any:
    text = msg.text if hasattr(msg, "text") else str(msg.content)
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return text


class ScriptedToolModel(BaseChatModel):
    """Follows ``plan`` = ``[(tool, args or fn(results) -> args), ...]`` then answers.

    ``results`` passed to the functions are the parsed contents of the tool messages of the
    plan's calls so far (JSON when they parse, else the text), in plan order; a function of two
    arguments also gets the question (the first human message). ``answer`` is a string or
    ``fn(results[, question]) -> str``. ``bind_tools`` returns the model itself.
    """

    plan: list[tuple[Any, Any]]
    answer: Any = "done"
    on_error: Literal["continue", "retry", "reroute"] = "continue"
    retries: int = 1
    model_name: str = "scripted"

    @property
    def _llm_type(self) -> str:
        return "replan-scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedToolModel:
        return self

    def _next(self, messages: list[BaseMessage]) -> AIMessage:
        outcomes: list[tuple[str, Any, bool]] = []  # (tool, result, failed) per executed call
        issued: dict[str, str] = {}
        question = ""
        for m in messages:
            if isinstance(m, HumanMessage) and not question:
                question = m.text if hasattr(m, "text") else str(m.content)
            elif isinstance(m, AIMessage):
                for tc in m.tool_calls:
                    issued[str(tc.get("id"))] = tc["name"]
            elif isinstance(m, ToolMessage) and m.tool_call_id in issued:
                failed = m.status == "error"
                outcomes.append((issued[m.tool_call_id], _parsed(m), failed))
        # position in the plan: successful calls advance it; a failure advances it unless retried
        results: list[Any] = []
        pos = 0
        tries = 0
        for _, result, failed in outcomes:
            if failed and self.on_error in ("retry", "reroute") and tries < self._budget(pos):
                tries += 1
                continue
            results.append(result)
            pos += 1
            tries = 0
        n = len(outcomes)
        if pos >= len(self.plan):
            return self._answer(results, question)
        names, args = self.plan[pos]
        if isinstance(names, str):
            names = (names,)
        name = names[min(tries, len(names) - 1)] if self.on_error == "reroute" else names[0]
        if callable(args):
            try:
                args = _call(args, results, question)
            except Exception as exc:  # the result it needs is missing or an error
                return AIMessage(
                    content=f"I could not complete the task: the {name} step failed ({exc})."
                )
        return AIMessage(
            content="",
            tool_calls=[{"name": name, "args": dict(args), "id": f"call_{n}", "type": "tool_call"}],
        )

    def _budget(self, pos: int) -> int:
        """How many failures at plan step ``pos`` are followed by another attempt."""
        if pos >= len(self.plan):
            return 0
        if self.on_error == "reroute":
            names = self.plan[pos][0]
            return 0 if isinstance(names, str) else len(names) - 1
        return self.retries

    def _answer(self, results: list[Any], question: str) -> AIMessage:
        if callable(self.answer):
            try:
                text = _call(self.answer, results, question)
            except Exception as exc:
                text = f"I could not complete the task ({exc})."
        else:
            text = str(self.answer)
        return AIMessage(content=text)

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._next(list(messages)))])


__all__ = ["ScriptedToolModel"]
