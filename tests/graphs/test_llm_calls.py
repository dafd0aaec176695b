"""Model calls: transient-error classification, bounded retries with backoff, usage, redaction."""

from __future__ import annotations

import httpx
import openai
import pytest
from langchain_core.messages import AIMessage, HumanMessage

from replan.nodes.config import RetrySettings
from replan.nodes.llm import (
    ModelCallError,
    call_model,
    describe_error,
    is_transient,
    model_label,
    redact,
)

REQ = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")


def status_error(cls, status: int):
    return cls(f"status {status}", response=httpx.Response(status, request=REQ), body=None)


class RateLimitError(Exception):  # a provider SDK we do not import: judged by class name
    pass


class ServiceUnavailable(Exception):  # google api_core style
    pass


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (status_error(openai.RateLimitError, 429), True),
        (status_error(openai.InternalServerError, 503), True),
        (status_error(openai.AuthenticationError, 401), False),
        (status_error(openai.BadRequestError, 400), False),
        (openai.APITimeoutError(request=REQ), True),
        (openai.APIConnectionError(request=REQ), True),
        (httpx.ConnectTimeout("slow"), True),
        (httpx.RemoteProtocolError("peer closed"), True),
        (
            httpx.HTTPStatusError("bad", request=REQ, response=httpx.Response(502, request=REQ)),
            True,
        ),
        (
            httpx.HTTPStatusError("nf", request=REQ, response=httpx.Response(404, request=REQ)),
            False,
        ),
        (RateLimitError("slow down"), True),
        (ServiceUnavailable("later"), True),
        (TimeoutError(), True),
        (ConnectionResetError(), True),
        (ValueError("bad schema"), False),
        (KeyError("x"), False),
    ],
)
def test_is_transient(exc, expected):
    assert is_transient(exc) is expected


def test_is_transient_sees_the_cause_of_a_wrapper():
    try:
        try:
            raise httpx.ReadTimeout("read")
        except httpx.ReadTimeout as inner:
            raise RuntimeError("the client failed") from inner
    except RuntimeError as outer:
        assert is_transient(outer)


def test_retries_transient_failures_with_exponential_backoff(kit):
    model = kit.ScriptedChatModel(
        replies=[
            status_error(openai.RateLimitError, 429),
            status_error(openai.InternalServerError, 503),
            AIMessage(
                content="hello",
                usage_metadata={"input_tokens": 7, "output_tokens": 3, "total_tokens": 10},
            ),
        ]
    )
    waits: list[float] = []
    reply = call_model(
        model,
        [HumanMessage(content="hi")],
        retry=RetrySettings(max_attempts=4, initial_wait_s=0.5, max_wait_s=8, jitter_s=0),
        sleep=waits.append,
    )
    assert reply.output.content == "hello"
    assert reply.attempts == 3 and reply.retries == 2
    assert waits == [0.5, 1.0]  # 0.5 * 2**0, 0.5 * 2**1
    assert (reply.usage.model_calls, reply.usage.input_tokens, reply.usage.output_tokens) == (
        1,
        7,
        3,
    )


def test_backoff_is_capped_and_jittered(kit):
    model = kit.ScriptedChatModel(replies=[TimeoutError()] * 5 + ["ok"])
    waits: list[float] = []
    call_model(
        model,
        [HumanMessage(content="hi")],
        retry=RetrySettings(max_attempts=6, initial_wait_s=1, max_wait_s=3, jitter_s=0.25),
        sleep=waits.append,
    )
    base = [1, 2, 3, 3, 3]
    assert len(waits) == 5
    assert all(b <= w <= b + 0.25 for w, b in zip(waits, base, strict=True))


def test_gives_up_after_max_attempts(kit):
    model = kit.ScriptedChatModel(replies=[status_error(openai.RateLimitError, 429)] * 3)
    with pytest.raises(ModelCallError) as info:
        call_model(
            model,
            [HumanMessage(content="hi")],
            retry=RetrySettings(max_attempts=3, initial_wait_s=0, jitter_s=0),
            sleep=lambda s: None,
        )
    assert info.value.attempts == 3 and info.value.transient
    assert "RateLimitError" in info.value.message and "gave up after 3" in info.value.message
    assert not model.replies  # all three attempts were made


def test_non_transient_failure_is_not_retried(kit):
    model = kit.ScriptedChatModel(replies=[status_error(openai.AuthenticationError, 401), "x"])
    with pytest.raises(ModelCallError) as info:
        call_model(model, [HumanMessage(content="hi")], sleep=lambda s: None)
    assert info.value.attempts == 1 and not info.value.transient
    assert model.replies == ["x"]


def test_secrets_never_reach_the_error_text(monkeypatch):
    monkeypatch.setenv("MY_PROVIDER_API_KEY", "zq9-not-a-pattern-secret-77")
    exc = RuntimeError(
        "Incorrect API key provided: sk-proj-abcdefgh12345678; header Authorization: Bearer "
        "tok_abcdefghijkl; env zq9-not-a-pattern-secret-77; api_key=hunter22secret"
    )
    text = describe_error(exc)
    for secret in ("sk-proj-abcdefgh12345678", "tok_abcdefghijkl", "zq9-not", "hunter22secret"):
        assert secret not in text
    assert text.startswith("RuntimeError: Incorrect API key provided: ***")
    assert redact("plain text stays") == "plain text stays"


def test_model_label_is_a_readable_name(kit):
    assert model_label(kit.ScriptedChatModel()) == "scripted-model"

    class Anonymous:
        api_key = "sk-abcdefghijklmnop"

    assert model_label(Anonymous()) == "Anonymous"
