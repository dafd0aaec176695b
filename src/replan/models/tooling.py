"""Tool binding shared by replan's own chat models (the simulated agent and the local LLM)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.utils.function_calling import convert_to_openai_tool

from replan.core.tools import ToolSpec


class OpenAIToolBinding:
    """``bind_tools`` for a BaseChatModel that reads OpenAI-style tool dicts from its kwargs.

    Accepts LangChain tools, functions, pydantic classes, OpenAI dicts and ToolSpecs.
    """

    def bind_tools(
        self,
        tools: Sequence[Any],
        *,
        tool_choice: str | dict | bool | None = None,
        **kwargs: Any,
    ) -> Any:
        formatted = [
            t.to_openai() if isinstance(t, ToolSpec) else convert_to_openai_tool(t) for t in tools
        ]
        if tool_choice is not None:
            kwargs["tool_choice"] = tool_choice
        return self.bind(tools=formatted, **kwargs)  # type: ignore[attr-defined]
