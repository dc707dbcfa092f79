"""One tool-free Messages API call through the official ``anthropic`` SDK, every failure mapped to a reason."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import anthropic

from verigate import JudgeError
from verigate.judge import (
    DEFAULT_MAX_REPLY_BYTES,
    ChatRequest,
    JudgeConfig,
    api_key_from_env,
    bounded_timeout,
    is_loopback_url,
    mapped_sdk_errors,
    option,
    read_capped,
    require_model,
    tls_context,
)

__all__ = ["DEFAULT_KEY_ENV", "AnthropicClient"]

DEFAULT_KEY_ENV = "ANTHROPIC_API_KEY"
#: sent to a local Anthropic-compatible server that needs no key (the SDK refuses to run without one)
LOCAL_PLACEHOLDER_KEY = "verigate-local-no-key"


class AnthropicClient:
    """``client: anthropic``. The JSON shape is asked for in the system prompt (tool-free JSON instruction): the
    verdict schema is appended to it. Options: ``max_retries`` (int, default 0; inside the judge deadline),
    ``max_reply_bytes`` (int, default 1 000 000).
    """

    def __init__(self, config: JudgeConfig) -> None:
        self.config = config
        self.model = require_model(config, "anthropic")
        self.base_url = config.base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        self.key_env = config.api_key_env or DEFAULT_KEY_ENV
        self.max_retries = option(config, "max_retries", int, 0)
        self.max_reply_bytes = option(config, "max_reply_bytes", int, DEFAULT_MAX_REPLY_BYTES)
        self.label = f"anthropic:{self.model}"

    def _api_key(self) -> str:
        key = api_key_from_env(self.config, DEFAULT_KEY_ENV)
        if key is not None:
            return key
        if is_loopback_url(self.base_url):
            return LOCAL_PLACEHOLDER_KEY
        raise JudgeError("missing_judge_key", f"the judge needs an API key in ${self.key_env}")

    def _arguments(self, request: ChatRequest) -> dict[str, Any]:
        system = request.system
        if request.response_schema is not None:
            schema = json.dumps(request.response_schema, separators=(",", ":"))
            system = f"{system}\n\nThe JSON object must match this JSON schema: {schema}"
        return {
            "model": self.model,
            "max_tokens": request.max_output_tokens,
            "system": system,
            "messages": [{"role": "user", "content": request.user}],
        }

    async def complete(self, request: ChatRequest, *, timeout_s: float) -> str:
        timeout_s = bounded_timeout(timeout_s)
        client = anthropic.AsyncAnthropic(
            api_key=self._api_key(),
            base_url=self.base_url,
            timeout=timeout_s,
            max_retries=self.max_retries,
            # a fresh client per call (it is bound to the running event loop) sharing one TLS context
            http_client=anthropic.DefaultAsyncHttpxClient(verify=tls_context()),
        )
        errors = mapped_sdk_errors(timeout_s, timeout=anthropic.APITimeoutError, status=anthropic.APIStatusError,
                                   connection=anthropic.APIConnectionError, base=anthropic.AnthropicError)
        try:
            # one deadline around everything, retries included
            with errors:
                async with asyncio.timeout(timeout_s):
                    create = client.messages.with_streaming_response.create
                    async with create(**self._arguments(request)) as response:
                        body = await read_capped(response.iter_bytes(), self.max_reply_bytes)
        finally:
            await client.close()
        return _message_text(body)


def _message_text(body: bytes) -> str:
    """The text blocks of a Messages API reply, joined; anything else is ``invalid_judge_response``."""
    try:
        data = json.loads(body)
        blocks = data["content"]
    except (ValueError, KeyError, TypeError) as exc:
        raise JudgeError("invalid_judge_response", "the reply is not a Messages API message") from exc
    if data.get("stop_reason") == "refusal":
        raise JudgeError("invalid_judge_response", "the model refused to judge")
    if not isinstance(blocks, list):
        raise JudgeError("invalid_judge_response", "the reply content is not a list of blocks")
    text = "".join(
        block["text"] for block in blocks
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
    )
    if not text.strip():
        raise JudgeError("invalid_judge_response", "the reply has no text")
    return text
