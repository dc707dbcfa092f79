"""Telemetry: what the gate and the trace grader tell the observers installed plug-ins provide.

The core imports no tracing library. A plug-in implements the hook ``verigate_observer`` and returns an
:class:`Observer`; ``verigate-agents-otel`` (``plugins/verigate-otel``) turns what it is told into OpenTelemetry
spans and the GenAI evaluation event. :func:`telemetry_of` asks the hook once per plug-in manager, when a gate (or a
``grade_many`` call) is built; without an observer it returns :data:`NULL`, whose ``finalize``/``stage`` hand the
awaitable back unchanged and whose ``span`` is one shared no-op scope, so a finalize pays no span, no allocation
and no look-up per call.

What an observer is told is codes, counts and names of configuration — never candidate, request, tool or judge
text. The one exception is the judge call's content, handed over only when the observer asks for it
(``capture_content`` true) and only after the gate's redactors ran on it (:mod:`verigate.judge._observed`).

An observer is plug-in code: whatever it raises (``BaseException`` included) is contained here and logged, and a
telemetry failure never changes a decision, a record or a report. ``contain`` is imported where it is used: the gate
package imports this module, so importing ``verigate.gate`` from here at import time would be a cycle.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from ._logging import get_logger

if TYPE_CHECKING:
    from ._models import FinalizeResult, Termination
    from ._plugins import Handler, PluginManager

__all__ = [
    "CHAT",
    "FINALIZE",
    "GRADE_MANY",
    "GRADE_SOURCE",
    "KINDS",
    "NULL",
    "STAGE",
    "AttributeValue",
    "ObservedSpan",
    "Observer",
    "Scope",
    "Telemetry",
    "code",
    "error_code",
    "finalize_attributes",
    "telemetry_of",
]

log = get_logger("verigate.telemetry")

AttributeValue = str | bool | int | float | tuple[str, ...]
_T = TypeVar("_T")

#: one finalize. Start: ``termination``. End: ``outcome``, ``policy_action``, ``attempt``, ``passed``, and when
#: known ``engine``, ``reason`` (a code, see :func:`finalize_attributes`), ``score``
FINALIZE = "finalize"
#: one decision stage. Start: ``stage`` (structural_check, pre_verify, post_verify, stop), ``handlers`` (their
#: plug-in names). End: ``decisions`` (how many valid ones), ``hook_error`` (a handler failed)
STAGE = "stage"
#: one model call of the judge. Start: ``provider`` (``judge.client``), ``model``, ``max_output_tokens``,
#: ``server_address``/``server_port`` when configured. End, when the client reported them: ``input_tokens``,
#: ``output_tokens``, ``response_model``, ``response_id``, ``finish_reason``; with ``capture_content`` the redacted
#: ``system``, ``user`` and ``reply`` texts
CHAT = "chat"
#: one ``grade_many`` call. Start: ``sources`` (how many), ``executor`` (its class name, "" when sequential).
#: End: ``runs``, ``failed_runs`` (fail or corrupt-success)
GRADE_MANY = "grade_many"
#: one source of a ``grade_many`` call (its path is not told: it may name a person). Start: ``index``, ``format``
#: when given. End: ``runs``
GRADE_SOURCE = "grade_source"
KINDS = (FINALIZE, STAGE, CHAT, GRADE_MANY, GRADE_SOURCE)

#: what a code looks like; anything else (free text, a long string) is never handed on as one
_CODE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/@+-]{0,99}")


@runtime_checkable
class ObservedSpan(Protocol):
    """One span an observer started; ended exactly once."""

    def end(self, attributes: Mapping[str, AttributeValue], error: str | None) -> None:
        """The end attributes of its kind, and the error code (an exception's, a reason code) or None."""


@runtime_checkable
class Observer(Protocol):
    """What a ``verigate_observer`` implementation returns.

    ``start`` is called at the start of every operation of :data:`KINDS`; ``current`` true means the operation runs
    inside the span (what starts meanwhile in the same task is its child: make it the current span), false means
    it runs elsewhere (a source graded by an executor) and the span is only a record. An optional attribute
    ``capture_content`` (read once, when the gate is built) asks for the judge call's redacted content.
    """

    def start(self, kind: str, attributes: Mapping[str, AttributeValue], *, current: bool) -> ObservedSpan: ...


def code(value: object) -> str | None:
    """``value`` when it is a code (``judge_timeout``, ``escalate_hook_error``); None for anything else."""
    return value if isinstance(value, str) and _CODE.fullmatch(value) else None


def error_code(exc: BaseException) -> str:
    """What an exception is, as a code: a JudgeError's reason code, else the class name (never its message)."""
    return code(getattr(exc, "reason", None)) or type(exc).__name__


def _reason(result: FinalizeResult) -> str | None:
    """The reason code of a decision: the verification error, the unfixable finding, or what the policy action
    says (Decision.reason is text a hook may have written: it is never handed on)."""
    verdict = result.verdict
    if verdict is not None and verdict.error is not None:
        return code(verdict.error) or "verification_error"
    action = result.policy_action
    if action == "escalate_unfixable_structural":
        unfixable = [finding.code for finding in result.structural_findings if not finding.fixable]
        return code(unfixable[0]) if unfixable else action
    if action.startswith("escalate"):
        return action
    return None


def finalize_attributes(result: FinalizeResult) -> dict[str, AttributeValue]:
    """The end attributes of a finalize span, codes only."""
    verdict = result.verdict
    attributes: dict[str, AttributeValue] = {
        "outcome": result.outcome,
        "policy_action": result.policy_action,
        "attempt": result.attempt,
        "passed": bool(verdict is not None and verdict.passed),
    }
    engine = code(verdict.engine) if verdict is not None else None
    if engine:
        attributes["engine"] = engine
    reason = _reason(result)
    if reason:
        attributes["reason"] = reason
    if verdict is not None and verdict.score is not None:
        attributes["score"] = float(verdict.score)
    return attributes


def _guarded(what: str, call: Callable[..., _T], *args: Any, **kwargs: Any) -> _T | None:
    """Call into an observer; what it raises is contained (the gate's containment rules) and logged."""
    try:
        return call(*args, **kwargs)
    except BaseException as exc:  # an observer's bug: telemetry never changes a decision
        from .gate._containment import contain

        log.warning("telemetry observer failed in %s: %s", what, contain(exc))
        return None


class Scope:
    """One operation told to every observer: started on ``__enter__`` (or :meth:`start`), ended once."""

    __slots__ = ("_attributes", "_current", "_end", "_kind", "_lock", "_observers", "_spans", "error")

    def __init__(self, observers: Sequence[Observer], kind: str, attributes: Mapping[str, AttributeValue],
                 current: bool) -> None:
        self._observers = observers
        self._kind = kind
        self._attributes = attributes
        self._current = current
        self._end: dict[str, AttributeValue | None] = {}
        self._spans: list[ObservedSpan] | None = None
        self._lock = threading.Lock()
        #: the error code to report at the end (set by :meth:`fail`, else taken from the exception)
        self.error: str | None = None

    def start(self) -> Scope:
        spans = []
        for observer in self._observers:
            span = _guarded(f"start({self._kind})", observer.start, self._kind, dict(self._attributes),
                            current=self._current)
            if span is not None:
                spans.append(span)
        self._spans = spans
        return self

    def set(self, **attributes: AttributeValue | None) -> None:
        """End attributes (None leaves one out)."""
        self._end.update(attributes)

    def fail(self, error: str) -> None:
        self.error = code(error) or "error"

    def finish(self, exc: BaseException | None = None) -> None:
        """End the spans (once; later calls do nothing)."""
        with self._lock:
            spans, self._spans = self._spans, []
        if not spans:
            return
        error = self.error or (error_code(exc) if exc is not None else None)
        attributes = {key: value for key, value in self._end.items() if value is not None}
        for span in spans:
            _guarded(f"end({self._kind})", span.end, attributes, error)

    def __enter__(self) -> Scope:
        return self.start()

    def __exit__(self, exc_type: object, exc: BaseException | None, tb: object) -> None:
        self.finish(exc)  # returns None: an exception of the operation always propagates


class _NullScope(Scope):
    """The scope of :data:`NULL`: nothing is started or kept."""

    __slots__ = ()

    def __init__(self) -> None:
        pass

    def start(self) -> Scope:
        return self

    def set(self, **attributes: AttributeValue | None) -> None:
        pass

    def fail(self, error: str) -> None:
        pass

    def finish(self, exc: BaseException | None = None) -> None:
        pass

    def __exit__(self, exc_type: object, exc: BaseException | None, tb: object) -> None:
        pass


_NULL_SCOPE = _NullScope()


class Telemetry:
    """The observers of one plug-in manager (:func:`telemetry_of`); :data:`NULL` when there are none."""

    def __init__(self, observers: Sequence[Observer]) -> None:
        self.observers = tuple(observers)
        self.enabled = bool(self.observers)
        #: some observer asked for the judge call's (redacted) content
        self.capture_content = any(getattr(observer, "capture_content", False) is True for observer in observers)

    def span(self, kind: str, attributes: Mapping[str, AttributeValue] | None = None, *,
             current: bool = True) -> Scope:
        """A scope for one operation (``with telemetry.span(...) as scope``; or ``.start()`` / ``.finish()``)."""
        if not self.enabled:
            return _NULL_SCOPE
        return Scope(self.observers, kind, attributes or {}, current)

    def finalize(self, run: Awaitable[FinalizeResult], termination: Termination) -> Awaitable[FinalizeResult]:
        """``run`` (a finalize) inside a finalize span; ``run`` itself without observers."""
        if not self.enabled:
            return run
        return self._finalize(run, termination)

    async def _finalize(self, run: Awaitable[FinalizeResult], termination: Termination) -> FinalizeResult:
        with self.span(FINALIZE, {"termination": termination.reason.value}) as scope:
            result = await run
            scope.set(**finalize_attributes(result))
            return result

    def stage(self, stage: str, handlers: Sequence[Handler], run: Awaitable[_T]) -> Awaitable[_T]:
        """``run`` (one decision stage, returning a StageResult) inside a stage span; ``run`` itself without
        observers."""
        if not self.enabled:
            return run
        return self._stage(stage, handlers, run)

    async def _stage(self, stage: str, handlers: Sequence[Handler], run: Awaitable[_T]) -> _T:
        names = tuple(name for name in (code(handler.name) for handler in handlers) if name)
        with self.span(STAGE, {"stage": stage, "handlers": names}) as scope:
            result = await run
            error = bool(getattr(result, "error", False))
            scope.set(decisions=len(getattr(result, "decisions", ())), hook_error=error)
            if error:
                scope.fail("hook_error")
            return result


NULL = Telemetry(())
_BY_MANAGER: weakref.WeakKeyDictionary[PluginManager, Telemetry] = weakref.WeakKeyDictionary()


def telemetry_of(manager: PluginManager) -> Telemetry:
    """The observers the plug-ins of ``manager`` provide (asked once per manager); :data:`NULL` without any.

    An implementation that raises or returns something without ``start`` is logged and left out: telemetry never
    stops a gate from being built."""
    found = _BY_MANAGER.get(manager)
    if found is not None:
        return found
    observers: list[Observer] = []
    hook = getattr(manager.hook, "verigate_observer", None)
    for impl in hook.get_hookimpls() if hook is not None else ():
        observer = _guarded(f"verigate_observer of {impl.plugin_name}", impl.function)
        if observer is None:
            continue
        if not callable(getattr(observer, "start", None)):
            log.warning("plug-in %s: verigate_observer returned %s, which has no start(); ignored",
                        impl.plugin_name, type(observer).__name__)
            continue
        observers.append(observer)
    telemetry = Telemetry(observers) if observers else NULL
    _BY_MANAGER[manager] = telemetry
    return telemetry
