"""The finalization gate's lifecycle and ``finalize``: structural check → PreVerify → judge → PostVerify → Stop →
policy → records.

Building a gate is in ``_assembly``, the judge call in ``_judging``, redaction within a finalize in
``_redaction``, and the store side of an attempt (its records and outcomes) in ``_recording``."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextvars import ContextVar
from pathlib import Path
from types import TracebackType
from typing import Any

import attrs

from .._config import Config, load_config
from .._errors import CandidateError, InputError, VerigateError
from .._logging import get_logger
from .._models import Candidate, FinalizeResult, StageContext, Termination
from .._plugins import PluginManager, create_manager, handlers
from .._telemetry import telemetry_of
from ..judge._base import JudgeEngine
from ..redact._base import RedactionResult
from ..redact._egress import Egress
from ..store._base import Store
from ._assembly import build_egress, build_judge, open_configured_store, with_function
from ._containment import deferring_interrupts
from ._convert import unstructure
from ._ensemble import judge_label
from ._judge_cache import JudgeCache
from ._judging import Ensemble, judge_candidate
from ._offloop import conclusion_hop, hop_for, off_loop
from ._policy import PolicyInput, combine_verdict, decide, judge_is_skipped, post_verify_action, unite_strengthen
from ._recording import PENDING_STATUS, Attempt, Judged, Records
from ._redaction import MemoEgress
from ._stages import StageResult, is_own_bounded, read_only, run_stage, run_structural

__all__ = [
    "PENDING_STATUS",
    "Gate",
    "finalize_and_return",
    "finalize_and_return_async",
    "public_verification_skipped",
    "skipping_public_verification",
]

log = get_logger("verigate.gate")
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


class Gate:
    """A configured finalization gate. Build it with :meth:`from_config`; ``await gate.finalize(...)``."""

    def __init__(
        self,
        *,
        config: Config,
        manager: PluginManager,
        store: Store,
        judge: JudgeEngine | Ensemble | None,
        egress: Egress,
        owns_store: bool = False,
        context: StageContext | None = None,
    ) -> None:
        self.config = config
        #: what the decision-stage plug-ins get as ``context`` unless a finalize names its own
        self.context = _checked_context(context) if context is not None else StageContext()
        self.manager = manager
        self.store = store
        self.judge = judge
        self.egress = egress
        #: the judge-call cache (``judge.cache``), None when off
        self.judge_cache = JudgeCache.of(config.judge, store)
        self._owns_store = owns_store
        self._redaction_cache: dict[str, RedactionResult] = {}
        self._structural = handlers(manager, "verigate_structural_check")
        self._pre_verify = handlers(manager, "verigate_pre_verify")
        self._post_verify = handlers(manager, "verigate_post_verify")
        self._stop = handlers(manager, "verigate_stop")
        self._telemetry = telemetry_of(manager)  # verigate._telemetry.NULL without an observer: no span, no cost
        self._structural_own = bool(self._structural) and all(is_own_bounded(h.function) for h in self._structural)
        # only verigate's own read-only checks: the candidate needs no read-only copy
        self._needs_view = not all(
            is_own_bounded(handler.function)
            for stage in (self._structural, self._pre_verify, self._post_verify, self._stop) for handler in stage
        )

    @classmethod
    def from_config(
        cls,
        path_or_mapping: Config | str | Path | Mapping[str, Any] | None = None,
        *,
        plugins: Iterable[object | str] = (),
        store: Store | str | os.PathLike[str] | None = None,
        judge_function: Callable[..., Any] | None = None,
        entry_points: bool = True,
        context: StageContext | None = None,
    ) -> Gate:
        """Load verigate.yaml (or a mapping; None = ./verigate.yaml if present, else the embedded defaults; an
        already parsed ``Config`` is used as it is), load plug-ins, select the judge and open the
        store.

        ``judge_function`` is the runtime's own model call for ``judge.client: callable``: ``fn(ChatRequest) ->
        str`` (sync or async). Given without a ``judge:`` section it configures ``llm_judge`` over it.
        ``store`` is a Store, a store URL, or None for ``store.url`` of the configuration. ``context`` is what
        the decision-stage plug-ins get as their ``context`` argument (:class:`~verigate.StageContext`; None: one
        with every field None), unless a finalize names its own.
        """
        config = path_or_mapping if isinstance(path_or_mapping, Config) else load_config(path_or_mapping)
        if judge_function is not None:
            config = attrs.evolve(config, judge=with_function(config.judge, judge_function, config.source))
        manager = create_manager([*config.plugins, *plugins], entry_points=entry_points)
        judge = build_judge(manager, config)
        egress = build_egress(manager, config)
        opened, owns_store = open_configured_store(config, store, manager)
        return cls(config=config, manager=manager, store=opened, judge=judge, egress=egress, owns_store=owns_store,
                   context=context)

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

    # ------------------------------------------------------------------------------------------- reviews

    def file_review(self, candidate: Candidate, *, policy_action: str, reason: str) -> str:
        """File a pending review of ``candidate`` for a person, outside :meth:`finalize` (a runtime's own loop
        guard or error path); redacted like the gate's own reviews. Returns the review id; a redaction or store
        failure raises (the caller decides how to fail closed)."""
        redacted = self.egress.candidate(candidate)[0]
        return self.store.create_pending_review(
            candidate.session_id,
            policy_action=policy_action,
            reason=self.egress.text(reason).text,
            pending_text=redacted.final_text,
            candidate=unstructure(redacted),
            verdict=None,
        )

    # ------------------------------------------------------------------------------------------- finalize

    async def finalize(
        self,
        candidate: Candidate,
        termination: Termination,
        *,
        deadline: float | None = None,
        skip_public_verification: bool = False,
        context: StageContext | None = None,
    ) -> FinalizeResult:
        """Verify a stop proposal and decide: completed, revise, pending_review or unverified.

        ``deadline`` is an absolute :func:`time.monotonic` value (the run's time budget); the judge never runs
        past it. ``skip_public_verification`` persists this run unverified; it holds for this run only and is
        restored afterwards, also on an exception. ``context`` replaces the gate's :attr:`context` for this run.
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
            stage_context = _checked_context(context) if context is not None else self.context
            with deferring_interrupts() as interrupts:
                result = await self._telemetry.finalize(
                    self._finalize(candidate, termination, deadline, _SKIP.get(), stage_context), termination)
            if interrupts:  # a plug-in's KeyboardInterrupt, raised now that the decision and candidate are stored
                raise interrupts[0]
            return result
        finally:
            _SKIP.reset(token)

    async def _finalize(
        self, candidate: Candidate, termination: Termination, deadline: float | None, skip: bool,
        context: StageContext,
    ) -> FinalizeResult:
        egress = MemoEgress(self.egress.redactors, self._redaction_cache)
        records = Records(self.store, egress)
        judge_engine = judge_label(self.config.judge) if self.config.judge is not None else None
        # store I/O (and redaction) run in a worker thread: a busy store never blocks the event loop; records
        # that are bounded work without I/O (a small candidate, a store in memory) are written here (_offloop)
        hop = hop_for(self.store, self.egress, candidate, termination)
        if not termination.reason.hand_off or skip:  # no stage runs: one hop for the attempt and its outcome
            return await hop(Attempt.unverified, candidate, termination, records, judge_engine, skip)
        timeout_s = self.config.hooks.timeout_s
        telemetry = self._telemetry
        early: asyncio.Future[StageResult] | None = None
        if self._structural_own and hop is off_loop:
            # verigate's own checks read the text and tool calls only (not the attempt): they run on the loop
            # while the worker thread settles the attempt, in the turn the loop would otherwise wait
            early = asyncio.ensure_future(telemetry.stage("structural_check", self._structural, run_structural(
                self._structural, {"candidate": candidate, "termination": termination, "context": context},
                timeout_s)))
        try:
            run = await hop(Attempt.begin, candidate, termination, records, judge_engine)
        except BaseException:
            if early is not None:
                early.cancel()
            raise
        candidate, attempt = run.candidate, run.number

        view = read_only(candidate) if self._needs_view else candidate
        structural = await early if early is not None else await telemetry.stage(
            "structural_check", self._structural, run_structural(
                self._structural, {"candidate": view, "termination": termination, "context": context}, timeout_s))
        pre_verify = await telemetry.stage("pre_verify", self._pre_verify, run_stage(
            "pre_verify", self._pre_verify, {"candidate": view, "context": context}, timeout_s))
        strengthen = unite_strengthen(pre_verify.decisions)
        findings = tuple(structural.decisions)
        judge_verdict = judgment = None
        if not judge_is_skipped(findings, hook_error=structural.error or pre_verify.error):
            judgment = await judge_candidate(self.judge, self.config.judge, run.redacted, strengthen, deadline,
                                             egress, self.judge_cache)
            judge_verdict = judgment.verdict
        verdict = combine_verdict(findings, strengthen, judge_verdict)
        post_verify = await telemetry.stage("post_verify", self._post_verify, run_stage(
            "post_verify", self._post_verify, {"candidate": view, "verdict": verdict, "context": context}, timeout_s))
        policy_input = PolicyInput(
            structural_findings=findings,
            strengthen=strengthen,
            judge_verdict=judge_verdict,
            post_decisions=post_verify.decisions,
            structural_error=structural.error,
            pre_verify_error=pre_verify.error,
            post_verify_error=post_verify.error,
            attempt=attempt,
            budget=self.config.budget.revise,
        )
        # what Stop handlers are shown; without any, nothing reads it (and the decision needs no Stop fields)
        shown_action = post_verify_action(policy_input, verdict)[0] if self._stop else ""
        stop = await telemetry.stage("stop", self._stop, run_stage(
            "stop", self._stop, {"candidate": view, "verdict": verdict, "action": shown_action, "context": context},
            timeout_s))
        if stop.decisions or stop.error:
            policy_input = attrs.evolve(policy_input, stop_directives=stop.decisions, stop_error=stop.error)
        decision = decide(policy_input)
        log.info("finalize %s attempt %d: %s -> %s%s", candidate.session_id, attempt, decision.action,
                 decision.outcome, f" ({decision.reason})" if decision.reason else "")
        hook_records = pre_verify.records + post_verify.records + stop.records
        judged = Judged(decision, findings, strengthen, hook_records, judge_called=judge_verdict is not None,
                        judgment=judgment)
        return await conclusion_hop(hop, attempt, judged)(run.conclude, judged)


def _checked_context(context: object) -> StageContext:
    if not isinstance(context, StageContext):
        raise InputError(f"context must be a StageContext, got {type(context).__name__}", field="context")
    return context


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
