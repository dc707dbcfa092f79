"""The pure decision of the finalization gate (SPEC §1.2 "The decision, precisely"): no I/O, no clock."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs

from .._models import (
    Outcome,
    PolicyAction,
    PostDecision,
    StopDirective,
    Strengthen,
    StructuralFinding,
    Verdict,
)

__all__ = [
    "Decision",
    "PolicyInput",
    "combine_verdict",
    "decide",
    "feedback_instruction",
    "is_escalation",
    "judge_is_skipped",
    "post_verify_action",
    "unite_strengthen",
]

#: how much of the judge's feedback the next attempt receives (bounded context: the latest failure only)
MAX_FEEDBACK_MISSES = 20
MAX_FEEDBACK_FIELD_CHARS = 1000
#: the reason of a plain ``escalate`` reached by the runtime default (a failed, non-retryable judgment)
JUDGE_NOT_RETRYABLE = "judge_not_retryable"


@attrs.frozen
class PolicyInput:
    """Everything the decision depends on; the gate gathers it, this module only reads it."""

    structural_findings: tuple[StructuralFinding, ...] = ()
    #: the union of every PreVerify handler's Strengthen
    strengthen: Strengthen = attrs.field(factory=Strengthen)
    #: what the judge engine returned (a verification_error verdict for any judge failure); None = not called
    judge_verdict: Verdict | None = None
    post_decisions: tuple[PostDecision, ...] = ()
    stop_directives: tuple[StopDirective, ...] = ()
    #: a handler of that stage raised, timed out or returned an invalid decision
    structural_error: bool = False
    pre_verify_error: bool = False
    post_verify_error: bool = False
    stop_error: bool = False
    #: the attempt number of this request (first attempt = 0) and the revise budget
    attempt: int = 0
    budget: int = 2
    hand_off: bool = True
    skip_public_verification: bool = False


@attrs.frozen
class Decision:
    """The gate's decision: the policy action, the outcome it maps to, and the next attempt's follow-up."""

    action: PolicyAction
    outcome: Outcome
    #: the combined verdict (structural + PreVerify + judge); None for unverified runs
    verdict: Verdict | None
    #: the action after PostVerify, before Stop and the budget (what Stop handlers are shown)
    post_verify_action: PolicyAction | None
    #: the instruction for the next attempt; set only when the outcome is ``revise``
    follow_up: str = ""
    #: why it escalated (a verification_error code, hook reasons …); empty otherwise
    reason: str = ""


def is_escalation(action: str) -> bool:
    return action.startswith("escalate")


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def unite_strengthen(items: Sequence[Strengthen]) -> Strengthen:
    """The union of several Strengthen decisions, in handler order, without duplicates."""
    return Strengthen(
        additional_misses=_unique(code for item in items for code in item.additional_misses),
        requirements=_unique(text for item in items for text in item.requirements),
    )


def judge_is_skipped(findings: Sequence[StructuralFinding], *, hook_error: bool = False) -> bool:
    """The semantic judge is skipped for an unfixable structural failure, and when a structural or PreVerify
    handler already failed (the run escalates whatever the judge says, so nothing needs to leave the process)."""
    return hook_error or any(not finding.fixable for finding in findings)


def combine_verdict(
    findings: Sequence[StructuralFinding], strengthen: Strengthen, judge_verdict: Verdict | None
) -> Verdict:
    """Rule 3: a judge error stays a verification_error; otherwise a pass needs the judge's pass, no structural
    finding and no PreVerify-added miss. A failed judgment that the judge marked not retryable stays so.

    A judge verdict that says ``passed`` but lists rubric misses contradicts itself and is read the fail-closed
    way, whichever engine produced it: not passed."""
    if judge_verdict is not None and judge_verdict.is_verification_error:
        return judge_verdict
    judge_passed = judge_verdict is not None and judge_verdict.passed and not judge_verdict.rubric_misses
    passed = judge_passed and not findings and not strengthen.additional_misses
    unfixable = any(not finding.fixable for finding in findings)
    judge_allows_retry = judge_verdict is None or judge_passed or judge_verdict.retryable
    return Verdict(
        passed=passed,
        rubric_misses=_unique(
            [finding.code for finding in findings]
            + list(strengthen.additional_misses)
            + list(judge_verdict.rubric_misses if judge_verdict is not None else ())
        ),
        score=judge_verdict.score if judge_verdict is not None else None,
        reflection=judge_verdict.reflection if judge_verdict is not None else None,
        retryable=not passed and not unfixable and judge_allows_retry,
        error=None,
        engine=judge_verdict.engine if judge_verdict is not None else "",
        effective_engine=judge_verdict.effective_engine if judge_verdict is not None else "",
    )


def _clip(text: str) -> str:
    text = text.strip()
    return text if len(text) <= MAX_FEEDBACK_FIELD_CHARS else text[: MAX_FEEDBACK_FIELD_CHARS - 1] + "…"


def feedback_instruction(verdict: Verdict) -> str:
    """The default revise instruction: the misses and the judge's reflection of this failure only."""
    lines = ["The previous answer did not pass verification. Revise it."]
    misses = verdict.rubric_misses[:MAX_FEEDBACK_MISSES]
    if misses:
        more = len(verdict.rubric_misses) - len(misses)
        lines.append("Missing: " + ", ".join(misses) + (f" (and {more} more)" if more else ""))
    if verdict.reflection is not None:
        for label, text in (
            ("Observation", verdict.reflection.observation),
            ("Lesson", verdict.reflection.lesson),
            ("Next check", verdict.reflection.next_check),
        ):
            if text.strip():
                lines.append(f"{label}: {_clip(text)}")
    return "\n".join(lines)


