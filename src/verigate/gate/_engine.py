"""The finalization gate: structural check → PreVerify → judge → PostVerify → Stop → policy → records."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextvars import ContextVar
from pathlib import Path
from types import TracebackType
from typing import Any

import attrs

from .._config import Config, load_config
from .._errors import (
    CandidateError,
    ConfigError,
    InputError,
    JudgeError,
    PluginError,
    StoreError,
    VerigateError,
)
from .._logging import get_logger
from .._models import (
    Candidate,
    FinalizeResult,
    HookRecord,
    SessionState,
    Strengthen,
    Termination,
    ToolObservation,
    Verdict,
)
from .._plugins import PluginManager, create_manager, handlers, merged_registry
from ..judge._base import JudgeConfig, JudgeEngine, JudgeRequest
from ..redact._base import RedactionResult
from ..redact._egress import Egress
from ..store._base import SessionRecord, Store
from ._containment import contain, deferring_interrupts
from ._convert import parse_candidate, unstructure
from ._policy import (
    Decision,
    PolicyInput,
    combine_verdict,
    decide,
    judge_is_skipped,
    post_verify_action,
    unite_strengthen,
)
from ._stages import is_own_bounded, read_only, run_stage, run_structural

__all__ = [
    "PENDING_STATUS",
    "Gate",
    "finalize_and_return",
    "finalize_and_return_async",
    "public_verification_skipped",
    "skipping_public_verification",
]

log = get_logger("verigate.gate")
#: the status of a withheld answer (SPEC §1.2 "Response")
PENDING_STATUS = "EXTERNAL_VERIFICATION_REQUIRED"
#: what is stored in place of a text the redactors failed on (nothing unredacted is ever stored)
WITHHELD = "[withheld: redaction failed]"
_SKIP: ContextVar[bool] = ContextVar("verigate_skip_public_verification", default=False)


def public_verification_skipped() -> bool:
    """True while the current run (task or thread) skips public verification."""
    return _SKIP.get()


@contextlib.contextmanager
def skipping_public_verification() -> Iterator[None]:
    """Skip public verification for the runs inside the block only (a control workflow); restored on exit,
    also on an exception. Runs in other tasks or threads are not affected."""
    token = _SKIP.set(True)
    try:
        yield
    finally:
        _SKIP.reset(token)


#: short strings (tool names, keys, codes, actions) recur in every finalize: their redaction is remembered per gate
_CACHED_TEXT_CHARS = 200
_CACHE_ENTRIES = 4096


@attrs.frozen
class _MemoEgress(Egress):
    """The gate's redactors for one finalize, remembering results (redaction is a function of the text): any text
    for this finalize (a verdict or hook record is stored twice), short texts for the gate's lifetime."""

    shared: dict[str, RedactionResult] = attrs.field(factory=dict, repr=False, eq=False)
    own: dict[str, RedactionResult] = attrs.field(factory=dict, repr=False, eq=False)

    def text(self, text: str) -> RedactionResult:
        short = len(text) <= _CACHED_TEXT_CHARS
        found = (self.shared if short else self.own).get(text)
        if found is None:
            found = super().text(text)
            if not short:
                self.own[text] = found
            else:
                if len(self.shared) >= _CACHE_ENTRIES:  # a long-running gate keeps what recurs lately
                    self.shared.clear()
                self.shared[text] = found
        return found


