"""The judge call: one call, no tools, bounded by the judge timeout and the run's deadline; every failure is a
``verification_error`` verdict with its reason code, never a pass."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable

import attrs

from .._errors import JudgeError
from .._logging import get_logger
from .._models import Strengthen, Verdict
from ..judge._base import JudgeConfig, JudgeEngine, JudgeRequest
from ..redact._egress import Egress
from ._containment import contain
from ._redaction import Redacted

__all__ = ["call_judge"]

log = get_logger("verigate.gate")


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


async def _prepare(judge: JudgeEngine, engine: str, deadline: float | None) -> Verdict | None:
    """Let the engine load what its call needs (a model client's SDK, imported at the first call: seconds on a cold
    start) before the judge timeout starts: that timeout is for the model's answer. The run's deadline still bounds
    it. None when ready; else the verification_error verdict (never a pass)."""
    prepare = getattr(judge, "prepare", None)
    if prepare is None:
        return None
    remaining = None if deadline is None else deadline - time.monotonic()
    if remaining is not None and remaining <= 0:
        return Verdict.verification_error("verification_time_budget_exhausted", engine=engine)
    try:
        async with asyncio.timeout(remaining):
            await prepare()
    except TimeoutError:
        return Verdict.verification_error("verification_time_budget_exhausted", engine=engine)
    except JudgeError as exc:
        return Verdict.verification_error(exc.reason, engine=engine)
    except BaseException as exc:  # an engine's bug (SystemExit included) is an unusable judgment, never a pass
        log.error("judge engine %s failed to prepare: %s", engine, contain(exc))
        return Verdict.verification_error("judge_error", engine=engine)
    return None


async def call_judge(judge: JudgeEngine | None, config: JudgeConfig | None, redacted: Redacted,
                     strengthen: Strengthen, deadline: float | None, egress: Egress) -> Verdict:
    """One judge call, no tools, under min(judge timeout ≤ 120 s, remaining deadline); every failure is a
    verification_error verdict with its reason code."""
    if judge is None or config is None:
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
    prepared = await _prepare(judge, engine, deadline)
    if prepared is not None:
        return prepared
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
            verdict: object = await judge.judge(request, timeout_s=timeout_s)
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
