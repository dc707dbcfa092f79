"""Real loopback HTTP judge servers (OpenAI chat completions, Anthropic messages, Jev System One) for tests.

Each :class:`JudgeServer` is a ``ThreadingHTTPServer`` on ``127.0.0.1:<free port>`` in a background thread.
A test scripts the replies (one per request, in order) and reads back every request the server received::

    with JudgeServer("openai") as server:
        server.reply_text(verdict_json(passed=True))          # the model's reply text, in an OpenAI envelope
        server.reply_status(429)                              # then an HTTP error in the protocol's error shape
        ... run the code under test against server.base_url ...
        assert server.requests[0].json()["model"] == "gpt-4o-mini"

A request that finds no scripted reply gets HTTP 599 ("unscripted"), so unexpected calls (a retry) are visible.
:func:`refused_url` gives a URL on which nothing listens (connection refused).
"""

from __future__ import annotations

import json
import re
import socket
import threading
from collections import deque
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

import attrs

__all__ = [
    "PATHS",
    "JudgeServer",
    "RecordedRequest",
    "Reply",
    "anthropic_message",
    "delimiter_tag",
    "jev_answers",
    "openai_completion",
    "refused_url",
    "verdict_json",
]

Protocol = Literal["openai", "anthropic", "jev"]
#: the one path each protocol serves (anything else is 404, like the real services)
PATHS: Mapping[str, str] = {
    "openai": "/v1/chat/completions",
    "anthropic": "/v1/messages",
    "jev": "/v1/systemone",
}
UNSCRIPTED_STATUS = 599


@attrs.frozen
class Reply:
    """One scripted reply: status, raw body, headers, and a delay before anything is sent."""

    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    delay_s: float = 0.0
    headers: Mapping[str, str] = attrs.field(factory=dict)


@attrs.frozen
class RecordedRequest:
    """A request as the server received it (header names lower-cased)."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8")


def verdict_json(
    *,
    passed: bool,
    score: float | None = None,
    misses: tuple[str, ...] = (),
    observation: str = "checked the observations",
    lesson: str = "",
    next_check: str = "",
) -> str:
    """A verdict object as an llm_judge model would write it."""
    return json.dumps(
        {
            "passed": passed,
            "score": (1.0 if passed else 0.2) if score is None else score,
            "rubric_misses": list(misses),
            "reflection": {"observation": observation, "lesson": lesson, "next_check": next_check},
        }
    )


def delimiter_tag(user_prompt: str) -> str:
    """The random tag of the data blocks in one judge user prompt (each call draws its own)."""
    found = re.search(r"^<<<BEGIN request ([0-9a-f]{16,})>>>$", user_prompt, re.MULTILINE)
    assert found is not None, "the prompt has no tagged request block"
    return found.group(1)


def openai_completion(content: str | None, *, model: str = "gpt-4o-mini") -> dict[str, Any]:
    """A chat.completion object whose one choice carries ``content``."""
    return {
        "id": "chatcmpl-loopback",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": None},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
    }


def anthropic_message(text: str, *, model: str = "claude-haiku-4-5",
                      tool_input: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A Messages API reply with one text block, and a ``submit_verdict`` tool call when ``tool_input`` is given
    (what a model answers under verigate's forced tool choice)."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    if tool_input is not None:
        content.append({"type": "tool_use", "id": "toolu_loopback", "name": "submit_verdict",
                        "input": dict(tool_input)})
    return {
        "id": "msg_loopback",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "tool_use" if tool_input is not None else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 10},
    }


def jev_answers(
    choice: str,
    probabilities: Mapping[str, float],
    *,
    nouls: Mapping[str, float] | None = None,
    model: str = "jev-1.13.0",
) -> dict[str, Any]:
    """A System One reply: the ``verdict`` choice and optional noul answers keyed as in the request."""
    answers: dict[str, Any] = {
        "verdict": {
            "type": "choice",
            "choice": choice,
            "probabilities": dict(probabilities),
            "confidence": max(probabilities.values()) if probabilities else 0.0,
        }
    }
    for key, value in (nouls or {}).items():
        answers[key] = {"type": "noul", "noul": value}
    return {"model": model, "answers": answers, "usage": {"input_tokens": 100, "output_tokens": 0}}


def _error_body(protocol: str, status: int, message: str) -> dict[str, Any]:
    if protocol == "anthropic":
        return {"type": "error", "error": {"type": "api_error", "message": message}}
    return {"error": {"message": message, "type": "loopback_error", "code": status}}


def refused_url() -> str:
    """``http://127.0.0.1:<port>`` where nothing listens: a connection there is refused."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


