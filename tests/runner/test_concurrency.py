"""--concurrency means what it says, and per-endpoint limits hold every model call of a run.

Counted where a provider counts: on the server. ``FakeOpenAI`` answers after a fixed latency and
records the most requests it had in flight at once.
"""

from __future__ import annotations

import asyncio
import os

import httpx
import pytest
from langchain_core.messages import HumanMessage

from replan.models import make_model
from replan.models.fake_openai import FakeOpenAI
from replan.runner.experiment import LocalBackend, RunConfig, arun
from replan.runner.limits import EndpointBudget, LimitCallbacks, Limits, LocalLimiter, limit_model
from replan.runner.store import ResultsStore
from replan.suites import load_suite

#: more than Python's default executor gives on this machine: min(32, cores + 4)
CONCURRENCY = max(12, min(32, (os.cpu_count() or 1) + 4) + 4)


@pytest.fixture(scope="module")
def tasks():
    return load_suite("toolmaze")[: 2 * CONCURRENCY]


def _run(tasks, tmp_path, server, concurrency, **limits):
    cfg = RunConfig(
        agents=["react"],
        models=["openai:fake"],
        base_url=server.base_url,
        concurrency=concurrency,
        limit=len(tasks),
        **limits,
    )
    backend = LocalBackend(concurrency)
    outcome = asyncio.run(arun(cfg, tmp_path, tasks=tasks, backend=backend))
    return outcome, backend


def test_the_server_sees_as_many_calls_at_once_as_the_concurrency_asked(tasks, tmp_path):
    """Each episode makes 11 calls of 0.3 s: the first wave of episodes overlaps for seconds."""
    with FakeOpenAI(0.3, tool_turns=10) as server:
        outcome, backend = _run(tasks, tmp_path, server, CONCURRENCY)
        assert outcome.failures == 0
        assert server.max_in_flight == CONCURRENCY
        stats = backend.limiter.stats()["openai:fake"]
        assert stats["peak_in_flight"] == CONCURRENCY
        assert stats["calls"] == server.requests and stats["in_flight"] == 0
    with ResultsStore(tmp_path) as store:
        assert len(store.episodes()) == len(tasks)


def test_the_fake_server_adds_no_delay_of_its_own():
    """Its latency is the one it is given: a reply is not held back by Nagle's algorithm
    waiting for the client's delayed ACK (40 ms a request before, over every measurement)."""
    import http.client
    import time

    with FakeOpenAI(0.0) as server:
        conn = http.client.HTTPConnection(*server.server.server_address, timeout=10)
        t0 = time.perf_counter()
        for _ in range(25):  # one keep-alive connection, as a client's pool keeps
            conn.request("GET", "/stats")
            conn.getresponse().read()
        took = time.perf_counter() - t0
        conn.close()
    assert took < 0.5  # 25 x 40 ms = 1 s with the delayed ACKs


def test_max_in_flight_caps_the_calls_of_the_whole_run(tasks, tmp_path):
    with FakeOpenAI(0.2, tool_turns=3) as server:
        outcome, backend = _run(tasks[:8], tmp_path, server, 8, max_in_flight=3)
        assert outcome.failures == 0
        assert server.max_in_flight == 3
        assert backend.limiter.stats()["openai:fake"]["waits"] > 0


def test_the_budget_by_hand():
    """In flight, tokens per minute and a server's pause, on a fake clock."""
    b = EndpointBudget(Limits(max_in_flight=2, tokens_per_minute=100))
    assert b.try_acquire(0.0) == 0 and b.try_acquire(1.0) == 0
    assert b.try_acquire(2.0) > 0  # two in flight
    b.release(3.0, tokens=60)
    assert b.try_acquire(4.0) == 0
    b.release(5.0, tokens=50)  # 110 tokens in the last minute
    b.release(5.0)
    assert b.try_acquire(6.0) == pytest.approx(57.0)  # until the first 60 tokens age out
    assert b.try_acquire(63.5) == 0  # 50 tokens left in the window
    b.release(64.0)
    b.pause(64.0, 10.0)
    assert b.try_acquire(70.0) == pytest.approx(4.0)
    assert b.stats()["peak_in_flight"] == 2 and b.stats()["calls"] == 4
    with pytest.raises(ValueError, match="max_in_flight"):
        Limits(max_in_flight=0)


def test_requests_per_minute_by_hand():
    """3 a minute: one every 20 s (at most one interval early), and never 4 in 60 s."""
    b = EndpointBudget(Limits(requests_per_minute=3))
    assert b.try_acquire(0.0) == 0  # the next is due at 20, and may come one interval early
    assert b.try_acquire(0.0) == 0  # due at 40 now
    assert b.try_acquire(1.0) == pytest.approx(19.0)  # 40 less one interval
    assert b.try_acquire(20.0) == 0  # due at 60: 3 requests in [0, 20]
    # the spacing allows one at 40, the minute's window not before the two at 0 age out
    assert b.try_acquire(40.0) == pytest.approx(20.0)
    assert b.try_acquire(60.0) == 0


