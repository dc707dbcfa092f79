"""The worker-thread hop of a finalize: store I/O (and the redaction of what is stored) never runs on the event loop.

``asyncio.to_thread`` chains a ``concurrent.futures`` future (its own lock, condition and callbacks) onto an asyncio
one; a finalize hops twice, and on a shared 2-core machine that machinery costs ≈ 0.1 ms per finalize. The hop
here reuses the daemon workers of the judge's blocking calls (``in_daemon_thread``): one queue put, one
``call_soon_threadsafe`` back. What ``to_thread`` promised is kept:

- the function runs in a copy of the caller's context (``contain`` finds the finalize's deferred interrupts list);
- whatever it raises (a ``BaseException`` too) is raised in the awaiting coroutine;
- a cancelled caller stops waiting at once while the write in flight finishes, and ``asyncio.run`` (the
  loop's default executor shutdown) still waits for that write before it returns.

A hop exists to keep blocking work off the loop. When a step's records are bounded in-process work — verigate's
own SQLite store in memory (no file, no other process, no I/O at all; no injected clock), only verigate's own
redactors over its shipped packs, and what the step stores (:func:`_fits`: the candidate and its termination, or
the decision with the judge's verdict) at most :data:`IN_PROCESS_CHARS` characters, each string counted with
:data:`STRING_CHARS` more — :func:`hop_for` and :func:`conclusion_hop` choose :func:`on_loop`: the gate calls the
same functions on the loop, as it runs its own structural check there. The loop never waits for the store there:
when another thread holds the store's lock, the step takes the hop after all; and a Ctrl-C during the step reaches
its handler after it, as a worker thread's step could not be interrupted either. Each hop cost more than the work
it carried on this 2-core virtual machine (an idle CPU wakes late, and the worker starts with a cold cache): the
4 KB finalize of ``benchmarks/bench_peers.py`` takes about half the time.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import signal
import threading
from collections.abc import Awaitable, Callable, Iterator
from types import FrameType
from typing import Any, Protocol, TypeVar, cast

import attrs

from .._models import (
    Candidate,
    HookRecord,
    Reflection,
    Strengthen,
    StructuralFinding,
    Termination,
    TerminationReason,
    ToolObservation,
    Verdict,
)
from ..judge._clients import in_daemon_thread
from ..redact._egress import Egress
from ..redact._redactor import RulePackRedactor
from ..store._base import Store
from ..store._sqlite import SqliteStore
from ._policy import Decision
from ._recording import Judged

__all__ = ["IN_PROCESS_CHARS", "STRING_CHARS", "Hop", "conclusion_hop", "hop_for", "in_process", "off_loop", "on_loop"]

_T = TypeVar("_T")

#: the most characters (every string a step stores together, with :data:`STRING_CHARS` each) a finalize redacts
#: and stores on the loop. The shipped packs redact 5,900 characters of prose in under 1 ms here, and of
#: text built to hit their rules (Windows paths, card numbers, e-mail addresses, key words) in up to ≈ 21 ms (best
#: of 5), below the 100 ms at which asyncio calls a callback slow; 65,536 characters of such text took 190 ms
IN_PROCESS_CHARS = 6144
#: what each string costs beyond its characters: one redaction call (a value under a key is redacted twice)
STRING_CHARS = 64


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


async def on_loop(store: SqliteStore, function: Callable[..., _T], *args: Any) -> _T:
    """``function(*args)`` here, in a copy of this context as :func:`off_loop` runs it, holding ``store``'s lock
    for the whole step; :func:`off_loop` when another thread holds it (the loop never waits for a store)."""
    with store.held_if_free() as held:
        if held:
            with _interrupt_after():
                return contextvars.copy_context().run(function, *args)
    return await off_loop(function, *args)


@contextlib.contextmanager
def _interrupt_after() -> Iterator[None]:
    """A Ctrl-C during the block reaches SIGINT's handler when the block ends: its records are all written, as they
    are when the step runs on a worker thread, which a signal cannot stop. Python's default handler then raises
    KeyboardInterrupt; ``asyncio.run``'s cancels the task (a second Ctrl-C raises)."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers run in the main thread only: nothing can interrupt this block
        return
    previous = signal.getsignal(signal.SIGINT)
    if not callable(previous):
        yield  # ignored, or the operating system's default: nothing Python could defer
        return
    caught: list[tuple[int, FrameType | None]] = []
    signal.signal(signal.SIGINT, lambda number, frame: caught.append((number, frame)))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        for number, frame in caught:
            previous(number, frame)


