"""The judge call: one call per judge, no tools, bounded by the judge timeout and the run's deadline; every failure
is a ``verification_error`` verdict with its reason code, never a pass.

An ensemble (``judge.ensemble``) calls every member concurrently under that same one timeout (each member's own
``timeout_s`` caps it further) and merges their verdicts by the unanimous rule (``_ensemble``). The judge-call cache
(``judge.cache``, ``_judge_cache``) is consulted per member before any call; what a fresh call returned cleanly is
handed back for the records to store."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine, Iterable, Mapping, Sequence
from typing import Any, ClassVar, TypeVar

import attrs

from .._errors import JudgeError, StoreError
from .._logging import get_logger
from .._models import Strengthen, Verdict
from ..judge._base import JudgeConfig, JudgeEngine, JudgeRequest
from ..redact._egress import Egress
from ._containment import contain
from ._ensemble import ENSEMBLE_ENGINE, merge_unanimous
from ._judge_cache import CacheEntry, JudgeCache, cache_key, entry_of
from ._redaction import Redacted

__all__ = ["Ensemble", "Judgment", "MemberJudgment", "call_judge", "judge_candidate", "prepare_judge"]

log = get_logger("verigate.gate")
_T = TypeVar("_T")


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


class Ensemble:
    """The engine of ``judge.ensemble``: its members, each an engine over its own section, judged concurrently
    under one timeout and merged by the unanimous rule. The gate calls it through :func:`judge_candidate` (which
    records each member's verdict); :meth:`judge` is the same judgment for callers that want only the verdict."""

    name: ClassVar[str] = ENSEMBLE_ENGINE

    def __init__(self, members: Sequence[tuple[JudgeConfig, JudgeEngine]], *, mode: str = "unanimous") -> None:
        self.members = tuple(members)
        self.mode = mode

    async def judge(self, request: JudgeRequest, *, timeout_s: float) -> Verdict:
        personal = request.candidate.contains_personal_data is not False
        verdicts = await _judge_members(self.members, request, personal, timeout_s,
                                        time.monotonic() + timeout_s, {})
        return merge_unanimous([verdicts[index] for index in range(len(self.members))])


@attrs.frozen
class MemberJudgment:
    """One judge's verdict in a judgment, and whether it came from the cache."""

    config: JudgeConfig
    verdict: Verdict
    cached: bool = False


@attrs.frozen
class Judgment:
    """What the judge stage concluded: the verdict the policy reads, and how it came about."""

    verdict: Verdict
    members: tuple[MemberJudgment, ...] = ()
    ensemble: bool = False
    cache_on: bool = False
    #: fresh clean verdicts to store in ``cache`` with the decision's records
    to_cache: tuple[CacheEntry, ...] = ()
    cache: JudgeCache | None = attrs.field(default=None, eq=False, repr=False)

    def record(self) -> dict[str, Any]:
        """The fields the decision's ledger and evidence rows gain (none for one uncached judge)."""
        fields: dict[str, Any] = {}
        if self.cache_on:
            fields["judge_cached"] = bool(self.members) and all(member.cached for member in self.members)
        if self.ensemble:
            fields["judge_mode"] = "unanimous"
            fields["judge_members"] = [{
                "engine": member.config.engine, "model": member.config.model,
                "effective_engine": member.verdict.effective_engine, "passed": member.verdict.passed,
                "rubric_misses": list(member.verdict.rubric_misses), "score": member.verdict.score,
                "error": member.verdict.error, "cached": member.cached,
            } for member in self.members]
        return fields


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
        if remaining is None:  # no deadline: nothing to time out (a timeout scope costs a few µs a finalize)
            await prepare()
        else:
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


async def _call(judge: JudgeEngine, engine: str, request: JudgeRequest, timeout_s: float,
                bounded_by_deadline: bool) -> Verdict:
    """One engine's judgment under ``timeout_s``; every failure mapped to its verification_error."""
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


async def _all(calls: Iterable[Coroutine[Any, Any, _T]]) -> list[_T]:
    """The results of ``calls``, run concurrently; one call (a single judge) is awaited as it is: a task per
    call would cost a turn of the event loop each (≈ 20–50 µs on a loaded machine, twice per finalize), and the
    stage handlers are awaited the same way. ``_prepare`` and ``_call`` never raise but for the caller's own
    cancellation, which propagates alike either way."""
    pending = list(calls)
    if len(pending) == 1:
        return [await pending[0]]
    return list(await asyncio.gather(*pending))


def _refused(config: JudgeConfig, personal: bool) -> Verdict | None:
    """An auxiliary judge never receives a candidate that may hold personal data."""
    if personal and config.trust == "auxiliary":
        return Verdict.verification_error("personal_data_omitted", engine=config.engine)
    return None


async def _judge_members(members: Sequence[tuple[JudgeConfig, JudgeEngine]], request: JudgeRequest,
                         personal: bool, judge_timeout_s: float, deadline: float | None,
                         known: Mapping[int, Verdict]) -> dict[int, Verdict]:
    """Every member's verdict by index (``known`` ones — cached or refused — as given): all members prepare
    concurrently, then all judge concurrently within ONE window of ``judge_timeout_s`` (bounded by the deadline),
    each further capped by its own timeout."""
    verdicts = dict(known)
    pending = [index for index in range(len(members)) if index not in verdicts]
    for index in list(pending):
        refused = _refused(members[index][0], personal)
        if refused is not None:
            verdicts[index] = refused
            pending.remove(index)
    prepared = await _all(_prepare(members[i][1], members[i][0].engine, deadline) for i in pending)
    for index, failed in zip(pending, prepared, strict=True):
        if failed is not None:
            verdicts[index] = failed
    pending = [index for index in pending if index not in verdicts]
    if not pending:
        return verdicts
    window, window_from_deadline = judge_timeout_s, False
    if deadline is not None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            for index in pending:
                verdicts[index] = Verdict.verification_error("verification_time_budget_exhausted",
                                                             engine=members[index][0].engine)
            return verdicts
        if remaining < window:
            window, window_from_deadline = remaining, True
    calls = []
    for index in pending:
        config, engine = members[index]
        timeout_s, bounded = config.effective_timeout_s, False
        if window < timeout_s:
            timeout_s, bounded = window, window_from_deadline
        calls.append(_call(engine, config.engine, request, timeout_s, bounded))
    for index, verdict in zip(pending, await _all(calls), strict=True):
        verdicts[index] = verdict
    return verdicts


def _cache_keys(cache: JudgeCache | None, members: Sequence[tuple[JudgeConfig, JudgeEngine]],
                request: JudgeRequest, personal: bool) -> dict[int, str]:
    if cache is None:
        return {}
    keys: dict[int, str] = {}
    for index, (config, engine) in enumerate(members):
        if _refused(config, personal) is not None:
            continue
        try:
            keys[index] = cache_key(request, config, engine)
        except StoreError as exc:  # an option that is not JSON: this member is judged, not cached
            log.warning("judge cache: no key for %s (%s); judging without the cache", config.engine, exc)
    return keys


async def prepare_judge(judge: JudgeEngine | Ensemble, config: JudgeConfig, deadline: float | None) -> None:
    """Let every engine (each member of an ensemble) load what its calls need, before any call is timed; a failure
    is not raised here: each call then prepares itself again and fails as a verification error."""
    members = judge.members if isinstance(judge, Ensemble) else ((config, judge),)
    await asyncio.gather(*(_prepare(engine, member.engine, deadline) for member, engine in members))


async def judge_candidate(judge: JudgeEngine | Ensemble | None, config: JudgeConfig | None, redacted: Redacted,
                          strengthen: Strengthen, deadline: float | None, egress: Egress,
                          cache: JudgeCache | None = None) -> Judgment:
    """The judge stage: one judge (or every ensemble member) under min(judge timeout ≤ 120 s, remaining deadline),
    the cache consulted first when it is on; every failure is a verification_error verdict with its reason code."""
    if judge is None or config is None:
        return Judgment(Verdict.verification_error("judge_unavailable"))
    ensemble = isinstance(judge, Ensemble)
    members = judge.members if isinstance(judge, Ensemble) else ((config, judge),)
    label = ENSEMBLE_ENGINE if ensemble else config.engine
    cache_on = cache is not None

    def failed(reason: str) -> Judgment:
        return Judgment(Verdict.verification_error(reason, engine=label), ensemble=ensemble, cache_on=cache_on)

    if redacted.error is not None:
        return failed("redaction_error")
    try:
        extra = [egress.text(text) for text in strengthen.requirements]
        known_misses = tuple(egress.text(code).text for code in strengthen.additional_misses)
    except BaseException as exc:  # a redactor failed on a hook's requirement
        contain(exc)
        log.error("redaction of PreVerify requirements failed: %s", type(exc).__name__)
        return failed("redaction_error")
    personal = redacted.personal_data or any(result.personal_data for result in extra)
    if not ensemble and _refused(config, personal) is not None:
        return failed("personal_data_omitted")
    sent = redacted.candidate
    if sent.contains_personal_data is not personal:  # a copy only when the flag changes (its converters run)
        sent = attrs.evolve(sent, contains_personal_data=personal)
    request = JudgeRequest(
        # the flag is settled: engines refuse an unknown one for an auxiliary judge
        candidate=sent,
        requirements=_unique([*redacted.candidate.requirements, *(result.text for result in extra)]),
        known_misses=known_misses,
    )
    keys = _cache_keys(cache, members, request, personal)
    hits: dict[int, Verdict] = {}
    if cache is not None and keys and (deadline is None or deadline > time.monotonic()):
        hits = await asyncio.to_thread(cache.read, keys, {index: members[index][0].engine for index in keys})
    verdicts = await _judge_members(members, request, personal, config.effective_timeout_s, deadline, hits)
    judged = tuple(MemberJudgment(members[index][0], verdicts[index], cached=index in hits)
                   for index in range(len(members)))
    to_cache = []
    for index, key in keys.items():
        entry = None if index in hits else entry_of(key, verdicts[index])
        if entry is not None:
            to_cache.append(CacheEntry(key, entry))
    verdict = merge_unanimous([member.verdict for member in judged]) if ensemble else judged[0].verdict
    return Judgment(verdict, judged, ensemble=ensemble, cache_on=cache_on, to_cache=tuple(to_cache), cache=cache)


async def call_judge(judge: JudgeEngine | Ensemble | None, config: JudgeConfig | None, redacted: Redacted,
                     strengthen: Strengthen, deadline: float | None, egress: Egress,
                     cache: JudgeCache | None = None) -> Verdict:
    """One judge call, no tools, under min(judge timeout ≤ 120 s, remaining deadline); every failure is a
    verification_error verdict with its reason code (:func:`judge_candidate`'s verdict)."""
    return (await judge_candidate(judge, config, redacted, strengthen, deadline, egress, cache)).verdict
