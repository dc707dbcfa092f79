"""verigate.runtimes: the one mapping from a gate outcome to what a runtime adapter does."""

from __future__ import annotations

from typing import Any

import pytest

from verigate import GateHeldError, Reflection, ReviewPendingError, StepResult, UnverifiedError, Verdict, run_gated
from verigate.runtimes import answer_or_raise, follow_up_or_answer, held_error

RETRY = Verdict(passed=False, rubric_misses=("tests_pass",), retryable=True,
                reflection=Reflection("no test output", "run pytest", "pytest -q"))


def test_completed_hands_out_the_answer(make_gate: Any) -> None:
    gate, _ = make_gate([Verdict(passed=True)])
    final = run_gated(gate, lambda turn: StepResult("the answer"), "task", session_id="ok").final
    assert answer_or_raise(final) == "the answer"
    assert follow_up_or_answer(final) == ("answer", "the answer")
    with pytest.raises(ValueError, match="not held"):
        held_error(final)


def test_revise_is_a_follow_up_or_an_unverified_error(make_gate: Any) -> None:
    gate, _ = make_gate([RETRY])
    loop = run_gated(gate, lambda turn: StepResult("not yet"), "task", session_id="r")
    first = loop.results[0]
    assert first.outcome == "revise"
    kind, text = follow_up_or_answer(first)
    assert kind == "follow_up" and "tests_pass" in text
    with pytest.raises(UnverifiedError) as raised:
        answer_or_raise(first)  # a runtime that cannot revise never hands out the revised-away answer
    assert raised.value.exit_code == 3 and raised.value.review_id is None


def test_budget_exhausted_raises_the_review_id(make_gate: Any) -> None:
    gate, _ = make_gate([RETRY], repeat_last=True, budget={"revise": 1})
    final = run_gated(gate, lambda turn: StepResult("not yet"), "task", session_id="b").final
    assert final.outcome == "pending_review" and final.pending_id
    for call in (answer_or_raise, follow_up_or_answer):
        with pytest.raises(ReviewPendingError) as raised:
            call(final)
        assert raised.value.review_id == final.pending_id
        assert raised.value.policy_action == "escalate_budget_exhausted"
        assert isinstance(raised.value, GateHeldError) and final.pending_id in str(raised.value)
    assert gate.store.get_review(final.pending_id).status == "pending"


def test_a_judge_that_fails_is_a_review_at_once(make_gate: Any) -> None:
    gate, judge = make_gate([RuntimeError("judge down")])
    loop = run_gated(gate, lambda turn: StepResult("answer"), "task", session_id="down")
    assert [r.outcome for r in loop.results] == ["pending_review"] and judge.calls == 1  # no revise spent
    with pytest.raises(ReviewPendingError) as raised:
        answer_or_raise(loop.final)
    assert raised.value.policy_action == "escalate_verification_error"


def test_unverified_raises(make_gate: Any) -> None:
    gate, _ = make_gate([Verdict(passed=True)])
    final = run_gated(gate, lambda turn: StepResult("", termination="max_rounds"), "task", session_id="u").final
    with pytest.raises(UnverifiedError) as raised:
        answer_or_raise(final)
    assert raised.value.outcome == "unverified"
