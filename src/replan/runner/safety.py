"""Keeping a run bounded: user code in abandonable threads, a prompt Ctrl-C, no hang at exit.

An episode's user code (an ``--agent`` factory and its graph, a replay) runs in a daemon
thread that the runner can abandon when the episode's deadline passes; whatever it raises,
``SystemExit`` and ``KeyboardInterrupt`` included, becomes that episode's recorded failure,
never the run's end. :func:`run_interruptibly` runs the runner's event loop so that Ctrl-C
stops it at once (finished episodes are already committed); :func:`exit_hard_if_threads_hang`
ends a command whose abandoned threads would otherwise keep the interpreter from exiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import signal
import sys
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

#: seconds after a first Ctrl-C before the process is ended whatever it is doing
INTERRUPT_GRACE_S = 10.0
#: threads of user code whose episode was abandoned (its deadline passed, Ctrl-C) while they ran
_ABANDONED: weakref.WeakSet[threading.Thread] = weakref.WeakSet()


class UserCodeExit(RuntimeError):
    """User code raised ``SystemExit``/``KeyboardInterrupt``: the episode fails, the run goes on."""


async def in_daemon_thread(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """``await fn(*args, **kwargs)`` run in a new daemon thread (with this context's vars).

    Unlike ``asyncio.to_thread``, a thread that never returns is never waited for: cancelling
    the await (an episode deadline, Ctrl-C) abandons it, and it cannot keep the process alive.
    ``SystemExit``/``KeyboardInterrupt`` raised by ``fn`` come back as :class:`UserCodeExit`.
    """
    loop = asyncio.get_running_loop()
    fut: asyncio.Future[T] = loop.create_future()
    ctx = contextvars.copy_context()

    def settle(result: Any, exc: BaseException | None) -> None:
        if fut.done():  # cancelled: the episode was abandoned
            return
        if exc is None:
            fut.set_result(result)
        else:
            fut.set_exception(exc)

    def target() -> None:
        result: Any = None
        error: BaseException | None = None
        try:
            result = ctx.run(fn, *args, **kwargs)
        except (SystemExit, KeyboardInterrupt) as exc:
            error = UserCodeExit(f"the agent raised {type(exc).__name__}({exc})")
            error.__cause__ = exc
        except BaseException as exc:  # every failure goes back to the episode
            error = exc
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
            loop.call_soon_threadsafe(settle, result, error)

    name = getattr(fn, "__name__", "user-code")
    thread = threading.Thread(target=target, name=f"replan-{name}", daemon=True)
    thread.start()
    try:
        return await fut
    except asyncio.CancelledError:
        if thread.is_alive():  # left running: it may keep the process from exiting
            _ABANDONED.add(thread)
        raise


def run_abandoning_threads(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coro)`` that does not wait for the loop's executor threads at the end.

    ``asyncio.run`` joins every executor thread before it returns, with no timeout, so one
    node thread stuck past its episode's deadline (a hung model call, an abandoned wait) would
    hold a whole batch, and the worker running it, for as long as it stays stuck.
    """
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(coro)
    finally:
        try:
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()  # shuts the default executor down without waiting for its threads


def run_interruptibly(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on a new event loop; the first Ctrl-C cancels it, a second ends the process.

    Raises ``KeyboardInterrupt`` once the cancelled coroutine has unwound (its ``finally``
    blocks close the store). Outside the main thread it is plain ``asyncio.run``. The loop's
    worker threads are not waited for, so a hung model call or agent cannot hold the exit.
    """
    if threading.current_thread() is not threading.main_thread():
        return run_abandoning_threads(coro)
    loop = asyncio.new_event_loop()
    main = loop.create_task(coro)
    interrupted = threading.Event()
    # if the cancelled run does not unwind in time, the process ends anyway
    timer = threading.Timer(INTERRUPT_GRACE_S, _flush_and_exit, args=(130,))
    timer.daemon = True

    def on_sigint(signum: int, frame: Any) -> None:
        if interrupted.is_set():
            _flush_and_exit(130)
        interrupted.set()
        loop.call_soon_threadsafe(main.cancel)
        timer.start()

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        return loop.run_until_complete(main)
    except asyncio.CancelledError:
        if interrupted.is_set():
            raise KeyboardInterrupt from None
        raise
    finally:
        signal.signal(signal.SIGINT, previous)
        timer.cancel()
        try:
            if interrupted.is_set():
                _unwind_quietly(loop)
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()  # shuts the default executor down without waiting for its threads


#: seconds the tasks left behind by a Ctrl-C get to unwind before the loop closes
UNWIND_S = 2.0


def _unwind_quietly(loop: asyncio.AbstractEventLoop) -> None:
    """After Ctrl-C: cancel the tasks the cancelled run left (an episode's graph, its model
    calls), give them :data:`UNWIND_S` to unwind, and keep asyncio's complaints about what
    could not (pending tasks destroyed, generators closed mid-step, coroutines never awaited)
    off the terminal: the interruption is reported in one line by the caller."""
    loop.set_exception_handler(lambda _loop, _context: None)
    warnings.filterwarnings("ignore", message="coroutine .* was never awaited")
    left = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for t in left:
        t.cancel()
    if left:
        with contextlib.suppress(BaseException):  # unwinding only; the run is over
            loop.run_until_complete(asyncio.wait(left, timeout=UNWIND_S))


def hung_threads() -> list[threading.Thread]:
    """Live non-daemon threads other than this one (they would block the interpreter's exit)."""
    me = threading.current_thread()
    return [t for t in threading.enumerate() if t is not me and t.is_alive() and not t.daemon]


def abandoned_threads() -> list[threading.Thread]:
    """Threads of user code left running when their episode was abandoned, still alive.

    Daemon threads, but not harmless: the thread pools they started (a LangGraph graph runs its
    nodes in one) are joined by Python at exit whatever their threads are, so a node that never
    returns would keep a finished command alive forever.
    """
    return [t for t in list(_ABANDONED) if t.is_alive()]


def exit_hard_if_threads_hang(code: int = 0, grace_s: float = 2.0) -> None:
    """End the process now with ``code`` when abandoned threads would block its exit.

    Python joins every non-daemon thread and every thread-pool worker before exiting, so one
    model call or user node that never returns would hang a finished command forever. Threads
    get ``grace_s`` to end (idle workers do, and then the normal exit runs its ``atexit``
    hooks); if some are still running, or user code abandoned at its episode's deadline still
    runs, the exit is forced, with one line on stderr saying so. All results are committed by
    then; output is flushed first.
    """
    deadline = time.monotonic() + grace_s
    for t in [*hung_threads(), *abandoned_threads()]:
        t.join(max(0.0, deadline - time.monotonic()))
    stuck = abandoned_threads()
    if stuck:
        print(
            f"note: agent code of {len(stuck)} abandoned episode(s) is still running (Python "
            "cannot stop a thread); exiting without waiting for it",
            file=sys.stderr,
        )
    if stuck or hung_threads():
        _flush_and_exit(code)


def _flush_and_exit(code: int) -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # exiting anyway
            stream.flush()
    os._exit(code)


__all__ = [
    "INTERRUPT_GRACE_S",
    "UserCodeExit",
    "abandoned_threads",
    "exit_hard_if_threads_hang",
    "hung_threads",
    "in_daemon_thread",
    "run_interruptibly",
]
