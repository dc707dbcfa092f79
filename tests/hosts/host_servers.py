"""Scripted model servers on 127.0.0.1 that the real host CLIs talk to.

* :class:`AnthropicServer` — the Anthropic Messages API as Claude Code uses it: ``POST /v1/messages`` with
  ``stream: true`` answered with SSE (``message_start``, ``content_block_start``/``delta``/``stop`` for text and for
  ``tool_use`` with ``input_json_delta``, ``message_delta`` with the stop reason, ``message_stop``); the
  non-streaming form; ``/v1/messages/count_tokens``; anything else gets a harmless answer.
* :class:`ResponsesServer` — the OpenAI Responses API as Codex uses it: ``POST /v1/responses`` answered with SSE
  (``response.created``, ``response.output_item.added``, ``response.output_text.delta``,
  ``response.output_item.done`` with ``message``, ``function_call`` or ``custom_tool_call`` items,
  ``response.completed``); ``GET /v1/models`` answers an empty list.

A test scripts the *main* turns — the requests that carry the agent's tools — as a queue of :class:`Turn`; a main
request that finds the queue empty is answered with a short final text (``UNSCRIPTED_TEXT``) so the host ends its
turn instead of hanging, and is counted in :attr:`ScriptedServer.unscripted`. Side requests (Claude Code's title,
summary or quota calls: no tools in the request) get a short text and are only logged. Every request is recorded
(:attr:`ScriptedServer.requests`) so a test reads back what the host sent the model: the tool results, the Stop
hook's feedback, the prompts.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

import attrs

__all__ = [
    "UNSCRIPTED_TEXT",
    "AnthropicServer",
    "Call",
    "Received",
    "ResponsesServer",
    "ScriptedServer",
    "Turn",
]

#: the final text of a main request nobody scripted: the host ends its turn on it
UNSCRIPTED_TEXT = "Nothing more to do."
#: a side request's text (a title, a summary)
SIDE_TEXT = "Scripted side reply"


@attrs.frozen
class Call:
    """One tool call of a model turn: the tool's name and input (a dict; a str for a free-form custom tool)."""

    name: str
    input: Any
    #: Codex only: ``function`` (a ``function_call`` item, arguments as a JSON string) or ``custom``
    #: (a ``custom_tool_call`` item, input as raw text — ``apply_patch`` in the freeform form)
    kind: str = "function"
    id: str = attrs.field(factory=lambda: uuid.uuid4().hex[:24])


@attrs.frozen
class Turn:
    """One scripted model answer: an optional text, then tool calls (none: the turn ends)."""

    text: str = ""
    calls: tuple[Call, ...] = ()
    #: run by the server when it serves this turn, before answering (e.g. a person edits a file mid-session)
    before: Callable[[], None] | None = attrs.field(default=None, eq=False)

    @classmethod
    def say(cls, text: str) -> Turn:
        return cls(text=text)

    @classmethod
    def tool(cls, name: str, tool_input: Any, *, text: str = "", kind: str = "function") -> Turn:
        return cls(text=text, calls=(Call(name, tool_input, kind),))


@attrs.frozen
class Received:
    """A request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    at: float
    #: ``main`` (consumed a scripted turn or the unscripted fallback), ``side`` or ``other``
    role: str
    #: the turn it was answered with (main requests)
    turn: Turn | None = None

    def json(self) -> Any:
        try:
            return json.loads(self.body) if self.body else None
        except ValueError:
            return None


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    owner: ScriptedServer


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read the recorded requests."""

    def _handle(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        headers = {name.lower(): value for name, value in self.headers.items()}
        try:
            status, content_type, chunks = self.server.owner.answer(self.command, self.path, headers, body)
        except Exception as error:  # a bug in the script: visible to the host as a 500, recorded for the test
            self.server.owner.errors.append(repr(error))
            status, content_type, chunks = 500, "application/json", iter([b'{"error": "scripted server bug"}'])
        try:
            self.send_response(status)
            self.send_header("content-type", content_type)
            if content_type == "text/event-stream":
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                for chunk in chunks:
                    self.wfile.write(chunk)
                    self.wfile.flush()
                self.close_connection = True
            else:
                data = b"".join(chunks)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass

    do_POST = _handle
    do_GET = _handle
    do_HEAD = _handle


class ScriptedServer:
    """The common part: a threaded HTTP server on a free loopback port, a turn queue, the request log."""

    name = "scripted"

    def __init__(self) -> None:
        self._turns: deque[Turn] = deque()
        self._lock = threading.Lock()
        self.requests: list[Received] = []
        self.errors: list[str] = []
        self.unscripted = 0
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"model-{self.name}", daemon=True)

    # lifecycle
    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    # scripting
    def script(self, *turns: Turn) -> None:
        with self._lock:
            self._turns.extend(turns)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._turns)

    def main_requests(self) -> list[Received]:
        with self._lock:
            return [request for request in self.requests if request.role == "main"]

    def _take(self) -> Turn | None:
        with self._lock:
            turn = self._turns.popleft() if self._turns else None
            if turn is None:
                self.unscripted += 1
        if turn is not None and turn.before is not None:
            turn.before()
        return turn

    def _record(self, received: Received) -> None:
        with self._lock:
            self.requests.append(received)

    def answer(self, method: str, path: str, headers: dict[str, str], body: bytes
               ) -> tuple[int, str, Iterator[bytes]]:
        raise NotImplementedError


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