class JudgeServer:
    """A scripted loopback server for one protocol; use as a context manager or call start()/stop()."""

    def __init__(self, protocol: Protocol, *, required_key: str | None = None, path: str | None = None) -> None:
        if protocol not in PATHS:
            raise ValueError(f"unknown protocol {protocol!r}")
        self.protocol = protocol
        #: the one path served (default: the protocol's, see PATHS); e.g. a gateway's alternative endpoint
        self.path = path or PATHS[protocol]
        #: when set, a request without ``Bearer <key>`` / ``x-api-key: <key>`` gets 401
        self.required_key = required_key
        self._replies: deque[Reply] = deque()
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        # a short poll interval keeps stop() (and so every test's teardown) quick
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name=f"judge-{protocol}", daemon=True
        )

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> JudgeServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers sleeping in a scripted delay
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> JudgeServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ addresses

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``, the server root."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def base_url(self) -> str:
        """The base URL a client of this protocol is configured with (OpenAI's includes ``/v1``)."""
        return f"{self.url}/v1" if self.protocol == "openai" else self.url

    # ------------------------------------------------------------------ scripting

    def reply(self, reply: Reply) -> None:
        with self._lock:
            self._replies.append(reply)

    def reply_json(self, data: Any, *, status: int = 200, delay_s: float = 0.0) -> None:
        self.reply(Reply(status, json.dumps(data).encode(), delay_s=delay_s))

    def reply_raw(self, body: bytes | str, *, status: int = 200, content_type: str = "application/json",
                  delay_s: float = 0.0) -> None:
        self.reply(Reply(status, body.encode() if isinstance(body, str) else body, content_type, delay_s))

    def reply_text(self, text: str, *, delay_s: float = 0.0) -> None:
        """The model's reply in this protocol's envelope (OpenAI and Anthropic only). For Anthropic, text that is
        one JSON object becomes the forced ``submit_verdict`` tool call's input (as a model answers under a forced
        tool choice); any other text is a text block, which verigate never reads a verdict from."""
        if self.protocol == "openai":
            self.reply_json(openai_completion(text), delay_s=delay_s)
        elif self.protocol == "anthropic":
            try:
                value = json.loads(text)
            except ValueError:
                value = None
            if isinstance(value, dict):
                self.reply_json(anthropic_message("", tool_input=value), delay_s=delay_s)
            else:
                self.reply_json(anthropic_message(text), delay_s=delay_s)
        else:
            raise ValueError("a Jev server answers with jev_answers(...), not text")

    def reply_status(self, status: int, message: str = "scripted error", *, headers: Mapping[str, str] | None = None
                     ) -> None:
        """An HTTP error in this protocol's error shape."""
        body = json.dumps(_error_body(self.protocol, status, message)).encode()
        self.reply(Reply(status, body, headers=dict(headers or {})))

    # ------------------------------------------------------------------ what was received

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def pending_replies(self) -> int:
        with self._lock:
            return len(self._replies)

    def _next(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self._requests.append(request)
            if self.required_key is not None and not _carries_key(request.headers, self.required_key):
                return Reply(401, json.dumps(_error_body(self.protocol, 401, "invalid api key")).encode())
            if request.path.split("?")[0] != self.path:
                return Reply(404, json.dumps(_error_body(self.protocol, 404, "no such path")).encode())
            if not self._replies:
                return Reply(UNSCRIPTED_STATUS, b'{"error": {"message": "unscripted request"}}')
            return self._replies.popleft()


def _carries_key(headers: Mapping[str, str], key: str) -> bool:
    return headers.get("authorization") == f"Bearer {key}" or headers.get("x-api-key") == key


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    owner: JudgeServer


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read ``server.requests`` instead of stderr."""

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        owner = self.server.owner
        recorded = RecordedRequest(
            self.command, self.path, {name.lower(): value for name, value in self.headers.items()}, body
        )
        reply = owner._next(recorded)
        if reply.delay_s and owner._stopping.wait(reply.delay_s):
            return
        try:
            self.send_response(reply.status)
            self.send_header("content-type", reply.content_type)
            self.send_header("content-length", str(len(reply.body)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            view = memoryview(reply.body)
            for start in range(0, len(view), 65536):
                self.wfile.write(view[start:start + 65536])
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading (a capped reply): that is the behaviour under test

    do_GET = do_POST
