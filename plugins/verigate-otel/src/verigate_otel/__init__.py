"""verigate-otel: the gate's decisions and the trace grader in the application's OpenTelemetry traces.

Installed, it implements ``verigate_observer`` for every gate and ``grade_many`` call: one ``verigate.finalize`` span
per finalize (a child of the runtime's current span, for example its ``invoke_agent`` span) with the
``gen_ai.evaluation.result`` event, a ``chat {model}`` span per judge model call (GenAI client conventions), a span
per decision stage, and ``verigate.grade_many`` with a ``verigate.grade_source`` span per source. It depends on
``opentelemetry-api`` only: the application configures the SDK and its exporters (none configured: every span is
the no-op one). :class:`OtelPlugin` is the same with a tracer provider of its own (pass it in ``plugins=``, with
``entry_points=False`` so that the installed one does not report the same spans again).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from verigate import hookimpl

from ._observer import CAPTURE_ENV, EVALUATION_EVENT, EVALUATION_NAME, EVENT_ENV, OtelObserver, capture_from_env

if TYPE_CHECKING:
    from opentelemetry.trace import TracerProvider

__all__ = ["CAPTURE_ENV", "EVALUATION_EVENT", "EVALUATION_NAME", "EVENT_ENV", "OtelObserver", "OtelPlugin",
           "__version__", "capture_from_env"]

__version__ = "1.0.0"


@hookimpl
def verigate_observer() -> OtelObserver:
    """The observer on the global tracer provider; content capture and the event's form from the environment."""
    return OtelObserver()


class OtelPlugin:
    """A plug-in object with its own providers and settings (see :class:`OtelObserver` for the arguments)."""

    def __init__(self, *, tracer_provider: TracerProvider | None = None, logger_provider: Any = None,
                 capture_content: bool | None = None, evaluation_event: Literal["span", "log"] | None = None) -> None:
        self._arguments: dict[str, Any] = {"tracer_provider": tracer_provider, "logger_provider": logger_provider,
                                           "capture_content": capture_content, "evaluation_event": evaluation_event}

    @hookimpl
    def verigate_observer(self) -> OtelObserver:
        return OtelObserver(**self._arguments)
