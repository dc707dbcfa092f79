"""The Gate end to end over a real SQLite store: response mapping, chain order, judge failures, records."""

from __future__ import annotations

import asyncio
import hashlib
import re
import sqlite3
import time
from pathlib import Path
from typing import Any

import attrs
import pytest

from verigate import (
    Candidate,
    CandidateError,
    ConfigError,
    Gate,
    JudgeError,
    Reflection,
    StoreError,
    Termination,
    TerminationReason,
    ToolObservation,
    Verdict,
    VerigateError,
    hookimpl,
)
from verigate.gate import finalize_and_return, finalize_and_return_async, public_verification_skipped
from verigate.redact._base import Finding, RedactionResult
from verigate.store import open_store
from verigate.testing import Delay, ScriptedModelClient, verdict_reply

NATURAL = Termination("natural")
PASS = Verdict(passed=True, score=1.0)
RETRY = Verdict(passed=False, rubric_misses=("tests_pass",), retryable=True,
                reflection=Reflection("no test output", "run pytest", "pytest -q says passed"))


def candidate(session: str = "s1", text: str = "Fixed it; pytest: 3 passed.", **kw: Any) -> Candidate:
    return Candidate("Fix the failing test.", text, session_id=session, **kw)


def run(gate: Gate, cand: Candidate, termination: Termination = NATURAL, **kw: Any) -> Any:
    return finalize_and_return(gate, cand, termination, **kw)


# --------------------------------------------------------------------------------------------- response mapping


def test_pass_completes_with_the_answer_and_records(make_gate: Any) -> None:
    gate, judge = make_gate([PASS])
    result = run(gate, candidate())
    assert (result.outcome, result.answer, result.status, result.policy_action) == (
        "completed", "Fixed it; pytest: 3 passed.", "completed", "accept")
    assert result.session_state == "completed" and result.pending_id is None and result.store_error is None
    store = gate.store
    assert store.get_session("s1").state == "completed"
    assert store.latest_checkpoint("s1")["kind"] == "completed"
    assert [row.kind for row in store.timeline("s1")] == ["verdict", "evidence"]
    ledger = store.ledger()
    assert [row.kind for row in ledger] == ["verification_policy"] and ledger[0].payload["policy_action"] == "accept"
    assert store.verify_ledger() == 1
    assert judge.calls == 1 and judge.requests[0].candidate.final_text == "Fixed it; pytest: 3 passed."


def test_no_judge_fails_closed_into_a_pending_review(db_path: Path) -> None:
    with Gate.from_config({}, store=str(db_path), entry_points=False) as gate:
        result = run(gate, candidate())
        assert (result.outcome, result.answer, result.status) == (
            "pending_review", "", "EXTERNAL_VERIFICATION_REQUIRED")
        assert result.policy_action == "escalate_verification_error"
        assert result.verdict.error == "judge_unavailable" and result.pending_text is None
        review = gate.store.get_review(result.pending_id)
        assert review.status == "pending" and review.pending_text == "Fixed it; pytest: 3 passed."
        assert gate.store.get_session("s1").state == "paused"
        assert gate.store.latest_checkpoint("s1")["pending_id"] == result.pending_id
        assert [row.kind for row in gate.store.timeline("s1")] == ["verdict", "evidence", "pending"]


@pytest.mark.parametrize("reason", sorted(r.value for r in TerminationReason if not r.hand_off))
def test_unverified_terminations_are_persisted_without_hooks_or_judge(make_gate: Any, reason: str) -> None:
    gate, judge = make_gate([PASS])
    result = run(gate, candidate(text="partial work"), Termination(reason, "limit hit"))
    assert (result.outcome, result.answer, result.status, result.policy_action) == (
        "unverified", "", reason, "unverified")
    assert result.session_state == "ended" and result.verdict is None and result.hook_records == ()
    assert judge.calls == 0
    checkpoint = gate.store.latest_checkpoint("s1")
    assert checkpoint["kind"] == "unverified" and checkpoint["candidate"]["final_text"] == "partial work"
    assert gate.store.get_session("s1").state == "ended"
    assert gate.store.timeline("s1")[-1].payload["event"] == "session_ended"
    assert gate.store.ledger()[-1].payload["policy_action"] == "unverified"


# --------------------------------------------------------------------------------------------- revise and merge


