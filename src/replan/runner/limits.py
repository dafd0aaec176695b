"""Per-endpoint limits on model calls, shared by every episode of a run, on every backend.

A provider's quota is per endpoint (the model spec), not per episode or per worker: requests in
flight, requests per minute and tokens per minute, plus the server's own ``Retry-After``. One
:class:`EndpointBudget` per endpoint holds that state as plain bookkeeping (no clock, no
locks); :class:`LocalLimiter` guards it with a lock for the threads of one process, and the Ray
backend keeps the same budgets inside one actor for the whole cluster (``ray_backend``), so both
backends enforce the limits the same way.

The limiter reaches every model call through LangChain's callbacks (:class:`LimitCallbacks`,
attached to the model the runner builds): a call waits for a slot before it starts, frees it
when it ends or fails, reports the tokens it used, and a rate-limit error carrying
``Retry-After`` pauses the endpoint for every worker. That covers the built-in designs and a
user's own graph alike, whatever the model kind, because each gets the model the runner built.
The same callbacks count calls in flight, failed calls and waits for the progress line.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler, BaseCallbackManager
from langchain_core.language_models import BaseLanguageModel

from replan.nodes.llm import RETRY_AFTER_CAP_S, retry_after_s

#: seconds of the sliding window behind "per minute"
WINDOW_S = 60.0
#: seconds between two looks at a full endpoint when no release can wake the waiter (Ray)
IN_FLIGHT_POLL_S = 0.05


@dataclass(frozen=True)
class Limits:
    """Limits of one endpoint; ``None`` means no limit of that kind."""

    max_in_flight: int | None = None
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None

    def __post_init__(self) -> None:
        for name in ("max_in_flight", "requests_per_minute", "tokens_per_minute"):
            value = getattr(self, name)
            if value is not None and value < 1:  # the window is one minute: less is not kept
                raise ValueError(f"{name} must be at least 1 (got {value})")

    @property
    def any(self) -> bool:
        return any(
            v is not None
            for v in (self.max_in_flight, self.requests_per_minute, self.tokens_per_minute)
        )


@dataclass
class EndpointBudget:
    """One endpoint's calls in flight, recent requests and tokens, and any server-asked pause.

    Requests per minute are spread evenly, one every ``60 / rpm`` seconds (providers enforce a
    per-minute quota over shorter spans too, so a burst of a minute's requests at once would
    be refused), and never more than ``rpm`` in any 60 s.

    Pure bookkeeping: every method takes ``now`` (seconds, any monotonic clock), so the same
    object works under a thread lock and inside a Ray actor, and is tested without sleeping.
    """

    limits: Limits = field(default_factory=Limits)
    in_flight: int = 0
    peak_in_flight: int = 0
    paused_until: float = 0.0
    #: the theoretical start of the next request under ``requests_per_minute`` (spacing)
    next_request: float = -math.inf
    requests: deque[float] = field(default_factory=deque)
    tokens: deque[tuple[float, int]] = field(default_factory=deque)
    token_sum: int = 0
    calls: int = 0
    failed_calls: int = 0
    waits: int = 0
    wait_s: float = 0.0

    def _forget(self, now: float) -> None:
        while self.requests and self.requests[0] <= now - WINDOW_S:
            self.requests.popleft()
        while self.tokens and self.tokens[0][0] <= now - WINDOW_S:
            self.token_sum -= self.tokens.popleft()[1]

    def try_acquire(self, now: float) -> float:
        """Take a slot and return 0.0, or take nothing and return the seconds to wait first."""
        self._forget(now)
        lim = self.limits
        waits = [self.paused_until - now]
        if lim.max_in_flight is not None and self.in_flight >= lim.max_in_flight:
            waits.append(IN_FLIGHT_POLL_S)  # a slot frees when a call ends (a release wakes)
        rpm = lim.requests_per_minute
        if rpm is not None:
            if len(self.requests) >= rpm:
                waits.append(self.requests[0] + WINDOW_S - now)
            # one request every 60/rpm s, at most one interval early (a waiter woken late
            # catches up instead of losing its slot)
            waits.append(self.next_request - WINDOW_S / rpm - now)
        tpm = lim.tokens_per_minute
        if tpm is not None and self.token_sum >= tpm and self.tokens:
            waits.append(self.tokens[0][0] + WINDOW_S - now)
        wait = max(waits)
        if wait > 0:
            return max(wait, 0.001)
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        self.requests.append(now)
        if rpm is not None:
            self.next_request = max(self.next_request, now) + WINDOW_S / rpm
        self.calls += 1
        return 0.0

    def release(self, now: float, tokens: int = 0, *, failed: bool = False) -> None:
        """A call ended (``failed``: with an error); it used ``tokens`` in all."""
        self.in_flight = max(0, self.in_flight - 1)
        self.failed_calls += int(failed)
        if tokens > 0:
            self.tokens.append((now, tokens))
            self.token_sum += tokens

    def pause(self, now: float, seconds: float) -> None:
        """The server asked every caller to wait ``seconds`` (``Retry-After``; at most
        :data:`~replan.nodes.llm.RETRY_AFTER_CAP_S`, as a single call's retry waits)."""
        self.paused_until = max(self.paused_until, now + min(seconds, RETRY_AFTER_CAP_S))

    def waited(self, seconds: float) -> None:
        """A call waited ``seconds`` for its slot (counted once per call that had to wait)."""
        self.waits += 1
        self.wait_s += seconds

    def stats(self) -> dict[str, Any]:
        return {
            "in_flight": self.in_flight,
            "peak_in_flight": self.peak_in_flight,
            "calls": self.calls,
            "failed_calls": self.failed_calls,
            "waits": self.waits,
            "wait_s": round(self.wait_s, 3),
        }


class Limiter(Protocol):
    """What :class:`LimitCallbacks` needs: the budgets of a run, wherever they live."""

    def try_acquire(self, endpoint: str) -> float: ...
    def release(self, endpoint: str, tokens: int, failed: bool) -> None: ...
    def pause(self, endpoint: str, seconds: float) -> None: ...
    def waited(self, endpoint: str, seconds: float) -> None: ...


class Budgets:
    """The budgets of every endpoint of a run (created on first use) with their limits."""

    def __init__(self, limits: dict[str, Limits] | None = None, default: Limits | None = None):
        self.limits = dict(limits or {})
        self.default = default or Limits()
        self.budgets: dict[str, EndpointBudget] = {}

    def get(self, endpoint: str) -> EndpointBudget:
        if endpoint not in self.budgets:
            self.budgets[endpoint] = EndpointBudget(self.limits.get(endpoint, self.default))
        return self.budgets[endpoint]

    def try_acquire(self, endpoint: str, now: float) -> float:
        return self.get(endpoint).try_acquire(now)

    def release(self, endpoint: str, now: float, tokens: int, failed: bool) -> None:
        self.get(endpoint).release(now, tokens, failed=failed)

    def pause(self, endpoint: str, now: float, seconds: float) -> None:
        self.get(endpoint).pause(now, seconds)

    def waited(self, endpoint: str, seconds: float) -> None:
        self.get(endpoint).waited(seconds)

    def stats(self) -> dict[str, dict[str, Any]]:
        return {name: b.stats() for name, b in self.budgets.items()}


class LocalLimiter:
    """:class:`Budgets` for the threads of one process (the local backend)."""

    def __init__(self, limits: dict[str, Limits] | None = None, default: Limits | None = None):
        self._budgets = Budgets(limits, default)
        self._lock = threading.Lock()
        self._released = threading.Condition(self._lock)

    def try_acquire(self, endpoint: str) -> float:
        with self._lock:
            return self._budgets.try_acquire(endpoint, time.monotonic())

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds``, or less when a call ends somewhere (a slot may have freed)."""
        with self._released:
            self._released.wait(seconds)

    def release(self, endpoint: str, tokens: int, failed: bool) -> None:
        with self._lock:
            self._budgets.release(endpoint, time.monotonic(), tokens, failed)
            self._released.notify_all()

    def pause(self, endpoint: str, seconds: float) -> None:
        with self._lock:
            self._budgets.pause(endpoint, time.monotonic(), seconds)

    def waited(self, endpoint: str, seconds: float) -> None:
        with self._lock:
            self._budgets.waited(endpoint, seconds)

    def stats(self) -> dict[str, dict[str, Any]]:
        """Per endpoint: calls in flight (and the most at once), calls, failed calls, waits."""
        with self._lock:
            return self._budgets.stats()


def _tokens(response: Any) -> int:
    """Total tokens of an ``LLMResult``: its messages' usage metadata, else the provider's
    ``llm_output`` token usage (completion models); 0 when the model reports none."""
    total = 0
    for gens in getattr(response, "generations", None) or []:
        for gen in gens:
            usage = getattr(getattr(gen, "message", None), "usage_metadata", None) or {}
            total += int(usage.get("total_tokens") or 0)
    if not total:
        out = getattr(response, "llm_output", None) or {}
        usage = out.get("token_usage") or out.get("usage") or {}
        if isinstance(usage, dict):
            total = int(usage.get("total_tokens") or 0)
    return total


class SlotWaitTimeout(RuntimeError):
    """A model call waited longer than its deadline for a slot under the run's limits."""


class LimitCallbacks(BaseCallbackHandler):
    """Callbacks that hold each model call of one endpoint to the run's limits.

    A call waits for its slot in ``on_chat_model_start`` (``on_llm_start`` for completion
    models), which LangChain completes in the calling thread before it sends the request, and
    frees it in ``on_llm_end``/``on_llm_error``; an error that carries ``Retry-After`` pauses
    the endpoint for every caller. A call that has waited ``max_wait_s`` (the runner passes
    the episode deadline: past it nobody waits for the answer) fails with
    :class:`SlotWaitTimeout`, so an abandoned episode's thread does not wait for ever.

    These are the synchronous calls every episode the runner plays makes (its designs, the
    replan-point graph and a user's graph all run synchronously in worker threads). A model
    called with ``ainvoke`` in a user's own code runs this handler in an executor thread:
    limits hold there too, but a cancelled ``ainvoke`` can leave its slot taken, so async
    code under ``--max-in-flight`` is not supported.
    """

    raise_error = True  # a limiter failure must not let a call through unlimited

    def __init__(
        self,
        limiter: Limiter,
        endpoint: str,
        *,
        max_wait_s: float | None = None,
        sleep: Any = None,
    ):
        self.limiter = limiter
        self.endpoint = endpoint
        self.max_wait_s = max_wait_s
        # a local limiter wakes its waiters when a call ends; otherwise look again later
        self.sleep = sleep or getattr(limiter, "sleep", None) or time.sleep
        self._open: set[UUID] = set()
        self._lock = threading.Lock()

    def on_chat_model_start(
        self, serialized: dict[str, Any], messages: Any, *, run_id: UUID, **kwargs: Any
    ) -> None:
        start = time.monotonic()
        waited = False
        while (wait := self.limiter.try_acquire(self.endpoint)) > 0:
            waited = True
            if self.max_wait_s is not None and time.monotonic() - start + wait > self.max_wait_s:
                self.limiter.waited(self.endpoint, time.monotonic() - start)
                raise SlotWaitTimeout(
                    f"no model slot for {self.endpoint} within {self.max_wait_s:g} s under the "
                    "run's limits (--max-in-flight/--rpm/--tpm, or the server's Retry-After)"
                )
            self.sleep(min(wait, 1.0))  # re-check at least every second
        if waited:
            self.limiter.waited(self.endpoint, time.monotonic() - start)
        with self._lock:
            self._open.add(run_id)

    def on_llm_start(
        self, serialized: dict[str, Any], prompts: Any, *, run_id: UUID, **kwargs: Any
    ) -> None:
        self.on_chat_model_start(serialized, prompts, run_id=run_id, **kwargs)

    def _close(self, run_id: UUID) -> bool:
        with self._lock:
            if run_id not in self._open:
                return False
            self._open.discard(run_id)
            return True

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        if self._close(run_id):
            self.limiter.release(self.endpoint, _tokens(response), False)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        if self._close(run_id):
            self.limiter.release(self.endpoint, 0, True)
        asked = retry_after_s(error)
        if asked:
            self.limiter.pause(self.endpoint, asked)


#: the limiter of the run this context belongs to (set by the backend, read per episode)
LIMITER: ContextVar[Limiter | None] = ContextVar("replan_limiter", default=None)


def _innermost(model: Any) -> Any:
    """The chat model inside LangChain's wrappers (``bind``, ``with_retry``, fallbacks)."""
    seen = 0
    while not isinstance(model, BaseLanguageModel) and seen < 8:
        inner = getattr(model, "bound", None) or getattr(model, "runnable", None)
        if inner is None:
            break
        model, seen = inner, seen + 1
    return model


def limit_model(
    model: Any,
    limiter: Limiter,
    endpoint: str,
    *,
    strict: bool = False,
    max_wait_s: float | None = None,
) -> Any:
    """``model`` with :class:`LimitCallbacks` added to its own callbacks (once; through
    LangChain's wrappers to the chat model inside). ``strict``: a model that takes no callbacks
    raises ``ValueError`` (limits were asked for and could not hold it) instead of running
    uncounted."""
    handler = LimitCallbacks(limiter, endpoint, max_wait_s=max_wait_s)
    target = _innermost(model)
    current = getattr(target, "callbacks", None)
    attached = current.handlers if isinstance(current, BaseCallbackManager) else current or []
    if any(
        isinstance(h, LimitCallbacks) and h.limiter is limiter and h.endpoint == endpoint
        for h in attached
    ):
        return model  # a model shared by the run's episodes is limited once
    if isinstance(current, BaseCallbackManager):
        current.add_handler(handler, inherit=True)
        return model
    try:
        if not isinstance(target, BaseLanguageModel):  # an attribute set there would do nothing
            raise TypeError(type(target).__name__)
        target.callbacks = [*(current or []), handler]
    except (AttributeError, TypeError, ValueError):
        if strict:
            raise ValueError(
                f"the model for {endpoint} ({type(target).__name__}) takes no LangChain "
                "callbacks, so --max-in-flight/--rpm/--tpm cannot hold its calls"
            ) from None
    return model


__all__ = [
    "LIMITER",
    "Budgets",
    "EndpointBudget",
    "LimitCallbacks",
    "Limiter",
    "Limits",
    "LocalLimiter",
    "SlotWaitTimeout",
    "limit_model",
]
