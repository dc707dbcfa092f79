"""The worker-thread hop of a finalize: store I/O (and the redaction of what is stored) never runs on the event loop.

``asyncio.to_thread`` chains a ``concurrent.futures`` future (its own lock, condition and callbacks) onto an asyncio
one; a finalize hops twice, and on a shared 2-core machine that machinery costs ≈ 0.1 ms per finalize. The hop
here reuses the daemon workers of the judge's blocking calls (``in_daemon_thread``): one queue put, one
``call_soon_threadsafe`` back. What ``to_thread`` promised is kept:

- the function runs in a copy of the caller's context (``contain`` finds the finalize's deferred interrupts list);
- whatever it raises (a ``BaseException`` too) is raised in the awaiting coroutine;
- a cancelled caller stops waiting at once while the write in flight finishes, and ``asyncio.run`` (the
  loop's default executor shutdown) still waits for that write before it returns.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from ..judge._clients import in_daemon_thread

__all__ = ["off_loop"]

_T = TypeVar("_T")


async def off_loop(function: Callable[..., _T], *args: Any) -> _T:
    """``function(*args)`` on a worker thread, in a copy of this context; its result or exception here."""
    context = contextvars.copy_context()
    finished = threading.Event()

    def job() -> _T:
        try:
            return context.run(function, *args)
        finally:
            finished.set()

    try:
        return await in_daemon_thread(job)
    except asyncio.CancelledError:
        # as with asyncio.to_thread: the loop's shutdown (asyncio.run) waits for the write still in flight
        if not finished.is_set():
            asyncio.get_running_loop().run_in_executor(None, finished.wait)
        raise
