"""The chat-model surface of the simulated agent: :class:`SimulatedChatModel` (LangChain
``BaseChatModel``; one :class:`~replan.models.simulated.turn.Turn` per request)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
)
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict, Field, PrivateAttr

from replan.core.plan import (
    Plan,
)
from replan.core.task import Task
from replan.core.wire import (
    request_kind,
)
from replan.models.simulated.actor import Actor
from replan.models.simulated.common import (
    ai_message,
    canonical_message,
    digest,
    message_text,
)
from replan.models.simulated.profiles import CompetenceProfile, load_profile
from replan.models.simulated.turn import Turn
from replan.models.simulated.visible import (
    View,
    read_plan,
)
from replan.models.tooling import OpenAIToolBinding


# ---------------------------------------------------------------------------------------------
class SimulatedChatModel(OpenAIToolBinding, BaseChatModel):
    """A deterministic, profile-driven agent policy with the chat-model interface.

    Construct it per task: ``SimulatedChatModel(task=task, profile="competent", seed=3)``.
    ``corpus`` defaults to :func:`replan.env.corpus.load_corpus`. It supports ``bind_tools``
    (tool calls) and ``with_structured_output`` (the reply is poured into the schema: a plan's
    ``thought`` and ``tasks``, or its text).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    task: Task
    profile: CompetenceProfile = Field(default_factory=lambda: load_profile("competent"))
    seed: int = 0
    corpus: Any = Field(default=None, exclude=True, repr=False)
    model_name: str = ""  # the label episodes record; default ``simulated:<profile>``

    _reads: dict[str, Plan] = PrivateAttr(default_factory=dict)

    def __init__(self, **data: Any):
        if "profile" in data and not isinstance(data["profile"], CompetenceProfile):
            data["profile"] = load_profile(data["profile"])
        super().__init__(**data)
        if not self.model_name:
            self.model_name = f"simulated:{self.profile.name}"
        if self.corpus is None:
            # late: importing the model package must not load the tool corpus (only a model
            # built without one does)
            from replan.env.corpus import load_corpus

            self.corpus = load_corpus()

    # -- LangChain surface ---------------------------------------------------------------------
    @property
    def _llm_type(self) -> str:
        return "replan-simulated"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"profile": self.profile.name, "seed": self.seed, "task": self.task.base_id}

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        tools = list(kwargs.get("tools") or [])
        msg = self.respond(messages, tools, kwargs.get("tool_choice"))
        return ChatResult(generations=[ChatGeneration(message=msg)])

    # -- the policy ------------------------------------------------------------------------------
    def respond(
        self,
        messages: Sequence[BaseMessage],
        tools: Sequence[Mapping[str, Any]] = (),
        tool_choice: Any = None,
    ) -> AIMessage:
        """The reply to ``messages`` with ``tools`` bound (a pure function of its inputs)."""
        if not messages:
            raise ValueError("the simulated model got an empty message list")
        names = [t.get("function", t).get("name") for t in tools]
        schema_tool = self._schema_tool(tools, tool_choice)
        world_tools = [t for t in tools if t is not schema_tool]
        key = digest([[canonical_message(m) for m in messages], sorted(n for n in names if n)])
        turn = Turn(self, messages, world_tools, key)
        kind = request_kind(messages) or "act"
        if kind == "act":  # ReAct play (the actor); a plan request is the turn's own
            acted = Actor(turn).run()
            msg = (
                acted
                if schema_tool is None
                else turn.structured(schema_tool, message_text(acted), kind)
            )
        elif schema_tool is not None:
            msg = turn.structured(schema_tool, turn.text_reply(kind), kind)
        else:
            msg = ai_message(turn.text_reply(kind))
        usage = dict(msg.usage_metadata or {})
        usage["input_tokens"] = max(1, sum(len(message_text(m)) for m in messages) // 4)
        usage["total_tokens"] = usage["input_tokens"] + usage.get("output_tokens", 0)
        msg.usage_metadata = usage  # type: ignore[assignment]
        return msg

    def _schema_tool(self, tools: Sequence[Mapping[str, Any]], choice: Any) -> Mapping | None:
        """The structured-output schema bound by ``with_structured_output``, if any."""
        if len(tools) != 1 or choice in (None, "auto", "none", False):
            return None
        name = tools[0].get("function", tools[0]).get("name")
        if name in self.task.tools or name in self.corpus.tools:
            return None
        return tools[0]

    def read(self, view: View) -> Plan:
        """The plan a careful reader writes for the visible request (cached per request)."""
        key = digest([view.query, sorted(view.specs)])
        got = self._reads.get(key)
        if got is None:
            got = read_plan(view)
            if len(self._reads) > 64:
                self._reads.clear()
            self._reads[key] = got
        return got
