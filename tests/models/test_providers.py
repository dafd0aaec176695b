"""``make_model`` for real providers: the real langchain-openai client against a local server.

The server (127.0.0.1, started by the test) speaks the OpenAI chat-completions protocol and
serves a script: rate limits, server errors, malformed tool calls, then real completions. The
episodes run through the real ReAct graph, whose model calls retry transient failures with
``replan.nodes.llm.call_model`` (the client's own retries are off).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from replan.core.trace import EndReason
from replan.graphs import run_episode
from replan.models import make_model
from replan.nodes.config import AgentConfig, RetrySettings

from .conftest import quote_task

pytest.importorskip("langchain_openai")

FAKE_KEY = "sk-test-Zq81UNIQUEfakeKEY0042abcdef"
FAST = AgentConfig(retry=RetrySettings(max_attempts=4, initial_wait_s=0, max_wait_s=0, jitter_s=0))

Reply = tuple[int, dict[str, Any]]
#: a reply that never comes: the handler holds the connection until the test ends
HANG: Reply = (0, {})


def completion(message: dict[str, Any]) -> Reply:
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return 200, {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "stub-model",
        "choices": [
            {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}
        ],
        "usage": {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19},
    }


def tool_call(name: str, arguments: str, call_id: str = "call_1") -> Reply:
    return completion(
        {
            "content": None,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": arguments},
                }
            ],
        }
    )


def answer(text: str) -> Reply:
    return completion({"content": text})


def error(status: int, message: str, kind: str = "server_error") -> Reply:
    return status, {"error": {"message": message, "type": kind, "code": None}}


class Stub:
    """A scripted OpenAI-compatible server; ``requests`` records what it received.

    A reply may carry headers as a third item (``Retry-After``); :data:`HANG` holds the
    request open until :meth:`release` (the fixture releases every stub at teardown)."""

    def __init__(self, script: list[Reply] | Callable[[int], Reply]):
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self.released = threading.Event()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stub.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "body": body}
                )
                i = len(stub.requests) - 1
                reply = (
                    stub.script(i)
                    if callable(stub.script)
                    else stub.script[min(i, len(stub.script) - 1)]
                )
                status, payload = reply[0], reply[1]
                if status == 0:  # hang: accept the request, never answer
                    stub.released.wait(120)
                    return
                data = json.dumps(payload).encode()
                self.send_response(status)
                for name, value in (reply[2] if len(reply) > 2 else {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"


@pytest.fixture
def serve() -> Iterator[Callable[[Any], Stub]]:
    stubs: list[Stub] = []

    def start(script: Any) -> Stub:
        stub = Stub(script)
        stub.thread.start()
        stubs.append(stub)
        return stub

    yield start
    for stub in stubs:
        stub.released.set()
        stub.server.shutdown()
        stub.server.server_close()


def model_for(stub: Stub):
    return make_model("openai:stub-model", base_url=stub.base_url, api_key=FAKE_KEY, temperature=0)


SEARCH = json.dumps({"origin": "LIS", "destination": "KIX", "date": "2026-12-03"})


def test_transient_failures_are_retried_and_the_episode_completes(serve) -> None:
    task = quote_task()
    stub = serve(
        [
            error(429, "Rate limit reached", "rate_limit_error"),
            error(503, "upstream overloaded"),
            tool_call("search_flights", SEARCH),
            tool_call("quote_flight", json.dumps({"flight_id": "FL-LISKIX-20261203-1"}), "call_2"),
            answer("Quoted the cheapest flight FL-LISKIX-20261203-1."),
        ]
    )
    ep = run_episode("react", model_for(stub), task, config=FAST)
    assert ep.end_reason is EndReason.ANSWERED, ep.error
    assert [s.call.tool for s in ep.steps] == ["search_flights", "quote_flight"]
    assert all(s.verdict.ok for s in ep.steps)
    assert len(stub.requests) == 5  # two failures retried, then three real turns
    assert ep.usage.model_calls == 3 and ep.usage.input_tokens == 36
    assert ep.model == "stub-model"
    sent = stub.requests[2]["body"]
    assert {t["function"]["name"] for t in sent["tools"]} == set(task.tools)
    assert stub.requests[3]["body"]["messages"][-1]["role"] == "tool"


def test_a_malformed_tool_call_is_recorded_not_lost(serve) -> None:
    stub = serve(
        [
            tool_call("search_flights", '{"origin": "LIS", "destination": '),
            answer("I could not search."),
        ]
    )
    ep = run_episode("react", model_for(stub), quote_task(), config=FAST)
    assert ep.end_reason is EndReason.ANSWERED
    assert len(ep.steps) == 1 and not ep.steps[0].verdict.ok
    assert "could not be read" in ep.steps[0].observation["message"]


def test_a_model_that_keeps_failing_ends_the_episode_and_the_run_goes_on(serve) -> None:
    task = quote_task()
    down = serve(lambda i: error(503, "service unavailable"))
    ep = run_episode("react", model_for(down), task, config=FAST)
    assert ep.end_reason is EndReason.MODEL_ERROR
    assert "503" in ep.error or "InternalServerError" in ep.error
    assert len(down.requests) == FAST.retry.max_attempts  # bounded: no retries in the client
    up = serve([tool_call("search_flights", SEARCH), answer("Found flights.")])
    assert run_episode("react", model_for(up), task, config=FAST).end_reason is EndReason.ANSWERED


def test_the_api_key_is_used_but_never_recorded(serve, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    stub = serve(
        lambda i: error(401, f"Incorrect API key provided: {FAKE_KEY}.", "invalid_request_error")
    )
    ep = run_episode("react", model_for(stub), quote_task(), config=FAST)
    assert stub.requests[0]["headers"]["authorization"] == f"Bearer {FAKE_KEY}"
    assert len(stub.requests) == 1  # a 401 is not transient: no retry
    assert ep.end_reason is EndReason.MODEL_ERROR
    assert FAKE_KEY not in ep.to_json()
    assert FAKE_KEY not in caplog.text
    assert FAKE_KEY not in repr(model_for(stub))


def test_specs_and_errors() -> None:
    model = make_model("openai:gpt-4o-mini", base_url="http://127.0.0.1:9/v1", api_key=FAKE_KEY)
    assert model.max_retries == 0
    with pytest.raises(ValueError, match="provider"):
        make_model("gpt-4o-mini")
    with pytest.raises(ValueError, match="nosuchprovider"):
        make_model("nosuchprovider:model")
    with pytest.raises(ValueError, match="unknown local model"):
        make_model("local:llama-70b")


# -- bounded in time (issue 17) -------------------------------------------------------------------
def test_every_provider_request_has_a_timeout(monkeypatch) -> None:
    from replan.models.providers import DEFAULT_TIMEOUT_S, TIMEOUT_ENV

    monkeypatch.delenv(TIMEOUT_ENV, raising=False)
    url = "http://127.0.0.1:9/v1"
    assert (
        make_model("openai:m", base_url=url, api_key=FAKE_KEY).request_timeout == DEFAULT_TIMEOUT_S
    )
    assert make_model("openai:m", base_url=url, api_key=FAKE_KEY, timeout=5).request_timeout == 5
    monkeypatch.setenv(TIMEOUT_ENV, "7.5")
    assert make_model("openai:m", base_url=url, api_key=FAKE_KEY).request_timeout == 7.5
    monkeypatch.setenv(TIMEOUT_ENV, "soon")
    with pytest.raises(ValueError, match=TIMEOUT_ENV):
        make_model("openai:m", base_url=url, api_key=FAKE_KEY)


def test_a_server_that_never_answers_ends_the_episode_with_model_error(serve) -> None:
    import time

    stub = serve(lambda i: HANG)
    model = make_model("openai:stub-model", base_url=stub.base_url, api_key=FAKE_KEY, timeout=0.5)
    cfg = AgentConfig(
        retry=RetrySettings(max_attempts=2, initial_wait_s=0, max_wait_s=0, jitter_s=0)
    )
    t0 = time.perf_counter()
    ep = run_episode("react", model, quote_task(), config=cfg)
    assert time.perf_counter() - t0 < 20  # 2 attempts x 0.5 s, not forever
    assert ep.end_reason is EndReason.MODEL_ERROR
    assert "Timeout" in (ep.error or ""), ep.error
    assert len(stub.requests) == 2  # the timeout is transient: retried, then given up


def test_retry_after_is_honoured(serve) -> None:
    from replan.nodes.llm import RETRY_AFTER_CAP_S, call_model, retry_after_s

    stub = serve(
        [
            (*error(429, "slow down", "rate_limit_error"), {"Retry-After": "3"}),
            (*error(503, "busy"), {"retry-after-ms": "1500"}),
            (*error(429, "much later", "rate_limit_error"), {"Retry-After": "86400"}),
            answer("ok"),
        ]
    )
    waits: list[float] = []
    model = model_for(stub)
    from langchain_core.messages import HumanMessage

    reply = call_model(
        model,
        [HumanMessage(content="hi")],
        retry=RetrySettings(max_attempts=4, initial_wait_s=0, max_wait_s=0, jitter_s=0),
        sleep=waits.append,
    )
    assert reply.attempts == 4 and reply.output.content == "ok"
    assert waits == [3.0, 1.5, RETRY_AFTER_CAP_S]  # the backoff alone would wait 0 s
    assert retry_after_s(ValueError("no response")) is None


def test_an_episode_over_its_deadline_ends_with_timeout(serve, tmp_path) -> None:
    import asyncio
    import time

    from replan.core.task import Task
    from replan.runner.experiment import Job, RunConfig, run_job

    stub = serve(lambda i: HANG)
    cfg = RunConfig(base_url=stub.base_url, episode_timeout_s=1.0, model_timeout_s=60)
    job = Job(quote_task(), "react", "openai:stub-model", 0)
    assert isinstance(job.task.parse(), Task)
    t0 = time.perf_counter()

    async def go():
        return await run_job(job, cfg)

    loop = asyncio.new_event_loop()
    try:
        ep = loop.run_until_complete(go())
    finally:
        loop.close()  # does not wait for the abandoned model call
    assert time.perf_counter() - t0 < 15
    assert ep.end_reason is EndReason.TIMEOUT
    assert "deadline of 1 s" in (ep.error or "")
    assert ep.task_id == job.task.task_id and ep.model == "openai:stub-model"


def test_a_hanging_server_does_not_hang_replan_run(serve, tmp_path) -> None:
    import os
    import sqlite3
    import subprocess
    import sys
    import time

    stub = serve(lambda i: HANG)
    out = tmp_path / "r"
    t0 = time.perf_counter()
    proc = subprocess.run(
        [
            *(sys.executable, "-m", "replan.cli", "run", "--model", "openai:stub-model"),
            *("--base-url", stub.base_url, "--agents", "react", "--limit", "2"),
            *("--model-timeout", "0.5", "--episode-timeout", "3", "--out", str(out)),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "CI": "1", "OPENAI_API_KEY": FAKE_KEY},
    )
    assert proc.returncode == 1, proc.stderr  # nothing ran to a verdict: said, non-zero
    assert time.perf_counter() - t0 < 100
    with sqlite3.connect(out / "results.sqlite") as c:
        reasons = [r for (r,) in c.execute("SELECT end_reason FROM episodes")]
    assert len(reasons) == 2 and set(reasons) <= {"timeout", "model_error"}, reasons
    assert FAKE_KEY not in proc.stdout + proc.stderr


def test_a_key_inside_the_base_url_stays_out_of_logs_and_errors(serve, caplog) -> None:
    from replan.core.redact import redact

    caplog.set_level(logging.DEBUG)
    secret = "sk-Zq81URLfakeKEY0042secret"
    stub = serve([tool_call("search_flights", SEARCH), answer("Found flights.")])
    url = stub.base_url.replace("http://", f"http://user:{secret}@")
    model = make_model("openai:stub-model", base_url=url, api_key=FAKE_KEY, temperature=0)
    ep = run_episode("react", model, quote_task(), config=FAST)
    assert ep.end_reason is EndReason.ANSWERED, ep.error
    assert "HTTP Request" in caplog.text  # httpx did log the URL it called...
    assert secret not in caplog.text  # ...without the key
    assert secret not in ep.to_json()
    down = url.replace(str(stub.server.server_address[1]), "9")  # nothing listens there
    ep = run_episode(
        "react", make_model("openai:m", base_url=down, api_key=FAKE_KEY), quote_task(), config=FAST
    )
    assert ep.end_reason is EndReason.MODEL_ERROR and secret not in (ep.error or "")
    assert redact(f"POST {url}/chat/completions") == f"POST {redact(url)}/chat/completions"