# --------------------------------------------------------------------------------------------------- Anthropic


class AnthropicServer(ScriptedServer):
    """The Messages API for Claude Code."""

    name = "anthropic"

    def answer(self, method: str, path: str, headers: dict[str, str], body: bytes
               ) -> tuple[int, str, Iterator[bytes]]:
        route = path.split("?")[0]
        data = _loads(body)
        if method == "POST" and route == "/v1/messages/count_tokens":
            self._record(Received(method, path, headers, body, time.time(), "other"))
            return 200, "application/json", iter([json.dumps({"input_tokens": 100}).encode()])
        if method != "POST" or route != "/v1/messages" or not isinstance(data, dict):
            self._record(Received(method, path, headers, body, time.time(), "other"))
            return 200, "application/json", iter([b"{}"])
        model = str(data.get("model") or "claude-sonnet-4-5")
        if data.get("tools"):
            turn = self._take()
            self._record(Received(method, path, headers, body, time.time(), "main", turn))
            turn = turn or Turn.say(UNSCRIPTED_TEXT)
        else:
            self._record(Received(method, path, headers, body, time.time(), "side"))
            turn = Turn.say(SIDE_TEXT)
        if data.get("stream"):
            return 200, "text/event-stream", self._stream(turn, model)
        return 200, "application/json", iter([json.dumps(self._message(turn, model)).encode()])

    @staticmethod
    def _content(turn: Turn) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = [{"type": "text", "text": turn.text}] if turn.text else []
        blocks += [{"type": "tool_use", "id": f"toolu_{call.id}", "name": call.name, "input": call.input}
                   for call in turn.calls]
        return blocks

    def _message(self, turn: Turn, model: str) -> dict[str, Any]:
        return {"id": f"msg_{uuid.uuid4().hex[:24]}", "type": "message", "role": "assistant", "model": model,
                "content": self._content(turn), "stop_reason": "tool_use" if turn.calls else "end_turn",
                "stop_sequence": None, "usage": {"input_tokens": 100, "output_tokens": 20}}

    def _stream(self, turn: Turn, model: str) -> Iterator[bytes]:
        start = self._message(turn, model) | {"content": [], "stop_reason": None}
        start["usage"] = {"input_tokens": 100, "output_tokens": 1}
        yield _sse("message_start", {"type": "message_start", "message": start})
        for index, block in enumerate(self._content(turn)):
            if block["type"] == "text":
                yield _sse("content_block_start", {"type": "content_block_start", "index": index,
                                                   "content_block": {"type": "text", "text": ""}})
                text = block["text"]
                for piece in (text[: len(text) // 2], text[len(text) // 2:]):
                    yield _sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                                       "delta": {"type": "text_delta", "text": piece}})
            else:
                yield _sse("content_block_start", {"type": "content_block_start", "index": index,
                                                   "content_block": {"type": "tool_use", "id": block["id"],
                                                                     "name": block["name"], "input": {}}})
                raw = json.dumps(block["input"])
                for piece in (raw[: len(raw) // 2], raw[len(raw) // 2:]):
                    yield _sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                                       "delta": {"type": "input_json_delta", "partial_json": piece}})
            yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
        yield _sse("message_delta", {"type": "message_delta",
                                     "delta": {"stop_reason": "tool_use" if turn.calls else "end_turn",
                                               "stop_sequence": None},
                                     "usage": {"output_tokens": 20}})
        yield _sse("message_stop", {"type": "message_stop"})

    # reading back
    @staticmethod
    def tool_results(request: Received) -> dict[str, tuple[str, bool]]:
        """``{tool_use_id: (text, is_error)}`` of every tool_result in the request's messages."""
        found: dict[str, tuple[str, bool]] = {}
        for message in (request.json() or {}).get("messages", []):
            content = message.get("content")
            if not isinstance(content, list):
                continue
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    found[str(block.get("tool_use_id"))] = (_text_of(block.get("content")),
                                                            bool(block.get("is_error")))
        return found

    def result_of(self, call: Call) -> tuple[str, bool] | None:
        """What the model got back for one scripted call (from the first request that carries it)."""
        for request in self.main_requests():
            results = self.tool_results(request)
            if f"toolu_{call.id}" in results:
                return results[f"toolu_{call.id}"]
        return None

    @staticmethod
    def user_texts(request: Received) -> list[str]:
        """The text of every user message (string content and text blocks) of a request, in order."""
        texts: list[str] = []
        for message in (request.json() or {}).get("messages", []):
            if message.get("role") != "user":
                continue
            content = message.get("content")
            if isinstance(content, str):
                texts.append(content)
            elif isinstance(content, list):
                texts += [str(block.get("text")) for block in content
                          if isinstance(block, dict) and block.get("type") == "text"]
        return texts


    @staticmethod
    def latest_user_text(request: Received) -> str:
        """The text blocks of the request's last message unless the model wrote it: what the host just fed the
        model — a typed prompt or a Stop hook's feedback (Claude Code 2.1.332 sends that as a ``system`` message
        inside ``messages``), not a tool result."""
        messages = (request.json() or {}).get("messages", [])
        if not messages or messages[-1].get("role") not in ("user", "system"):
            return ""
        content = messages[-1].get("content")
        if isinstance(content, str):
            return content
        return "\n".join(str(block.get("text")) for block in content or []
                         if isinstance(block, dict) and block.get("type") == "text")


