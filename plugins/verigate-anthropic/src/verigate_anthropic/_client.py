"""One Messages API call through the official ``anthropic`` SDK, every failure mapped to a reason.

The verdict is asked for as a forced call of one tool (``tool_choice`` names it) whose ``input_schema`` is the
verdict schema, and read from that tool call's ``input`` only: text blocks around it, which may quote what the agent
wrote, are never searched for a verdict. The tool is never run; it is the API's structured-output channel."""

from __future__ import annotations

import asyncio
import importlib
import json
import os
from collections.abc import Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any

from verigate import JudgeError
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

if TYPE_CHECKING:
    import ssl

__all__ = ["DEFAULT_KEY_ENV", "AnthropicClient"]

DEFAULT_KEY_ENV = "ANTHROPIC_API_KEY"
#: sent to a local Anthropic-compatible server that needs no key (the SDK refuses to run without one)
LOCAL_PLACEHOLDER_KEY = "verigate-local-no-key"
#: the one tool the model is made to call; its input is the verdict
VERDICT_TOOL = "submit_verdict"



def _sdk() -> ModuleType:
    """The ``anthropic`` SDK, imported at the first call, not when the plug-in is loaded or the client built: it takes
    seconds to import, and most gate and hook processes never call the judge. A missing or broken SDK is a
    JudgeError (a verification_error verdict, so a pending review), never a pass."""
    try:
        return importlib.import_module("anthropic")
    except Exception as exc:  # any failure to import the SDK: this call cannot be judged
        raise JudgeError("judge_unavailable", f"the anthropic SDK failed to import: {type(exc).__name__}") from exc


class AnthropicClient:
    """``client: anthropic``. Options: ``structured_output`` (bool, default true: the forced ``submit_verdict``
    tool call; false: the schema is appended to the system prompt and the reply text must be exactly one JSON
    object — for Anthropic-compatible servers without tool use), ``max_retries`` (int, default 0; inside the judge
    deadline), ``max_reply_bytes`` (int, default 1 000 000).
    """

    def __init__(self, config: JudgeConfig) -> None:
        self.config = config
        self.model = require_model(config, "anthropic")
        self.base_url = config.base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        self.key_env = config.api_key_env or DEFAULT_KEY_ENV
        self.structured_output = option(config, "structured_output", bool, True)
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

    def _verify(self) -> ssl.SSLContext:
        """The TLS context for this call's server: the process's verifying one for https (the SDK's default base
        URL included), built at the first https call since it loads the CA store (~50 ms). A plain-HTTP server (a
        model on this machine) gets a verifying context with no CA at all: httpx builds a context for every
        client, and should a TLS connection happen anyway, no certificate verifies, so it fails closed."""
        if (self.base_url or "https:").split(":", 1)[0].lower() == "https":
            return tls_context()
        import ssl

        return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # CERT_REQUIRED and check_hostname are its defaults

    def _forced_tool(self, request: ChatRequest) -> bool:
        return self.structured_output and request.response_schema is not None

    def _arguments(self, request: ChatRequest) -> dict[str, Any]:
        system = request.system
        arguments: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_output_tokens,
            "messages": [{"role": "user", "content": request.user}],
        }
        if self._forced_tool(request):
            assert request.response_schema is not None
            system = f"{system}\n\nGive your verdict by calling the tool {VERDICT_TOOL} (its input is the JSON object)."
            arguments["tools"] = [{
                "name": VERDICT_TOOL,
                "description": "Record the one verdict of this judgment.",
                "input_schema": dict(request.response_schema),
            }]
            arguments["tool_choice"] = {"type": "tool", "name": VERDICT_TOOL}
        elif request.response_schema is not None:
            schema = json.dumps(request.response_schema, separators=(",", ":"))
            system = f"{system}\n\nThe JSON object must match this JSON schema: {schema}"
        arguments["system"] = system
        return arguments

    async def prepare(self) -> None:
        """Import the SDK (the engine calls this before its timeout starts; ``complete`` imports it otherwise)."""
        await in_daemon_thread(_sdk)

    async def complete(self, request: ChatRequest, *, timeout_s: float) -> str | Mapping[str, Any]:
        timeout_s = bounded_timeout(timeout_s)
        # imported on a daemon thread: seconds of import must not stall the event loop, and the judge deadline
        # (which counts it) can still fire on time
        sdk = await in_daemon_thread(_sdk)
        client = sdk.AsyncAnthropic(
            api_key=self._api_key(),
            base_url=self.base_url,
            timeout=timeout_s,
            max_retries=self.max_retries,
            # a fresh client per call (it is bound to the running event loop) sharing one TLS context
            http_client=sdk.DefaultAsyncHttpxClient(verify=self._verify()),
        )
        errors = mapped_sdk_errors(timeout_s, timeout=sdk.APITimeoutError, status=sdk.APIStatusError,
                                   connection=sdk.APIConnectionError, base=sdk.AnthropicError)
        try:
            # one deadline around everything, retries included
            with errors:
                async with asyncio.timeout(timeout_s):
                    create = client.messages.with_streaming_response.create
                    async with create(**self._arguments(request)) as response:
                        body = await read_capped(response.iter_bytes(), self.max_reply_bytes)
        finally:
            await client.close()
        blocks = _content_blocks(body)
        return _tool_input(blocks) if self._forced_tool(request) else _message_text(blocks)


def _content_blocks(body: bytes) -> list[Any]:
    """The content blocks of a Messages API reply (read strictly); anything else is ``invalid_judge_response``."""
    data = reply_json(body)
    if isinstance(data, dict):  # for judge eval and the observers: token counts, model, id, stop reason
        found = data.get("usage")
        usage = found if isinstance(found, dict) else {}
        report_usage(input_tokens=usage.get("input_tokens"), output_tokens=usage.get("output_tokens"),
                     response_model=data.get("model"), response_id=data.get("id"),
                     finish_reason=data.get("stop_reason"))
    blocks = data.get("content") if isinstance(data, dict) else None
    if not isinstance(blocks, list):
        raise JudgeError("invalid_judge_response", "the reply is not a Messages API message")
    if data.get("stop_reason") == "refusal":
        raise JudgeError("invalid_judge_response", "the model refused to judge")
    return blocks


def _tool_input(blocks: list[Any]) -> Mapping[str, Any]:
    """The input of the one ``submit_verdict`` tool call: none, or several, is no verdict."""
    calls = [block for block in blocks if isinstance(block, dict) and block.get("type") == "tool_use"]
    if len(calls) != 1 or calls[0].get("name") != VERDICT_TOOL:
        raise JudgeError("invalid_judge_response", f"the reply has {len(calls)} tool calls, not one {VERDICT_TOOL}")
    verdict = calls[0].get("input")
    if not isinstance(verdict, dict):
        raise JudgeError("invalid_judge_response", "the verdict tool call has no input object")
    return verdict


def _message_text(blocks: list[Any]) -> str:
    """The text blocks of a Messages API reply, joined; anything else is ``invalid_judge_response``."""
    text = "".join(
        block["text"] for block in blocks
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
    )
    if not text.strip():
        raise JudgeError("invalid_judge_response", "the reply has no text")
    return text