def test_revise_then_accept_merges_the_attempts(make_gate: Any) -> None:
    gate, _ = make_gate([RETRY, PASS])
    first = run(gate, candidate(text="Done.", tool_calls=(ToolObservation("Edit", {"path": "a.py"}, "ok", True),),
                                usage={"input_tokens": 10}, rounds=2))
    assert (first.outcome, first.status, first.attempt, first.session_state) == ("revise", "revise", 0, "running")
    assert "tests_pass" in first.follow_up and "run pytest" in first.follow_up
    assert "BEGIN" not in first.follow_up  # the judge prompt never becomes feedback
    assert gate.store.get_session("s1").follow_up == first.follow_up
    # the runtime forgot to bump the attempt: the store's revise counter is used
    second = run(gate, candidate(tool_calls=(ToolObservation("Bash", {"cmd": "pytest"}, "3 passed", True),),
                                 usage={"input_tokens": 5, "output_tokens": 3}))
    assert (second.outcome, second.attempt) == ("completed", 1)
    assert [call.name for call in second.merged_tool_calls] == ["Edit", "Bash"]
    assert second.merged_usage == {"input_tokens": 15, "output_tokens": 3} and second.merged_rounds == 3
    assert gate.store.attempts("s1") == []  # the request is over
    assert gate.store.latest_checkpoint("s1")["attempts"] == 2
    assert gate.store.get_session("s1").state == "completed"


def test_budget_exhausted_after_two_revisions(make_gate: Any) -> None:
    gate, judge = make_gate([RETRY], repeat_last=True)
    outcomes = [run(gate, candidate(attempt=n)) for n in range(3)]
    assert [r.outcome for r in outcomes] == ["revise", "revise", "pending_review"]
    assert outcomes[-1].policy_action == "escalate_budget_exhausted" and outcomes[-1].follow_up == ""
    assert judge.calls == 3


def test_the_caller_cannot_reset_the_budget_mid_request(make_gate: Any) -> None:
    gate, _ = make_gate([RETRY], repeat_last=True, budget={"revise": 1})
    assert run(gate, candidate(attempt=0)).outcome == "revise"
    again = run(gate, candidate(attempt=0))
    assert (again.attempt, again.policy_action) == (1, "escalate_budget_exhausted")


def test_a_new_request_after_completion_starts_at_attempt_zero(make_gate: Any) -> None:
    gate, _ = make_gate([RETRY, PASS, RETRY])
    run(gate, candidate())
    assert run(gate, candidate()).outcome == "completed"
    assert run(gate, candidate()).attempt == 0


def test_verification_error_never_spends_budget(make_gate: Any) -> None:
    gate, _ = make_gate([JudgeError("judge_transport_error")], budget={"revise": 5})
    result = run(gate, candidate())
    assert (result.outcome, result.policy_action, result.verdict.error) == (
        "pending_review", "escalate_verification_error", "judge_transport_error")


# --------------------------------------------------------------------------------------------- judge failures


@pytest.mark.parametrize(
    ("step", "reason"),
    [
        (JudgeError("judge_http_500"), "judge_http_500"),
        (RuntimeError("engine bug"), "judge_error"),
        (asyncio.CancelledError(), "judge_error"),  # raised by the engine itself, not a cancellation of the run
        ("not a verdict", "invalid_judge_response"),
        ({"passed": True}, "invalid_judge_response"),
        (Verdict.verification_error("invalid_jev_response"), "invalid_jev_response"),
        (Delay(5.0, PASS), "judge_timeout"),
    ],
)
def test_judge_failures_are_verification_errors(make_gate: Any, step: Any, reason: str) -> None:
    gate, _ = make_gate([step], judge={"timeout_s": 0.05})
    result = run(gate, candidate())
    assert result.outcome == "pending_review" and result.verdict.error == reason


def test_the_judge_timeout_is_capped_at_120_s_and_by_the_deadline(make_gate: Any) -> None:
    gate, judge = make_gate([PASS, PASS], judge={"timeout_s": 500})
    run(gate, candidate("a"))
    run(gate, candidate("b"), deadline=time.monotonic() + 30)
    assert judge.timeouts[0] == 120.0 and 0 < judge.timeouts[1] <= 30


def test_no_time_left_means_no_judge_call(make_gate: Any) -> None:
    gate, judge = make_gate([PASS])
    result = run(gate, candidate(), deadline=time.monotonic() - 1)
    assert result.verdict.error == "verification_time_budget_exhausted" and judge.calls == 0


