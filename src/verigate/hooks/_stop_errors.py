"""The Stop hook's error path: count internal errors per session so that a persistent one blocks once and then
hands the answer to a person, never loops."""

from __future__ import annotations

import attrs

from ._stop_input import ErrorContext
from ._stop_project import open_gate
from ._stop_state import load_state, save_state

__all__ = ["count_error", "review_after_error"]


def count_error(context: ErrorContext, reason: str) -> tuple[bool, str]:
    """(is this error a repeat, the reason to show). Counted in the session's state file; without one, the host's
    ``stop_hook_active`` says whether this Stop already follows a block — and when the input does not carry it
    either, nothing tells a first error from the hundredth, so it counts as a repeat (a block could loop)."""
    if context.project_dir is None:
        return _repeated_by_flag(context, f"{reason}; no project to keep an error counter in")
    try:
        state = load_state(context.project_dir, context.session_key)
        save_state(context.project_dir, context.session_key,
                   attrs.evolve(state, errors_in_row=state.errors_in_row + 1))
    except Exception as exc:  # no counter: the host's one-bit flag is the last loop guard left
        return _repeated_by_flag(context, f"{reason}; the error counter is unusable too ({type(exc).__name__}: "
                                          f"{exc})")
    return state.errors_in_row > 0, reason


def _repeated_by_flag(context: ErrorContext, reason: str) -> tuple[bool, str]:
    if context.stop_hook_active is None:
        return True, f"{reason}; the input has no stop_hook_active either"
    return context.stop_hook_active, reason


def review_after_error(context: ErrorContext, reason: str) -> str | None:
    """A pending review for the failed verification, holding the final answer when it can be read."""
    from .._models import Candidate

    if context.project_dir is None:
        return None
    try:
        with open_gate(context.project_dir) as gate:
            candidate = Candidate("", context.last_assistant_message, session_id=context.session_key,
                                  turn_id=context.turn_id)
            return gate.file_review(candidate, policy_action="escalate_hook_error", reason=reason)
    except Exception:  # the store (or configuration) itself is what fails: say so, never block again
        return None
