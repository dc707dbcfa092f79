"""Models check the types they are given: a plug-in's sloppy value never reads as a pass."""

from __future__ import annotations

import pytest

from verigate import Candidate, StructuralFinding, Termination, TerminationReason, ToolObservation, Verdict


@pytest.mark.parametrize("passed", ["false", "true", 1, 0, None])
def test_verdict_passed_must_be_a_real_bool(passed: object) -> None:
    with pytest.raises(TypeError):
        Verdict(passed=passed)  # type: ignore[arg-type]


@pytest.mark.parametrize("score", [-0.1, 1.5, "0.9", True, float("nan")])
def test_verdict_score_is_a_number_in_unit_range(score: object) -> None:
    with pytest.raises(ValueError):
        Verdict(passed=False, score=score)  # type: ignore[arg-type]


def test_verification_error_is_never_a_pass() -> None:
    verdict = Verdict.verification_error("judge_timeout")
    assert (verdict.passed, verdict.retryable, verdict.is_verification_error) == (False, False, True)


def test_structural_finding_fixable_is_a_bool() -> None:
    with pytest.raises(TypeError):
        StructuralFinding("empty_turn", "yes")  # type: ignore[arg-type]


def test_unknown_termination_reason_is_refused() -> None:
    with pytest.raises(ValueError):
        Termination("done_i_promise")
    assert not Termination("max_rounds").reason.hand_off
    assert {reason for reason in TerminationReason if reason.hand_off} == {
        TerminationReason.NATURAL, TerminationReason.FORCED_TEXT, TerminationReason.ACTIONABLE_PARTIAL}


def test_candidate_refuses_a_negative_attempt_and_loose_tool_calls() -> None:
    with pytest.raises(ValueError):
        Candidate("do it", "done", attempt=-1)
    with pytest.raises(TypeError):
        Candidate("do it", "done", tool_calls=({"name": "Bash"},))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Candidate("do it", "done", requirements="one string")  # type: ignore[arg-type]
    assert Candidate("do it", "done", tool_calls=[ToolObservation("Bash")]).tool_calls[0].name == "Bash"
