"""The built-in structural checks: ``empty_turn`` (fixable) and ``model_action_required`` (unfixable)."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from .._models import Candidate, StructuralFinding, Termination, TerminationReason, ToolObservation

if TYPE_CHECKING:
    from ..rules import RuleSet

__all__ = [
    "EMPTY_TURN",
    "MODEL_ACTION_REQUIRED",
    "STRUCTURAL_PACK",
    "asks_user_to_act",
    "check_candidate",
    "empty_turn",
]

EMPTY_TURN = "empty_turn"
MODEL_ACTION_REQUIRED = "model_action_required"

#: the shipped rule pack holding the hand-back phrases (English and Japanese), with examples run as tests
STRUCTURAL_PACK = "structural"


@functools.cache
def _hand_backs() -> RuleSet:
    """The compiled pack (once per process). Its phrase rules need only the built-in ``phrase`` kind, so no
    plug-in manager is built here. A broken pack raises RuleError: the structural check then fails closed."""
    from ..rules import PhraseKind, RuleSet

    return RuleSet.compile([STRUCTURAL_PACK], kinds={"phrase": PhraseKind()})


def asks_user_to_act(text: str) -> bool:
    """True when the text hands the agent's own work back to the user (English or Japanese).

    Matches an inline ``verigate: allow`` suppressed count too: an answer cannot opt itself out of the check."""
    return bool(_hand_backs().scan(text))


def _succeeded(call: ToolObservation) -> bool:
    return call.ok is True or (call.ok is None and bool(call.output.strip()))


def empty_turn(candidate: Candidate, termination: Termination) -> bool:
    """No final text — unless the turn is ``actionable_partial`` and earlier tool work succeeded (that work is
    the hand-off; an empty final text is expected there)."""
    if candidate.final_text.strip():
        return False
    if termination.reason is TerminationReason.ACTIONABLE_PARTIAL:
        return not any(_succeeded(call) for call in candidate.tool_calls)
    return True


def check_candidate(candidate: Candidate, termination: Termination) -> list[StructuralFinding]:
    """Both built-in checks; the findings in a stable order."""
    findings: list[StructuralFinding] = []
    if empty_turn(candidate, termination):
        findings.append(StructuralFinding(EMPTY_TURN, fixable=True, message="the turn has no final text"))
    if asks_user_to_act(candidate.final_text):
        findings.append(
            StructuralFinding(
                MODEL_ACTION_REQUIRED,
                fixable=False,
                message="the answer asks the user to do what the agent should have done",
            )
        )
    return findings
