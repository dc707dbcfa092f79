"""Pair tool calls with their results by id, and extract the latest turn of a session."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path
from typing import Literal, NamedTuple, TypeGuard

import attrs

from .._errors import InputError
from .._models import ToolObservation
from ._events import AssistantText, Event, ToolResult, ToolUse, UserPrompt, same_type_equality
from ._reader import Transcript, read_claude_code, read_codex

__all__ = ["CUT_BEFORE", "DEFAULT_MAX_PENDING", "MISSING_RESULT", "REQUEST_ORIGINS", "CallPairer", "Host", "ToolCall",
           "Turn", "TurnFold", "cut_text", "last_turn", "read", "starts_turn"]

Host = Literal["claude-code", "codex"]
#: unanswered calls kept waiting for their result; older ones are given up (ok unknown) so memory stays flat
DEFAULT_MAX_PENDING = 256
#: default cap on one observation's text in a Turn (the judge caps far lower; this bounds memory)
DEFAULT_OUTPUT_CHARS = 20_000
#: the characters a cut may fall just before: no token a shipped secret rule recognises contains one (a
#: private-key block contains newlines, but its rule also recognises a block whose END line was cut off)
CUT_BEFORE = " \t\n\r\x0b\x0c\"'<>"


def cut_text(text: str, limit: int, marker: str = "[… {cut} characters cut]") -> str:
    """``text`` cut to at most ``limit`` characters plus ``marker`` (``{cut}``: how many were cut), never inside a
    token: the cut falls just before the last whitespace, quote or angle bracket within the limit, so a secret
    that straddles the limit is dropped whole rather than left half behind where redaction rules cannot
    recognise it (nothing is kept when the first ``limit`` characters hold no such boundary)."""
    if len(text) <= limit:
        return text
    boundary = max(max(text.rfind(character, 0, limit + 1) for character in CUT_BEFORE), 0)
    return text[:boundary] + marker.format(cut=len(text) - boundary)


@same_type_equality
class ToolCall(NamedTuple):
    """A tool_use and its result (None when the result never arrived)."""

    use: ToolUse
    result: ToolResult | None

    @property
    def ok(self) -> bool | None:
        return None if self.result is None else not self.result.failed


class CallPairer:
    """Pairs results to calls by ``tool_use_id`` (never by position) and releases them in call order.

    ``add_use``/``add_result`` return the calls that are complete, in the order they were issued. A call that
    waits behind more than ``max_pending`` others is released without a result.
    """

    def __init__(self, max_pending: int = DEFAULT_MAX_PENDING) -> None:
        #: calls not yet released, in issue order; the first one is always unanswered between calls
        self._pending: OrderedDict[str, ToolUse] = OrderedDict()
        #: results that arrived while an earlier call was still unanswered, by call id
        self._answers: dict[str, ToolResult] = {}
        self._max_pending = max_pending
        self.orphan_results = 0
        self.duplicate_uses = 0

    def add_use(self, use: ToolUse) -> list[ToolCall]:
        pending = self._pending
        if use.id in pending:
            self.duplicate_uses += 1  # the same block logged twice (resumed sessions repeat lines)
            return []
        pending[use.id] = use
        if len(pending) <= self._max_pending:
            return []  # the first call is still unanswered: nothing can be released
        released: list[ToolCall] = []
        while len(pending) > self._max_pending:
            tool_id, oldest = pending.popitem(last=False)
            released.append(ToolCall(oldest, self._answers.pop(tool_id, None)))
        self._release_answered(released)
        return released

    def add_result(self, result: ToolResult) -> list[ToolCall]:
        tool_id = result.tool_use_id
        pending = self._pending
        if tool_id not in pending:
            self.orphan_results += 1
            return []
        if tool_id in self._answers:
            return []  # a repeated result: the first one stands
        if tool_id != next(iter(pending)):
            self._answers[tool_id] = result  # an earlier call is still unanswered: wait for it
            return []
        released = [ToolCall(pending.pop(tool_id), result)]
        if self._answers:
            self._release_answered(released)
        return released

    def _release_answered(self, released: list[ToolCall]) -> None:
        """Move the answered calls at the front to ``released``, in issue order."""
        pending, answers = self._pending, self._answers
        while pending:
            tool_id = next(iter(pending))
            result = answers.pop(tool_id, None)
            if result is None:
                break
            released.append(ToolCall(pending.pop(tool_id), result))

    def flush(self) -> list[ToolCall]:
        """Release every waiting call, answered or not (end of file, or a new turn)."""
        released = [ToolCall(use, self._answers.get(tool_id)) for tool_id, use in self._pending.items()]
        self._pending.clear()
        self._answers.clear()
        return released


def read(path: str | Path, *, host: Host = "claude-code") -> Transcript:
    """The reader for ``host``."""
    if host == "claude-code":
        return read_claude_code(path)
    if host == "codex":
        return read_codex(path)
    raise InputError(f"unknown transcript host {host!r} (expected 'claude-code' or 'codex')", source=str(path))


#: a tool call's output when the transcript holds no result for it (the host may not have written it yet)
MISSING_RESULT = "[no result for this call in the transcript: the observation is missing, not empty]"

@attrs.frozen
class Turn:
    """The latest turn: the person's last typed request, the final assistant text, the tool calls between."""

    request: str
    final_text: str
    tool_calls: tuple[ToolObservation, ...]
    warnings: int
    #: the line of the request (None when the transcript has no typed request)
    request_line: int | None = None
    truncated_tail: bool = False
    #: how many tool calls of the turn have no result in the transcript (yet)
    missing_results: int = 0