def test_retry_after_pauses_the_endpoint_for_every_caller():
    limiter = LocalLimiter()
    slept: list[float] = []
    handler = LimitCallbacks(limiter, "openai:x", sleep=slept.append)
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    error = httpx.HTTPStatusError(
        "429", request=request, response=httpx.Response(429, headers={"retry-after": "30"})
    )
    handler.on_chat_model_start({}, [], run_id=_uuid(1))
    handler.on_llm_error(error, run_id=_uuid(1))
    assert limiter.stats()["openai:x"]["failed_calls"] == 1
    assert limiter.try_acquire("openai:x") > 25  # everyone waits, not only the caller


def test_a_limited_model_is_limited_once_and_counts_its_calls():
    with FakeOpenAI(0.0) as server:
        limiter = LocalLimiter()
        model = make_model("openai:fake", base_url=server.base_url)
        assert limit_model(limit_model(model, limiter, "e"), limiter, "e") is model
        assert sum(isinstance(h, LimitCallbacks) for h in model.callbacks) == 1
        model.invoke([HumanMessage(content="hi")])
        stats = limiter.stats()["e"]
        assert stats["calls"] == 1 and stats["in_flight"] == 0


def _uuid(n: int):
    from uuid import UUID

    return UUID(int=n)


def _replan_run(server, out, *args: str):
    """``replan run`` of react on the fake server, without a terminal (progress lines at every
    tick), as a user runs it."""
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "replan.cli", "run", "--agents", "react", "--model", "openai:fake"]
    return subprocess.run(
        [*cmd, "--base-url", server.base_url, *args, "--out", str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, "REPLAN_PROGRESS_EVERY": "0", "OPENAI_API_KEY": ""},
        timeout=600,
    )


def test_replan_run_holds_its_limit_and_says_so_in_its_progress_lines(tasks, tmp_path):
    """The CLI end to end: --max-in-flight is what the server sees; without a terminal the
    progress lines carry the rate, the ETA and the model calls."""
    with FakeOpenAI(0.2, tool_turns=3) as server:
        proc = _replan_run(
            server, tmp_path / "r", "--limit", "8", "--concurrency", "8", "--max-in-flight", "2"
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert server.max_in_flight == 2
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("progress:")]
    assert lines, proc.stderr
    assert all("/s · ETA" in ln and "model calls in flight" in ln for ln in lines), lines


def test_worker_processes_share_one_limit(tasks, tmp_path):
    """--workers 2 with --concurrency 6 would keep 12 calls in flight; --max-in-flight 5 is
    one budget for both processes, and the server never sees more than 5. The progress lines
    say how many workers run. (Calls of 1 s: the first calls of all 12 episodes are due
    within it, on loaded cores too.)"""
    with FakeOpenAI(1.0, tool_turns=1) as server:
        proc = _replan_run(
            server,
            tmp_path / "r",
            *("--limit", "12", "--workers", "2", "--concurrency", "6", "--max-in-flight", "5"),
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert server.max_in_flight == 5
        assert server.requests == 12 * 2
    with ResultsStore(tmp_path / "r") as store:
        episodes = store.episodes()
    assert len(episodes) == 12 and all(e.end_reason.value != "model_error" for e in episodes)
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("progress:")]
    assert lines and all("· 2 workers" in ln for ln in lines), lines
    assert "· 2 workers · model calls in flight" in lines[-1], lines[-1]


def _run_workers(tasks, tmp_path, server, **options):
    """ReAct on ``tasks`` in two worker processes against ``server``; the outcome."""
    from replan.runner.process_backend import ProcessBackend

    cfg = RunConfig(
        agents=["react"],
        models=["openai:fake"],
        base_url=server.base_url,
        limit=len(tasks),
        **options,
    )
    backend = ProcessBackend(2)
    return asyncio.run(arun(cfg, tmp_path, tasks=tasks, backend=backend))


def test_requests_per_minute_hold_across_workers(tasks, tmp_path):
    """--rpm 720 over two workers that could send many times that: the server sees 12
    requests a second (within 5%, over 48 requests), not a burst of a minute's quota."""
    with FakeOpenAI(0.05, tool_turns=2) as server:
        outcome = _run_workers(tasks[:16], tmp_path, server, concurrency=4, requests_per_minute=720)
        arrivals = list(server.arrivals)
    assert outcome.failures == 0 and len(arrivals) == 48
    # from the second request: the first two may come together (one interval early)
    rate = (len(arrivals) - 2) / (arrivals[-1] - arrivals[1])
    assert rate == pytest.approx(12.0, rel=0.05)