def test_a_slow_judge_past_the_deadline(make_gate: Any) -> None:
    gate, _ = make_gate([Delay(5.0, PASS)])
    result = run(gate, candidate(), deadline=time.monotonic() + 0.1)
    assert result.verdict.error == "verification_time_budget_exhausted"


# --------------------------------------------------------------------------------------------- structural


def test_unfixable_structural_failure_skips_the_judge(make_gate: Any) -> None:
    gate, judge = make_gate([PASS])
    result = run(gate, candidate(text="Please run `pytest` yourself and paste the output."))
    assert result.policy_action == "escalate_unfixable_structural" and judge.calls == 0
    assert [f.code for f in result.structural_findings] == ["model_action_required"]


def test_empty_turn_is_judged_and_revised_even_when_the_judge_passes(make_gate: Any) -> None:
    gate, judge = make_gate([PASS])
    result = run(gate, candidate(text=""))
    assert result.outcome == "revise" and judge.calls == 1 and "empty_turn" in result.follow_up


# --------------------------------------------------------------------------------------------- hooks


class PreVerify:
    def __init__(self, name: str, decide: Any) -> None:
        self.__name__, self.decide = name, decide

    @hookimpl
    def verigate_pre_verify(self, candidate: Candidate) -> Any:
        return self.decide(candidate)


class PostVerify:
    def __init__(self, name: str, decide: Any) -> None:
        self.__name__, self.decide = name, decide

    @hookimpl
    def verigate_post_verify(self, candidate: Candidate, verdict: Verdict) -> Any:
        return self.decide(candidate, verdict)


class Stop:
    def __init__(self, name: str, decide: Any) -> None:
        self.__name__, self.decide = name, decide

    @hookimpl
    def verigate_stop(self, action: str) -> Any:  # a handler may take a subset of the arguments
        return self.decide(action)


class CancellingPostVerify:
    __name__ = "cancelling"

    @hookimpl
    async def verigate_post_verify(self, verdict: Verdict) -> Any:
        raise asyncio.CancelledError  # a plug-in's own CancelledError is an error, not a way out


def test_a_handler_raising_cancelled_error_escalates(make_gate: Any) -> None:
    gate, _ = make_gate([PASS], plugins=[CancellingPostVerify()])
    result = run(gate, candidate())
    assert (result.outcome, result.policy_action) == ("pending_review", "escalate_hook_error")


def test_cancelling_the_run_itself_propagates_and_completes_nothing(make_gate: Any) -> None:
    gate, _ = make_gate([Delay(5.0, PASS)])

    async def cancel_midway() -> None:
        task = asyncio.ensure_future(gate.finalize(candidate(), NATURAL))
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_midway())


class SlowAsyncPostVerify:
    __name__ = "slow-async"

    @hookimpl
    async def verigate_post_verify(self, verdict: Verdict) -> Any:
        await asyncio.sleep(5)
        return None


def _raise(*_: Any) -> Any:
    raise ValueError("hook bug")


def test_pre_verify_strengthen_turns_a_pass_into_a_revise(make_gate: Any) -> None:
    from verigate import Strengthen

    gate, judge = make_gate([PASS], plugins=[PreVerify("cite", lambda c: Strengthen(("cites_source",),
                                                                                    ("cite the source",)))])
    result = run(gate, candidate())
    assert result.outcome == "revise" and "cites_source" in result.follow_up
    assert judge.requests[0].requirements == ("cite the source",)
    assert judge.requests[0].known_misses == ("cites_source",)
    record = result.hook_records[0]
    assert (record.surface, record.handler, record.action) == ("pre_verify", "cite", "strengthen")


