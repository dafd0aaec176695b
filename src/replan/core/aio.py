"""Running async code from sync callers, also from inside a running event loop (Jupyter)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def call_outside_loop(fn: Callable[[], T]) -> T:
    """``fn()`` (which may start an event loop of its own): here when no loop runs in this
    thread, else in a helper thread (with this context's variables), waiting for it."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return fn()
    ctx = contextvars.copy_context()
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(ctx.run, fn).result()


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coro)``, also from inside a running loop (see :func:`call_outside_loop`):
    how the sync half of an API runs its one async implementation."""
    return call_outside_loop(lambda: asyncio.run(coro))


__all__ = ["call_outside_loop", "run_sync"]
