"""Helpers of the OpenTelemetry tests: an SDK tracer provider exporting into memory, and verdict replies."""

from __future__ import annotations

import json
from typing import Any

from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from verigate_otel import OtelPlugin

from verigate import Gate


class Otel:
    """A tracer provider exporting into memory, and the plug-in object reporting into it."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider()
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.logs = InMemoryLogRecordExporter()
        self.logger_provider = LoggerProvider()
        self.logger_provider.add_log_record_processor(SimpleLogRecordProcessor(self.logs))

    def plugin(self, **options: Any) -> OtelPlugin:
        return OtelPlugin(tracer_provider=self.provider, logger_provider=self.logger_provider, **options)

    def spans(self, name: str | None = None) -> list[ReadableSpan]:
        found = list(self.exporter.get_finished_spans())
        return [span for span in found if name is None or span.name == name]

    def gate(self, config: dict[str, Any] | None = None, *, plugins: tuple[object, ...] = (),
             options: dict[str, Any] | None = None, **kwargs: Any) -> Gate:
        return Gate.from_config(config if config is not None else {"judge": {"client": "callable", "model": "m1"}},
                                store=":memory:", entry_points=False,
                                plugins=[self.plugin(**(options or {})), *plugins], **kwargs)


def verdict(passed: bool = True, *, score: float = 0.9, misses: tuple[str, ...] = (),
            observation: str = "") -> str:
    return json.dumps({"passed": passed, "score": score, "rubric_misses": list(misses),
                       "reflection": {"observation": observation, "lesson": "", "next_check": ""}})


def exported_values(spans: list[ReadableSpan]) -> list[str]:
    """Every attribute and event attribute value of ``spans`` (and span and event names), as text."""
    values: list[str] = []
    for span in spans:
        values.append(span.name)
        for value in (span.attributes or {}).values():
            values.append(str(value))
        for event in span.events:
            values.append(event.name)
            values.extend(str(value) for value in (event.attributes or {}).values())
    return values