@pytest.mark.parametrize(
    ("plugin", "kind"),
    [
        (PreVerify("pre-says-accept", lambda c: __import__("verigate").PostDecision.accept()), "invalid"),
        (PreVerify("pre-raises", _raise), "error"),
        (PostVerify("post-raises", _raise), "error"),
        (PostVerify("post-empty-revise", lambda c, v: __import__("verigate").PostDecision("revise", "  ")),
         "invalid"),
        (PostVerify("post-bad-action", lambda c, v: __import__("verigate").PostDecision("approve")), "invalid"),
        (PostVerify("post-wrong-type", lambda c, v: "accept"), "invalid"),
        (PostVerify("post-mutates", lambda c, v: c.usage.__setitem__("x", 1)), "error"),
        (SlowAsyncPostVerify(), "timeout"),
        (PostVerify("slow-sync", lambda c, v: time.sleep(1)), "timeout"),
        (Stop("stop-raises", _raise), "error"),
        (Stop("stop-empty-continue", lambda a: __import__("verigate").StopDirective("continue")), "invalid"),
    ],
)
def test_a_failing_hook_escalates_and_is_recorded(make_gate: Any, plugin: object, kind: str) -> None:
    gate, _ = make_gate([PASS], plugins=[plugin], hooks={"timeout_s": 0.1})
    result = run(gate, candidate())
    assert (result.outcome, result.policy_action) == ("pending_review", "escalate_hook_error")
    failed = [record for record in result.hook_records if record.error]
    assert [record.action for record in failed] == [kind]
    evidence = next(row for row in gate.store.timeline("s1") if row.kind == "evidence")
    assert evidence.payload["hook_records"][0]["error"] == failed[0].error


def test_post_verify_accept_of_a_failure_is_escalate_invalid_accept(make_gate: Any) -> None:
    from verigate import PostDecision

    gate, _ = make_gate([RETRY], plugins=[PostVerify("yes-man", lambda c, v: PostDecision.accept())])
    assert run(gate, candidate()).policy_action == "escalate_invalid_accept"


def test_handlers_run_by_priority_then_name_and_instructions_are_hashed(make_gate: Any) -> None:
    from verigate import PostDecision, priority

    class Late:
        __name__ = "a-late"

        @hookimpl
        @priority(200)
        def verigate_post_verify(self) -> Any:
            return PostDecision.revise("late instruction")

    plugins = [PostVerify("b-second", lambda c, v: PostDecision.revise("second")),
               PostVerify("a-first", lambda c, v: PostDecision.revise("first")), Late()]
    gate, _ = make_gate([PASS], plugins=plugins)
    result = run(gate, candidate())
    assert [record.handler for record in result.hook_records] == ["a-first", "b-second", "a-late"]
    assert result.follow_up == "first\n\nsecond\n\nlate instruction"
    record = result.hook_records[0]
    assert record.instruction_sha256 == hashlib.sha256(b"first").hexdigest() and record.instruction_length == 5
    assert "late instruction" not in str(gate.store.ledger()[-1].payload)  # only hashes are recorded


def test_stop_continue_revises_an_accept_but_not_an_escalation(make_gate: Any) -> None:
    from verigate import StopDirective

    seen: list[str] = []

    def stop(action: str) -> Any:
        seen.append(action)
        return StopDirective.continue_("also update the changelog")

    gate, _ = make_gate([PASS, RETRY], plugins=[Stop("more", stop)], budget={"revise": 0})
    accepted = run(gate, candidate("a"))
    assert (accepted.policy_action, accepted.outcome) == ("escalate_budget_exhausted", "pending_review")
    gate2, _ = make_gate([PASS], plugins=[Stop("more2", stop)])
    continued = run(gate2, candidate("b"))
    assert (continued.outcome, continued.policy_action) == ("revise", "continue")
    assert continued.follow_up == "also update the changelog"
    assert seen == ["accept", "accept"]


# --------------------------------------------------------------------------------------------- skip


def test_skip_is_for_that_run_only(make_gate: Any) -> None:
    gate, judge = make_gate([PASS])
    skipped = run(gate, candidate("a"), skip_public_verification=True)
    assert (skipped.outcome, skipped.status, judge.calls) == ("unverified", "natural", 0)
    assert gate.store.latest_checkpoint("a")["skipped_public_verification"] is True
    assert run(gate, candidate("b")).outcome == "completed"


def test_skip_is_restored_after_an_exception_inside_the_run(make_gate: Any) -> None:
    gate, _ = make_gate([PASS])

    async def scenario() -> None:
        with pytest.raises(CandidateError):
            await gate.finalize("not a candidate", NATURAL, skip_public_verification=True)  # type: ignore[arg-type]
        assert public_verification_skipped() is False
        assert (await gate.finalize(candidate(), NATURAL)).outcome == "completed"

    asyncio.run(scenario())


