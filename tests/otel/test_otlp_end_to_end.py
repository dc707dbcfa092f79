"""End to end: an application process configures the OpenTelemetry SDK with the real OTLP/HTTP exporter, runs a
finalize under its own ``invoke_agent`` span with the installed plug-in (entry points, the global provider), and an
OTLP/HTTP receiver on 127.0.0.1 that this test starts decodes what arrives (``ExportTraceServiceRequest``)."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.trace.v1.trace_pb2 import Span

APPLICATION = """
import asyncio, json, secrets
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from verigate import Candidate, Gate, Termination

provider = TracerProvider()
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))  # the endpoint from OTEL_EXPORTER_OTLP_*
trace.set_tracer_provider(provider)
token = "ghp_" + secrets.token_hex(18)
print(token)
reply = json.dumps({"passed": True, "score": 0.8, "rubric_misses": [],
                    "reflection": {"observation": "", "lesson": "", "next_check": ""}})
gate = Gate.from_config({"judge": {"client": "callable", "model": "local-judge"}}, judge_function=lambda chat: reply,
                        store=":memory:")

async def run():
    with trace.get_tracer("app").start_as_current_span("invoke_agent coder"):
        result = await gate.finalize(Candidate(request=f"rotate {token}", final_text=f"rotated {token}"),
                                     Termination("natural"))
    print(result.outcome)

asyncio.run(run())
provider.shutdown()  # flushes the batch to the receiver
"""


class Receiver:
    """An OTLP/HTTP traces receiver: decodes each POST to /v1/traces and keeps the spans."""

    def __init__(self) -> None:
        self.requests: list[ExportTraceServiceRequest] = []
        self.content_types: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.path != "/v1/traces":
                    self.send_response(404)
                    self.end_headers()
                    return
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                outer.requests.append(request)
                outer.content_types.append(self.headers.get("Content-Type", ""))
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1/traces"

    def spans(self) -> list[Span]:
        return [span for request in self.requests for resource in request.resource_spans
                for scope in resource.scope_spans for span in scope.spans]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    found.thread.start()
    yield found
    found.server.shutdown()
    found.server.server_close()


def _value(value: object) -> object:
    kind = value.WhichOneof("value")  # type: ignore[attr-defined]
    return getattr(value, kind) if kind else None


def test_a_real_finalize_reaches_an_otlp_http_receiver(receiver: Receiver, tmp_path: Path) -> None:
    import os

    env = {**os.environ, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": receiver.endpoint,
           "OTEL_SERVICE_NAME": "verigate-e2e"}
    env.pop("OTEL_EXPORTER_OTLP_COMPRESSION", None)
    done = subprocess.run([sys.executable, "-c", APPLICATION], capture_output=True, text=True, cwd=tmp_path,
                          env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    token, outcome = done.stdout.split()
    assert outcome == "completed"
    assert receiver.content_types and all(kind == "application/x-protobuf" for kind in receiver.content_types)
    spans = {span.name: span for span in receiver.spans()}
    assert {"invoke_agent coder", "verigate.finalize", "chat local-judge", "verigate.structural_check",
            "verigate.pre_verify", "verigate.post_verify", "verigate.stop"} <= set(spans)
    finalize, agent = spans["verigate.finalize"], spans["invoke_agent coder"]
    assert finalize.parent_span_id == agent.span_id and finalize.trace_id == agent.trace_id
    assert spans["chat local-judge"].parent_span_id == finalize.span_id
    attributes = {item.key: _value(item.value) for item in finalize.attributes}
    assert attributes["verigate.outcome"] == "completed" and attributes["verigate.policy_action"] == "accept"
    [event] = finalize.events
    assert event.name == "gen_ai.evaluation.result"
    assert {item.key: _value(item.value) for item in event.attributes}["gen_ai.evaluation.score.label"] == "completed"
    assert sum(1 for span in receiver.spans() if span.name == "verigate.finalize") == 1
    raw = b"".join(request.SerializeToString() for request in receiver.requests)
    assert token.encode() not in raw and b"rotate" not in raw
