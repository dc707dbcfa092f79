"""One tool-free chat-completions call over HTTP with the standard library, every failure mapped to a reason.

The official ``openai`` SDK is not used: importing it (with httpx, pydantic and its generated types) took ~0.8-1 s
of a Stop hook's start-up under load, ``httpx`` alone ~0.3 s, ``urllib.request`` ~30 ms. The call is one POST of
a JSON body and a capped read of a JSON reply, which the standard library does on a daemon worker thread (never on
the event loop); what the SDK did for us is kept here: its retry rule and back-off (inside the one deadline), the
status -> reason mapping, ``HTTP(S)_PROXY`` / ``NO_PROXY`` from the environment, and the organization / project
headers of ``OPENAI_ORG_ID`` / ``OPENAI_PROJECT_ID``. Redirects are not followed (a 3xx is ``judge_http_3xx``):
urllib would carry the Authorization header to another host, and an API endpoint has no reason to redirect.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import socket
import time
from types import ModuleType
from typing import Any

from verigate import ConfigError, JudgeError
from verigate.judge import (
    DEFAULT_MAX_REPLY_BYTES,
    ChatRequest,
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
    require_model,
    tls_context,
)

__all__ = ["DEFAULT_BASE_URL", "DEFAULT_KEY_ENV", "OpenAIClient"]

DEFAULT_KEY_ENV = "OPENAI_API_KEY"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: sent to local servers (Ollama, vLLM, llama.cpp, LM Studio) that need no key but whose SDK wants one
LOCAL_PLACEHOLDER_KEY = "verigate-local-no-key"
_TOKEN_LIMIT_PARAMS = ("max_completion_tokens", "max_tokens", "none")
_CHUNK = 64 * 1024
#: the statuses the openai SDK retries (when ``max_retries`` allows): timeout, conflict, rate limit, server errors
_RETRIED = frozenset({408, 409, 429})
#: the SDK's back-off: 0.5 s doubling to at most 8 s, less up to 25 % jitter; a server's retry-after up to 60 s wins
_INITIAL_BACKOFF_S, _MAX_BACKOFF_S, _MAX_RETRY_AFTER_S = 0.5, 8.0, 60.0


def _transport() -> ModuleType:
    """``urllib.request``, imported at the first call (it pulls in http.client, email and ssl: tens of ms that a
    hook process which never calls the judge should not pay). A failure is a JudgeError, never a pass."""
    try:
        import urllib.request
    except Exception as exc:  # the interpreter cannot make an HTTP call: this call cannot be judged
        raise JudgeError("judge_unavailable", f"urllib.request failed to import: {type(exc).__name__}") from exc
    return urllib.request


class _Status(Exception):
    """An HTTP status other than 2xx, with what the retry rule reads from its headers."""

    def __init__(self, status: int, should_retry: str | None, retry_after: float | None) -> None:
        super().__init__(status)
        self.status, self.should_retry, self.retry_after = status, should_retry, retry_after


def _retry_after(headers: Any) -> float | None:
    """The server's wish in seconds (``retry-after-ms``, then ``retry-after`` as seconds), if any."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name) if headers is not None else None
        if value is None:
            continue
        try:
            return float(value) / scale
        except ValueError:
            continue
    return None


def _post(url: str, body: bytes, headers: dict[str, str], timeout_s: float, limit: int) -> bytes:
    """One POST (blocking; run on a daemon thread): the reply body, read in chunks and refused past ``limit``."""
    request_module = _transport()

    class NoRedirects(request_module.HTTPRedirectHandler):  # type: ignore[misc,name-defined]
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None  # the 3xx surfaces as an HTTPError, so judge_http_3xx

    handlers: list[Any] = [NoRedirects]
    # the verifying context (it loads the CA store: ~50 ms) only for an https server; a plain-HTTP one (a model on
    # this machine) never makes a TLS connection, redirects being refused
    if url.split(":", 1)[0].lower() == "https":
        handlers.append(request_module.HTTPSHandler(context=tls_context()))
    opener = request_module.build_opener(*handlers)
    request = request_module.Request(url, data=body, headers=headers, method="POST")
    try:
        response = opener.open(request, timeout=timeout_s)
    except request_module.HTTPError as exc:
        try:
            raise _Status(exc.code, exc.headers.get("x-should-retry") if exc.headers is not None else None,
                          _retry_after(exc.headers)) from None
        finally:
            exc.close()
    with response:
        if not 200 <= response.status < 300:
            raise _Status(response.status, None, None)
        declared = response.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise JudgeError("invalid_judge_response", f"the reply is larger than {limit} bytes")
        reply = bytearray()
        while chunk := response.read1(_CHUNK):
            reply += chunk
            if len(reply) > limit:
                raise JudgeError("invalid_judge_response", f"the reply is larger than {limit} bytes")
    return bytes(reply)