def test_concurrent_runs_do_not_share_the_skip(make_gate: Any) -> None:
    gate, judge = make_gate([Delay(0.05, PASS)])

    async def scenario() -> list[Any]:
        return list(await asyncio.gather(
            finalize_and_return_async(gate, candidate("a"), NATURAL, skip_public_verification=True),
            finalize_and_return_async(gate, candidate("b"), NATURAL),
        ))

    skipped, judged = asyncio.run(scenario())
    assert (skipped.outcome, judged.outcome, judge.calls) == ("unverified", "completed", 1)


# --------------------------------------------------------------------------------------------- privacy


class EmailRedactor:
    name = "test-email"

    def redact(self, text: str) -> RedactionResult:
        findings, out = [], text
        for match in reversed(list(re.finditer(r"[\w.]+@[\w.]+", text))):
            findings.append(Finding("email", "personal_data", match.start(), match.end(), "[EMAIL]"))
            out = out[: match.start()] + "[EMAIL]" + out[match.end():]
        return RedactionResult(out, tuple(findings))


class BrokenRedactor:
    name = "broken"

    def redact(self, text: str) -> RedactionResult:
        raise RuntimeError("pattern table corrupt")


class Redactors:
    def __init__(self, redactor: object) -> None:
        self.__name__ = f"redactors-{redactor.name}"  # type: ignore[attr-defined]
        self.redactor = redactor

    @hookimpl
    def verigate_redactors(self, config: Any) -> Any:
        return [self.redactor]


def _stored_bytes(db_path: Path) -> bytes:
    """The database file and its WAL/shm companions, whichever exist."""
    return b"".join(path.read_bytes() for path in db_path.parent.glob(db_path.name + "*"))


SECRET_TEXT = "Mailed the report to jane.doe@example.com as asked."


def test_the_judge_and_the_store_only_see_redacted_text(make_gate: Any, db_path: Path) -> None:
    gate, judge = make_gate([Verdict(passed=False, retryable=False)], plugins=[Redactors(EmailRedactor())])
    result = run(gate, candidate(text=SECRET_TEXT))
    assert result.outcome == "pending_review"
    assert "[EMAIL]" in judge.requests[0].candidate.final_text
    assert judge.requests[0].candidate.contains_personal_data is True
    assert gate.store.get_review(result.pending_id).pending_text == SECRET_TEXT.replace(
        "jane.doe@example.com", "[EMAIL]")
    gate.close()
    assert b"jane.doe" not in _stored_bytes(db_path)


def test_personal_data_never_reaches_an_auxiliary_judge(make_gate: Any) -> None:
    gate, judge = make_gate([PASS], plugins=[Redactors(EmailRedactor())], judge={"trust": "auxiliary"})
    assert run(gate, candidate(text=SECRET_TEXT)).verdict.error == "personal_data_omitted"
    assert run(gate, candidate("hinted", contains_personal_data=True)).verdict.error == "personal_data_omitted"
    assert judge.calls == 0
    assert run(gate, candidate("clean", contains_personal_data=False)).outcome == "completed"


def test_a_failing_redactor_fails_closed_and_keeps_the_candidate(make_gate: Any, db_path: Path) -> None:
    gate, judge = make_gate([PASS], plugins=[Redactors(BrokenRedactor())])
    result = run(gate, candidate(text=SECRET_TEXT))
    assert (result.outcome, result.verdict.error, judge.calls) == ("pending_review", "redaction_error", 0)
    assert result.pending_text == SECRET_TEXT  # the caller keeps it; the store may not
    assert gate.store.get_review(result.pending_id).pending_text.startswith("[withheld")
    gate.close()
    assert b"jane.doe" not in _stored_bytes(db_path)


# --------------------------------------------------------------------------------------------- store failures


def test_a_locked_store_never_changes_the_decision_nor_loses_the_pending_candidate(
    make_gate: Any, db_path: Path
) -> None:
    gate, _ = make_gate([PASS, PASS, Verdict(passed=False)], store={"lock_timeout_s": 0.05})
    run(gate, candidate("warm-up"))  # the file exists and is initialised
    locker = sqlite3.connect(db_path, timeout=0)
    locker.execute("BEGIN EXCLUSIVE")
    try:
        completed = run(gate, candidate("a"))
        pending = run(gate, candidate("b", text="the held answer"))
    finally:
        locker.rollback()
        locker.close()
    assert completed.outcome == "completed" and completed.store_error
    assert pending.outcome == "pending_review" and pending.pending_id is None
    assert pending.pending_text == "the held answer" and "create_pending_review" in pending.store_error


