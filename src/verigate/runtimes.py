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

from ._errors import GateHeldError, ReviewPendingError, UnverifiedError
from ._models import FinalizeResult

__all__ = ["GateHeldError", "ReviewPendingError", "UnverifiedError", "answer_or_raise", "follow_up_or_answer",
           "held_error"]


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

