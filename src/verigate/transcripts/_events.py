"""Typed events of a session transcript, each with the 1-based source line it came from."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple, TypeVar

from .. import _transcript_lines

__all__ = [
    "AssistantText",
    "CompactBoundary",
    "Event",
    "PromptOrigin",
    "ToolResult",
    "ToolUse",
    "UserPrompt",
]

#: where a user-role text came from (``verigate._transcript_lines``): only "typed" and "command" were typed by a person
PromptOrigin = _transcript_lines.PromptOrigin

#: a tool_result text that marks the call as failed even when is_error is null or missing
TOOL_USE_ERROR_TAG = "<tool_use_error>"
#: Claude Code's text for calls cancelled because a parallel call failed (a cascade, not an independent failure)
SIBLING_ERROR_TEXT = "Sibling tool call errored"

_T = TypeVar("_T", bound=tuple[Any, ...])


def _same_type_equal(self: tuple[Any, ...], other: object) -> bool:
    return type(other) is type(self) and tuple.__eq__(self, other)


def _same_type_unequal(self: tuple[Any, ...], other: object) -> bool:
    return not _same_type_equal(self, other)


def same_type_equality(cls: type[_T]) -> type[_T]:
    """Make a named tuple compare like a value object: equal only to an instance of its own type, never to a plain
    tuple (events are named tuples rather than attrs classes because a multi-GB transcript makes millions of them,
    and a tuple is built in less than half the time)."""
    type.__setattr__(cls, "__eq__", _same_type_equal)
    type.__setattr__(cls, "__ne__", _same_type_unequal)
    return cls


@same_type_equality
class UserPrompt(NamedTuple):
    """A user-role text line; ``typed`` is True only for what a person typed (not tool results, not injections)."""
    text: str
    line: int
    origin: PromptOrigin
    sidechain: bool = False

    @property
    def typed(self) -> bool:
        return self.origin in ("typed", "command") and not self.sidechain


@same_type_equality
class AssistantText(NamedTuple):
    """One text block of an assistant message (several lines may share one ``message_id``)."""
    text: str
    line: int
    message_id: str = ""
    sidechain: bool = False
    api_error: bool = False


@same_type_equality
class ToolUse(NamedTuple):
    """A tool call: ``input`` is the parsed argument mapping; ``cwd`` is the working directory of its line."""
    id: str
    name: str
    input: Mapping[str, Any]
    line: int
    cwd: str | None = None
    sidechain: bool = False
    message_id: str = ""
    agent_id: str | None = None


@same_type_equality
class ToolResult(NamedTuple):
    """What a tool call returned; ``is_error`` is exactly what the transcript says (None when null or missing)."""
    tool_use_id: str
    text: str
    is_error: bool | None
    line: int
    sidechain: bool = False
    agent_id: str | None = None

    @property
    def failed(self) -> bool:
        """True when the call failed: ``is_error`` true, or a ``<tool_use_error>`` text with no explicit false."""
        if self.is_error is not None:
            return self.is_error
        return TOOL_USE_ERROR_TAG in self.text

    @property
    def sibling_cascade(self) -> bool:
        """True when the call was cancelled only because a parallel call failed."""
        return self.failed and SIBLING_ERROR_TEXT in self.text[:500]


@same_type_equality
class CompactBoundary(NamedTuple):
    """The host compacted the conversation here; the chain continues after it."""
    line: int
    sidechain: bool = False


Event = UserPrompt | AssistantText | ToolUse | ToolResult | CompactBoundary
