"""The pure policy: each rule of SPEC §1.2 "The decision, precisely" by name, then its invariants (hypothesis)."""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import strategies
from verigate import PostDecision, Reflection, StopDirective, Strengthen, StructuralFinding, Verdict
from verigate.gate import PolicyInput, combine_verdict, decide, feedback_instruction, unite_strengthen
from verigate.gate._ensemble import merge_unanimous
from verigate.gate._policy import JUDGE_NOT_RETRYABLE, is_escalation, judge_is_skipped

PASS = Verdict(passed=True, score=1.0)
RETRYABLE = Verdict(passed=False, rubric_misses=("tests_pass",), retryable=True,
                    reflection=Reflection("no test run", "run the tests", "pytest output"))
HARD = Verdict(passed=False, rubric_misses=("harmful",), retryable=False)
EMPTY = StructuralFinding("empty_turn", fixable=True)
ACTION = StructuralFinding("model_action_required", fixable=False)


# --------------------------------------------------------------------------------------------- rule 1


def test_rule_1_not_hand_off_is_unverified() -> None:
    decision = decide(PolicyInput(judge_verdict=PASS, hand_off=False))
    assert (decision.action, decision.outcome, decision.verdict) == ("unverified", "unverified", None)


def test_rule_1_skip_public_verification_is_unverified() -> None:
    decision = decide(PolicyInput(judge_verdict=HARD, skip_public_verification=True))
    assert decision.outcome == "unverified"


# --------------------------------------------------------------------------------------------- rule 2


def test_rule_2_unfixable_finding_skips_the_judge_fixable_does_not() -> None:
    assert judge_is_skipped([ACTION])
    assert not judge_is_skipped([EMPTY])
    assert not judge_is_skipped([])
    assert judge_is_skipped([], hook_error=True)


# --------------------------------------------------------------------------------------------- rule 3


def test_rule_3_judge_error_stays_a_verification_error() -> None:
    error = Verdict.verification_error("judge_timeout")
    verdict = combine_verdict([EMPTY], Strengthen(("x",)), error)
    assert verdict.is_verification_error and not verdict.passed and not verdict.retryable


def test_rule_3_a_semantic_pass_never_overrides_a_structural_finding() -> None:
    verdict = combine_verdict([EMPTY], Strengthen(), PASS)
    assert not verdict.passed and verdict.retryable and verdict.rubric_misses == ("empty_turn",)


def test_rule_3_an_added_miss_turns_a_pass_into_a_retryable_fail() -> None:
    verdict = combine_verdict([], Strengthen(("cites_source",)), PASS)
    assert not verdict.passed and verdict.retryable and verdict.rubric_misses == ("cites_source",)


def test_rule_3_misses_are_structural_then_added_then_judge_without_duplicates() -> None:
    judged = Verdict(passed=False, rubric_misses=("b", "c"), retryable=True)
    verdict = combine_verdict([EMPTY], Strengthen(("a", "b")), judged)
    assert verdict.rubric_misses == ("empty_turn", "a", "b", "c")


def test_rule_3_unfixable_finding_is_not_retryable() -> None:
    verdict = combine_verdict([ACTION], Strengthen(), None)
    assert not verdict.passed and not verdict.retryable


# --------------------------------------------------------------------------------------------- rule 4


def test_rule_4a_hook_error_escalates_whatever_else_happened() -> None:
    for field in ("structural_error", "pre_verify_error", "post_verify_error"):
        inp = PolicyInput(judge_verdict=PASS, post_decisions=(PostDecision.accept(),), **{field: True})
        assert decide(inp).action == "escalate_hook_error", field


def test_rule_4b_verification_error_escalates_whatever_the_hooks_said() -> None:
    inp = PolicyInput(judge_verdict=Verdict.verification_error("judge_unavailable"),
                      post_decisions=(PostDecision.accept(), PostDecision.revise("try again")))
    decision = decide(inp)
    assert (decision.action, decision.outcome, decision.reason) == (
        "escalate_verification_error", "pending_review", "judge_unavailable")


def test_rule_4c_any_escalate_wins_over_accept_and_revise() -> None:
    inp = PolicyInput(judge_verdict=PASS, post_decisions=(PostDecision.accept(), PostDecision.revise("more"),
                                                          PostDecision.escalate("needs a lawyer")))
    decision = decide(inp)
    assert (decision.action, decision.reason) == ("escalate", "needs a lawyer")


