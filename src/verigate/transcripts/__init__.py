"""Streaming readers of Claude Code and Codex session transcripts, shared by the grader, the gate hooks and
the self-gate detector.

Public API::

    read_claude_code(path, *, progress=None, pipes=True) -> Transcript   # Claude Code session / sub-agent JSONL
    read_codex(path, *, progress=None, pipes=True) -> Transcript         # Codex rollout JSONL (~/.codex/sessions/…)
    read(path, *, host="claude-code"|"codex") -> Transcript
    last_turn(path, *, host="claude-code"|"codex", output_chars=20000, subagent=False) -> Turn
    subagent_files(session_path, *, before_reading=None) -> list[Path]   # current, Workflow and old layouts
    cut_text(text, limit) -> str                             # cut at a token boundary: never half a secret
    CallPairer                                               # pairs ToolUse/ToolResult by id, in issue order

``pipes`` False reads a regular file only: a named pipe is an input error at once instead of a read that waits
for a writer (the grader reads so). A :class:`Transcript` is iterated once and yields typed events, each with its
1-based source ``line``:

* :class:`UserPrompt` ``(text, line, origin, sidechain)`` — ``typed`` is True only for a person's own prompt
  or slash command; ``origin`` says what else it is (``meta``, ``command_output``, ``interrupt``,
  ``compact_summary``, ``injected``). Tool results are never prompts.
* :class:`AssistantText` ``(text, line, message_id, sidechain, api_error)`` — one per text block; several
  lines may share one ``message_id``.
* :class:`ToolUse` ``(id, name, input, line, cwd, sidechain, message_id, agent_id)``.
* :class:`ToolResult` ``(tool_use_id, text, is_error, line, sidechain, agent_id)`` — ``is_error`` is True,
  False or None (null or missing) exactly as written; ``failed`` also reads ``<tool_use_error>`` text and
  Codex exit codes; ``sibling_cascade`` marks "Sibling tool call errored" cancellations.
* :class:`CompactBoundary` ``(line, sidechain)``.

Events (and :class:`ToolCall`) are immutable named tuples — millions of them are made from a multi-GB file — and,
like value objects, equal only an instance of their own type. Only the current line (and a 64 KiB decoding
buffer) is held in memory; lines are decoded exactly as ``json.loads`` of their bytes would decode them.
Malformed lines, non-object lines and unknown line types are skipped and counted in ``Transcript.warnings``
(the first few messages are in ``warning_samples``); a truncated last line is normal for a live session and
only sets ``truncated_tail``. Reading never raises on bad content; an unreadable file raises ``OSError`` from
iteration (``last_turn`` turns it into :class:`verigate.InputError`).
"""

from __future__ import annotations

from .._face import present as _present
from .._subagent_logs import subagent_files
from ._events import (
    AssistantText,
    CompactBoundary,
    Event,
    PromptOrigin,
    ToolResult,
    ToolUse,
    UserPrompt,
)
from ._reader import Transcript, read_claude_code, read_codex
from ._turn import CallPairer, Host, ToolCall, Turn, cut_text, last_turn, read

__all__ = [
    "AssistantText",
    "CallPairer",
    "CompactBoundary",
    "Event",
    "Host",
    "PromptOrigin",
    "ToolCall",
    "ToolResult",
    "ToolUse",
    "Transcript",
    "Turn",
    "UserPrompt",
    "cut_text",
    "last_turn",
    "read",
    "read_claude_code",
    "read_codex",
    "subagent_files",
]

_present(globals(), __name__)
