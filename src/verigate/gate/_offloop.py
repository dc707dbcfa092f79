"""The worker-thread hop of a finalize: store I/O (and the redaction of what is stored) never runs on the event loop.

``asyncio.to_thread`` chains a ``concurrent.futures`` future (its own lock, condition and callbacks) onto an asyncio
one; a finalize hops twice, and on a shared 2-core machine that machinery costs ≈ 0.1 ms per finalize. The hop
here reuses the daemon workers of the judge's blocking calls (``in_daemon_thread``): one queue put, one
``call_soon_threadsafe`` back. What ``to_thread`` promised is kept:

- the function runs in a copy of the caller's context (``contain`` finds the finalize's deferred interrupts list);
- whatever it raises (a ``BaseException`` too) is raised in the awaiting coroutine;
- a cancelled caller stops waiting at once while the write in flight finishes, and ``asyncio.run`` (the
  loop's default executor shutdown) still waits for that write before it returns.

A hop exists to keep blocking work off the loop. When a finalize's records are bounded in-process work — verigate's
own SQLite store in memory (no file, no other process, no I/O at all) and only verigate's own redactors over its
shipped packs, for a candidate of at most :data:`IN_PROCESS_CHARS` characters — :func:`in_process` says so and the
gate calls the same functions on the loop (:func:`on_loop`), as it runs its own structural check there. Each hop
cost more than the work it carried on this 2-core virtual machine (an idle CPU wakes late, and the worker starts
with a cold cache): the 4 KB finalize of ``benchmarks/bench_peers.py`` takes less than half the time.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable, Sized
from typing import Any, TypeVar

from .._models import Candidate
from ..judge._clients import in_daemon_thread
from ..redact._egress import Egress
from ..redact._redactor import RulePackRedactor
from ..store._base import Store
from ..store._sqlite import SqliteStore

__all__ = ["IN_PROCESS_CHARS", "in_process", "off_loop", "on_loop"]

_T = TypeVar("_T")

#: the most characters (every string of the candidate together) a finalize redacts and stores on the loop. The
#: shipped packs redact 8,192 characters of prose in ≈ 2 ms here and of text built to hit their rules (card
#: numbers, e-mail addresses, key words) in ≤ ≈ 12 ms, far below the 100 ms asyncio calls a slow callback;
#: 65,536 characters took up to 190 ms
IN_PROCESS_CHARS = 1 << 13


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


async def on_loop(function: Callable[..., _T], *args: Any) -> _T:
    """``function(*args)`` here, in a copy of this context as :func:`off_loop` runs it (for :func:`in_process`)."""
    return contextvars.copy_context().run(function, *args)


def in_process(store: Store, egress: Egress, candidate: Candidate) -> bool:
    """True when a finalize's records are bounded work without I/O (see the module's docstring).

    Exact types: a subclass of the store or the redactor may do anything in its methods."""
    return (type(store) is SqliteStore and store.in_memory
            and all(type(redactor) is RulePackRedactor and redactor.shipped_only for redactor in egress.redactors)
            and _fits(candidate, IN_PROCESS_CHARS))


#: the plain types whose text redaction can know without calling them, and the most characters a scalar's text has
_PLAIN: dict[type, int] = {str: 0, list: 0, tuple: 0, dict: 0, int: 20, bool: 5, float: 24, type(None): 4}
_BIGGEST = 10 ** 18


def _fits(candidate: Candidate, limit: int) -> bool:
    """Whether the candidate's values hold at most ``limit`` characters together, counted until the limit passes.

    Plain ``str``, ``bool``, ``None``, floats, ints of up to 18 digits, lists, tuples and dicts only: any other
    value (bytes, a subclass, a mapping or an object whose text only its own methods know) never fits."""
    budget = limit
    pending: list[object] = [candidate.request, candidate.final_text, candidate.session_id, candidate.turn_id,
                             candidate.requirements, candidate.usage]
    if len(candidate.tool_calls) > limit:
        return False
    pending.extend((call.name, call.output, call.input) for call in candidate.tool_calls)
    while pending:
        value = pending.pop()
        plain = _PLAIN.get(type(value))  # exact types: a subclass may compute its text or its items
        budget -= 1
        if plain is None:
            return False
        if isinstance(value, str):
            budget -= len(value)
        elif isinstance(value, (list, tuple, dict)):
            items: Sized = value.items() if isinstance(value, dict) else value
            budget -= len(items)
            if budget >= 0:
                pending.extend(items)  # type: ignore[arg-type]
        elif isinstance(value, int) and not isinstance(value, bool) and not -_BIGGEST < value < _BIGGEST:
            return False
        else:
            budget -= plain
        if budget < 0:
            return False
    return True