def _is_timeout(exc: BaseException) -> bool:
    reason = getattr(exc, "reason", None)  # urllib.error.URLError wraps the socket's error
    return isinstance(exc, (TimeoutError, socket.timeout)) or isinstance(reason, (TimeoutError, socket.timeout))


class OpenAIClient:
    """``client: openai``. Options (``judge.options``): ``structured_output`` (bool, default true: send
    ``response_format`` json_schema), ``token_limit_param`` (``max_completion_tokens`` | ``max_tokens`` | ``none``),
    ``temperature`` (number, not sent by default), ``max_retries`` (int, default 0; retries stay inside the
    judge deadline), ``max_reply_bytes`` (int, default 1 000 000).
    """

    def __init__(self, config: JudgeConfig) -> None:
        self.config = config
        self.model = require_model(config, "openai")
        self.base_url = config.base_url or os.environ.get("OPENAI_BASE_URL") or None
        self.key_env = config.api_key_env or DEFAULT_KEY_ENV
        self.structured_output = option(config, "structured_output", bool, True)
        self.token_limit_param = option(config, "token_limit_param", str, "max_completion_tokens")
        if self.token_limit_param not in _TOKEN_LIMIT_PARAMS:
            raise ConfigError(f"must be one of {', '.join(_TOKEN_LIMIT_PARAMS)}",
                              field="judge.options.token_limit_param")
        temperature = config.options.get("temperature")
        if temperature is not None and (isinstance(temperature, bool) or not isinstance(temperature, (int, float))):
            raise ConfigError("must be a number", field="judge.options.temperature")
        self.temperature = None if temperature is None else float(temperature)
        self.max_retries = option(config, "max_retries", int, 0)
        self.max_reply_bytes = option(config, "max_reply_bytes", int, DEFAULT_MAX_REPLY_BYTES)
        self.label = f"openai:{self.model}"

    def _api_key(self) -> str:
        key = api_key_from_env(self.config, DEFAULT_KEY_ENV)
        if key is not None:
            return key
        if is_loopback_url(self.base_url):
            return LOCAL_PLACEHOLDER_KEY
        raise JudgeError("missing_judge_key", f"the judge needs an API key in ${self.key_env}")

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json",
                   "Authorization": f"Bearer {self._api_key()}", "User-Agent": "verigate-openai"}
        # as the SDK does: the account's organization and project, when the environment names them
        for env, header in (("OPENAI_ORG_ID", "OpenAI-Organization"), ("OPENAI_PROJECT_ID", "OpenAI-Project")):
            if value := os.environ.get(env):
                headers[header] = value
        return headers

    def _arguments(self, request: ChatRequest) -> dict[str, Any]:
        arguments: dict[str, Any] = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": request.system},
                {"role": "user", "content": request.user},
            ],
        }
        if self.token_limit_param != "none":
            arguments[self.token_limit_param] = request.max_output_tokens
        if self.temperature is not None:
            arguments["temperature"] = self.temperature
        if self.structured_output and request.response_schema is not None:
            arguments["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": request.schema_name, "schema": dict(request.response_schema), "strict": True},
            }
        return arguments

    async def prepare(self) -> None:
        """Import the HTTP transport (the engine calls this before its timeout starts; ``complete`` does otherwise)."""
        await in_daemon_thread(_transport)

    async def complete(self, request: ChatRequest, *, timeout_s: float) -> str:
        timeout_s = bounded_timeout(timeout_s)
        headers = self._headers()  # the key check comes before any connection
        url = (self.base_url or DEFAULT_BASE_URL).rstrip("/") + "/chat/completions"
        # urllib (unlike the SDK's httpx) would also open data:, file: or ftp: URLs: a "reply" nobody sent
        if url.split(":", 1)[0].lower() not in ("http", "https"):
            raise JudgeError("judge_transport_error", "the judge's base URL must be an http:// or https:// URL")
        # ASCII escapes: a lone surrogate in an answer stays encodable JSON
        body = json.dumps(self._arguments(request), allow_nan=False).encode("ascii")
        deadline = time.monotonic() + timeout_s
        try:
            # one deadline around everything, retries and their back-off included
            async with asyncio.timeout(timeout_s):
                reply = await self._send(url, body, headers, deadline)
        except TimeoutError as exc:
            raise JudgeError("judge_timeout", f"no reply within {timeout_s:g} s") from exc
        data = reply_json(reply)
        _report_usage(data)
        return _message_content(data)

    async def _send(self, url: str, body: bytes, headers: dict[str, str], deadline: float) -> bytes:
        """The reply body, after at most ``max_retries`` retries by the SDK's rule; errors mapped to reasons."""
        retries = 0
        while True:
            # the socket's own timeout ends an abandoned worker thread soon after the deadline
            remaining = max(deadline - time.monotonic(), 0.001)
            try:
                return await in_daemon_thread(_post, url, body, headers, remaining, self.max_reply_bytes)
            except _Status as exc:
                error: JudgeError = http_status_error(exc.status)
                retry = _should_retry(exc)
                wait = exc.retry_after
            except JudgeError:
                raise
            except Exception as exc:  # every transport failure is a reason code, never a pass
                if _is_timeout(exc):
                    error = JudgeError("judge_timeout", "no reply before the judge deadline")
                else:
                    error = JudgeError("judge_transport_error", f"cannot reach the judge: {describe(exc)}")
                retry, wait = True, None
            if not retry or retries >= self.max_retries:
                raise error
            await asyncio.sleep(_backoff(retries, wait))
            retries += 1


