"""What the Stop hook tells the host: block with feedback, let the agent stop, or hand the answer to a person."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._protocol import HookAnswer

if TYPE_CHECKING:
    from .._models import Candidate, FinalizeResult
    from ..gate import Gate

__all__ = ["FEEDBACK_MARKER", "MAX_REASON_CHARS", "allow_with_message", "answer", "block", "out_of_time",
           "pending"]

#: the first words of every block reason: the host feeds the reason back as the next prompt, and a prompt
#: that carries them is verigate's own feedback, never the person's new request
FEEDBACK_MARKER = "[verigate stop gate]"
#: the block reason is an instruction to the agent; the judge's full reflection stays in the store
MAX_REASON_CHARS = 1500


def block(reason: str) -> HookAnswer:
    """Keep the agent going: ``reason`` is what it reads as its next instruction."""
    text = f"{FEEDBACK_MARKER} {reason.strip()}"
    if len(text) > MAX_REASON_CHARS:
        text = text[: MAX_REASON_CHARS - 1] + "…"
    return 0, {"decision": "block", "reason": text}, ""


def allow_with_message(stop_reason: str, message: str) -> HookAnswer:
    """Let the agent stop and tell the person: ``stopReason`` (shown because ``continue`` is false) says what,
    ``systemMessage`` says why and what to do."""
    return 0, {"continue": False, "stopReason": stop_reason, "systemMessage": message}, ""


def pending(review_id: str | None, why: str) -> HookAnswer:
    """Let the agent stop with its answer marked NOT verified, naming the review a person resolves."""
    from ..gate import PENDING_STATUS  # the gate's own status (loaded on first use: the gate is heavy to import)

    if review_id:
        headline = f"{PENDING_STATUS}: review {review_id}"
        where = f"`verigate review show {review_id}`, then approve or reject it"
    else:
        headline = f"{PENDING_STATUS}: the review could not be stored"
        where = "the review could not be stored; the answer stays in the transcript"
    return allow_with_message(headline, f"{headline}. The agent's last answer is NOT verified: verigate could not "
                              f"verify it ({why}). Do not rely on it until a person has checked it: {where}.")


def answer(result: FinalizeResult) -> HookAnswer:
    """The host's answer for a finalize result."""
    if result.outcome == "revise":
        return block(result.follow_up or "verification did not pass; revise the answer")
    if result.outcome == "completed":
        return 0, None, ""
    if result.outcome == "pending_review":
        why = result.policy_action.replace("_", " ")
        if result.verdict is not None and result.verdict.error:
            why = f"{why}: {result.verdict.error}"
        return pending(result.pending_id, why)
    message = f"verigate: the agent's last answer was not verified ({result.status})."
    return allow_with_message(message, message)


def out_of_time(gate: Gate, candidate: Candidate) -> HookAnswer:
    """The gate did not finish in the hook's budget: a pending review when one can still be filed."""
    reason = "verification_time_budget_exhausted: the gate did not finish within the hook's time budget"
    try:
        review_id: str | None = gate.file_review(candidate, policy_action="escalate_verification_error",
                                                 reason=reason)
    except Exception:  # out of time already: say so rather than block on a second failure
        review_id = None
    return pending(review_id, reason)
