"""What one gated attempt was, read from Pydantic AI's own records: the run's message history and usage.

Only the messages of the current run count (a conversation's history carries earlier runs), and of those only the
ones since the previous validation of this run (each attempt is one candidate; the gate merges them on completion).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pydantic_core
from pydantic_ai import RunContext
from pydantic_ai.messages import (
    BaseToolReturnPart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.usage import RunUsage

from verigate import ToolObservation

__all__ = ["final_text", "request_text", "run_messages", "tool_observations", "usage_counters", "usage_since"]

_USAGE_KEYS = ("input_tokens", "output_tokens", "requests", "tool_calls")


def _text_of(content: str | Sequence[Any]) -> str:
    """A user prompt's text: multimodal items (images, files) are left out, they are not text a judge reads."""
    if isinstance(content, str):
        return content
    return "\n".join(item for item in content if isinstance(item, str))


def run_messages(ctx: RunContext[Any]) -> list[ModelMessage]:
    """The messages of this run (a history handed in from earlier runs carries other run ids)."""
    messages = list(ctx.messages)
    if ctx.run_id is None:
        return messages
    own = [message for message in messages if message.run_id == ctx.run_id]
    return own or messages


def request_text(ctx: RunContext[Any], messages: Sequence[ModelMessage]) -> str:
    """The person's request of this run: the run's prompt, else the last user prompt in its messages."""
    if ctx.prompt is not None:
        return _text_of(ctx.prompt)
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            for part in reversed(message.parts):
                if isinstance(part, UserPromptPart):
                    return _text_of(part.content)
    return ""


def final_text(output: Any) -> str:
    """The output as the text a judge reads: a string as it is, structured output as its JSON."""
    if isinstance(output, str):
        return output
    return pydantic_core.to_json(output, fallback=repr).decode("utf-8")


def tool_observations(messages: Sequence[ModelMessage], *, skip_call_id: str | None) -> tuple[ToolObservation, ...]:
    """Every tool call in ``messages`` with its result and whether it succeeded (``ok`` None: no result yet).
    ``skip_call_id`` is the output tool call being validated: it is the answer, not a tool the agent used."""
    returns: dict[str, BaseToolReturnPart[Any]] = {}
    for message in messages:
        if isinstance(message, ModelRequest):
            for request_part in message.parts:
                if isinstance(request_part, BaseToolReturnPart):
                    returns[request_part.tool_call_id] = request_part
    observations: list[ToolObservation] = []
    for message in messages:
        if not isinstance(message, ModelResponse):
            continue
        for part in message.parts:
            if not isinstance(part, ToolCallPart) or part.tool_call_id == skip_call_id:
                continue
            result = returns.get(part.tool_call_id)
            # arguments that are not JSON come back as the raw text under one key: the judge still sees them
            arguments: Mapping[str, Any] = part.args_as_dict()
            observations.append(ToolObservation(
                name=part.tool_name,
                input=arguments,
                output="" if result is None else result.model_response_str(),
                ok=None if result is None else result.outcome == "success",
            ))
    return tuple(observations)


def usage_since(now: RunUsage, before: Mapping[str, int]) -> dict[str, int]:
    """The run's usage counters minus what earlier attempts of this run already reported."""
    return {key: max(0, int(getattr(now, key, 0)) - before.get(key, 0)) for key in _USAGE_KEYS}


def usage_counters(now: RunUsage) -> dict[str, int]:
    return {key: int(getattr(now, key, 0)) for key in _USAGE_KEYS}
