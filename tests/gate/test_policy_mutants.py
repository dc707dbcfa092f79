"""Exact values of the policy's outputs that the rule tests leave loose, written for the mutants of
``gate/_policy.py`` they let live (docs/mutation.md): the feedback's bounds at their edges, the reason each
escalation records (a reviewer reads it), the defaults of PolicyInput, and what the combined verdict carries over
from the judge."""

from __future__ import annotations

import pytest

from verigate import PostDecision, Reflection, StopDirective, Strengthen, StructuralFinding, Verdict
from verigate.gate import PolicyInput, combine_verdict, decide, feedback_instruction

RETRYABLE = Verdict(passed=False, rubric_misses=("tests_pass",), retryable=True)
HARD = Verdict(passed=False, rubric_misses=("harmful",), retryable=False)
PASS = Verdict(passed=True, score=1.0, engine="llm_judge", effective_engine="llm_judge:model")
ACTION = StructuralFinding("model_action_required", fixable=False)
EMPTY = StructuralFinding("empty_turn", fixable=True)


def _observation(text: str) -> str:
    verdict = Verdict(passed=False, retryable=True, reflection=Reflection(text, "", ""))
    lines = feedback_instruction(verdict).splitlines()
    assert lines[0] == "The previous answer did not pass verification. Revise it." and len(lines) == 2
    return lines[1].removeprefix("Observation: ")


def test_a_reflection_field_is_kept_whole_up_to_1000_characters_then_clipped_to_1000() -> None:
    assert _observation("x" * 1000) == "x" * 1000
    assert _observation("x" * 1001) == "x" * 999 + "…"
    assert _observation("  padded  ") == "padded"


def test_twenty_misses_are_listed_the_rest_counted() -> None:
    def missing(count: int) -> str:
        verdict = Verdict(passed=False, rubric_misses=tuple(f"m{i}" for i in range(count)), retryable=True)
        return feedback_instruction(verdict).splitlines()[1]

    assert missing(20) == "Missing: " + ", ".join(f"m{i}" for i in range(20))
    assert missing(21) == "Missing: " + ", ".join(f"m{i}" for i in range(20)) + " (and 1 more)"
    assert feedback_instruction(Verdict(passed=False, retryable=True)).splitlines() == [
        "The previous answer did not pass verification. Revise it."]


def test_blank_reflection_fields_are_left_out_and_the_labels_are_fixed() -> None:
    verdict = Verdict(passed=False, retryable=True, reflection=Reflection("seen", " ", "check"))
    assert feedback_instruction(verdict).splitlines()[1:] == ["Observation: seen", "Next check: check"]
    verdict = Verdict(passed=False, retryable=True, reflection=Reflection("", "learnt", "\n"))
    assert feedback_instruction(verdict).splitlines()[1:] == ["Lesson: learnt"]


def test_policy_input_defaults_first_attempt_and_hand_off() -> None:
    # a budget of one revision: the first attempt (0 by default) still revises
    assert decide(PolicyInput(judge_verdict=RETRYABLE, budget=1)).outcome == "revise"
    assert decide(PolicyInput(judge_verdict=PASS)).outcome == "completed"  # hand_off on, nothing skipped


@pytest.mark.parametrize(("inp", "action", "reason"), [
    (PolicyInput(judge_verdict=HARD), "escalate", "judge_not_retryable"),
    (PolicyInput(judge_verdict=PASS, structural_error=True, post_verify_error=True), "escalate_hook_error",
     "hook error in structural_check, post_verify"),
    (PolicyInput(judge_verdict=PASS, pre_verify_error=True), "escalate_hook_error", "hook error in pre_verify"),
    (PolicyInput(judge_verdict=PASS, stop_error=True), "escalate_hook_error", "hook error in stop"),
    (PolicyInput(judge_verdict=PASS, post_decisions=(PostDecision.escalate("a"), PostDecision.escalate(""),
                                                     PostDecision.escalate("b"))), "escalate", "a; b"),
    (PolicyInput(judge_verdict=PASS, post_decisions=(PostDecision.escalate(""),)), "escalate",
     "escalated by a hook"),
    (PolicyInput(judge_verdict=RETRYABLE, post_decisions=(PostDecision.accept(),)), "escalate_invalid_accept",
     "a PostVerify handler accepted a failed verification"),
    (PolicyInput(structural_findings=(EMPTY, ACTION, StructuralFinding("no_answer", fixable=False))),
     "escalate_unfixable_structural", "model_action_required, no_answer"),
    (PolicyInput(judge_verdict=RETRYABLE, attempt=2), "escalate_budget_exhausted", "revise budget of 2 exhausted"),
    (PolicyInput(judge_verdict=Verdict.verification_error("judge_timeout")), "escalate_verification_error",
     "judge_timeout"),
    # an error without a code is still a verification error, and says so
    (PolicyInput(judge_verdict=Verdict(passed=False, error="")), "escalate_verification_error",
     "verification_error"),
])
def test_each_escalation_records_its_reason(inp: PolicyInput, action: str, reason: str) -> None:
    decision = decide(inp)
    assert (decision.action, decision.outcome, decision.reason, decision.follow_up) == (
        action, "pending_review", reason, "")


def test_accept_revise_and_continue_record_no_reason() -> None:
    accepted = decide(PolicyInput(judge_verdict=PASS))
    assert (accepted.action, accepted.reason, accepted.follow_up, accepted.post_verify_action) == (
        "accept", "", "", "accept")
    revised = decide(PolicyInput(judge_verdict=PASS, post_decisions=(PostDecision.revise(" a "),),
                                 stop_directives=(StopDirective.continue_(""), StopDirective.continue_("b"))))
    assert (revised.action, revised.reason, revised.follow_up, revised.post_verify_action) == (
        "continue", "", "a\n\nb", "revise")
    unverified = decide(PolicyInput(judge_verdict=PASS, skip_public_verification=True))
    assert (unverified.verdict, unverified.post_verify_action, unverified.reason) == (None, None, "")


def test_the_combined_verdict_carries_the_judges_score_reflection_and_engines() -> None:
    reflection = Reflection("o", "l", "n")
    judged = Verdict(passed=False, rubric_misses=("m",), score=0.25, reflection=reflection, retryable=True,
                     engine="llm_judge", effective_engine="llm_judge:model")
    combined = combine_verdict([], Strengthen(), judged)
    assert combined == Verdict(passed=False, rubric_misses=("m",), score=0.25, reflection=reflection,
                               retryable=True, engine="llm_judge", effective_engine="llm_judge:model")
    assert combine_verdict([], Strengthen(), PASS) == Verdict(
        passed=True, score=1.0, retryable=False, engine="llm_judge", effective_engine="llm_judge:model")
    assert combine_verdict([EMPTY], Strengthen(), None) == Verdict(
        passed=False, rubric_misses=("empty_turn",), retryable=True)
    # a judge that says passed but lists a miss has not passed, and its retryable flag is what counts
    contradictory = Verdict(passed=True, rubric_misses=("m",), retryable=False)
    assert combine_verdict([], Strengthen(), contradictory).retryable is False
    assert combine_verdict([], Strengthen(), contradictory).passed is False
