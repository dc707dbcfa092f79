"""What a plug-in raises stays at its stage boundary: every ``BaseException`` but the caller's own cancellation.

A handler, judge engine, model client, redactor or store that raises ``SystemExit`` (a plug-in calling
``argparse.error()``), ``GeneratorExit`` or any other non-``Exception`` must not unwind ``Gate.finalize``: the
attempt would be left unrecorded and no pending review would exist. So each boundary catches ``BaseException`` and
calls :func:`contain`, which

- re-raises ``asyncio.CancelledError`` when the running task itself is being cancelled (the runtime's request,
  which is respected); a plug-in that raises it on its own has merely failed;
- remembers a ``KeyboardInterrupt`` for this finalize (:func:`deferring_interrupts`), so that the stage is handled
  as failed, the decision (an escalation) is recorded and the pending candidate stored, and *then* the interrupt
  is raised to the caller;
- otherwise returns a short description for the stage's error record.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

__all__ = ["cancelled_from_outside", "contain", "deferring_interrupts", "describe"]

_INTERRUPTS: ContextVar[list[BaseException] | None] = ContextVar("verigate_deferred_interrupts", default=None)


def cancelled_from_outside() -> bool:
    """True when the running task itself is being cancelled (by the runtime: respect it); False when a plug-in
    merely raised CancelledError on its own, and in a worker thread, where no task runs."""
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no event loop in this thread
        return False
    return task is not None and task.cancelling() > 0


def contain(exc: BaseException) -> str:
    """Handle ``exc``, raised by a plug-in at a stage boundary (see the module docstring): re-raise the caller's
    cancellation, defer a KeyboardInterrupt, and describe what was raised."""
    if isinstance(exc, asyncio.CancelledError) and cancelled_from_outside():
        raise exc
    if isinstance(exc, KeyboardInterrupt):
        deferred = _INTERRUPTS.get()
        if deferred is None:  # outside a finalize nothing can be stored first: propagate at once
            raise exc
        deferred.append(exc)
    return describe(exc)


def describe(exc: BaseException) -> str:
    """``Type: first line`` of an exception (at most 300 characters): no traceback or payload goes into a record."""
    text = str(exc).splitlines()[0][:300] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else f"{type(exc).__name__} raised"


@contextlib.contextmanager
def deferring_interrupts() -> Iterator[list[BaseException]]:
    """Collect the KeyboardInterrupts :func:`contain` defers inside the block; the caller raises the first one
    once its records are written. Worker threads started with ``asyncio.to_thread`` share the list (their context
    is a copy that holds the same list)."""
    deferred: list[BaseException] = []
    token = _INTERRUPTS.set(deferred)
    try:
        yield deferred
    finally:
        _INTERRUPTS.reset(token)