def _observation(call: ToolCall, output_chars: int) -> ToolObservation:
    if call.result is None:  # missing is not empty: the judge must not read a silent gap as an empty output
        return ToolObservation(call.use.name, call.use.input, MISSING_RESULT, None)
    text = call.result.text
    return ToolObservation(call.use.name, call.use.input, cut_text(text, output_chars, "\n[… {cut} characters cut]"),
                           call.ok)


#: the origins of a prompt that begins a turn: what a person typed (a slash command included)
REQUEST_ORIGINS = ("typed", "command")


def starts_turn(event: Event, subagent: bool) -> TypeGuard[UserPrompt]:
    """True when ``event`` begins a turn: a typed prompt (or slash command) of the main session, or of the
    sub-agent when ``subagent``."""
    return (isinstance(event, UserPrompt) and event.origin in REQUEST_ORIGINS
            and getattr(event, "sidechain", False) is subagent)


class TurnFold:
    """The latest turn of a stream of events, folded one event at a time (``last_turn``'s loop, shared by the
    reader that starts at the turn's first line, ``_tail``)."""

    def __init__(self, subagent: bool) -> None:
        self.subagent = subagent
        self.request = ""
        self.request_line: int | None = None
        self.final_parts: list[str] = []
        self.final_message = ""
        self.calls: list[ToolCall] = []
        self.pairer = CallPairer()

    def add(self, events: Iterable[Event]) -> None:
        subagent = self.subagent
        for event in events:
            if getattr(event, "sidechain", False) is not subagent:
                continue
            if isinstance(event, UserPrompt):
                if event.origin in REQUEST_ORIGINS:
                    self.request, self.request_line = event.text, event.line
                    self.final_parts, self.final_message, self.calls = [], "", []
                    self.pairer = CallPairer()
            elif isinstance(event, AssistantText):
                if not event.message_id or event.message_id != self.final_message:
                    self.final_parts = []  # a new message: the final text is the last message's text
                self.final_parts.append(event.text)
                self.final_message = event.message_id
            elif isinstance(event, ToolUse):
                self.calls.extend(self.pairer.add_use(event))
            elif isinstance(event, ToolResult):
                self.calls.extend(self.pairer.add_result(event))

    def turn(self, output_chars: int, request_line: int | None, *, warnings: int, truncated_tail: bool) -> Turn:
        """The turn (the waiting calls released without a result); the line and the reader's counts as the
        caller has them."""
        calls = self.calls
        calls.extend(self.pairer.flush())
        return Turn(
            request=self.request,
            final_text="\n\n".join(self.final_parts),
            tool_calls=tuple(_observation(call, output_chars) for call in calls),
            warnings=warnings,
            request_line=request_line,
            truncated_tail=truncated_tail,
            missing_results=sum(1 for call in calls if call.result is None),
        )


def last_turn(path: str | Path, *, host: Host = "claude-code", output_chars: int = DEFAULT_OUTPUT_CHARS,
              subagent: bool = False) -> Turn:
    """Stream ``path`` once and return its latest turn; sidechain (sub-agent) lines are left out.

    ``subagent=True`` reads a Claude Code sub-agent transcript instead (``…/subagents/agent-*.jsonl``, every line
    a sidechain line): its sidechain lines are the turn, and the request is the prompt the sub-agent was given.

    The request is the last user prompt a person typed (slash commands included; tool results, meta lines,
    command output, interrupts, compaction summaries and injected context are not requests). The final text
    is the text of the last assistant message after it (its text blocks joined). Tool calls are those issued
    after the request, in issue order, each with its paired result (``ok`` None when none arrived); an output
    longer than ``output_chars`` is cut by :func:`cut_text` (at a token boundary, never through a secret).
    """
    transcript = read(path, host=host)
    fold = TurnFold(subagent)
    try:
        fold.add(transcript)
    except OSError as exc:
        raise InputError(f"cannot read transcript: {exc}", source=str(path)) from exc
    return fold.turn(output_chars, fold.request_line, warnings=transcript.warnings,
                     truncated_tail=transcript.truncated_tail)
