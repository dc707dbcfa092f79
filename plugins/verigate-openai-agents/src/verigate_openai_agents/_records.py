"""The candidate's parts read from the Agents SDK's own records: the run input, the run's items, its usage.

Tool calls are paired with their results by ``call_id`` (a ``ToolCallItem`` and its ``ToolCallOutputItem``).
``ok`` is False for a call whose result never came back and for the SDK's default tool-error text (what the SDK
sends the model when a function tool raised); True otherwise. A custom ``failure_error_function`` writes text
the SDK does not mark, so such a failure reads as ok — the judge still sees the text.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agents import Usage
from agents.items import ToolCallItem, ToolCallOutputItem, TResponseInputItem
from agents.tool import default_tool_error_function

from verigate import ToolObservation

__all__ = ["final_text", "input_list", "request_text", "tool_calls", "usage_of"]

# the SDK's fixed reply to the model when a function tool raised (its own record of a failed call)
_SDK_TOOL_ERROR = default_tool_error_function(None, Exception())  # type: ignore[arg-type]


def _field(raw: Any, name: str) -> Any:
    """A field of a raw item, which the SDK keeps either as a pydantic model or as a plain dict."""
    if isinstance(raw, Mapping):
        return raw.get(name)
    return getattr(raw, name, None)


def _text_of(content: Any) -> str:
    """The text of a message's content: a string, or the text parts of a content list."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    if isinstance(content, Iterable):
        for part in content:
            text = _field(part, "text")
            if isinstance(text, str):
                parts.append(text)
    return "\n".join(parts)


def input_list(value: str | Sequence[TResponseInputItem]) -> list[TResponseInputItem]:
    """The run input as a list of input items (a string is one user message)."""
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    return list(value)


def request_text(value: str | Sequence[TResponseInputItem]) -> str:
    """What the user asked: the string input, or the text of the user messages of an item list."""
    if isinstance(value, str):
        return value
    texts = [_text_of(_field(item, "content")) for item in value if _field(item, "role") == "user"]
    return "\n".join(text for text in texts if text)


def _arguments(raw: Any) -> dict[str, Any]:
    arguments = _field(raw, "arguments")
    if isinstance(arguments, Mapping):
        return dict(arguments)
    if isinstance(arguments, str) and arguments:
        try:
            parsed = json.loads(arguments)
        except ValueError:
            return {"arguments": arguments}  # the model's malformed arguments, kept as they were
        return parsed if isinstance(parsed, dict) else {"arguments": parsed}
    return {}


def _output_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    try:
        return json.dumps(output, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(output)


def tool_calls(items: Iterable[object]) -> tuple[ToolObservation, ...]:
    """Every tool call of the items, in call order, with its result."""
    calls: list[tuple[str, str, dict[str, Any]]] = []
    outputs: dict[str, Any] = {}
    for item in items:
        if isinstance(item, ToolCallItem):
            raw = item.raw_item
            call_id = _field(raw, "call_id") or _field(raw, "id") or f"call-{len(calls)}"
            name = _field(raw, "name") or _field(raw, "type") or "tool"
            calls.append((str(call_id), str(name), _arguments(raw)))
        elif isinstance(item, ToolCallOutputItem):
            call_id = _field(item.raw_item, "call_id")
            if call_id is not None:
                outputs[str(call_id)] = item.output
    observed: list[ToolObservation] = []
    for call_id, name, arguments in calls:
        if call_id not in outputs:
            observed.append(ToolObservation(name, arguments, "", ok=False))
            continue
        text = _output_text(outputs[call_id])
        observed.append(ToolObservation(name, arguments, text, ok=text != _SDK_TOOL_ERROR))
    return tuple(observed)


def final_text(final_output: Any) -> str:
    """The run's final output as text: a string as it is, a structured output (pydantic model) as JSON."""
    if isinstance(final_output, str):
        return final_output
    if final_output is None:
        return ""
    dump = getattr(final_output, "model_dump_json", None)
    if callable(dump):
        text = dump()
        if isinstance(text, str):
            return text
    return _output_text(final_output)


def usage_of(usage: Usage | None) -> dict[str, int]:
    """The SDK's usage counters (requests and tokens) as the candidate's usage mapping."""
    if usage is None:
        return {}
    counters = {
        "requests": usage.requests,
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens,
    }
    return {name: value for name, value in counters.items() if isinstance(value, int)}
