"""The built-in structural checks: ``empty_turn`` (fixable) and ``model_action_required`` (unfixable)."""

from __future__ import annotations

import re

from .._models import Candidate, StructuralFinding, Termination, TerminationReason, ToolObservation

__all__ = [
    "EMPTY_TURN",
    "MODEL_ACTION_REQUIRED",
    "asks_user_to_act",
    "check_candidate",
    "empty_turn",
]

EMPTY_TURN = "empty_turn"
MODEL_ACTION_REQUIRED = "model_action_required"

# Conservative on purpose: each phrase hands the agent's own work back to the user ("run it yourself and tell me
# the output"). Instructions a user asked for ("how do I install X?" → "run pip install X") do not match: they
# lack the hand-back ("yourself", "and paste/tell me the output", "I can't run …, please …").
_HAND_BACK_EN = [
    r"\b(?:please|could you|can you|would you)\s+(?:run|execute|try running)\b[^.?!\n]{0,120}?"
    r"\b(?:and|then)\s+(?:paste|share|send|post|tell|show|report|let me know)\b",
    r"\b(?:run|execute|do|check|try|test|apply|verify)\s+(?:it|this|that|them|these|the \w+)\s+yourself\b",
    r"\byou(?:'ll| will)? (?:need|have) to (?:run|execute|apply|do|check|verify|test)\b[^.?!\n]{0,80}?"
    r"\byourself\b",
    r"\bI (?:can(?:no|')t|cannot|am unable to|'m unable to|am not able to|don't have (?:the ability|access))"
    r"\b[^.?!\n]{0,80}?\b(?:run|execute|access|check|test)\b[^.?!\n]{0,80}?[,;.]\s*(?:so\s+)?"
    r"(?:please|you(?:'ll| will)? (?:need|have) to|you can|you should)\b",
    r"\b(?:paste|share|send|post) (?:me )?(?:the|its|their) (?:output|result|results|error|logs?)\b",
    r"\blet me know (?:what|the) (?:output|result|results|error)\b",
    r"\bonce you(?:'ve| have) (?:run|executed|applied|tried)\b[^.?!\n]{0,80}?\b(?:let me know|tell me|share|"
    r"paste|report)\b",
]
_HAND_BACK_JA = [
    r"(?:ご自身で|ご自分で|自分で|手動で)[^。\n]{0,40}?(?:実行|確認|適用|試)(?:して|を)?(?:ください|下さい|いただけ|頂け|お願い)",
    r"(?:実行|試)(?:して|し)[^。\n]{0,20}?(?:結果|出力|エラー|ログ)を(?:教えて|共有して|貼り付けて|送って|見せて)",
    r"(?:結果|出力|エラー|ログ)を(?:貼り付けて|共有して|教えて)(?:ください|下さい|いただけ|頂け)",
    r"(?:私|わたし)(?:は|には)[^。\n]{0,30}?(?:実行|アクセス|確認)(?:でき|することができ)ない(?:ため|ので)",
]
_HAND_BACK = re.compile("|".join(f"(?:{pattern})" for pattern in _HAND_BACK_EN + _HAND_BACK_JA), re.IGNORECASE)


def asks_user_to_act(text: str) -> bool:
    """True when the text hands the agent's own work back to the user (English or Japanese)."""
    return _HAND_BACK.search(text) is not None


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