def _join(parts: Iterable[str]) -> str:
    return "\n\n".join(part.strip() for part in parts if part.strip())


def post_verify_action(inp: PolicyInput, verdict: Verdict) -> tuple[PolicyAction, str, str]:
    """Rule 4 (first that applies): the action after PostVerify, its instruction and its escalation reason."""
    if inp.structural_error or inp.pre_verify_error or inp.post_verify_error:
        stages = [
            name
            for name, failed in (
                ("structural_check", inp.structural_error),
                ("pre_verify", inp.pre_verify_error),
                ("post_verify", inp.post_verify_error),
            )
            if failed
        ]
        return "escalate_hook_error", "", "hook error in " + ", ".join(stages)
    if verdict.is_verification_error:
        return "escalate_verification_error", "", verdict.error or "verification_error"
    escalations = [decision for decision in inp.post_decisions if decision.action == "escalate"]
    if escalations:
        return "escalate", "", "; ".join(d.reason for d in escalations if d.reason) or "escalated by a hook"
    if not verdict.passed and any(decision.action == "accept" for decision in inp.post_decisions):
        return "escalate_invalid_accept", "", "a PostVerify handler accepted a failed verification"
    revisions = [decision.instruction for decision in inp.post_decisions if decision.action == "revise"]
    if revisions:
        return "revise", _join(revisions), ""
    if verdict.passed:
        return "accept", "", ""
    if verdict.retryable:
        return "revise", feedback_instruction(verdict), ""
    if any(not finding.fixable for finding in inp.structural_findings):
        unfixable = [finding.code for finding in inp.structural_findings if not finding.fixable]
        return "escalate_unfixable_structural", "", ", ".join(unfixable)
    return "escalate", "", JUDGE_NOT_RETRYABLE


def decide(inp: PolicyInput) -> Decision:
    """Rules 1-7 of SPEC §1.2 "The decision, precisely", in one pure function."""
    if not inp.hand_off or inp.skip_public_verification:
        return Decision("unverified", "unverified", None, None)
    verdict = combine_verdict(inp.structural_findings, inp.strengthen, inp.judge_verdict)
    action, instruction, reason = post_verify_action(inp, verdict)
    after_post_verify = action
    if inp.stop_error:
        action, instruction, reason = "escalate_hook_error", "", "hook error in stop"
    elif not is_escalation(action):
        continues = [directive.instruction for directive in inp.stop_directives if directive.action == "continue"]
        if continues:
            action, instruction = "continue", _join([instruction, *continues])
    if action in ("revise", "continue"):
        if inp.attempt < inp.budget:
            return Decision(action, "revise", verdict, after_post_verify, follow_up=instruction)
        action, reason = "escalate_budget_exhausted", f"revise budget of {inp.budget} exhausted"
    if action == "accept":
        return Decision("accept", "completed", verdict, after_post_verify)
    return Decision(action, "pending_review", verdict, after_post_verify, reason=reason)