@attrs.define
class _Records:
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


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def _sha256(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


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
class _Redacted:
    """The candidate as it may leave the process: redacted, or withheld when a redactor failed."""

    candidate: Candidate
    personal_data: bool
    error: str | None = None


class Gate:
    """A configured finalization gate. Build it with :meth:`from_config`; ``await gate.finalize(...)``."""

    def __init__(
        self,
        *,
        config: Config,
        manager: PluginManager,
        store: Store,
        judge: JudgeEngine | None,
        egress: Egress,
        owns_store: bool = False,
    ) -> None:
        self.config = config
        self.manager = manager
        self.store = store
        self.judge = judge
        self.egress = egress
        self._owns_store = owns_store
        self._redaction_cache: dict[str, RedactionResult] = {}
        self._structural = handlers(manager, "verigate_structural_check")
        self._pre_verify = handlers(manager, "verigate_pre_verify")
        self._post_verify = handlers(manager, "verigate_post_verify")
        self._stop = handlers(manager, "verigate_stop")
        # only verigate's own read-only checks: the candidate needs no read-only copy
        self._needs_view = not all(
            is_own_bounded(handler.function)
            for stage in (self._structural, self._pre_verify, self._post_verify, self._stop) for handler in stage
        )

    @classmethod
    def from_config(
        cls,
        path_or_mapping: str | Path | Mapping[str, Any] | None = None,
        *,
        plugins: Iterable[object | str] = (),
        store: Store | str | os.PathLike[str] | None = None,
        judge_function: Callable[..., Any] | None = None,
        entry_points: bool = True,
    ) -> Gate:
        """Load verigate.yaml (or a mapping; None = ./verigate.yaml if present, else the embedded defaults),
        load plug-ins, select the judge and open the store.

        ``judge_function`` is the runtime's own model call for ``judge.client: callable``: ``fn(ChatRequest) ->
        str`` (sync or async). Given without a ``judge:`` section it configures ``llm_judge`` over it.
        ``store`` is a Store, a store URL, or None for ``store.url`` of the configuration.
        """
        config = load_config(path_or_mapping)
        if judge_function is not None:
            config = attrs.evolve(config, judge=_with_function(config.judge, judge_function, config.source))
        manager = create_manager([*config.plugins, *plugins], entry_points=entry_points)
        judge = _build_judge(manager, config)
        egress = _build_egress(manager, config)
        opened: Store
        if store is None or isinstance(store, (str, os.PathLike)):
            from ..store import open_store

            url = config.store.url if store is None else os.fspath(store)
            opened, owns_store = open_store(url, lock_timeout_s=config.store.lock_timeout_s), True
        else:
            opened, owns_store = store, False
        return cls(config=config, manager=manager, store=opened, judge=judge, egress=egress, owns_store=owns_store)

    # ------------------------------------------------------------------------------------------- lifecycle

    def close(self) -> None:
        """Close the store if this gate opened it."""
        if self._owns_store:
            self.store.close()

    def __enter__(self) -> Gate:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Gate:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # ------------------------------------------------------------------------------------------- finalize

    async def finalize(
        self,
        candidate: Candidate,
        termination: Termination,
        *,
        deadline: float | None = None,
        skip_public_verification: bool = False,
    ) -> FinalizeResult:
        """Verify a stop proposal and decide: completed, revise, pending_review or unverified.

        ``deadline`` is an absolute :func:`time.monotonic` value (the run's time budget); the judge never runs
        past it. ``skip_public_verification`` persists this run unverified; it holds for this run only and is
        restored afterwards, also on an exception.
        """
        token = _SKIP.set(skip_public_verification or _SKIP.get())
        try:
            if not isinstance(candidate, Candidate):
                raise CandidateError(f"expected a Candidate, got {type(candidate).__name__}", field="candidate")
            if not isinstance(termination, Termination):
                raise CandidateError(f"expected a Termination, got {type(termination).__name__}",
                                     field="termination")
            if deadline is not None and (isinstance(deadline, bool) or not isinstance(deadline, (int, float))):
                raise InputError("deadline must be a time.monotonic() value (a number) or None", field="deadline")
            with deferring_interrupts() as interrupts:
                result = await self._finalize(candidate, termination, deadline, _SKIP.get())
            if interrupts:  # a plug-in's KeyboardInterrupt, raised now that the decision and candidate are stored
                raise interrupts[0]
            return result
        finally:
            _SKIP.reset(token)

    async def _finalize(
        self, candidate: Candidate, termination: Termination, deadline: float | None, skip: bool
    ) -> FinalizeResult:
        egress = _MemoEgress(self.egress.redactors, self._redaction_cache)
        records = _Records(self.store, egress)
        # store I/O (and redaction) run in a worker thread: a busy store never blocks the event loop
        candidate, redacted, stored_candidate = await asyncio.to_thread(self._begin, candidate, records)
        attempt = candidate.attempt
        if not termination.reason.hand_off or skip:
            return await asyncio.to_thread(self._unverified, candidate, termination, attempt, skip,
                                           stored_candidate, records)

        timeout_s = self.config.hooks.timeout_s
        view = read_only(candidate) if self._needs_view else candidate
        structural = await run_structural(self._structural, {"candidate": view, "termination": termination},
                                          timeout_s)
        pre_verify = await run_stage("pre_verify", self._pre_verify, {"candidate": view}, timeout_s)
        strengthen = unite_strengthen(pre_verify.decisions)
        findings = tuple(structural.decisions)
        judge_verdict = None
        if not judge_is_skipped(findings, hook_error=structural.error or pre_verify.error):
            judge_verdict = await self._call_judge(redacted, strengthen, deadline, egress)
        verdict = combine_verdict(findings, strengthen, judge_verdict)
        policy_input = PolicyInput(
            structural_findings=findings,
            strengthen=strengthen,
            judge_verdict=judge_verdict,
            structural_error=structural.error,
            pre_verify_error=pre_verify.error,
            attempt=attempt,
            budget=self.config.budget.revise,
        )
        post_verify = await run_stage("post_verify", self._post_verify, {"candidate": view, "verdict": verdict},
                                      timeout_s)
        policy_input = attrs.evolve(policy_input, post_decisions=post_verify.decisions,
                                    post_verify_error=post_verify.error)
        shown_action, _, _ = post_verify_action(policy_input, verdict)
        stop = await run_stage("stop", self._stop, {"candidate": view, "verdict": verdict, "action": shown_action},
                               timeout_s)
        decision = decide(attrs.evolve(policy_input, stop_directives=stop.decisions, stop_error=stop.error))
        log.info("finalize %s attempt %d: %s -> %s%s", candidate.session_id, attempt, decision.action,
                 decision.outcome, f" ({decision.reason})" if decision.reason else "")
        hook_records = pre_verify.records + post_verify.records + stop.records
        return await asyncio.to_thread(self._conclude, candidate, termination, redacted, decision, findings,
                                       strengthen, hook_records, judge_verdict is not None, stored_candidate,
                                       records)

    # ------------------------------------------------------------------------------------------- store side

    def _begin(self, candidate: Candidate, records: _Records) -> tuple[Candidate, _Redacted, Mapping[str, Any]]:
        """The attempt that counts, the redacted candidate, and the attempt stored."""
        attempt = self._attempt(candidate, records)
        if attempt != candidate.attempt:  # hooks, judge and records all see the attempt that counts
            candidate = attrs.evolve(candidate, attempt=attempt)
        redacted = self._redact(candidate, records.egress)
        stored_candidate = unstructure(redacted.candidate)
        records.write("begin_attempt", self.store.begin_attempt, candidate.session_id, attempt, stored_candidate)
        return candidate, redacted, stored_candidate

    def _conclude(
        self,
        candidate: Candidate,
        termination: Termination,
        redacted: _Redacted,
        decision: Decision,
        findings: tuple[Any, ...],
        strengthen: Strengthen,
        hook_records: tuple[HookRecord, ...],
        judge_called: bool,
        stored_candidate: Mapping[str, Any],
        records: _Records,
    ) -> FinalizeResult:
        """Record the decision, then act on its outcome."""
        attempt = candidate.attempt
        self._record_decision(candidate, termination, attempt, decision, findings, strengthen, hook_records,
                              judge_called, stored_candidate, records)
        if decision.outcome == "revise":
            return self._revise(candidate, attempt, decision, findings, hook_records, records)
        if decision.outcome == "completed":
            return self._completed(candidate, redacted, attempt, decision, findings, hook_records, records)
        return self._pending(candidate, redacted, attempt, decision, findings, hook_records, stored_candidate,
                             records)

    def _attempt(self, candidate: Candidate, records: _Records) -> int:
        """The attempt number: the store's revise counter while a revise of this session is outstanding (never
        lower than the caller's), else the caller's — and then a new request begins in that session."""
        try:
            session = self.store.get_session(candidate.session_id)
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
        records.write("reset_request", self.store.reset_request, candidate.session_id)
        return candidate.attempt

    @staticmethod
    def _redact(candidate: Candidate, egress: Egress) -> _Redacted:
        try:
            redacted, findings = egress.candidate(candidate)
        except BaseException as exc:  # fail closed: nothing unredacted leaves the process
            log.error("redaction failed; the candidate is withheld from the judge and the store: %s",
                      type(exc).__name__)
            contain(exc)
            withheld = attrs.evolve(
                candidate, request=WITHHELD, final_text=WITHHELD, tool_calls=(), requirements=(), usage={}
            )
            return _Redacted(withheld, personal_data=True, error=f"{type(exc).__name__}: {exc}")
        personal = candidate.contains_personal_data is True or any(
            finding.category == "personal_data" for finding in findings
        )
        return _Redacted(redacted, personal)

    async def _call_judge(self, redacted: _Redacted, strengthen: Strengthen, deadline: float | None,
                          egress: Egress) -> Verdict:
        """One judge call, no tools, under min(judge timeout ≤ 120 s, remaining deadline); every failure is a
        verification_error verdict with its reason code."""
        config = self.config.judge
        if self.judge is None or config is None:
            return Verdict.verification_error("judge_unavailable")
        engine = config.engine
        if redacted.error is not None:
            return Verdict.verification_error("redaction_error", engine=engine)
        try:
            extra = [egress.text(text) for text in strengthen.requirements]
            known_misses = tuple(egress.text(code).text for code in strengthen.additional_misses)
        except BaseException as exc:  # a redactor failed on a hook's requirement
            contain(exc)
            log.error("redaction of PreVerify requirements failed: %s", type(exc).__name__)
            return Verdict.verification_error("redaction_error", engine=engine)
        personal = redacted.personal_data or any(result.personal_data for result in extra)
        if personal and config.trust == "auxiliary":
            return Verdict.verification_error("personal_data_omitted", engine=engine)
        timeout_s = config.effective_timeout_s
        bounded_by_deadline = False
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return Verdict.verification_error("verification_time_budget_exhausted", engine=engine)
            if remaining < timeout_s:
                timeout_s, bounded_by_deadline = remaining, True
        request = JudgeRequest(
            # the flag is settled: engines refuse an unknown one for an auxiliary judge
            candidate=attrs.evolve(redacted.candidate, contains_personal_data=personal),
            requirements=_unique([*redacted.candidate.requirements, *(result.text for result in extra)]),
            known_misses=known_misses,
        )
        try:
            async with asyncio.timeout(timeout_s):
                verdict: object = await self.judge.judge(request, timeout_s=timeout_s)
        except TimeoutError:
            reason = "verification_time_budget_exhausted" if bounded_by_deadline else "judge_timeout"
            return Verdict.verification_error(reason, engine=engine)
        except JudgeError as exc:
            # an engine enforcing the same (deadline-bounded) timeout itself reports it as its own timeout
            reason = exc.reason
            if reason == "judge_timeout" and bounded_by_deadline:
                reason = "verification_time_budget_exhausted"
            return Verdict.verification_error(reason, engine=engine)
        except BaseException as exc:  # an engine's bug (SystemExit included) is an unusable judgment, never a pass
            log.error("judge engine %s failed: %s", engine, contain(exc))
            return Verdict.verification_error("judge_error", engine=engine)
        if not isinstance(verdict, Verdict):
            log.error("judge engine %s returned %s, not a Verdict", engine, type(verdict).__name__)
            return Verdict.verification_error("invalid_judge_response", engine=engine)
        if not verdict.engine:
            verdict = attrs.evolve(verdict, engine=engine, effective_engine=verdict.effective_engine or engine)
        return verdict

    # ------------------------------------------------------------------------------------------- outcomes

    def _record_decision(
        self,
        candidate: Candidate,
        termination: Termination,
        attempt: int,
        decision: Decision,
        findings: tuple[Any, ...],
        strengthen: Strengthen,
        hook_records: tuple[HookRecord, ...],
        judge_called: bool,
        stored_candidate: Mapping[str, Any],
        records: _Records,
    ) -> None:
        """The verdict and evidence timeline rows and the ``verification_policy`` ledger row (redacted)."""
        clean = records.clean
        verdict = decision.verdict
        session_id = candidate.session_id
        records.timeline(session_id, "verdict", lambda: {
            "attempt": attempt, "turn_id": clean(candidate.turn_id), "verdict": clean(unstructure(verdict)),
            "policy_action": decision.action, "outcome": decision.outcome,
        })
        records.timeline(session_id, "evidence", lambda: {
            "attempt": attempt, "turn_id": clean(candidate.turn_id),
            "structural_findings": clean(unstructure(findings)), "strengthen": clean(unstructure(strengthen)),
            "hook_records": clean(unstructure(hook_records)), "judge_called": judge_called,
            "judge_engine": clean(self.config.judge.engine) if self.config.judge is not None else None,
        })
        records.ledger(lambda: {
            "session_id": session_id, "turn_id": clean(candidate.turn_id), "attempt": attempt,
            "termination": termination.reason.value, "policy_action": decision.action,
            "outcome": decision.outcome, "reason": clean(decision.reason),
            "passed": verdict.passed if verdict is not None else None,
            "rubric_misses": clean(list(verdict.rubric_misses)) if verdict is not None else [],
            "error": clean(verdict.error) if verdict is not None else None,
            "engine": clean(verdict.engine) if verdict is not None else "",
            "hook_records": clean(unstructure(hook_records)),
            "candidate_sha256": _sha256(stored_candidate),
        })

    def _result(self, decision: Decision, attempt: int, state: SessionState, findings: tuple[Any, ...],
                hook_records: tuple[HookRecord, ...], records: _Records, **fields: Any) -> FinalizeResult:
        return FinalizeResult(
            outcome=decision.outcome,
            policy_action=decision.action,
            verdict=decision.verdict,
            follow_up=decision.follow_up,
            attempt=attempt,
            session_state=state,
            hook_records=hook_records,
            structural_findings=findings,
            store_error=records.error,
            **fields,
        )

    def _revise(self, candidate: Candidate, attempt: int, decision: Decision, findings: tuple[Any, ...],
                hook_records: tuple[HookRecord, ...], records: _Records) -> FinalizeResult:
        # the revise counter is kept even when the follow-up cannot be redacted (the caller has it in the result)
        stored_follow_up = records.built("set_revise", lambda: records.clean(decision.follow_up)) or WITHHELD
        records.write("set_revise", self.store.set_revise, candidate.session_id, attempt + 1, stored_follow_up)
        return self._result(decision, attempt, "running", findings, hook_records, records,
                            answer="", status="revise")

    def _completed(self, candidate: Candidate, redacted: _Redacted, attempt: int, decision: Decision,
                   findings: tuple[Any, ...], hook_records: tuple[HookRecord, ...],
                   records: _Records) -> FinalizeResult:
        session_id = candidate.session_id
        earlier = self._earlier_attempts(session_id, attempt, records)
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
        return self._result(decision, attempt, "completed", findings, hook_records, records,
                            answer=candidate.final_text, status="completed", merged_tool_calls=tool_calls,
                            merged_usage=usage, merged_rounds=rounds)

    def _earlier_attempts(self, session_id: str, attempt: int, records: _Records) -> list[Candidate]:
        """The stored (redacted) candidates of this request's earlier attempts, last stored per number."""
        if attempt == 0:  # the first attempt has none (numbers are never negative): no read, no parsing
            return []
        try:
            stored = self.store.attempts(session_id)
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

    def _pending(self, candidate: Candidate, redacted: _Redacted, attempt: int, decision: Decision,
                 findings: tuple[Any, ...], hook_records: tuple[HookRecord, ...],
                 stored_candidate: Mapping[str, Any], records: _Records) -> FinalizeResult:
        """Withhold the answer; the pending candidate is never lost: if the store cannot keep it (or may not,
        because redaction failed), it stays in the result as ``pending_text``."""
        session_id = candidate.session_id
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
        return self._result(decision, attempt, "paused", findings, hook_records, records, answer="",
                            status=PENDING_STATUS, pending_id=pending_id, pending_text=pending_text)

    def _unverified(self, candidate: Candidate, termination: Termination, attempt: int, skipped: bool,
                    stored_candidate: Mapping[str, Any], records: _Records) -> FinalizeResult:
        """Persisted as it is: no hooks, no judge; the answer is withheld ("") and the text kept in the
        checkpoint, so nothing unverified is ever handed out as an answer."""
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
        return self._result(decision, attempt, "ended", (), (), records, answer="",
                            status=termination.reason.value)


def _with_function(judge: JudgeConfig | None, function: Callable[..., Any], source: str) -> JudgeConfig:
    if not callable(function):
        raise ConfigError("judge_function must be callable", source=source, field="judge.function")
    if judge is None:
        return JudgeConfig(client="callable", function=function)
    if judge.client not in (None, "callable"):
        raise ConfigError(f"judge_function is given but judge.client is {judge.client!r} (use 'callable')",
                          source=source, field="judge.client")
    return attrs.evolve(judge, client="callable", function=function)


def _factory_call(what: str, factory: Callable[..., Any], **kwargs: Any) -> Any:
    try:
        return factory(**kwargs)
    except VerigateError:
        raise
    except Exception as exc:  # a plug-in's factory failed: loud, typed, at construction
        raise PluginError(f"{what} could not be created: {type(exc).__name__}: {exc}") from exc


def _build_judge(manager: PluginManager, config: Config) -> JudgeEngine | None:
    """The configured engine over its client; an unknown name is a ConfigError naming the key."""
    judge = config.judge
    if judge is None:
        return None
    engines = merged_registry(manager, "verigate_judge_engines")
    if judge.engine not in engines:
        known = ", ".join(sorted(engines)) or "none"
        raise ConfigError(f"unknown judge engine {judge.engine!r} (registered: {known})",
                          source=config.source, field="judge.engine")
    client = None
    if judge.client is not None:
        clients = merged_registry(manager, "verigate_model_clients")
        if judge.client not in clients:
            known = ", ".join(sorted(clients)) or "none"
            raise ConfigError(f"unknown model client {judge.client!r} (registered: {known})",
                              source=config.source, field="judge.client")
        client = _factory_call(f"model client {judge.client!r}", clients[judge.client], config=judge)
    engine = _factory_call(f"judge engine {judge.engine!r}", engines[judge.engine], config=judge, client=client)
    if not isinstance(engine, JudgeEngine):
        raise PluginError(f"judge engine {judge.engine!r} does not implement async judge(request, *, timeout_s)")
    return engine


def _build_egress(manager: PluginManager, config: Config) -> Egress:
    try:
        return Egress.of(manager.hook.verigate_redactors(config=config.redaction, manager=manager))
    except VerigateError:
        raise
    except Exception as exc:  # a redactor plug-in failed to build: nothing may leave unredacted
        raise PluginError(f"redactors could not be created: {type(exc).__name__}: {exc}") from exc


async def finalize_and_return_async(
    gate: Gate, candidate: Candidate, termination: Termination, **kwargs: Any
) -> FinalizeResult:
    """``await gate.finalize(...)`` (the origin runtime's entry point name)."""
    return await gate.finalize(candidate, termination, **kwargs)


def finalize_and_return(gate: Gate, candidate: Candidate, termination: Termination, **kwargs: Any) -> FinalizeResult:
    """The synchronous form, for code without an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(gate.finalize(candidate, termination, **kwargs))
    raise VerigateError(
        "finalize_and_return cannot run inside a running event loop; use "
        "`await finalize_and_return_async(gate, candidate, termination)` instead"
    )