class Hop(Protocol):
    """How a finalize runs one store step: ``await hop(function, *args)``."""

    def __call__(self, function: Callable[..., _T], *args: Any) -> Awaitable[_T]: ...


def hop_for(store: Store, egress: Egress, candidate: Candidate, termination: Termination) -> Hop:
    """:func:`on_loop` with ``store`` when :func:`in_process` says so, else :func:`off_loop`."""
    if in_process(store, egress, candidate, termination):
        return functools.partial(on_loop, cast(SqliteStore, store))
    return off_loop


def conclusion_hop(hop: Hop, attempt: int, judged: Judged) -> Hop:
    """``hop`` for the outcome step of a first attempt whose decision fits as well (:func:`_fits`: the judge's
    reply may be long), else :func:`off_loop`: a later attempt reads the earlier ones back, of any size."""
    judgment = judged.judgment
    simple = judgment is None or not (judgment.ensemble or judgment.cache_on or judgment.to_cache)
    decided = [judged.decision, judged.findings, judged.strengthen, judged.hook_records]
    if hop is not off_loop and attempt == 0 and simple and _fits(decided, IN_PROCESS_CHARS):
        return hop
    return off_loop


def in_process(store: Store, egress: Egress, candidate: Candidate, termination: Termination) -> bool:
    """True when a finalize's records are bounded work without I/O (see the module's docstring).

    Exact types: a subclass of the store or the redactor may do anything in its methods."""
    return (type(store) is SqliteStore and store.in_memory and store.clock_is_default
            and all(type(redactor) is RulePackRedactor and redactor.own_rules for redactor in egress.redactors)
            and _fits([candidate, termination], IN_PROCESS_CHARS))


#: verigate's models a step stores (each walked field by field); every other class never fits
_MODELS: tuple[type, ...] = (Candidate, ToolObservation, Termination, Decision, Verdict, Reflection,
                             StructuralFinding, Strengthen, HookRecord)
_BIGGEST = 10 ** 18


def _fits(values: list[object], limit: int) -> bool:
    """Whether ``values`` hold at most ``limit`` characters together, each string with :data:`STRING_CHARS` more,
    counted until the limit passes.

    Plain ``str``, ``bool``, ``None``, floats, ints of up to 18 digits, lists, tuples, dicts and the fields of
    verigate's own models (:data:`_MODELS`), each type told by ``is``, never by a comparison a metaclass could
    answer: any other value (bytes, a subclass, a mapping or an object whose text only its own methods know) never
    fits, and no method of a value is called."""
    budget = limit
    pending = list(values)
    while pending:
        value = pending.pop()
        kind = type(value)
        if kind is str:
            budget -= len(value) + STRING_CHARS  # type: ignore[arg-type]
        elif kind is dict or kind is list or kind is tuple:
            items: Any = dict.items(value) if kind is dict else value  # type: ignore[arg-type]
            budget -= len(items) + 1
            if budget >= 0:
                pending.extend(items)
        elif kind is int:
            if not -_BIGGEST < value < _BIGGEST:  # type: ignore[operator]
                return False
            budget -= 20
        elif kind is float or kind is bool or value is None or kind is TerminationReason:
            budget -= 24  # the longest text such a value has
        elif any(kind is model for model in _MODELS):
            fields = attrs.fields(cast(Any, kind))
            budget -= len(fields) + 1
            pending.extend(getattr(value, field.name) for field in fields)
        else:
            return False
        if budget < 0:
            return False
    return True
