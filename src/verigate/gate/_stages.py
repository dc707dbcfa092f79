"""Running the decision stages: each handler in order, under a timeout, on read-only data, checked strictly."""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import attrs

from .._logging import get_logger
from .._models import (
    Candidate,
    HookRecord,
    PostDecision,
    StopDirective,
    Strengthen,
    StructuralFinding,
    ToolObservation,
)
from .._plugins import Handler
from ..judge._clients import in_daemon_thread
from ._builtin import verigate_structural_check
from ._containment import contain

__all__ = ["STRUCTURAL_CHECK_ERROR", "StageResult", "is_own_bounded", "read_only", "run_stage", "run_structural"]

log = get_logger("verigate.gate")
HookSurface = Literal["pre_verify", "post_verify", "stop"]
Surface = Literal["structural_check", HookSurface]
#: the finding a structural check that raised, timed out or returned garbage leaves behind (unfixable)
STRUCTURAL_CHECK_ERROR = "structural_check_error"


@attrs.frozen
class StageResult:
    """What one stage produced: valid decisions in handler order, one record per handler, and whether any
    handler failed (raised, timed out, or returned a value not allowed for the stage)."""

    decisions: tuple[Any, ...] = ()
    records: tuple[HookRecord, ...] = ()
    error: bool = False


class FrozenDict(dict[str, Any]):
    """A dict that refuses every change: handlers get plain-looking data (``json.dumps`` works) they cannot
    alter for the handlers after them."""

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("hook data is read-only")

    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse


def _frozen(value: Any) -> Any:
    if isinstance(value, Mapping):
        return FrozenDict({key: _frozen(item) for key, item in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(item) for item in value)
    if isinstance(value, (set, frozenset)):
        return frozenset(_frozen(item) for item in value)
    return value


def read_only(candidate: Candidate) -> Candidate:
    """A copy of the candidate whose mappings cannot be changed by a handler.

    The models' converters copy mappings into plain dicts, so the read-only views are put in place after
    construction (the instances are frozen; only this module does it, on a copy)."""
    calls = []
    for call in candidate.tool_calls:
        frozen_call = ToolObservation(call.name, {}, call.output, call.ok)
        object.__setattr__(frozen_call, "input", _frozen(call.input))
        calls.append(frozen_call)
    copy = attrs.evolve(candidate, tool_calls=tuple(calls))
    object.__setattr__(copy, "usage", _frozen(candidate.usage))
    return copy


def is_own_bounded(function: Callable[..., Any]) -> bool:
    """verigate's own stage handlers that never await and only read: bounded regular-expression checks.

    They are recognised by identity (a plug-in cannot claim it): such a handler gets the data itself instead of
    a read-only copy and runs without a timeout, which could not interrupt it anyway (it never yields)."""
    return function is verigate_structural_check


async def _call(handler: Handler, arguments: Mapping[str, Any], timeout_s: float) -> Any:
    """Call one handler; async handlers on the loop, sync ones in a worker thread, both under the timeout.

    A sync handler that ignores the timeout keeps its (daemon) thread until it returns; nothing waits for it,
    not even ``asyncio.run`` at exit."""
    # as pluggy would call it: with the arguments it declares (an implementation may take a subset of its spec's)
    kwargs = {name: arguments[name] for name in handler.argnames if name in arguments}
    if is_own_bounded(handler.function):
        return await handler.function(**kwargs)
    async with asyncio.timeout(timeout_s):
        if inspect.iscoroutinefunction(handler.function):
            return await handler.function(**kwargs)
        result = await in_daemon_thread(functools.partial(handler.function, **kwargs))
        if inspect.isawaitable(result):
            return await result
        return result


def _codes(values: Sequence[Any]) -> bool:
    return all(isinstance(value, str) and value.strip() for value in values)


def _check_structural(value: Any) -> tuple[list[StructuralFinding], str]:
    if value is None:
        return [], ""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        return [], f"expected a list of StructuralFinding, got {type(value).__name__}"
    for finding in value:
        if not isinstance(finding, StructuralFinding):
            return [], f"expected StructuralFinding, got {type(finding).__name__}"
        if not (isinstance(finding.code, str) and finding.code.strip() and isinstance(finding.fixable, bool)):
            return [], "a StructuralFinding needs a non-empty str code and a bool fixable"
    return list(value), ""


def _check_pre_verify(value: Any) -> tuple[list[Strengthen], str]:
    if value is None:
        return [], ""
    if not isinstance(value, Strengthen):
        return [], f"PreVerify may only strengthen: expected Strengthen or None, got {type(value).__name__}"
    if not (_codes(value.additional_misses) and _codes(value.requirements)):
        return [], "Strengthen needs non-empty str missing codes and requirements"
    return [value], ""


def _check_post_verify(value: Any) -> tuple[list[PostDecision], str]:
    if value is None:
        return [], ""
    if not isinstance(value, PostDecision):
        return [], f"expected PostDecision or None, got {type(value).__name__}"
    action: object = value.action  # the Literal type is not enforced at run time
    if action not in ("accept", "revise", "escalate"):
        return [], f"unknown PostVerify action {action!r}"
    instruction: object = value.instruction
    reason: object = value.reason
    if not (isinstance(instruction, str) and isinstance(reason, str)):
        return [], "instruction and reason must be str"
    if action == "revise" and not instruction.strip():
        return [], "revise needs a non-empty instruction"
    return [value], ""


def _check_stop(value: Any) -> tuple[list[StopDirective], str]:
    if value is None:
        return [], ""
    if not isinstance(value, StopDirective):
        return [], f"expected StopDirective or None, got {type(value).__name__}"
    action: object = value.action  # the Literal type is not enforced at run time
    instruction: object = value.instruction
    if action not in ("finalize", "continue") or not isinstance(instruction, str):
        return [], f"unknown Stop action {action!r} or a non-str instruction"
    if action == "continue" and not instruction.strip():
        return [], "continue needs a non-empty instruction"
    return [value], ""


_CHECKS: dict[str, Callable[[Any], tuple[list[Any], str]]] = {
    "structural_check": _check_structural,
    "pre_verify": _check_pre_verify,
    "post_verify": _check_post_verify,
    "stop": _check_stop,
}


def _record(surface: HookSurface, handler: str, decision: Any) -> HookRecord:
    """The log line of one valid decision: never an instruction itself, only its hash and length."""
    if decision is None:
        return HookRecord.of(surface, handler, "continue" if surface == "pre_verify" else "none")
    if isinstance(decision, Strengthen):
        return HookRecord.of(surface, handler, "strengthen", reason=",".join(decision.additional_misses),
                             instruction="\n".join(decision.requirements))
    if isinstance(decision, PostDecision):
        return HookRecord.of(surface, handler, decision.action, instruction=decision.instruction,
                             reason=decision.reason)
    return HookRecord.of(surface, handler, decision.action, instruction=decision.instruction)


async def _outcome(surface: Surface, handler: Handler, arguments: Mapping[str, Any],
                   timeout_s: float) -> tuple[list[Any], str, str]:
    """(valid decisions, failure kind, failure message) of one handler call."""
    try:
        value = await _call(handler, arguments, timeout_s)
    except TimeoutError:
        return [], "timeout", f"timed out after {timeout_s:g} s"
    except BaseException as exc:  # a handler's bug (SystemExit included) must escalate, never pass or unwind
        return [], "error", contain(exc)
    accepted, problem = _CHECKS[surface](value)
    if problem:
        return [], "invalid", f"invalid decision: {problem}"
    return accepted, "", ""


async def run_structural(
    handlers: Sequence[Handler], arguments: Mapping[str, Any], timeout_s: float
) -> StageResult:
    """The structural checks; a failing check becomes an unfixable ``structural_check_error`` finding (HookRecord
    has no structural surface: the finding is the record)."""
    findings: list[StructuralFinding] = []
    error = False
    for handler in handlers:
        accepted, kind, message = await _outcome("structural_check", handler, arguments, timeout_s)
        if kind:
            error = True
            findings.append(StructuralFinding(STRUCTURAL_CHECK_ERROR, fixable=False,
                                              message=f"{handler.name}: {kind}: {message}"))
            log.warning("structural check %s failed: %s: %s", handler.name, kind, message)
        findings.extend(accepted)
    return StageResult(tuple(findings), (), error)


async def run_stage(
    surface: HookSurface, handlers: Sequence[Handler], arguments: Mapping[str, Any], timeout_s: float
) -> StageResult:
    """Run every handler of a hook stage in order; every decision (and every failure) becomes a HookRecord."""
    decisions: list[Any] = []
    records: list[HookRecord] = []
    for handler in handlers:
        accepted, kind, message = await _outcome(surface, handler, arguments, timeout_s)
        if kind:
            record = HookRecord.of(surface, handler.name, kind, error=message)
        else:
            decisions.extend(accepted)
            record = _record(surface, handler.name, accepted[0] if accepted else None)
        records.append(record)
        log.info("hook %s %s: %s%s", surface, handler.name, record.action, f" ({message})" if kind else "")
    return StageResult(tuple(decisions), tuple(records), any(record.error for record in records))
