"""What every runtime adapter shares: one mapping from the gate's outcome to what a framework does with it.

====================  ==========================================================================================
gate outcome          what an adapter does
====================  ==========================================================================================
``completed``         hands out ``result.answer``
``revise``            feeds ``result.follow_up`` to the model as its next instruction; the gate's revise budget
                      (counted by the gate's store, never by the framework) ends the loop with a pending review
``pending_review``    raises :class:`ReviewPendingError` (``review_id``); the answer is not handed out
``unverified``        raises :class:`UnverifiedError`; the answer is not handed out
====================  ==========================================================================================

A judge that is down or answers garbage is ``verification_error``: the gate files a pending review at once (no
revise is spent), so an adapter sees ``pending_review``. Adapters live in their own distributions under
``plugins/`` (docs: the runtimes pages); they import only this module's face and the public gate.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from ._errors import GateHeldError, ReviewPendingError, UnverifiedError
from ._models import Candidate, FinalizeResult, PolicyAction, Termination
from .gate._containment import cancelled_from_outside, describe

if TYPE_CHECKING:
    from .gate import Gate

__all__ = ["GateHeldError", "ReviewPendingError", "UnverifiedError", "answer_or_raise", "caller_stops",
           "describe_error", "finalize_or_hold", "follow_up_or_answer", "held_error", "held_result", "hold"]


def held_error(result: FinalizeResult) -> GateHeldError:
    """The exception for a result that hands out no answer (pending review or unverified)."""
    if result.outcome == "pending_review":
        where = (f"pending review {result.pending_id}" if result.pending_id is not None
                 else f"a pending review that could not be stored ({result.store_error})")
        return ReviewPendingError(result, f"the gate holds the answer: {where} ({result.policy_action})")
    if result.outcome == "unverified":
        return UnverifiedError(result, f"the answer was not verified ({result.policy_action})")
    raise ValueError(f"a {result.outcome} result is not held")


def answer_or_raise(result: FinalizeResult) -> str:
    """The answer of a completed result; anything else raises (a ``revise`` too: use
    :func:`follow_up_or_answer` where the runtime can feed the follow-up back)."""
    if result.outcome == "completed":
        return result.answer
    if result.outcome == "revise":
        raise UnverifiedError(result, "the gate asked for a revision the runtime cannot make")
    raise held_error(result)


def follow_up_or_answer(result: FinalizeResult) -> tuple[str, str]:
    """``("answer", text)`` when completed, ``("follow_up", instruction)`` on revise; held results raise."""
    if result.outcome == "completed":
        return "answer", result.answer
    if result.outcome == "revise":
        return "follow_up", result.follow_up
    raise held_error(result)



# ------------------------------------------------------------------------------------------- the adapter's own errors


def caller_stops(exc: BaseException) -> bool:
    """True for what must cross an adapter's boundary as it is: Ctrl-C, SystemExit, GeneratorExit, and the
    caller's own cancellation of this task (a CancelledError the framework raised by itself is an error like any
    other, contained)."""
    if isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit)):
        return True
    return isinstance(exc, asyncio.CancelledError) and cancelled_from_outside()


#: ``Type: first line`` of an exception: no traceback or payload goes into a review's reason
describe_error = describe


def held_result(candidate: Candidate, *, policy_action: PolicyAction, review_id: str | None = None,
                attempt: int | None = None, store_error: str | None = None) -> FinalizeResult:
    """The result of a run an adapter held itself, in the shape the gate returns: ``pending_review`` with the
    review's id, or (no review could be stored) ``unverified`` keeping the candidate's text in ``pending_text``."""
    from .gate import PENDING_STATUS

    held = review_id is not None
    return FinalizeResult(
        outcome="pending_review" if held else "unverified",
        answer="",
        status=PENDING_STATUS if held else "unverified",
        policy_action=policy_action,
        verdict=None,
        follow_up="",
        attempt=candidate.attempt if attempt is None else attempt,
        session_state="paused" if held else "ended",
        pending_id=review_id,
        pending_text=None if held else candidate.final_text,
        store_error=store_error,
    )


def hold(gate: Gate, candidate: Candidate, *, reason: str,
         policy_action: PolicyAction = "escalate") -> FinalizeResult:
    """File ``candidate`` for a person (:meth:`Gate.file_review`) and return the held result; when filing fails
    too, the unverified result (never a pass). Only :func:`caller_stops` exceptions propagate."""
    try:
        review_id = gate.file_review(candidate, policy_action=policy_action, reason=reason)
    except BaseException as exc:
        if caller_stops(exc):
            raise
        return held_result(candidate, policy_action=policy_action,
                           store_error=f"{reason}; filing the review failed: {describe_error(exc)}")
    return held_result(candidate, policy_action=policy_action, review_id=review_id)


async def finalize_or_hold(gate: Gate, candidate: Candidate, termination: Termination, *,
                           deadline: float | None = None) -> FinalizeResult:
    """``gate.finalize`` that always returns a result: when it raises (or returns something else), the candidate
    is held (:func:`hold`, policy action ``escalate``)."""
    try:
        result: object = await gate.finalize(candidate, termination, deadline=deadline)
    except BaseException as exc:
        if caller_stops(exc):
            raise
        return hold(gate, candidate, reason=f"the gate raised: {describe_error(exc)}")
    if not isinstance(result, FinalizeResult):  # a substituted gate object breaking its contract
        return hold(gate, candidate, reason=f"the gate returned {type(result).__name__}, not a FinalizeResult")
    return result
