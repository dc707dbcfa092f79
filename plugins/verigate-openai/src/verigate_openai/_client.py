"""One tool-free chat-completions call through the official ``openai`` SDK, every failure mapped to a reason."""

from __future__ import annotations

import asyncio
import importlib
import os
from types import ModuleType
from typing import Any

from verigate import ConfigError, JudgeError
from verigate.judge import (
    DEFAULT_MAX_REPLY_BYTES,
    ChatRequest,
    JudgeConfig,
    api_key_from_env,
    bounded_timeout,
    in_daemon_thread,
    is_loopback_url,
    mapped_sdk_errors,
    option,
    read_capped,
    reply_json,
    report_usage,
    require_model,
    tls_context,
)

__all__ = ["DEFAULT_KEY_ENV", "OpenAIClient"]

DEFAULT_KEY_ENV = "OPENAI_API_KEY"
#: sent to local servers (Ollama, vLLM, llama.cpp, LM Studio) that need no key but whose SDK wants one
LOCAL_PLACEHOLDER_KEY = "verigate-local-no-key"
_TOKEN_LIMIT_PARAMS = ("max_completion_tokens", "max_tokens", "none")



def _sdk() -> ModuleType:
    """The ``openai`` SDK, imported at the first call, not when the plug-in is loaded or the client built: it takes
    seconds to import, and most gate and hook processes never call the judge. A missing or broken SDK is a
    JudgeError (a verification_error verdict, so a pending review), never a pass."""
    try:
        return importlib.import_module("openai")
    except Exception as exc:  # any failure to import the SDK: this call cannot be judged
        raise JudgeError("judge_unavailable", f"the openai SDK failed to import: {type(exc).__name__}") from exc


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
        """Import the SDK (the engine calls this before its timeout starts; ``complete`` imports it otherwise)."""
        await in_daemon_thread(_sdk)

    async def complete(self, request: ChatRequest, *, timeout_s: float) -> str:
        timeout_s = bounded_timeout(timeout_s)
        # imported on a daemon thread: seconds of import must not stall the event loop, and the judge deadline
        # (which counts it) can still fire on time
        sdk = await in_daemon_thread(_sdk)
        client = sdk.AsyncOpenAI(
            api_key=self._api_key(),
            base_url=self.base_url,
            timeout=timeout_s,
            max_retries=self.max_retries,
            # a fresh client per call (it is bound to the running event loop) sharing one TLS context
            http_client=sdk.DefaultAsyncHttpxClient(verify=tls_context()),
        )
        errors = mapped_sdk_errors(timeout_s, timeout=sdk.APITimeoutError, status=sdk.APIStatusError,
                                   connection=sdk.APIConnectionError, base=sdk.OpenAIError)
        try:
            # one deadline around everything, retries included
            with errors:
                async with asyncio.timeout(timeout_s):
                    create = client.chat.completions.with_streaming_response.create
                    async with create(**self._arguments(request)) as response:
                        body = await read_capped(response.iter_bytes(), self.max_reply_bytes)
        finally:
            await client.close()
        data = reply_json(body)
        _report_usage(data)
        return _message_content(data)


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
