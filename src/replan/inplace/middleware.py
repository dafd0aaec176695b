"""``FaultInjectionMiddleware``: seeded tool faults and call recording for ``create_agent``.

    from langchain.agents import create_agent
    from langchain.agents.middleware import ToolRetryMiddleware
    from replan import FaultInjectionMiddleware
    from replan.inplace import FaultSchedule

    chaos = FaultInjectionMiddleware(FaultSchedule(mode="P1", target="get_rate"))
    agent = create_agent(model, tools, middleware=[ToolRetryMiddleware(), chaos])

Put it **last** in ``middleware`` (innermost, next to the tool): LangChain composes the first
middleware as the outermost, so the middleware before it (a retry, a fallback, an error
handler) meets the injected fault exactly as it would meet the tool's own failure. Each call is
judged and recorded by :class:`~replan.env.tool_wrapper.FaultSession` (the one tool wrapper);
``chaos.steps`` holds the record of its own session, and inside
:func:`replan.evaluate_in_place` the evaluation's session per episode takes over.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from langchain.agents.middleware import AgentMiddleware

from replan.core.trace import Step
from replan.env.tool_faults import FaultSchedule
from replan.env.tool_wrapper import FaultSession, call_of, current_session, round_of


def _messages(state: Any) -> Any:
    if isinstance(state, Mapping):
        return state.get("messages")
    return getattr(state, "messages", None)


class FaultInjectionMiddleware(AgentMiddleware):
    """Inject the faults of ``schedule`` into the agent's tool calls and record every call.

    ``schedule`` = ``None`` records only (and lets :func:`replan.evaluate_in_place` choose the
    faults per mode). ``task_id`` and ``seed`` select the episode's draw of a standalone schedule.
    """

    def __init__(
        self,
        schedule: FaultSchedule | None = None,
        *,
        task_id: str = "default",
        seed: int = 0,
    ) -> None:
        super().__init__()
        if schedule is not None and not isinstance(schedule, FaultSchedule):
            raise TypeError(
                f"FaultInjectionMiddleware: schedule must be a replan.inplace.FaultSchedule, got "
                f"{type(schedule).__name__}"
            )
        self.schedule = schedule
        self.tools = []  # registers no tools of its own
        self._task_id = task_id
        self._seed = seed
        self.session = FaultSession.from_schedule(schedule, task_id, seed)

    @property
    def steps(self) -> list[Step]:
        """The calls recorded by this middleware's own session."""
        return self.session.steps

    def reset(self) -> None:
        """Start a fresh episode: forget calls, activations and invocation counts."""
        self.session = FaultSession.from_schedule(self.schedule, self._task_id, self._seed)

    def _active(self) -> FaultSession:
        return current_session() or self.session

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        """Judge, inject, run (``handler``) and record one tool call."""
        session = self._active()
        name = request.tool.name if request.tool is not None else request.tool_call["name"]
        return session.run(
            request.tool,
            call_of(name, {**request.tool_call, "type": "tool_call"}),
            lambda: handler(request),
            round=round_of(_messages(request.state)),
        )

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        """The async form of :meth:`wrap_tool_call`."""
        session = self._active()
        name = request.tool.name if request.tool is not None else request.tool_call["name"]
        return await session.arun(
            request.tool,
            call_of(name, {**request.tool_call, "type": "tool_call"}),
            lambda: handler(request),
            round=round_of(_messages(request.state)),
        )


__all__ = ["FaultInjectionMiddleware"]