def test_rule_4d_accept_of_a_failed_verification_becomes_escalate_invalid_accept() -> None:
    inp = PolicyInput(judge_verdict=RETRYABLE, post_decisions=(PostDecision.accept(),))
    assert decide(inp).action == "escalate_invalid_accept"


def test_rule_4e_revise_uses_hook_instructions_in_handler_order() -> None:
    inp = PolicyInput(judge_verdict=PASS, post_decisions=(PostDecision.revise("first"), PostDecision.accept(),
                                                          PostDecision.revise("second")))
    decision = decide(inp)
    assert (decision.action, decision.follow_up) == ("revise", "first\n\nsecond")


def test_rule_4f_defaults() -> None:
    assert decide(PolicyInput(judge_verdict=PASS)).action == "accept"
    revise = decide(PolicyInput(judge_verdict=RETRYABLE))
    assert revise.action == "revise" and "tests_pass" in revise.follow_up and "run the tests" in revise.follow_up
    assert decide(PolicyInput(structural_findings=(ACTION,))).action == "escalate_unfixable_structural"


def test_rule_4f_a_hard_judge_fail_escalates() -> None:
    decision = decide(PolicyInput(judge_verdict=HARD))
    assert (decision.action, decision.reason) == ("escalate", JUDGE_NOT_RETRYABLE)


# --------------------------------------------------------------------------------------------- rule 5


def test_rule_5_continue_on_accept_asks_for_a_revision() -> None:
    decision = decide(PolicyInput(judge_verdict=PASS, stop_directives=(StopDirective.continue_("add a test"),)))
    assert (decision.action, decision.outcome, decision.follow_up) == ("continue", "revise", "add a test")
    assert decision.post_verify_action == "accept"


def test_rule_5_continue_is_ignored_after_an_escalation() -> None:
    decision = decide(PolicyInput(judge_verdict=HARD, stop_directives=(StopDirective.continue_("again"),)))
    assert decision.action == "escalate" and decision.outcome == "pending_review" and decision.follow_up == ""


def test_rule_5_stop_handler_error_escalates() -> None:
    assert decide(PolicyInput(judge_verdict=PASS, stop_error=True)).action == "escalate_hook_error"


def test_rule_5_continue_instructions_follow_the_revise_instruction() -> None:
    decision = decide(PolicyInput(judge_verdict=PASS, post_decisions=(PostDecision.revise("a"),),
                                  stop_directives=(StopDirective.continue_("b"), StopDirective.finalize(),
                                                   StopDirective.continue_("c"))))
    assert (decision.action, decision.follow_up) == ("continue", "a\n\nb\n\nc")


# --------------------------------------------------------------------------------------------- rules 6, 7


def test_rule_6_budget_default_is_two_and_attempts_start_at_zero() -> None:
    assert PolicyInput().budget == 2
    for attempt, outcome in ((0, "revise"), (1, "revise"), (2, "pending_review"), (3, "pending_review")):
        decision = decide(PolicyInput(judge_verdict=RETRYABLE, attempt=attempt))
        assert decision.outcome == outcome, attempt
        if outcome == "pending_review":
            assert decision.action == "escalate_budget_exhausted" and decision.follow_up == ""


def test_rule_6_budget_zero_never_revises() -> None:
    assert decide(PolicyInput(judge_verdict=RETRYABLE, budget=0)).action == "escalate_budget_exhausted"


def test_rule_7_outcomes() -> None:
    assert decide(PolicyInput(judge_verdict=PASS)).outcome == "completed"
    assert decide(PolicyInput(judge_verdict=HARD)).outcome == "pending_review"


def test_verification_error_never_spends_budget_even_at_attempt_zero() -> None:
    decision = decide(PolicyInput(judge_verdict=Verdict.verification_error("judge_timeout"), attempt=0, budget=5))
    assert decision.outcome == "pending_review" and decision.action == "escalate_verification_error"


