"""The judge's model calls as telemetry: a chat client wrapped so that every ``complete`` is one ``chat`` span.

Only built when an observer is installed (``verigate._telemetry``): without one the engine gets the client itself.
Token usage comes from the client: a client calls :func:`verigate.judge.report_usage` inside ``complete`` with
what the API's reply says (the ``openai`` and ``anthropic`` clients do; a ``callable`` judge function may). Content
— the system and user prompts, built from the already redacted candidate, and the model's reply — is handed to the
observers only when one asked for it, and only after the gate's redactors ran on it again; a redactor that fails
leaves the content out (nothing unredacted is ever handed on).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from .._telemetry import CHAT, AttributeValue, Telemetry, code
from ..redact._egress import Egress
from ._base import ChatRequest, JudgeConfig, ModelClient
from ._usage import observing_call

__all__ = ["ObservedChatClient", "observed_client"]

def _server(url: str | None) -> dict[str, AttributeValue]:
    if not url:
        return {}
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return {}
    found: dict[str, AttributeValue] = {}
    if parts.hostname and code(parts.hostname):
        found["server_address"] = parts.hostname
    if port is not None:
        found["server_port"] = port
    return found


class ObservedChatClient:
    """A :class:`~verigate.judge.ModelClient` that tells the observers of each call; everything else (``label``,
    ``prepare``, a client's own attributes) is the wrapped client's."""

    def __init__(self, client: ModelClient, config: JudgeConfig, telemetry: Telemetry,
                 egress: Egress | None) -> None:
        self._client = client
        self._telemetry = telemetry
        self._egress = egress if telemetry.capture_content else None
        base_url = getattr(client, "base_url", None)
        self._start: dict[str, AttributeValue] = {
            "provider": code(config.client) or "unknown",
            **({"model": config.model} if config.model and code(config.model) else {}),
            **_server(base_url if isinstance(base_url, str) else config.base_url),
        }

    def __getattr__(self, name: str) -> Any:
        if name == "_client":  # not set yet (a copy being made): no recursion
            raise AttributeError(name)
        return getattr(self._client, name)

    async def prepare(self) -> None:
        prepare = getattr(self._client, "prepare", None)
        if prepare is not None:
            await prepare()

    async def complete(self, request: ChatRequest, *, timeout_s: float) -> str | Mapping[str, Any]:
        with observing_call() as call, \
                self._telemetry.span(CHAT, {**self._start, "max_output_tokens": request.max_output_tokens}) as scope:
            reply = await self._client.complete(request, timeout_s=timeout_s)
            scope.set(**call)
            if self._egress is not None:
                scope.set(**_content(self._egress, request, reply))
            return reply


def _content(egress: Egress, request: ChatRequest, reply: object) -> dict[str, AttributeValue]:
    """The redacted system prompt, user prompt and reply; nothing when a redactor fails."""
    try:
        text = reply if isinstance(reply, str) else json.dumps(reply, ensure_ascii=False, default=str)
        return {"system": egress.text(request.system).text, "user": egress.text(request.user).text,
                "reply": egress.text(text).text}
    except BaseException as exc:  # a redactor failed: the content stays out (never unredacted)
        from ..gate._containment import contain

        contain(exc)
        return {}


def observed_client(client: object, config: JudgeConfig, telemetry: Telemetry,
                    egress: Egress | None = None) -> Any:
    """``client`` wrapped for the observers when there are any and it is a chat client; else ``client`` itself."""
    if not telemetry.enabled or not isinstance(client, ModelClient):
        return client
    return ObservedChatClient(client, config, telemetry, egress)
