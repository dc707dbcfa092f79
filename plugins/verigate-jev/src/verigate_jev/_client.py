"""``POST {base}/v1/systemone`` with a Bearer key, over the standard library (http.client), errors mapped."""

from __future__ import annotations

import asyncio
import http.client
import json
import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from verigate import ConfigError, JudgeError
from verigate.judge import (
    DEFAULT_MAX_REPLY_BYTES,
    JudgeConfig,
    api_key_from_env,
    bounded_timeout,
    describe,
    http_status_error,
    in_daemon_thread,
    is_loopback_url,
    option,
    reply_json,
    report_usage,
    tls_context,
)

__all__ = ["DEFAULT_BASE_URL", "DEFAULT_KEY_ENV", "DEFAULT_PATH", "JevClient"]

DEFAULT_BASE_URL = "https://api.typesafe.ai"
DEFAULT_PATH = "/v1/systemone"
DEFAULT_KEY_ENV = "TYPESAFE_API_KEY"


class JevClient:
    """``client: jev`` — a :class:`verigate.judge.DecisionClient`.

    Base URL: ``judge.base_url``, else ``$TYPESAFE_BASE_URL``, else TypeSafe's API. OpenRouter serves the same
    System One API under ``https://openrouter.ai/api`` (set ``api_key_env: OPENROUTER_API_KEY``); its
    decisions endpoint is reached with ``options.endpoint_path: /alpha/decisions`` and a ``typesafe/…`` model.
    Options: ``endpoint_path`` (default ``/v1/systemone``), ``max_reply_bytes`` (default 1 000 000).
    """

    def __init__(self, config: JudgeConfig) -> None:
        self.config = config
        base_url = (config.base_url or os.environ.get("TYPESAFE_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(f"{base_url!r} is not an http(s) URL", field="judge.base_url")
        self.base_url = base_url
        path = option(config, "endpoint_path", str, DEFAULT_PATH)
        self.endpoint = f"{base_url}/{path.lstrip('/')}"
        self.key_env = config.api_key_env or DEFAULT_KEY_ENV
        self.max_reply_bytes = option(config, "max_reply_bytes", int, DEFAULT_MAX_REPLY_BYTES)
        self.label = f"jev:{config.model or 'jev-latest'}"

    def _api_key(self) -> str | None:
        key = api_key_from_env(self.config, DEFAULT_KEY_ENV)
        if key is None and not is_loopback_url(self.base_url):
            raise JudgeError("missing_jev_key", f"Jev needs an API key in ${self.key_env}")
        return key  # a local System One server (loopback) may run without one

    def _post(self, payload: bytes, key: str | None, timeout_s: float) -> tuple[int, bytes]:
        parts = urlsplit(self.endpoint)
        connection: http.client.HTTPConnection
        if parts.scheme == "https":
            connection = http.client.HTTPSConnection(
                parts.hostname or "", parts.port, timeout=timeout_s, context=tls_context()
            )
        else:
            connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=timeout_s)
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if key is not None:
            headers["Authorization"] = f"Bearer {key}"
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        try:
            connection.request("POST", path, body=payload, headers=headers)
            response = connection.getresponse()
            body = response.read(self.max_reply_bytes + 1)
            return response.status, body
        finally:
            connection.close()

    async def decide(self, body: Mapping[str, Any], *, timeout_s: float) -> Mapping[str, Any]:
        timeout_s = bounded_timeout(timeout_s)
        key = self._api_key()
        payload = json.dumps(body).encode("utf-8")
        try:
            async with asyncio.timeout(timeout_s):
                status, reply = await in_daemon_thread(self._post, payload, key, timeout_s)
        except TimeoutError as exc:  # the deadline, or the socket's own timeout
            raise JudgeError("judge_timeout", f"Jev did not answer within {timeout_s:g} s") from exc
        except (OSError, http.client.HTTPException) as exc:
            raise JudgeError("judge_transport_error", f"cannot reach Jev: {describe(exc)}") from exc
        if status != 200:
            raise http_status_error(status)
        if len(reply) > self.max_reply_bytes:
            raise JudgeError("invalid_jev_response", f"the reply is larger than {self.max_reply_bytes} bytes")
        data = reply_json(reply, reason="invalid_jev_response")
        if not isinstance(data, dict):
            raise JudgeError("invalid_jev_response", "the reply is not a JSON object")
        usage = data.get("usage")
        if isinstance(usage, dict):  # for whoever collects it (``verigate judge eval``)
            report_usage(input_tokens=usage.get("input_tokens"), output_tokens=usage.get("output_tokens"))
        return data
