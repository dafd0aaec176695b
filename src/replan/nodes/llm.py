"""Model calls for every node: usage accounting, bounded retries of transient failures.

``call_model`` invokes any LangChain runnable (a chat model, a model with bound tools, a
structured-output chain) with exponential backoff and jitter (tenacity) on transient failures,
waiting at least what a ``Retry-After`` header asks (up to :data:`RETRY_AFTER_CAP_S`)
— rate limits, 5xx, timeouts, dropped connections — classified by :func:`is_transient` from
the exception's HTTP status or class name, so it works for openai, anthropic, httpx and
google clients without importing them. A call that keeps failing, or fails for a reason a
retry cannot fix (a 401, a bad request), raises :class:`ModelCallError` with a redacted
message; nodes turn it into the end reason ``model_error``, never an exception out of a graph.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable, RunnableConfig
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
    wait_random,
)

from replan.core.redact import redact
from replan.core.trace import Usage
from replan.nodes.config import RetrySettings

#: HTTP statuses worth retrying: timeout, conflict, too early, rate limit, and every 5xx
#: (529 = Anthropic "overloaded").
TRANSIENT_STATUS = frozenset({408, 409, 425, 429})

#: Exception class names (anywhere in the MRO) that mean "try again later".
TRANSIENT_CLASS_NAMES = frozenset(
    {
        # openai / anthropic
        "RateLimitError",
        "APITimeoutError",
        "APIConnectionError",
        "InternalServerError",
        "ServiceUnavailableError",
        "OverloadedError",
        # httpx / httpcore
        "TimeoutException",
        "ConnectTimeout",
        "ReadTimeout",
        "WriteTimeout",
        "PoolTimeout",
        "NetworkError",
        "ConnectError",
        "ReadError",
        "WriteError",
        "RemoteProtocolError",
        # requests / urllib3
        "ConnectionError",
        "Timeout",
        "ProtocolError",
        # google api_core
        "ServiceUnavailable",
        "TooManyRequests",
        "ResourceExhausted",
        "DeadlineExceeded",
    }
)


def _status_of(exc: BaseException) -> int | None:
    for attr in ("status_code", "http_status", "status"):
        value = getattr(exc, attr, None)
        if isinstance(value, int) and not isinstance(value, bool) and 100 <= value < 600:
            return value
    response = getattr(exc, "response", None)
    value = getattr(response, "status_code", None)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def _chain(exc: BaseException, limit: int = 6) -> list[BaseException]:
    out: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and cur not in out and len(out) < limit:
        out.append(cur)
        cur = cur.__cause__ or cur.__context__
    return out


#: the longest ``Retry-After`` honoured (a server asking for more still gets retried, sooner)
RETRY_AFTER_CAP_S = 60.0


def retry_after_s(exc: BaseException) -> float | None:
    """Seconds the server asked to wait before a retry (``Retry-After``/``retry-after-ms``)."""
    for e in _chain(exc):
        headers = getattr(getattr(e, "response", None), "headers", None)
        if headers is None:
            continue
        try:
            ms = headers.get("retry-after-ms")
            if ms is not None:
                return max(0.0, float(ms) / 1000)
            value = headers.get("retry-after")
        except (AttributeError, TypeError, ValueError):
            continue
        if value is None:
            continue
        try:
            return max(0.0, float(value))
        except ValueError:
            pass
        try:  # an HTTP date
            when = parsedate_to_datetime(str(value))
            return max(0.0, when.timestamp() - time.time())
        except (TypeError, ValueError, IndexError, OverflowError):
            continue
    return None


def is_transient(exc: BaseException) -> bool:
    """Whether a retry may fix ``exc``: 408/409/425/429/5xx, timeouts, connection errors.

    The HTTP status decides when one is present (a 400 or 401 is never retried, whatever
    the class); otherwise the class names in the MRO do, and so do Python's own
    ``TimeoutError`` and ``ConnectionError``. Causes (``raise ... from``) are inspected too,
    because wrappers often hide the client's exception.
    """
    for e in _chain(exc):
        status = _status_of(e)
        if status is not None:
            return status in TRANSIENT_STATUS or status >= 500
        if isinstance(e, (TimeoutError, ConnectionError)):
            return True
        if any(cls.__name__ in TRANSIENT_CLASS_NAMES for cls in type(e).__mro__):
            return True
    return False


def describe_error(exc: BaseException) -> str:
    """``ClassName: message`` with secrets redacted (what an Episode may record)."""
    msg = str(exc).strip()
    return redact(f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__)


def model_label(model: Any) -> str:
    """A readable model identifier (``model_name``, ``model`` or the class name), never a key."""
    for attr in ("model_name", "model", "model_id", "deployment_name"):
        value = getattr(model, attr, None)
        if isinstance(value, str) and value.strip():
            return redact(value.strip())
    return type(model).__name__


def usage_of(output: Any) -> Usage:
    """Usage of one model response (a message, or a structured-output dict with ``raw``)."""
    message = output.get("raw") if isinstance(output, dict) else output
    meta = getattr(message, "usage_metadata", None) or {}
    return Usage(
        model_calls=1,
        input_tokens=int(meta.get("input_tokens", 0) or 0),
        output_tokens=int(meta.get("output_tokens", 0) or 0),
    )


class ModelCallError(Exception):
    """A model call that failed for good; ``message`` is safe to record (redacted)."""

    def __init__(self, message: str, *, attempts: int, transient: bool):
        super().__init__(message)
        self.message = message
        self.attempts = attempts
        self.transient = transient


@dataclass(frozen=True)
class ModelReply:
    output: Any
    usage: Usage
    attempts: int

    @property
    def retries(self) -> int:
        return self.attempts - 1


def call_model(
    runnable: Runnable,
    messages: Sequence[BaseMessage],
    *,
    retry: RetrySettings | None = None,
    config: RunnableConfig | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> ModelReply:
    """Invoke ``runnable`` on ``messages``, retrying transient failures; count usage.

    Raises :class:`ModelCallError` when the call fails for good (non-transient error, or
    ``retry.max_attempts`` transient failures in a row).
    """
    settings = retry or RetrySettings()
    attempts = 0

    def attempt() -> Any:
        nonlocal attempts
        attempts += 1
        return runnable.invoke(list(messages), config=config)

    backoff = wait_exponential(multiplier=settings.initial_wait_s, max=settings.max_wait_s) + (
        wait_random(0, settings.jitter_s)
    )

    def wait(state: RetryCallState) -> float:
        """The backoff, or longer when the server said how long to wait (``Retry-After``)."""
        exc = state.outcome.exception() if state.outcome else None
        asked = retry_after_s(exc) if exc is not None else None
        return max(backoff(state), min(asked, RETRY_AFTER_CAP_S)) if asked else backoff(state)

    retrying = Retrying(
        stop=stop_after_attempt(settings.max_attempts),
        wait=wait,
        retry=retry_if_exception(is_transient),
        reraise=True,
        sleep=sleep,
    )
    try:
        output = retrying(attempt)
    except Exception as exc:
        transient = is_transient(exc)
        why = "gave up after" if transient else "failed on attempt"
        raise ModelCallError(
            f"model call {why} {attempts}: {describe_error(exc)}",
            attempts=attempts,
            transient=transient,
        ) from exc
    return ModelReply(output=output, usage=usage_of(output), attempts=attempts)


__all__ = [
    "ModelCallError",
    "ModelReply",
    "call_model",
    "describe_error",
    "is_transient",
    "model_label",
    "redact",
    "retry_after_s",
    "usage_of",
]