def _should_retry(status: _Status) -> bool:
    """The SDK's rule: the server's ``x-should-retry`` wins; else 408, 409, 429 and every 5xx."""
    if status.should_retry in ("true", "false"):
        return status.should_retry == "true"
    return status.status in _RETRIED or status.status >= 500


def _backoff(retries: int, retry_after: float | None) -> float:
    if retry_after is not None and 0 < retry_after <= _MAX_RETRY_AFTER_S:
        return retry_after
    # jitter spreads the retries of many gates; it is not a secret
    return min(_INITIAL_BACKOFF_S * 2.0**retries, _MAX_BACKOFF_S) * (1 - 0.25 * random.random())


def _message_content(data: Any) -> str:
    """The assistant text of a chat.completion body (read as JSON); anything else is ``invalid_judge_response``."""
    try:
        message = data["choices"][0]["message"]
    except (KeyError, IndexError, TypeError) as exc:
        raise JudgeError("invalid_judge_response", "the reply is not a chat completion") from exc
    if not isinstance(message, dict):
        raise JudgeError("invalid_judge_response", "the reply has no message")
    if message.get("refusal"):
        raise JudgeError("invalid_judge_response", "the model refused to judge")
    content = message.get("content")
    if not isinstance(content, str) or not content.strip():
        raise JudgeError("invalid_judge_response", "the reply has no text content")
    return content


def _report_usage(data: object) -> None:
    """The token counts (``cost`` too when a gateway such as OpenRouter adds it), model, id and finish reason of a
    chat.completion, for whoever collects them (``verigate judge eval``, the installed observers)."""
    if not isinstance(data, dict):
        return
    usage = data.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    choices = data.get("choices")
    first = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    report_usage(input_tokens=usage.get("prompt_tokens"), output_tokens=usage.get("completion_tokens"),
                 cost_usd=usage.get("cost"), response_model=data.get("model"), response_id=data.get("id"),
                 finish_reason=first.get("finish_reason"))