def test_a_corrupt_store_file_is_a_typed_error(tmp_path: Path) -> None:
    path = tmp_path / "verigate.db"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError):
        Gate.from_config({}, store=str(path), entry_points=False)


def test_records_use_only_the_store_interface(make_gate: Any, db_path: Path) -> None:
    gate, _ = make_gate([PASS])
    run(gate, candidate())
    other = open_store(str(db_path))
    try:
        assert other.get_session("s1").state == "completed" and other.verify_ledger() == 1
    finally:
        other.close()


# --------------------------------------------------------------------------------------------- configuration


def test_unknown_engine_and_client_name_the_key(db_path: Path) -> None:
    with pytest.raises(ConfigError) as engine:
        Gate.from_config({"judge": {"engine": "oracle"}}, store=str(db_path), entry_points=False)
    assert engine.value.field == "judge.engine" and "oracle" in str(engine.value)
    with pytest.raises(ConfigError) as client:
        Gate.from_config({"judge": {"client": "telepathy"}}, store=str(db_path), entry_points=False)
    assert client.value.field == "judge.client"
    with pytest.raises(ConfigError) as mixed:
        Gate.from_config({"judge": {"client": "openai"}}, judge_function=lambda r: "", store=str(db_path),
                         entry_points=False)
    assert mixed.value.field == "judge.client"


def test_llm_judge_over_the_runtimes_own_model_call(db_path: Path) -> None:
    client = ScriptedModelClient([verdict_reply(True), "I think it is fine!", OSError("connection reset")])
    with Gate.from_config({}, judge_function=client, store=str(db_path), entry_points=False) as gate:
        assert run(gate, candidate("a")).outcome == "completed"
        assert run(gate, candidate("b")).verdict.error == "invalid_judge_response"
        assert run(gate, candidate("c")).verdict.error == "judge_transport_error"
    assert "Fix the failing test." in client.requests[0].user


def test_the_sync_wrapper_refuses_a_running_loop(make_gate: Any) -> None:
    gate, _ = make_gate([PASS])

    async def inside() -> None:
        with pytest.raises(VerigateError, match="finalize_and_return_async"):
            finalize_and_return(gate, candidate(), NATURAL)

    asyncio.run(inside())


def test_a_termination_must_be_a_termination(make_gate: Any) -> None:
    gate, _ = make_gate([PASS])
    with pytest.raises(CandidateError) as caught:
        run(gate, candidate(), "natural")  # type: ignore[arg-type]
    assert caught.value.field == "termination"


# --------------------------------------------------------------------------------------------- more edges


class StructuralCheck:
    def __init__(self, name: str, check: Any) -> None:
        self.__name__, self.check = name, check

    @hookimpl
    def verigate_structural_check(self, candidate: Candidate, termination: Termination) -> Any:
        return self.check(candidate, termination)


@pytest.mark.parametrize("check", [_raise, lambda c, t: "empty_turn", lambda c, t: [("code", True)]])
def test_a_failing_structural_check_escalates_without_judging(make_gate: Any, check: Any) -> None:
    gate, judge = make_gate([PASS], plugins=[StructuralCheck("bad-check", check)])
    result = run(gate, candidate())
    assert (result.policy_action, judge.calls) == ("escalate_hook_error", 0)
    assert [(f.code, f.fixable) for f in result.structural_findings] == [("structural_check_error", False)]
    assert "bad-check" in result.structural_findings[0].message


def test_a_plug_in_structural_finding_adds_to_the_built_in_ones(make_gate: Any) -> None:
    from verigate import StructuralFinding

    finding = StructuralFinding("no_diff", fixable=True, message="claims an edit without a diff")
    gate, judge = make_gate([PASS], plugins=[StructuralCheck("diff", lambda c, t: [finding])])
    result = run(gate, candidate(text=""))
    assert [f.code for f in result.structural_findings] == ["empty_turn", "no_diff"]
    assert result.outcome == "revise" and judge.calls == 1


def test_skipping_public_verification_for_a_block(make_gate: Any) -> None:
    from verigate.gate import skipping_public_verification

    gate, judge = make_gate([PASS])
    with skipping_public_verification():
        assert public_verification_skipped()
        assert run(gate, candidate("a")).outcome == "unverified"
    assert not public_verification_skipped() and judge.calls == 0


