"""Shared hypothesis strategies for verigate's models and the gate's policy inputs."""

from __future__ import annotations

import attrs
from hypothesis import strategies as st

from verigate import (
    Candidate,
    PostDecision,
    Reflection,
    StopDirective,
    Strengthen,
    StructuralFinding,
    Termination,
    TerminationReason,
    ToolObservation,
    Verdict,
)
from verigate.gate import PolicyInput

codes = st.sampled_from(["tests_pass", "cites_source", "no_todo", "answers_question", "mentions_risk"])
texts = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)
#: the policy only cares whether a text is empty: small fixed samples keep thousands of cases fast
short_texts = st.sampled_from(["", "  ", "needs review", "確認が必要です", "x" * 300])
instructions = st.sampled_from(["run the tests", "cite the source", "テストを実行してください", "add a test"])

#: the structural findings the built-in checks (and plug-ins) produce
findings = st.one_of(
    st.builds(StructuralFinding, code=st.just("empty_turn"), fixable=st.just(True)),
    st.builds(StructuralFinding, code=st.just("model_action_required"), fixable=st.just(False)),
    st.builds(StructuralFinding, code=codes, fixable=st.booleans()),
)
finding_lists = st.lists(findings, max_size=3).map(tuple)
strengthens = st.builds(
    Strengthen,
    additional_misses=st.lists(codes, max_size=2).map(tuple),
    requirements=st.lists(instructions, max_size=2).map(tuple),
)
reflections = st.builds(Reflection, observation=short_texts, lesson=short_texts, next_check=short_texts)

#: judge outcomes: pass, fail retryable, fail hard, and the verification_error codes (error, timeout, invalid …)
ERROR_REASONS = (
    "judge_unavailable",
    "judge_timeout",
    "verification_time_budget_exhausted",
    "invalid_judge_response",
    "judge_transport_error",
    "personal_data_omitted",
    "redaction_error",
)
passing_verdicts = st.builds(Verdict, passed=st.just(True), rubric_misses=st.just(()),
                             score=st.sampled_from([None, 0.7, 1.0]), reflection=st.none() | reflections)
retryable_fails = st.builds(Verdict, passed=st.just(False), rubric_misses=st.lists(codes, max_size=3).map(tuple),
                            reflection=st.none() | reflections, retryable=st.just(True))
hard_fails = st.builds(Verdict, passed=st.just(False), rubric_misses=st.lists(codes, max_size=3).map(tuple),
                       retryable=st.just(False))
error_verdicts = st.sampled_from(ERROR_REASONS).map(Verdict.verification_error)
judge_verdicts = st.one_of(passing_verdicts, retryable_fails, hard_fails, error_verdicts)

post_decisions = st.one_of(
    st.just(PostDecision.accept()),
    instructions.map(PostDecision.revise),
    short_texts.map(PostDecision.escalate),
)
stop_directives = st.one_of(st.just(StopDirective.finalize()), instructions.map(StopDirective.continue_))

policy_inputs = st.builds(
    PolicyInput,
    structural_findings=finding_lists,
    strengthen=strengthens,
    judge_verdict=st.none() | judge_verdicts,
    post_decisions=st.lists(post_decisions, max_size=3).map(tuple),
    stop_directives=st.lists(stop_directives, max_size=2).map(tuple),
    structural_error=st.booleans(),
    pre_verify_error=st.booleans(),
    post_verify_error=st.booleans(),
    stop_error=st.booleans(),
    attempt=st.integers(0, 5),
    budget=st.integers(0, 4),
    hand_off=st.booleans(),
    skip_public_verification=st.booleans(),
)

hand_off_reasons = st.sampled_from(sorted(reason for reason in TerminationReason if reason.hand_off))
other_reasons = st.sampled_from(sorted(reason for reason in TerminationReason if not reason.hand_off))
terminations = st.builds(Termination, reason=st.sampled_from(list(TerminationReason)), detail=texts)
tool_observations = st.builds(
    ToolObservation,
    name=st.sampled_from(["Bash", "Read", "Edit"]),
    input=st.dictionaries(st.sampled_from(["cmd", "path"]), texts, max_size=2),
    output=texts,
    ok=st.none() | st.booleans(),
)
candidates = st.builds(
    Candidate,
    request=texts,
    final_text=texts,
    tool_calls=st.lists(tool_observations, max_size=3).map(tuple),
    session_id=st.uuids().map(str),
    attempt=st.integers(0, 4),
    usage=st.dictionaries(st.sampled_from(["input_tokens", "output_tokens"]), st.integers(0, 10_000)),
    requirements=st.lists(instructions, max_size=2).map(tuple),
    contains_personal_data=st.none() | st.booleans(),
    rounds=st.integers(0, 5),
)

#: a member's verdict also may contradict itself (passed with misses): the policy reads that as a fail
contradictory_passes = st.builds(Verdict, passed=st.just(True), rubric_misses=st.lists(codes, min_size=1,
                                 max_size=2).map(tuple), score=st.just(0.9), retryable=st.booleans())
member_verdicts = st.one_of(passing_verdicts, passing_verdicts, retryable_fails, hard_fails, error_verdicts,
                            contradictory_passes)


def judged_policy_inputs(members: int) -> st.SearchStrategy[tuple[PolicyInput, tuple[Verdict, ...]]]:
    """(PolicyInput, the judges' own verdicts): ``members == 1`` is one judge (its verdict is the judge verdict);
    2–3 is a unanimous ensemble whose merged verdict is the judge verdict. No verdict at all: the judge was not
    called."""
    from verigate.gate._ensemble import merge_unanimous

    if members == 1:
        return policy_inputs.map(lambda inp: (inp, () if inp.judge_verdict is None else (inp.judge_verdict,)))

    def merged(inp: PolicyInput, judged: tuple[Verdict, ...] | None) -> tuple[PolicyInput, tuple[Verdict, ...]]:
        verdict = None if judged is None else merge_unanimous(judged)
        return attrs.evolve(inp, judge_verdict=verdict), judged or ()

    judged = st.lists(member_verdicts, min_size=members, max_size=members).map(tuple)
    return st.builds(merged, policy_inputs, st.none() | judged)


def unanimous_oracle(judged: tuple[Verdict, ...]) -> str:
    """The unanimous rule stated on its own: "error" if any judge erred, "pass" only if every judge passed with no
    miss, else "fail"; "none" when no judge was called."""
    if not judged:
        return "none"
    if any(verdict.error is not None for verdict in judged):
        return "error"
    return "pass" if all(verdict.passed is True and len(verdict.rubric_misses) == 0 for verdict in judged) else "fail"