def test_feedback_is_bounded_and_never_older_than_this_failure() -> None:
    long = "x" * 5000
    verdict = Verdict(passed=False, rubric_misses=tuple(f"m{i}" for i in range(50)), retryable=True,
                      reflection=Reflection(long, long, long))
    text = feedback_instruction(verdict)
    assert "(and 30 more)" in text and len(text) < 4000


def test_unite_strengthen_keeps_order_and_drops_duplicates() -> None:
    united = unite_strengthen([Strengthen(("a", "b"), ("r1",)), Strengthen(("b", "c"), ("r1", "r2"))])
    assert united == Strengthen(("a", "b", "c"), ("r1", "r2"))


def test_policy_module_imports_only_models() -> None:
    import verigate.gate._policy as policy

    tree = ast.parse(Path(policy.__file__).read_text(encoding="utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level}
    assert imported == {"_models"}


# --------------------------------------------------------------------------------------------- properties


def _judge_failed(inp: PolicyInput) -> bool:
    return inp.judge_verdict is None or not inp.judge_verdict.passed


#: every invariant below holds for one judge and for unanimous ensembles of 2 and 3 scripted members, whose merged
#: verdict is what the policy reads; strategies.unanimous_oracle states the unanimous rule independently
JUDGES = pytest.mark.parametrize("judges", [1, 2, 3], ids=["one-judge", "ensemble-of-2", "ensemble-of-3"])


@JUDGES
@settings(max_examples=800, deadline=None)
@given(data=st.data())
def test_completed_needs_structural_ok_judge_pass_no_added_miss_no_escalation(judges: int,
                                                                               data: st.DataObject) -> None:
    inp, judged = data.draw(strategies.judged_policy_inputs(judges))
    decision = decide(inp)
    if decision.outcome == "completed":
        assert inp.hand_off and not inp.skip_public_verification
        assert not inp.structural_findings and not inp.strengthen.additional_misses
        assert inp.judge_verdict is not None and inp.judge_verdict.passed
        assert not inp.judge_verdict.is_verification_error
        assert not any(d.action in ("escalate", "revise") for d in inp.post_decisions)
        assert not any(d.action == "continue" for d in inp.stop_directives)
        assert not (inp.structural_error or inp.pre_verify_error or inp.post_verify_error or inp.stop_error)
        assert decision.verdict is not None and decision.verdict.passed and decision.action == "accept"
        assert strategies.unanimous_oracle(judged) == "pass"


@JUDGES
@settings(max_examples=600, deadline=None)
@given(data=st.data(), posts=st.lists(strategies.post_decisions, max_size=3),
       stops=st.lists(strategies.stop_directives, max_size=3))
def test_no_hook_decision_turns_a_failed_verification_into_completed(
    judges: int, data: st.DataObject, posts: list[PostDecision], stops: list[StopDirective]
) -> None:
    inp, judged = data.draw(strategies.judged_policy_inputs(judges))
    failed = attrs.evolve(inp, judge_verdict=inp.judge_verdict if _judge_failed(inp) else None,
                          post_decisions=tuple(posts), stop_directives=tuple(stops))
    assert decide(failed).outcome != "completed"
    if strategies.unanimous_oracle(judged) != "pass":  # one member's fail or error is the ensemble's
        assert decide(attrs.evolve(inp, post_decisions=tuple(posts), stop_directives=tuple(stops))).outcome \
            != "completed"


@JUDGES
@settings(max_examples=500, deadline=None)
@given(data=st.data(), error=strategies.error_verdicts)
def test_verification_error_always_ends_pending_review(judges: int, data: st.DataObject, error: Verdict) -> None:
    inp, _ = data.draw(strategies.judged_policy_inputs(1))
    judge_verdict = error
    if judges > 1:  # any one member's error, wherever it stands, whatever the others said
        others = data.draw(st.lists(strategies.member_verdicts, min_size=judges - 1, max_size=judges - 1))
        others.insert(data.draw(st.integers(0, judges - 1)), error)
        judge_verdict = merge_unanimous(others)
    decision = decide(attrs.evolve(inp, judge_verdict=judge_verdict, hand_off=True, skip_public_verification=False))
    assert decision.outcome == "pending_review" and is_escalation(decision.action)
    assert decision.follow_up == ""


@JUDGES
@settings(max_examples=600, deadline=None)
@given(data=st.data())
def test_revise_only_within_budget_and_with_an_instruction(judges: int, data: st.DataObject) -> None:
    inp, judged = data.draw(strategies.judged_policy_inputs(judges))
    decision = decide(inp)
    if decision.outcome == "revise":
        assert inp.attempt < inp.budget
        assert decision.follow_up.strip()
        assert decision.action in ("revise", "continue")
        assert inp.judge_verdict is None or not inp.judge_verdict.is_verification_error
        assert strategies.unanimous_oracle(judged) != "error"
    else:
        assert decision.follow_up == ""
    if decision.action == "escalate_budget_exhausted":
        assert inp.attempt >= inp.budget


@JUDGES
@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_outcome_matches_action_and_is_deterministic(judges: int, data: st.DataObject) -> None:
    inp, _ = data.draw(strategies.judged_policy_inputs(judges))
    decision = decide(inp)
    assert decision == decide(inp)
    expected = {"accept": "completed", "unverified": "unverified", "revise": "revise", "continue": "revise"}
    assert decision.outcome == expected.get(decision.action, "pending_review")
    assert (decision.outcome == "pending_review") == is_escalation(decision.action)
    if inp.hand_off and not inp.skip_public_verification:
        assert decision.verdict is not None
        assert not (decision.verdict.passed and decision.verdict.retryable)


@settings(max_examples=600, deadline=None)
@given(st.lists(strategies.member_verdicts, min_size=1, max_size=4))
def test_the_merged_verdict_follows_the_unanimous_rule(judged: list[Verdict]) -> None:
    merged = merge_unanimous(judged)
    rule = strategies.unanimous_oracle(tuple(judged))
    assert ("error" if merged.is_verification_error else "pass" if merged.passed else "fail") == rule
    if rule == "error":  # the first erring member's code, never a pass or a revise signal
        assert merged.error == next(v.error for v in judged if v.error is not None)
        assert not merged.passed and not merged.retryable
        return
    expected_misses: list[str] = []
    for code in (code for verdict in judged for code in verdict.rubric_misses):
        if code not in expected_misses:
            expected_misses.append(code)
    assert list(merged.rubric_misses) == expected_misses
    assert not (merged.passed and merged.retryable)
    if rule == "fail":
        failing = [v for v in judged if not (v.passed and not v.rubric_misses)]
        assert merged.retryable == all(v.retryable for v in failing)
    scores = [v.score for v in judged if v.score is not None]
    assert merged.score == (min(scores) if scores else None)


def test_every_combination_exhaustively() -> None:
    """All discrete combinations (138 240): findings × strengthen × judge outcome × PostVerify decisions × Stop ×
    hook errors × attempt × budget — the invariants hold in every one."""
    finding_sets = [(), (EMPTY,), (ACTION,), (EMPTY, ACTION)]
    strengthen_sets = [Strengthen(), Strengthen(("cites_source",), ("cite it",))]
    judge_outcomes = [PASS, RETRYABLE, HARD, Verdict.verification_error("judge_timeout"), None]
    post_sets = [tuple(d for d, keep in zip((PostDecision.accept(), PostDecision.revise("r"),
                                             PostDecision.escalate("e")), mask, strict=True) if keep)
                 for mask in itertools.product((False, True), repeat=3)]
    stop_sets = [(), (StopDirective.finalize(),), (StopDirective.continue_("c"),)]
    cases = 0
    for findings, strengthen, judged, posts, stops, errors, attempt, budget in itertools.product(
        finding_sets, strengthen_sets, judge_outcomes, post_sets, stop_sets,
        itertools.product((False, True), repeat=4), range(3), range(3),
    ):
        inp = PolicyInput(findings, strengthen, judged, posts, stops, *errors, attempt=attempt, budget=budget)
        decision = decide(inp)
        cases += 1
        if decision.outcome == "completed":
            assert not findings and not strengthen.additional_misses and judged is PASS
            assert not any(errors) and all(d.action == "accept" for d in posts)
            assert not stops or stops[0].action == "finalize"
        if judged is not None and judged.is_verification_error:
            assert decision.outcome == "pending_review"
        if decision.outcome == "revise":
            assert attempt < budget and decision.follow_up
        assert (decision.outcome == "pending_review") == is_escalation(decision.action)
    assert cases == 138_240