# --------------------------------------------------------------------------------------------------- Responses


class ResponsesServer(ScriptedServer):
    """The Responses API for Codex."""

    name = "responses"

    def answer(self, method: str, path: str, headers: dict[str, str], body: bytes
               ) -> tuple[int, str, Iterator[bytes]]:
        route = path.split("?")[0]
        data = _loads(body)
        if method == "GET" and route.endswith("/models"):
            self._record(Received(method, path, headers, body, time.time(), "other"))
            return 200, "application/json", iter([json.dumps({"object": "list", "data": [], "models": []}).encode()])
        if method != "POST" or not route.endswith("/responses") or not isinstance(data, dict):
            self._record(Received(method, path, headers, body, time.time(), "other"))
            return 404, "application/json", iter([b'{"error": {"message": "not served"}}'])
        model = str(data.get("model") or "gpt-5.5")
        if data.get("tools"):
            turn = self._take()
            self._record(Received(method, path, headers, body, time.time(), "main", turn))
            turn = turn or Turn.say(UNSCRIPTED_TEXT)
        else:
            self._record(Received(method, path, headers, body, time.time(), "side"))
            turn = Turn.say(SIDE_TEXT)
        return 200, "text/event-stream", self._stream(turn, model)

    @staticmethod
    def _items(turn: Turn) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        if turn.text:
            items.append({"type": "message", "id": f"msg_{uuid.uuid4().hex[:16]}", "status": "completed",
                          "role": "assistant",
                          "content": [{"type": "output_text", "text": turn.text, "annotations": []}]})
        for call in turn.calls:
            if call.kind == "custom":
                items.append({"type": "custom_tool_call", "id": f"ctc_{call.id}", "status": "completed",
                              "call_id": f"call_{call.id}", "name": call.name, "input": str(call.input)})
            else:
                items.append({"type": "function_call", "id": f"fc_{call.id}", "status": "completed",
                              "call_id": f"call_{call.id}", "name": call.name,
                              "arguments": json.dumps(call.input)})
        return items

    def _stream(self, turn: Turn, model: str) -> Iterator[bytes]:
        response_id = f"resp_{uuid.uuid4().hex[:24]}"
        sequence = iter(range(10_000))
        base = {"id": response_id, "object": "response", "created_at": int(time.time()), "model": model,
                "status": "in_progress", "output": [], "error": None, "incomplete_details": None, "usage": None}
        yield _sse("response.created", {"type": "response.created", "sequence_number": next(sequence),
                                        "response": base})
        yield _sse("response.in_progress", {"type": "response.in_progress", "sequence_number": next(sequence),
                                            "response": base})
        items = self._items(turn)
        for index, item in enumerate(items):
            if item["type"] == "message":
                added = item | {"status": "in_progress", "content": []}
                yield _sse("response.output_item.added", {"type": "response.output_item.added",
                                                          "sequence_number": next(sequence),
                                                          "output_index": index, "item": added})
                part = {"type": "output_text", "text": "", "annotations": []}
                yield _sse("response.content_part.added", {"type": "response.content_part.added",
                                                           "sequence_number": next(sequence), "item_id": item["id"],
                                                           "output_index": index, "content_index": 0, "part": part})
                text = item["content"][0]["text"]
                for piece in (text[: len(text) // 2], text[len(text) // 2:]):
                    yield _sse("response.output_text.delta", {"type": "response.output_text.delta",
                                                              "sequence_number": next(sequence),
                                                              "item_id": item["id"], "output_index": index,
                                                              "content_index": 0, "delta": piece})
                yield _sse("response.output_text.done", {"type": "response.output_text.done",
                                                         "sequence_number": next(sequence), "item_id": item["id"],
                                                         "output_index": index, "content_index": 0, "text": text})
                yield _sse("response.content_part.done", {"type": "response.content_part.done",
                                                          "sequence_number": next(sequence), "item_id": item["id"],
                                                          "output_index": index, "content_index": 0,
                                                          "part": item["content"][0]})
            else:
                empty = "input" if item["type"] == "custom_tool_call" else "arguments"
                yield _sse("response.output_item.added", {"type": "response.output_item.added",
                                                          "sequence_number": next(sequence), "output_index": index,
                                                          "item": item | {"status": "in_progress", empty: ""}})
            yield _sse("response.output_item.done", {"type": "response.output_item.done",
                                                     "sequence_number": next(sequence), "output_index": index,
                                                     "item": item})
        usage = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 20,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 120}
        done = base | {"status": "completed", "output": items, "usage": usage}
        yield _sse("response.completed", {"type": "response.completed", "sequence_number": next(sequence),
                                          "response": done})

    # reading back
    @staticmethod
    def tool_outputs(request: Received) -> dict[str, str]:
        """``{call_id: output text}`` of every function_call_output / custom_tool_call_output in the input."""
        found: dict[str, str] = {}
        for item in (request.json() or {}).get("input", []):
            if isinstance(item, dict) and item.get("type") in ("function_call_output", "custom_tool_call_output"):
                found[str(item.get("call_id"))] = _text_of(item.get("output"))
        return found

    def result_of(self, call: Call) -> str | None:
        for request in self.main_requests():
            outputs = self.tool_outputs(request)
            if f"call_{call.id}" in outputs:
                return outputs[f"call_{call.id}"]
        return None

    @staticmethod
    def user_texts(request: Received) -> list[str]:
        texts: list[str] = []
        for item in (request.json() or {}).get("input", []):
            if isinstance(item, dict) and item.get("type") == "message" and item.get("role") == "user":
                content = item.get("content")
                texts.append(_text_of(content))
        return texts


    @staticmethod
    def latest_user_text(request: Received) -> str:
        """The text of the newest user message when no tool output came after it ('' otherwise)."""
        latest = ""
        for item in (request.json() or {}).get("input", []):
            if not isinstance(item, dict):
                continue
            if item.get("type") in ("function_call_output", "custom_tool_call_output", "function_call",
                                    "custom_tool_call"):
                latest = ""
            elif item.get("type") == "message" and item.get("role") == "user":
                latest = _text_of(item.get("content"))
        return latest


def _loads(body: bytes) -> Any:
    try:
        return json.loads(body) if body else None
    except ValueError:
        return None


def _text_of(content: Any) -> str:
    """The text of a tool result / output: a string, a list of text blocks, or a JSON-encoded output object."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text_of(block.get("text", block.get("content", ""))) if isinstance(block, dict)
                         else str(block) for block in content)
    if isinstance(content, dict):
        return _text_of(content.get("content", content.get("text", json.dumps(content))))
    return "" if content is None else str(content)


def summary(server: ScriptedServer) -> str:
    """One line per request: its role, the turn it got, and the tail of what the host sent (for failure messages)."""
    lines = []
    for index, request in enumerate(server.requests):
        body = request.json() or {}
        tail = (body.get("messages") or body.get("input") or [])[-2:]
        turn = request.turn
        answered = "" if turn is None else f" -> {turn.text[:40]!r} {[call.name for call in turn.calls]}"
        lines.append(f"#{index} {request.role} {request.path}{answered}: {json.dumps(tail)[:600]}")
    return "\n".join(lines)
