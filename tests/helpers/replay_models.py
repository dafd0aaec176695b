"""Replanner models for the ParaRecover tests: a chat model that hands back fixed texts."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from replan.core.task import Task
from replan.core.trace import Episode
from replan.graphs import run_episode
from replan.nodes.config import AgentConfig
from replan.suites.pararecover import PROTOCOL_BUDGETS


class Echo(BaseChatModel):
    """Answers every request with ``texts`` in turn (the last one again when they run out);
    ``texts`` may hold a function of the messages. ``received`` keeps what it was sent."""

    texts: list[Any]
    received: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "echo"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Echo:
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, **kw: Any) -> ChatResult:
        self.received.append(list(messages))
        item = self.texts[min(len(self.received), len(self.texts)) - 1]
        text = item(messages) if isinstance(item, Callable) else item
        if isinstance(text, BaseException):
            raise text
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=str(text)))])


def run_protocol(task: Task, *texts: Any, seed: int = 0, **budgets: Any) -> Episode:
    """``replanner_loop`` from the task's replan point under ParaRecover's protocol budgets
    (``budgets`` replace them), the replanner answering ``texts``."""
    cfg = AgentConfig(**{**PROTOCOL_BUDGETS, **budgets})
    return run_episode("replanner_loop", Echo(texts=list(texts)), task, config=cfg, seed=seed)
