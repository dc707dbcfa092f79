"""The safety invariants through the real Gate: scripted judge and hook plug-ins, a real SQLite store."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import strategies
from verigate import (
    Candidate,
    Gate,
    JudgeError,
    PostDecision,
    StopDirective,
    Strengthen,
    Termination,
    TerminationReason,
    Verdict,
    hookimpl,
)
from verigate.judge import JudgeRequest

JUDGE_TIMEOUT_S = 0.02


@attrs.define
class Plan:
    """What every plug-in does in one example; ``"raise"`` / ``"invalid"`` exercise the failure paths."""

    #: one outcome per judge: the single judge, or each member of the ensemble in order
    judges: tuple[str, ...] = ("pass",)
    structural: Any = None
    pre: Any = None
    post: tuple[Any, ...] = ()
    stop: Any = None
    calls: dict[str, int] = attrs.field(factory=dict)

    def count(self, stage: str) -> None:
        self.calls[stage] = self.calls.get(stage, 0) + 1


PLAN = Plan()


def _play(value: Any) -> Any:
    if value == "raise":
        raise RuntimeError("handler bug")
    if value == "invalid":
        return object()
    return value


class Engine:
    name = "planned"

    def __init__(self, index: int) -> None:
        self.index = index

    async def judge(self, request: JudgeRequest, *, timeout_s: float) -> Any:
        PLAN.count("judge")
        outcome = PLAN.judges[self.index]
        if outcome == "pass":
            return Verdict(passed=True, score=1.0)
        if outcome == "fail_retryable":
            return Verdict(passed=False, rubric_misses=("tests_pass",), retryable=True)
        if outcome == "fail_hard":
            return Verdict(passed=False, rubric_misses=("unsafe",), retryable=False)
        if outcome == "error":
            raise JudgeError("judge_transport_error")
        if outcome == "timeout":
            await asyncio.sleep(1.0)
        return "not a verdict"


class Plugins:
    """Every stage in one plug-in, each following the current plan."""

    __name__ = "planned-plugins"

    @hookimpl
    def verigate_judge_engines(self) -> Any:
        # "planned" is the single judge (and an ensemble's first member); "planned1", "planned2" the others
        return {name: (lambda config, client=None, index=index: Engine(index))
                for index, name in enumerate(ENGINE_NAMES)}

    @hookimpl
    def verigate_structural_check(self, candidate: Candidate, termination: Termination) -> Any:
        PLAN.count("structural")
        return _play(PLAN.structural)

    @hookimpl
    def verigate_pre_verify(self, candidate: Candidate) -> Any:
        PLAN.count("pre")
        return _play(PLAN.pre)

    @hookimpl
    def verigate_post_verify(self, candidate: Candidate, verdict: Verdict) -> Any:
        PLAN.count("post")
        index = PLAN.calls["post"] - 1
        return _play(PLAN.post[index]) if index < len(PLAN.post) else None

    @hookimpl
    def verigate_stop(self, action: str) -> Any:
        PLAN.count("stop")
        return _play(PLAN.stop)


class SecondPostVerify:
    __name__ = "planned-post-2"

    @hookimpl
    def verigate_post_verify(self, candidate: Candidate, verdict: Verdict) -> Any:
        PLAN.count("post")
        index = PLAN.calls["post"] - 1
        return _play(PLAN.post[index]) if index < len(PLAN.post) else None


ENGINE_NAMES = ("planned", "planned1", "planned2")


def _judge_section(judges: int) -> dict[str, Any]:
    if judges == 1:
        return {"engine": "planned", "timeout_s": JUDGE_TIMEOUT_S}
    return {"mode": "unanimous", "timeout_s": JUDGE_TIMEOUT_S,
            "ensemble": [{"engine": name} for name in ENGINE_NAMES[:judges]]}


@pytest.fixture(scope="module")
def gates(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[tuple[int, int], Gate]]:
    """A gate per (revise budget, number of judges): one judge, or a unanimous ensemble of 2 or 3."""
    path = tmp_path_factory.mktemp("gate-properties") / "verigate.db"
    plugins = [Plugins(), SecondPostVerify()]
    built = {
        (budget, judges): Gate.from_config({"judge": _judge_section(judges), "budget": {"revise": budget},
                                            "hooks": {"timeout_s": 5}},
                                           plugins=plugins, store=str(path), entry_points=False)
        for budget in range(4) for judges in (1, 2, 3)
    }
    yield built
    for gate in built.values():
        gate.close()


structural_plans = st.one_of(
    st.none(), st.just("raise"), st.just("invalid"),
    strategies.finding_lists.map(list),
)
pre_plans = st.one_of(st.none(), st.just("raise"), st.just("invalid"), st.just(PostDecision.accept()),
                      strategies.strengthens)
post_plans = st.lists(st.one_of(st.none(), st.just("raise"), st.just("invalid"), strategies.post_decisions,
                                st.just(PostDecision("revise", ""))), max_size=2).map(tuple)
stop_plans = st.one_of(st.none(), st.just("raise"), st.just("invalid"), strategies.stop_directives,
                       st.just(StopDirective("continue", "")))
judge_plans = st.sampled_from(["pass", "pass", "fail_retryable", "fail_hard", "error", "invalid", "timeout"])
reasons = st.one_of(strategies.hand_off_reasons, strategies.hand_off_reasons, strategies.other_reasons)


def _has_unfixable(structural: Any) -> bool:
    return structural in ("raise", "invalid") or (
        isinstance(structural, list) and any(not f.fixable for f in structural))


def _failed_hook(value: Any) -> bool:
    return value in ("raise", "invalid") or (isinstance(value, PostDecision) and (
        value.action == "revise" and not value.instruction.strip()))


JUDGE_ERRORS = ("error", "invalid", "timeout")


def _expected_outcome(judges: tuple[str, ...], attempt: int, budget: int) -> tuple[str, str]:
    """(outcome, policy action) of a run no hook touches, from the unanimous rule stated on its own: any judge's
    error escalates; every judge passing completes; otherwise a hard fail escalates and retryable fails revise
    within the budget."""
    if any(outcome in JUDGE_ERRORS for outcome in judges):
        return "pending_review", "escalate_verification_error"
    if all(outcome == "pass" for outcome in judges):
        return "completed", "accept"
    if "fail_hard" in judges:
        return "pending_review", "escalate"
    return ("revise", "revise") if attempt < budget else ("pending_review", "escalate_budget_exhausted")


@pytest.mark.parametrize("judges", [1, 2, 3], ids=["one-judge", "ensemble-of-2", "ensemble-of-3"])
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), structural=structural_plans, pre=pre_plans, post=post_plans, stop=stop_plans,
       reason=reasons, attempt=st.integers(0, 4), budget=st.integers(0, 3), skip=st.booleans(),
       text=st.sampled_from(["Fixed it; tests pass.", "", "Please run it yourself and paste the output."]))
def test_invariants_through_the_real_gate(
    gates: dict[tuple[int, int], Gate], judges: int, data: st.DataObject, structural: Any, pre: Any,
    post: tuple[Any, ...], stop: Any, reason: TerminationReason, attempt: int, budget: int, skip: bool, text: str,
) -> None:
    global PLAN
    plan = tuple(data.draw(st.lists(judge_plans, min_size=judges, max_size=judges), label="judges"))
    PLAN = Plan(judges=plan, structural=structural, pre=pre, post=post, stop=stop)
    skip = skip and attempt % 2 == 0  # skipped runs are a minority
    session = str(uuid.uuid4())
    candidate = Candidate("Fix the failing test.", text, session_id=session, attempt=attempt)
    gate = gates[budget, judges]
    result = asyncio.run(gate.finalize(candidate, Termination(reason), skip_public_verification=skip))
    judge_calls = PLAN.calls.get("judge", 0)
    assert judge_calls <= judges  # each judge at most once

    if not reason.hand_off or skip:
        assert (result.outcome, result.status, result.answer) == ("unverified", reason.value, "")
        assert PLAN.calls == {}  # no hooks, no judge
        return

    findings = list(result.structural_findings)
    unfixable = any(not f.fixable for f in findings)
    assert unfixable == (_has_unfixable(structural) or "yourself" in text)
    if unfixable or pre in ("raise", "invalid") or isinstance(pre, PostDecision):
        assert judge_calls == 0
    if result.outcome == "completed":
        assert not findings and all(outcome == "pass" for outcome in plan) and judge_calls == judges
        assert not (isinstance(pre, Strengthen) and pre.additional_misses)
        assert not any(_failed_hook(d) or (isinstance(d, PostDecision) and d.action != "accept") for d in post)
        assert stop is None or stop == StopDirective.finalize()
        assert result.answer == text and result.status == "completed"
    if any(outcome != "pass" for outcome in plan):  # one member's fail or error is the ensemble's
        assert result.outcome != "completed"
    if judge_calls and any(outcome in JUDGE_ERRORS for outcome in plan):
        assert result.outcome == "pending_review"
        assert result.policy_action in ("escalate_verification_error", "escalate_hook_error")
    if judge_calls and (structural, pre, post, stop, text) == (None, None, (), None, "Fixed it; tests pass."):
        assert judge_calls == judges  # every member judged, concurrently, within the one timeout
        assert (result.outcome, result.policy_action) == _expected_outcome(plan, attempt, budget)
        if judges > 1:  # the evidence row names each member's verdict
            evidence = [row.payload for row in gate.store.timeline(session) if row.kind == "evidence"]
            members = evidence[-1]["judge_members"]
            assert [member["engine"] for member in members] == list(ENGINE_NAMES[:judges])
            assert [member["error"] is not None for member in members] == [o in JUDGE_ERRORS for o in plan]
            assert [member["passed"] for member in members] == [o == "pass" for o in plan]
    if result.outcome == "revise":
        assert result.attempt == attempt < budget and result.follow_up
    if result.outcome == "pending_review":
        assert result.answer == "" and result.status == "EXTERNAL_VERIFICATION_REQUIRED"
        assert result.pending_id is not None and result.store_error is None
    assert result.attempt <= max(attempt, budget)
