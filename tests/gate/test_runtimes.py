"""verigate.runtimes: the one mapping from a gate outcome to what a runtime adapter does."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from verigate import GateHeldError, Reflection, ReviewPendingError, StepResult, UnverifiedError, Verdict, run_gated
from verigate.runtimes import (
    answer_or_raise,
    caller_stops,
    describe_error,
    finalize_or_hold,
    follow_up_or_answer,
    held_error,
    hold,
)

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


def test_hold_files_a_review_or_keeps_the_text(make_gate: Any) -> None:
    from verigate import Candidate

    gate, _ = make_gate([Verdict(passed=True)])
    candidate = Candidate(request="task", final_text="held answer", session_id="h", attempt=2)
    held = hold(gate, candidate, reason="the adapter raised: ValueError: x")
    assert held.outcome == "pending_review" and held.pending_id and held.attempt == 2 and held.answer == ""
    assert gate.store.get_review(held.pending_id).reason == "the adapter raised: ValueError: x"
    with pytest.raises(ReviewPendingError):
        answer_or_raise(held)
    gate.store.close()  # a store that cannot take the review: unverified, the text kept for the caller
    lost = hold(gate, candidate, reason="again", policy_action="escalate_hook_error")
    assert lost.outcome == "unverified" and lost.pending_id is None and lost.pending_text == "held answer"
    assert lost.policy_action == "escalate_hook_error" and "filing the review failed" in (lost.store_error or "")
    with pytest.raises(UnverifiedError):
        answer_or_raise(lost)


def test_finalize_or_hold_returns_the_gates_result(make_gate: Any) -> None:
    from verigate import Candidate, Termination, TerminationReason

    gate, _ = make_gate([Verdict(passed=True)])
    result = asyncio.run(finalize_or_hold(gate, Candidate(request="t", final_text="a", session_id="f"),
                                          Termination(TerminationReason.NATURAL)))
    assert result.outcome == "completed" and result.answer == "a"


def test_what_crosses_an_adapters_boundary() -> None:
    assert caller_stops(KeyboardInterrupt()) and caller_stops(SystemExit(0)) and caller_stops(GeneratorExit())
    assert not caller_stops(ValueError()) and not caller_stops(asyncio.CancelledError())  # no task cancelled

    async def cancelled_here() -> bool:
        task = asyncio.current_task()
        assert task is not None
        task.cancel()
        try:
            await asyncio.sleep(1)
        except asyncio.CancelledError as exc:
            return caller_stops(exc)
        return False

    assert asyncio.run(cancelled_here())
    assert describe_error(ValueError("first\nsecond")) == "ValueError: first"