@attrs.define  # eq=True makes instances (and so their bound methods) unhashable
class UnhashablePlugin:
    __name__: str = "unhashable"

    @hookimpl
    def verigate_post_verify(self, verdict: Verdict) -> Any:
        return None


def test_an_unhashable_plug_in_object_works(make_gate: Any) -> None:
    gate, _ = make_gate([PASS], plugins=[UnhashablePlugin()])
    result = run(gate, candidate())
    assert result.outcome == "completed" and result.hook_records[0].action == "none"


def test_the_store_may_be_given_as_a_path(db_path: Path) -> None:
    with Gate.from_config({}, store=db_path, entry_points=False) as gate:
        assert run(gate, candidate()).pending_id is not None
    assert db_path.is_file()


WRITER = """
import sys
from verigate import Candidate, Gate, Termination
from verigate.gate import finalize_and_return

with Gate.from_config({}, store=sys.argv[1], entry_points=False) as gate:
    for index in range(5):
        result = finalize_and_return(gate, Candidate("r", f"answer {index}", session_id=f"{sys.argv[2]}-{index}"),
                                     Termination("natural"))
        assert result.outcome == "pending_review" and result.pending_id and not result.store_error, result
"""


def test_two_processes_finalize_into_one_store(db_path: Path) -> None:
    import subprocess
    import sys

    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(db_path), "child"], stderr=subprocess.PIPE,
                              text=True)
    with Gate.from_config({}, store=str(db_path), entry_points=False) as gate:
        for index in range(5):
            result = run(gate, candidate(f"parent-{index}"))
            assert result.pending_id and not result.store_error
    _, err = writer.communicate(timeout=120)
    assert writer.returncode == 0, err
    store = open_store(str(db_path))
    try:
        assert len(store.list_reviews("pending")) == 10 and store.verify_ledger() == 10
    finally:
        store.close()


def test_a_deadline_must_be_a_monotonic_number(make_gate: Any) -> None:
    from verigate import InputError

    gate, judge = make_gate([PASS])
    with pytest.raises(InputError) as caught:
        run(gate, candidate(), deadline="tomorrow")
    assert caught.value.field == "deadline" and judge.calls == 0


def test_a_locked_store_does_not_block_the_event_loop(make_gate: Any, db_path: Path) -> None:
    gate, _ = make_gate([PASS, Verdict(passed=False)], store={"lock_timeout_s": 0.2})
    run(gate, candidate("warm-up"))
    locker = sqlite3.connect(db_path, timeout=0)
    locker.execute("BEGIN EXCLUSIVE")

    async def scenario() -> tuple[Any, int]:
        ticks = 0
        finished = asyncio.Event()

        async def ticker() -> None:
            nonlocal ticks
            while not finished.is_set():
                ticks += 1
                await asyncio.sleep(0.01)

        task = asyncio.create_task(ticker())
        result = await gate.finalize(candidate("b", text="held"), NATURAL)
        finished.set()
        await task
        return result, ticks

    try:
        result, ticks = asyncio.run(scenario())
    finally:
        locker.rollback()
        locker.close()
    assert result.outcome == "pending_review" and result.pending_text == "held"
    assert "skipped (the store failed earlier" in result.store_error  # one lock wait, not one per record
    assert ticks > 1  # other tasks ran while the store waited for its lock


def test_hooks_get_read_only_data_that_still_serialises(make_gate: Any) -> None:
    import json

    from verigate import Strengthen

    seen: list[str] = []

    def inspect_candidate(c: Candidate) -> Any:
        seen.append(json.dumps({"usage": c.usage, "input": c.tool_calls[0].input}))
        with pytest.raises(TypeError):
            c.tool_calls[0].input["nested"]["k"] = "changed"
        return Strengthen()

    gate, judge = make_gate([PASS], plugins=[PreVerify("inspector", inspect_candidate)])
    cand = candidate(tool_calls=(ToolObservation("Bash", {"nested": {"k": [1, 2]}}, "ok", True),),
                     usage={"input_tokens": 3})
    assert run(gate, cand).outcome == "completed"
    assert json.loads(seen[0]) == {"usage": {"input_tokens": 3}, "input": {"nested": {"k": [1, 2]}}}
    assert dict(judge.requests[0].candidate.tool_calls[0].input) == {"nested": {"k": [1, 2]}}
