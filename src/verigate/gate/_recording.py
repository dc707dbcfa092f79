"""The store side of one finalize: the attempt that counts, the decision's records, and the outcome written —
revise, complete, pend (withhold for a person) or end unverified. Record writes are best effort: a failure is
logged and reported in the result, never allowed to change a decision."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from .._errors import StoreError, VerigateError
from .._logging import get_logger
from .._models import (
    Candidate,
    FinalizeResult,
    HookRecord,
    SessionState,
    Strengthen,
    Termination,
    ToolObservation,
)
from ..redact._egress import Egress
from ..store._base import SessionRecord, Store
from ._containment import contain
from ._convert import parse_candidate, unstructure
from ._judging import Judgment
from ._policy import Decision, PolicyInput, decide
from ._redaction import WITHHELD, Redacted, redact

__all__ = ["PENDING_STATUS", "Attempt", "Judged", "Records"]

log = get_logger("verigate.gate")
#: the status of a withheld answer (SPEC §1.2 "Response")
PENDING_STATUS = "EXTERNAL_VERIFICATION_REQUIRED"


@attrs.define
class Records:
    """Best-effort record writes: a failure is logged and reported, never allowed to change a decision.

    Payloads are built by a callable so that a redactor failing while building one drops that record only."""

    store: Store
    egress: Egress
    errors: list[str] = attrs.field(factory=list)
    store_failed: bool = False

    def failed(self, what: str, exc: BaseException) -> None:
        message = f"{what}: {type(exc).__name__}: {exc}"
        log.error("store write failed (the decision stands): %s", message)
        self.errors.append(message)

    def write(self, what: str, function: Callable[..., Any], *args: Any) -> None:
        """One best-effort write. After a StoreError the remaining ones of this finalize are skipped: a locked
        store would otherwise cost its lock timeout once per record (the pending review is still attempted)."""
        if self.store_failed:
            self.errors.append(f"{what}: skipped (the store failed earlier in this finalize)")
            return
        try:
            function(*args)
        except StoreError as exc:
            self.store_failed = True
            self.failed(what, exc)
        except BaseException as exc:  # records are best effort whatever the store raises
            contain(exc)
            self.failed(what, exc)

    def clean(self, value: Any) -> Any:
        """Every string value redacted (mapping keys are kept: here they are verigate's own field names)."""
        if isinstance(value, str):
            return self.egress.text(value).text if value else value
        if isinstance(value, Mapping):
            return {key: self.clean(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.clean(item) for item in value]
        return value

    def built(self, what: str, build: Callable[[], Any]) -> Any:
        """``build()``, or None (logged, reported) when a redactor failed while building it."""
        try:
            return build()
        except BaseException as exc:  # nothing unredacted is ever written: the record is dropped
            contain(exc)
            self.failed(f"{what} (redaction)", exc)
            return None

    def timeline(self, session_id: str, kind: str, build: Callable[[], Mapping[str, Any]]) -> None:
        payload = self.built(f"timeline {kind}", build)
        if payload is not None:
            self.write(f"timeline {kind}", self.store.append_timeline, session_id, kind, payload)

    def ledger(self, build: Callable[[], Mapping[str, Any]]) -> None:
        payload = self.built("ledger", build)
        if payload is not None:
            self.write("ledger", self.store.append_ledger, "verification_policy", payload)

    @property
    def error(self) -> str | None:
        return "; ".join(self.errors) or None


#: ``json.dumps(value, sort_keys=True, ensure_ascii=False)``, built once (json.dumps builds an encoder per call)
_SHA_ENCODER = json.JSONEncoder(sort_keys=True, ensure_ascii=False)


def _sha256(value: Any) -> str:
    return hashlib.sha256(_SHA_ENCODER.encode(value).encode("utf-8")).hexdigest()


def _merge(parts: Iterable[Candidate]) -> tuple[tuple[ToolObservation, ...], dict[str, int], int]:
    """Tool calls concatenated, usage and rounds summed (SPEC §1.2.9)."""
    calls: list[ToolObservation] = []
    usage: dict[str, int] = {}
    rounds = 0
    for part in parts:
        calls.extend(part.tool_calls)
        for key, count in part.usage.items():
            usage[key] = usage.get(key, 0) + count
        rounds += part.rounds
    return tuple(calls), usage, rounds


@attrs.frozen
class Judged:
    """What the stages and the policy concluded for one attempt."""

    decision: Decision
    findings: tuple[Any, ...]
    strengthen: Strengthen
    hook_records: tuple[HookRecord, ...]
    judge_called: bool
    #: how the judge stage reached its verdict (ensemble members, the cache); None when it did not run
    judgment: Judgment | None = None


def _counted_attempt(candidate: Candidate, records: Records) -> int:
    """The attempt number: the store's revise counter while a revise of this session is outstanding (never
    lower than the caller's), else the caller's — and then a new request begins in that session."""
    store = records.store
    try:
        session = store.get_session(candidate.session_id)
    except BaseException as exc:  # unreadable store: the caller's number still bounds the budget
        contain(exc)
        records.failed("get_session", exc)
        return candidate.attempt
    if session is None:
        return candidate.attempt
    checked: object = session  # a store plug-in may break its contract: its types are checked, not trusted
    if not isinstance(checked, SessionRecord):
        records.failed("get_session", TypeError(f"returned {type(session).__name__}, not a SessionRecord"))
        return candidate.attempt
    if session.state == "running" and session.follow_up:
        return max(candidate.attempt, session.attempt)
    records.write("reset_request", store.reset_request, candidate.session_id)
    return candidate.attempt


@attrs.define
class Attempt:
    """One finalize's attempt as the store sees it. :meth:`begin` settles the attempt number, redacts the
    candidate and stores it; then exactly one outcome: :meth:`conclude` (revise, complete or pend, after the
    decision's records) or :meth:`end_unverified`."""

    candidate: Candidate
    termination: Termination
    redacted: Redacted
    stored_candidate: Mapping[str, Any]
    records: Records
    #: the configured judge engine's name, for the evidence row (None: no judge configured)
    judge_engine: str | None = None

    @classmethod
    def begin(cls, candidate: Candidate, termination: Termination, records: Records,
              judge_engine: str | None) -> Attempt:
        """The attempt that counts, the redacted candidate, and the attempt stored."""
        attempt = _counted_attempt(candidate, records)
        if attempt != candidate.attempt:  # hooks, judge and records all see the attempt that counts
            candidate = attrs.evolve(candidate, attempt=attempt)
        redacted = redact(candidate, records.egress)
        stored_candidate = unstructure(redacted.candidate)
        records.write("begin_attempt", records.store.begin_attempt, candidate.session_id, attempt, stored_candidate)
        return cls(candidate, termination, redacted, stored_candidate, records, judge_engine)

    @classmethod
    def unverified(cls, candidate: Candidate, termination: Termination, records: Records,
                   judge_engine: str | None, skipped: bool) -> FinalizeResult:
        """:meth:`begin` then :meth:`end_unverified`, in one call: a run that is not verified needs nothing from
        the stages in between, so its store work takes one worker-thread hop, not two."""
        return cls.begin(candidate, termination, records, judge_engine).end_unverified(skipped)

    @property
    def store(self) -> Store:
        return self.records.store

    @property
    def number(self) -> int:
        return self.candidate.attempt

    def conclude(self, judged: Judged) -> FinalizeResult:
        """Record the decision, then act on its outcome."""
        self.record_decision(judged)
        if judged.decision.outcome == "revise":
            return self.revise(judged)
        if judged.decision.outcome == "completed":
            return self.complete(judged)
        return self.pend(judged)

    def record_decision(self, judged: Judged) -> None:
        """The verdict and evidence timeline rows and the ``verification_policy`` ledger row (redacted)."""
        records, candidate, attempt, decision = self.records, self.candidate, self.number, judged.decision
        clean = records.clean
        verdict = decision.verdict
        session_id = candidate.session_id

        def judge_fields() -> dict[str, Any]:
            return clean(judged.judgment.record()) if judged.judgment is not None else {}

        records.timeline(session_id, "verdict", lambda: {
            "attempt": attempt, "turn_id": clean(candidate.turn_id), "verdict": clean(unstructure(verdict)),
            "policy_action": decision.action, "outcome": decision.outcome,
        })
        records.timeline(session_id, "evidence", lambda: {
            "attempt": attempt, "turn_id": clean(candidate.turn_id),
            "structural_findings": clean(unstructure(judged.findings)),
            "strengthen": clean(unstructure(judged.strengthen)),
            "hook_records": clean(unstructure(judged.hook_records)), "judge_called": judged.judge_called,
            "judge_engine": clean(self.judge_engine) if self.judge_engine is not None else None,
            **judge_fields(),
        })
        records.ledger(lambda: {
            "session_id": session_id, "turn_id": clean(candidate.turn_id), "attempt": attempt,
            "termination": self.termination.reason.value, "policy_action": decision.action,
            "outcome": decision.outcome, "reason": clean(decision.reason),
            "passed": verdict.passed if verdict is not None else None,
            "rubric_misses": clean(list(verdict.rubric_misses)) if verdict is not None else [],
            "error": clean(verdict.error) if verdict is not None else None,
            "engine": clean(verdict.engine) if verdict is not None else "",
            "hook_records": clean(unstructure(judged.hook_records)),
            "candidate_sha256": _sha256(self.stored_candidate),
            **judge_fields(),
        })
        judgment = judged.judgment
        if judgment is not None and judgment.cache is not None:  # best effort, after the decision's own rows
            for entry in judgment.to_cache:
                records.write("cache_verdict", judgment.cache.write, entry)

    def _result(self, decision: Decision, state: SessionState, findings: tuple[Any, ...],
                hook_records: tuple[HookRecord, ...], **fields: Any) -> FinalizeResult:
        return FinalizeResult(
            outcome=decision.outcome,
            policy_action=decision.action,
            verdict=decision.verdict,
            follow_up=decision.follow_up,
            attempt=self.number,
            session_state=state,
            hook_records=hook_records,
            structural_findings=findings,
            store_error=self.records.error,
            **fields,
        )

    def revise(self, judged: Judged) -> FinalizeResult:
        records, decision = self.records, judged.decision
        # the revise counter is kept even when the follow-up cannot be redacted (the caller has it in the result)
        stored_follow_up = records.built("set_revise", lambda: records.clean(decision.follow_up)) or WITHHELD
        records.write("set_revise", self.store.set_revise, self.candidate.session_id, self.number + 1,
                      stored_follow_up)
        return self._result(decision, "running", judged.findings, judged.hook_records, answer="", status="revise")

    def complete(self, judged: Judged) -> FinalizeResult:
        records, candidate, redacted = self.records, self.candidate, self.redacted
        session_id, attempt = candidate.session_id, self.number
        earlier = self._earlier_attempts()
        tool_calls, usage, rounds = _merge([*earlier, candidate])
        stored_calls, _, _ = _merge([*earlier, redacted.candidate])
        records.write("save_checkpoint", self.store.save_checkpoint, session_id, {
            "kind": "completed", "attempt": attempt, "status": "completed",
            "answer": redacted.candidate.final_text, "tool_calls": unstructure(stored_calls),
            "usage": usage, "rounds": rounds, "attempts": len(earlier) + 1,
        })
        # the request is over: clear its attempts first (reset marks the session running), then complete it
        records.write("reset_request", self.store.reset_request, session_id)
        records.write("set_session_state", self.store.set_session_state, session_id, "completed")
        return self._result(judged.decision, "completed", judged.findings, judged.hook_records,
                            answer=candidate.final_text, status="completed", merged_tool_calls=tool_calls,
                            merged_usage=usage, merged_rounds=rounds)

    def _earlier_attempts(self) -> list[Candidate]:
        """The stored (redacted) candidates of this request's earlier attempts, last stored per number."""
        attempt, records = self.number, self.records
        if attempt == 0:  # the first attempt has none (numbers are never negative): no read, no parsing
            return []
        try:
            stored = self.store.attempts(self.candidate.session_id)
        except BaseException as exc:
            contain(exc)
            records.failed("attempts", exc)
            return []
        by_number: dict[int, Candidate] = {}
        for index, item in enumerate(stored):
            try:
                earlier = parse_candidate(item, source=f"stored attempt {index}")
            except VerigateError as exc:
                records.failed("attempts", exc)
                continue
            if earlier.attempt < attempt:
                by_number[earlier.attempt] = earlier
        return [by_number[number] for number in sorted(by_number)]

    def pend(self, judged: Judged) -> FinalizeResult:
        """Withhold the answer; the pending candidate is never lost: if the store cannot keep it (or may not,
        because redaction failed), it stays in the result as ``pending_text``."""
        records, candidate, redacted, decision = self.records, self.candidate, self.redacted, judged.decision
        session_id, attempt, stored_candidate = candidate.session_id, self.number, self.stored_candidate
        pending_id: str | None = None
        pending_text = candidate.final_text if redacted.error is not None else None
        verdict = records.built("pending verdict", lambda: records.clean(unstructure(decision.verdict)))
        reason = records.built("pending reason", lambda: records.clean(decision.reason)) or ""
        try:
            pending_id = self.store.create_pending_review(
                session_id,
                policy_action=decision.action,
                reason=reason,
                pending_text=redacted.candidate.final_text,
                candidate=stored_candidate,
                verdict=verdict,
            )
        except BaseException as exc:  # the one write the caller must hear about
            contain(exc)
            records.failed("create_pending_review", exc)
            pending_text = candidate.final_text
        records.write("save_checkpoint", self.store.save_checkpoint, session_id, {
            "kind": "pending_review", "attempt": attempt, "status": PENDING_STATUS, "pending_id": pending_id,
            "policy_action": decision.action, "candidate": stored_candidate,
        })
        if pending_id is None:  # a stored review pauses the session itself
            records.write("set_session_state", self.store.set_session_state, session_id, "paused")
        records.timeline(session_id, "pending", lambda: {
            "attempt": attempt, "pending_id": pending_id, "policy_action": decision.action, "reason": reason,
        })
        return self._result(decision, "paused", judged.findings, judged.hook_records, answer="",
                            status=PENDING_STATUS, pending_id=pending_id, pending_text=pending_text)

    def end_unverified(self, skipped: bool) -> FinalizeResult:
        """Persisted as it is: no hooks, no judge; the answer is withheld ("") and the text kept in the
        checkpoint, so nothing unverified is ever handed out as an answer."""
        records, candidate, termination = self.records, self.candidate, self.termination
        attempt, stored_candidate = self.number, self.stored_candidate
        decision = decide(PolicyInput(hand_off=termination.reason.hand_off, skip_public_verification=skipped))
        log.info("finalize %s attempt %d: %s (%s%s)", candidate.session_id, attempt, decision.action,
                 termination.reason.value, ", public verification skipped" if skipped else "")
        session_id = candidate.session_id
        detail = records.built("termination detail", lambda: records.clean(termination.detail)) or ""
        records.write("save_checkpoint", self.store.save_checkpoint, session_id, {
            "kind": "unverified", "attempt": attempt, "status": termination.reason.value,
            "detail": detail, "skipped_public_verification": skipped, "candidate": stored_candidate,
        })
        records.write("set_session_state", self.store.set_session_state, session_id, "ended")
        records.timeline(session_id, "session", lambda: {
            "event": "session_ended", "attempt": attempt, "reason": termination.reason.value,
            "skipped_public_verification": skipped,
        })
        records.ledger(lambda: {
            "session_id": session_id, "turn_id": records.clean(candidate.turn_id), "attempt": attempt,
            "termination": termination.reason.value, "policy_action": decision.action,
            "outcome": decision.outcome, "skipped_public_verification": skipped,
            "candidate_sha256": _sha256(stored_candidate),
        })
        return self._result(decision, "ended", (), (), answer="", status=termination.reason.value)
