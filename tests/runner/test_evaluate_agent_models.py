"""``evaluate_agent`` with the model a user already has: a chat model object used as it is, or a
provider spec on an OpenAI-compatible server (``base_url``). No network: the server is
replan's fake one on 127.0.0.1."""

from __future__ import annotations

import threading
from typing import Any

from langchain.agents import create_agent
from pydantic import PrivateAttr

from replan.api import evaluate_agent
from replan.inplace import ScriptedToolModel
from replan.models.fake_openai import FakeOpenAI


class ClientModel(ScriptedToolModel):
    """A chat model holding what real clients hold (an HTTP pool's lock): it cannot be copied
    or pickled, as ``ChatOpenAI`` cannot. It answers at once, calling no tool."""

    _pool_lock: Any = PrivateAttr(default_factory=threading.RLock)


SEEN: list[Any] = []  # the model each episode's factory received


def make_agent(tools: list[Any], model: Any) -> Any:
    SEEN.append(model)
    return create_agent(model, tools)


def test_a_chat_model_object_is_used_as_it_is(tmp_path) -> None:
    model = ClientModel(plan=[], answer="I cannot do that.", model_name="acme-large")
    SEEN.clear()
    res = evaluate_agent(make_agent, model=model, limit=2, out=tmp_path / "r", name="mine")
    assert len(res.episodes) == 2
    assert len(SEEN) == 2 and all(m is model for m in SEEN)  # the object itself, each episode
    assert {e.end_reason.value for e in res.episodes} == {"answered"}
    assert {e.model for e in res.episodes} == {"ClientModel:acme-large"}
    assert {e.final_answer for e in res.episodes} == {"I cannot do that."}
    assert not any(model.callbacks or [])  # the user's object is left as it was given


def test_a_provider_spec_reaches_its_base_url(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAI(0.0, tool_turns=1) as server:
        res = evaluate_agent(
            lambda tools, model: create_agent(model, tools),
            model="openai:fake",
            base_url=server.base_url,
            limit=1,
            out=tmp_path / "r",
            name="mine",
        )
        assert server.requests >= 2  # one tool call, then the answer
    (ep,) = res.episodes
    assert ep.end_reason.value == "answered" and len(ep.steps) == 1
