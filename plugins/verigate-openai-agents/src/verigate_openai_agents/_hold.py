"""The adapter's fail-closed path: an exception on the way to a decision files a review, never a pass.

:func:`decide` is ``gate.finalize`` that always returns a ``FinalizeResult``: when finalize (or anything of the
adapter around it) raises, the candidate is filed for a person (``Gate.file_review``, policy action
``escalate``) and the result says ``pending_review`` with that review's id; when filing fails too, the result
says ``unverified`` and keeps the candidate's text in ``pending_text`` (as the gate does when its store fails).
Only the caller's own cancellation, a KeyboardInterrupt and SystemExit propagate.

This could move to :mod:`verigate.runtimes` (every adapter needs it); it lives here while that module is shared
ground other helpers are changing.
"""

from __future__ import annotations

import asyncio

from verigate import Candidate, FinalizeResult, Gate, Termination

__all__ = ["decide", "describe", "escalated", "reraise_if_caller_stops"]


def reraise_if_caller_stops(exc: BaseException) -> None:
    """Re-raise what the caller must see as it is: its own cancellation of this task, Ctrl-C, SystemExit.

    A CancelledError that the framework raised on its own (this task is not being cancelled) is an error like any
    other and is contained."""
    if isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit)):
        raise exc
    if isinstance(exc, asyncio.CancelledError):
        task = asyncio.current_task()
        if task is not None and task.cancelling() > 0:
            raise exc


def describe(exc: BaseException) -> str:
    """``Type: first line`` of an exception (the first line only: no tracebacks or payloads in the store)."""
    text = str(exc).splitlines()[0][:300] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else f"{type(exc).__name__} raised"


def escalated(gate: Gate, candidate: Candidate, reason: str) -> FinalizeResult:
    """File ``candidate`` for a person; the pending result (or, if filing fails, an unverified one)."""
    try:
        review_id = gate.file_review(candidate, policy_action="escalate", reason=reason)
    except BaseException as exc:
        reraise_if_caller_stops(exc)
        return FinalizeResult(
            outcome="unverified", answer="", status="unverified", policy_action="escalate", verdict=None,
            follow_up="", attempt=candidate.attempt, session_state="ended",
            pending_text=candidate.final_text, store_error=f"{reason}; filing the review failed: {describe(exc)}",
        )
    return FinalizeResult(
        outcome="pending_review", answer="", status="pending_review", policy_action="escalate", verdict=None,
        follow_up="", attempt=candidate.attempt, session_state="paused", pending_id=review_id,
    )


async def decide(gate: Gate, candidate: Candidate, termination: Termination, *,
                 deadline: float | None = None) -> FinalizeResult:
    """``gate.finalize`` that never raises (see the module docstring) and never returns a non-result."""
    try:
        result: object = await gate.finalize(candidate, termination, deadline=deadline)
    except BaseException as exc:
        reraise_if_caller_stops(exc)
        return escalated(gate, candidate, f"the gate raised: {describe(exc)}")
    if not isinstance(result, FinalizeResult):  # a substituted gate object breaking its contract
        return escalated(gate, candidate, f"the gate returned {type(result).__name__}, not a FinalizeResult")
    return result