def test_retry_after_pauses_every_worker(tasks, tmp_path):
    """A 429 asking for 2 s, to one call of one worker: no request of either worker reaches
    the server in that time (give or take the calls already on their way), then the run goes
    on, the throttled call retried."""
    with FakeOpenAI(0.1, tool_turns=2, throttle={8: 2.0}) as server:
        outcome = _run_workers(tasks[:16], tmp_path, server, concurrency=3)
        arrivals, throttled = list(server.arrivals), server.throttled
    assert outcome.failures == 0 and len(throttled) == 1
    during = [t - throttled[0] for t in arrivals if 0.5 < t - throttled[0] < 1.9]
    assert not during, during
    assert len(arrivals) == 16 * 3 + 1  # the throttled call, once more


def test_worker_processes_without_a_limit_keep_their_concurrency_each(tasks, tmp_path):
    """The other side of the check above: without --max-in-flight, two workers at 6 each keep
    12 calls in flight at once (a worker's batch held 2 of these 24 jobs before, so 4)."""
    with FakeOpenAI(1.0, tool_turns=1) as server:
        outcome = _run_workers(tasks[:24], tmp_path, server, concurrency=6)
        assert outcome.failures == 0
        assert server.max_in_flight == 12


def test_a_pause_is_capped_and_a_wait_has_a_deadline():
    """A server asking for an hour pauses every caller for at most the retry cap; a call that
    cannot get a slot within its deadline fails instead of waiting for ever."""
    from replan.nodes.llm import RETRY_AFTER_CAP_S
    from replan.runner.limits import SlotWaitTimeout

    b = EndpointBudget()
    b.pause(0.0, 3600.0)
    assert b.try_acquire(1.0) == pytest.approx(RETRY_AFTER_CAP_S - 1.0)
    limiter = LocalLimiter(default=Limits(max_in_flight=1))
    assert limiter.try_acquire("e") == 0  # the only slot, held
    handler = LimitCallbacks(limiter, "e", max_wait_s=0.3)
    with pytest.raises(SlotWaitTimeout, match=r"no model slot for e within 0\.3 s"):
        handler.on_chat_model_start({}, [], run_id=_uuid(2))
    assert limiter.stats()["e"]["waits"] == 1 and limiter.stats()["e"]["in_flight"] == 1


def test_limits_reach_the_chat_model_inside_wrappers_or_say_they_cannot():
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    from langchain_core.runnables import RunnableLambda

    limiter = LocalLimiter()
    wrapped = FakeListChatModel(responses=["a", "b"]).with_retry()
    limit_model(wrapped, limiter, "e", strict=True).invoke("hi")
    assert limiter.stats()["e"]["calls"] == 1
    with pytest.raises(ValueError, match="takes no LangChain callbacks"):
        limit_model(RunnableLambda(lambda x: x), limiter, "e", strict=True)
    plain = RunnableLambda(lambda x: x)
    assert limit_model(plain, limiter, "e") is plain  # counting only: left as it is


def test_tokens_come_from_messages_or_from_the_provider_output():
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, Generation, LLMResult

    from replan.runner.limits import _tokens

    usage = {"input_tokens": 7, "output_tokens": 5, "total_tokens": 12}
    chat = LLMResult(generations=[[ChatGeneration(message=AIMessage("x", usage_metadata=usage))]])
    text = LLMResult(
        generations=[[Generation(text="x")]], llm_output={"token_usage": {"total_tokens": 30}}
    )
    assert _tokens(chat) == 12 and _tokens(text) == 30
    assert _tokens(LLMResult(generations=[[Generation(text="x")]])) == 0


def test_a_run_asking_one_process_for_more_than_it_drives_is_told_how(tasks, tmp_path, monkeypatch):
    """--concurrency 64 with a provider's model in one process: one line on how to use the
    cores; nothing for a simulated model, or with workers already."""
    import replan
    from replan.runner import preflight
    from replan.runner.preflight import concurrency_hint

    monkeypatch.setattr(preflight, "cpu_workers", lambda: 4)
    lines: list[str] = []
    with FakeOpenAI(0.0) as server:
        replan.run(
            tasks=tasks[:1],
            agents=["react"],
            models=["openai:fake"],
            base_url=server.base_url,
            concurrency=64,
            out=tmp_path,
            warn=lines.append,
        )
    assert lines == [
        "note: --concurrency 64 runs in one process, which plays about 100 model calls a "
        "second; to keep them in flight use the 4 cores: --workers 0 --concurrency 16 (each "
        "worker keeps --concurrency episodes in flight)"
    ]
    simulated = RunConfig(concurrency=64)
    assert concurrency_hint(simulated) is None
    spread = RunConfig(models=["openai:fake"], concurrency=64, workers=2)
    assert concurrency_hint(spread) is None
