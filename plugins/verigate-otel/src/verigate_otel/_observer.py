"""What verigate tells an observer, as OpenTelemetry spans (GenAI semantic conventions) and the evaluation event.

``opentelemetry`` is imported only once something in the process uses it: a process in which nothing imported
``opentelemetry.trace`` (and no ``OTEL_PYTHON_TRACER_PROVIDER`` names one to load) has no SDK configured, so every
span would be the no-op one — there the observer hands out its own no-op span and never pays the API's import
(about 50 ms, on every Stop hook process). It looks again at every span (one dictionary look-up), so an
application that configures the SDK after building the gate is traced from then on.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer, TracerProvider

__all__ = ["CAPTURE_ENV", "EVALUATION_EVENT", "EVALUATION_NAME", "EVENT_ENV", "OtelObserver", "capture_from_env"]

#: the GenAI instrumentations' switch for message content (off unless set to a true value)
CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
#: where the evaluation event goes: ``span`` (default, a span event on verigate.finalize) or ``log`` (a log-based
#: event through the Logs API, in the finalize span's context)
EVENT_ENV = "VERIGATE_OTEL_EVALUATION_EVENT"
EVALUATION_EVENT = "gen_ai.evaluation.result"
#: gen_ai.evaluation.name of the gate's decision
EVALUATION_NAME = "verigate.verification"
_SCOPE = "verigate"
_TRUE = frozenset({"1", "true", "yes", "on", "span_only", "span_and_event"})

#: core attribute name -> OpenTelemetry attribute name, per kind
_FINALIZE = {"termination": "verigate.termination", "outcome": "verigate.outcome",
             "policy_action": "verigate.policy_action", "attempt": "verigate.attempt", "passed": "verigate.passed",
             "engine": "verigate.engine", "reason": "verigate.reason", "score": "verigate.score"}
_STAGE = {"stage": "verigate.stage", "handlers": "verigate.stage.handlers", "decisions": "verigate.stage.decisions",
          "hook_error": "verigate.stage.hook_error"}
_CHAT = {"provider": "gen_ai.provider.name", "model": "gen_ai.request.model",
         "max_output_tokens": "gen_ai.request.max_tokens", "server_address": "server.address",
         "server_port": "server.port", "input_tokens": "gen_ai.usage.input_tokens",
         "output_tokens": "gen_ai.usage.output_tokens", "response_model": "gen_ai.response.model",
         "response_id": "gen_ai.response.id"}
_GRADE = {"sources": "verigate.grade.sources", "executor": "verigate.grade.executor", "runs": "verigate.grade.runs",
          "failed_runs": "verigate.grade.failed_runs", "index": "verigate.grade.source_index",
          "format": "verigate.grade.format"}
_NAMES = {"finalize": _FINALIZE, "stage": _STAGE, "chat": _CHAT, "grade_many": _GRADE, "grade_source": _GRADE}


def capture_from_env() -> bool:
    """``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` says to capture (true, 1, span_only …)."""
    return os.environ.get(CAPTURE_ENV, "").strip().lower() in _TRUE


def _event_from_env() -> Literal["span", "log"]:
    return "log" if os.environ.get(EVENT_ENV, "").strip().lower() == "log" else "span"


def _mapped(kind: str, attributes: Mapping[str, Any]) -> dict[str, Any]:
    names = _NAMES.get(kind, {})
    mapped = {names[key]: value for key, value in attributes.items() if key in names}
    if kind == "chat" and "gen_ai.provider.name" in mapped:
        mapped["gen_ai.operation.name"] = "chat"
        mapped["gen_ai.system"] = mapped["gen_ai.provider.name"]  # the older name, which many backends still read
    if kind == "chat" and "finish_reason" in attributes:
        mapped["gen_ai.response.finish_reasons"] = (attributes["finish_reason"],)
    return mapped


def _span_name(kind: str, attributes: Mapping[str, Any]) -> str:
    if kind == "chat":
        model = attributes.get("model")
        return f"chat {model}" if model else "chat"
    if kind == "stage":
        return f"verigate.{attributes.get('stage', 'stage')}"
    return f"verigate.{kind}"


def _messages(attributes: Mapping[str, Any]) -> dict[str, str]:
    """The redacted content as the GenAI conventions' JSON attributes (only present when capture is on)."""
    if "reply" not in attributes:
        return {}
    finish = attributes.get("finish_reason", "stop")
    return {
        "gen_ai.system_instructions": json.dumps([{"type": "text", "content": attributes.get("system", "")}]),
        "gen_ai.input.messages": json.dumps(
            [{"role": "user", "parts": [{"type": "text", "content": attributes.get("user", "")}]}]),
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": attributes["reply"]}],
              "finish_reason": finish}]),
    }


class _NoSpan:
    """The span handed out while nothing in the process uses OpenTelemetry."""

    def end(self, attributes: Mapping[str, Any], error: str | None) -> None:
        pass


_NO_SPAN = _NoSpan()


class _OtelSpan:
    __slots__ = ("_kind", "_observer", "_span", "_token")

    def __init__(self, observer: OtelObserver, kind: str, span: Span, token: object) -> None:
        self._observer = observer
        self._kind = kind
        self._span = span
        self._token = token

    def end(self, attributes: Mapping[str, Any], error: str | None) -> None:
        from opentelemetry import context, trace

        span = self._span
        try:
            if not span.is_recording():  # sampled out, or no SDK: nothing to compute
                return
            span.set_attributes(_mapped(self._kind, attributes))
            if self._kind == "chat":
                span.set_attributes(_messages(attributes))
            if error is not None:
                span.set_attribute("error.type", error)
                span.set_status(trace.Status(trace.StatusCode.ERROR))
            elif self._kind == "finalize":
                self._observer.evaluation(span, attributes)
        finally:
            if self._token is not None:
                context.detach(self._token)  # type: ignore[arg-type]
            span.end()


class OtelObserver:
    """The observer: every kind verigate reports becomes one span, a child of the current one.

    ``tracer_provider``: the provider to use (default: the global one, ``opentelemetry.trace``); given, the API is
    imported at once. ``capture_content``: hand the judge call's redacted prompts and reply to the chat span
    (default: ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``). ``evaluation_event``: ``"span"`` or ``"log"``
    (default: ``VERIGATE_OTEL_EVALUATION_EVENT``, else span); ``logger_provider`` for ``"log"`` (default: global).
    """

    def __init__(self, *, tracer_provider: TracerProvider | None = None, logger_provider: Any = None,
                 capture_content: bool | None = None, evaluation_event: Literal["span", "log"] | None = None) -> None:
        self.capture_content = capture_from_env() if capture_content is None else bool(capture_content)
        self.evaluation_event = evaluation_event or _event_from_env()
        self._provider = tracer_provider
        self._logger_provider = logger_provider
        self._tracer: Tracer | None = None
        self._logger: Any = None
        # the API would load the provider this names at its first use (read once: the environment is set at start)
        self._named_provider = bool(os.environ.get("OTEL_PYTHON_TRACER_PROVIDER"))
        if tracer_provider is not None:
            self._tracer = tracer_provider.get_tracer(_SCOPE, _version())

    def _load(self) -> Tracer | None:
        if "opentelemetry.trace" not in sys.modules and not self._named_provider:
            return None  # nothing uses OpenTelemetry here: no SDK, nothing to record
        from opentelemetry import trace

        self._tracer = trace.get_tracer(_SCOPE, _version())  # a proxy: follows a provider set later
        return self._tracer

    def start(self, kind: str, attributes: Mapping[str, Any], *, current: bool) -> _OtelSpan | _NoSpan:
        tracer = self._tracer or self._load()
        if tracer is None:
            return _NO_SPAN
        from opentelemetry import context, trace

        span_kind = trace.SpanKind.CLIENT if kind == "chat" else trace.SpanKind.INTERNAL
        span = tracer.start_span(_span_name(kind, attributes), kind=span_kind,
                                 attributes=_mapped(kind, attributes))
        # current even when sampled out: its children follow the same sampling decision
        valid = span.get_span_context().is_valid
        token = context.attach(trace.set_span_in_context(span)) if current and valid else None
        return _OtelSpan(self, kind, span, token)

    def evaluation(self, span: Span, attributes: Mapping[str, Any]) -> None:
        """The ``gen_ai.evaluation.result`` event of one decision, parented to its finalize span."""
        event: dict[str, Any] = {"gen_ai.evaluation.name": EVALUATION_NAME}
        if "outcome" in attributes:
            event["gen_ai.evaluation.score.label"] = attributes["outcome"]
        if "score" in attributes:
            event["gen_ai.evaluation.score.value"] = attributes["score"]
        if "reason" in attributes:
            event["error.type"] = attributes["reason"]
        if self.evaluation_event == "span":
            span.add_event(EVALUATION_EVENT, event)
            return
        from opentelemetry import trace
        from opentelemetry._logs import get_logger

        if self._logger is None:
            provider = self._logger_provider
            self._logger = (provider.get_logger(_SCOPE, _version()) if provider is not None
                            else get_logger(_SCOPE, _version()))
        self._logger.emit(event_name=EVALUATION_EVENT, attributes=event, context=trace.set_span_in_context(span))


def _version() -> str:
    from . import __version__

    return __version__
