"""What the lines of a host's session log can carry: one registry for the grader's reader (``verigate.transcripts``)
and the self-gate's incremental reader (``verigate.selfgate._transcript``), so that the two never disagree on a
line again.

A top-level module with nothing heavy imported: the self-gate's pre-tool-use fast path classifies new lines with it
(importing ``verigate.transcripts`` would load attrs).

- **Line types.** For each host, the types known to carry a message (assistant prose, a prompt, a tool call) and
  the types known to carry none (bookkeeping, telemetry, state). A type in neither set is *unclassified*: the
  grader counts it as a warning, and the self-gate skips it — by the host's format only the message types can hold
  assistant text, so an unknown type cannot hide a gate declaration. Hosts add types with new versions (Codex
  0.169: ``world_state``, ``token_usage_record``); a test over the logs the real clients write fails on a type
  nobody classified, so it is added here, once.
- **Prompt origins.** Who wrote a user-role message: a person (``typed``), the host on the person's behalf
  (``command``, ``command_output``, ``interrupt``) or not a person at all (``meta``, ``injected``,
  ``compact_summary``).
- **Line length.** :data:`MAX_LINE_BYTES` bounds a line for every reader.
"""

from __future__ import annotations

import functools
import os
import stat
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, BinaryIO, Literal

from ._errors import InputError
from ._regular_file import NotRegularFile, open_regular

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "CLAUDE_MESSAGE_TYPES",
    "CLAUDE_OTHER_TYPES",
    "CODEX_BARE_ITEM_TYPES",
    "CODEX_MESSAGE_TYPES",
    "CODEX_OTHER_TYPES",
    "MAX_LINE_BYTES",
    "PromptOrigin",
    "bounded_lines",
    "claude_prompt_origin",
    "codex_prompt_origin",
    "content_text",
    "is_regular_log",
    "is_typed_by_a_person",
    "line_too_long",
    "listed_entries",
    "listed_logs",
    "not_a_log_file",
    "open_log_file",
    "open_log_stream",
    "past_the_bound",
]

PromptOrigin = Literal[
    "typed",  # the person's own prompt
    "command",  # a slash command the person typed (<command-name>…)
    "command_output",  # <local-command-stdout>/<local-command-stderr> echoed back by the host
    "meta",  # isMeta lines, caveats, Codex developer/environment context
    "interrupt",  # "[Request interrupted by user…]"
    "compact_summary",  # the summary injected after a compaction
    "injected",  # hook output, task notifications, system reminders, sub-agent prompts
]

#: the longest line (in bytes, its newline not counted) any reader of a session log takes; a longer one is an
#: InputError naming the file and line (``line_too_long``), never skipped: it could hold the failing tool result or
#: a declaration. Real lines run to a few MB (a tool's output, an image); past this, a line could only make a
#: reader hold memory without bound (one with no newline at all, a sparse file)
MAX_LINE_BYTES = 64 * 1024 * 1024


def past_the_bound(raw: bytes) -> bool:
    """Whether a line (its newline, if it has one, not counted) is longer than :data:`MAX_LINE_BYTES`."""
    return len(raw) - raw.endswith(b"\n") > MAX_LINE_BYTES


def line_too_long(source: str, line: int | None = None) -> InputError:
    """The error for a line past :data:`MAX_LINE_BYTES` (``line`` None: read from the end, its number unknown)."""
    return InputError(f"a transcript line is longer than {MAX_LINE_BYTES:,} bytes: refused, not skipped",
                      source=source, line=line)


def bounded_lines(stream: BinaryIO, source: str) -> Iterator[bytes]:
    """The lines of a binary stream, each read at most :data:`MAX_LINE_BYTES` + 2 bytes; a longer line is
    :func:`line_too_long` (never cut: the rest of a cut line would be read as the next line)."""
    for number, raw in enumerate(iter(functools.partial(stream.readline, MAX_LINE_BYTES + 2), b""), 1):
        if past_the_bound(raw):
            raise line_too_long(source, number)
        yield raw


def _entries(folder: Path, missing_ok: bool) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as entries:
            return list(entries)
    except (FileNotFoundError, NotADirectoryError) as error:
        if missing_ok:
            return []
        reason = error.strerror
    except OSError as error:  # no permission, a link loop, an I/O error: what it holds cannot be told
        reason = error.strerror
    raise InputError(f"a folder that may hold session logs cannot be listed ({reason})", source=str(folder))


def listed_logs(folder: Path, *, prefix: str = "", missing_ok: bool = True) -> list[Path]:
    """The ``<prefix>*.jsonl`` entries of ``folder``, sorted; no folder (or a file in its place, ``missing_ok``)
    holds none. Listed with :func:`os.scandir`, never ``Path.glob``: glob swallows a folder that cannot be listed,
    and a session log left out is a declaration or a run never read, so that is an InputError naming the folder."""
    return sorted(folder / entry.name for entry in _entries(folder, missing_ok)
                  if entry.name.startswith(prefix) and entry.name.endswith(".jsonl"))


def listed_entries(folder: Path) -> list[Path]:
    """Every entry of ``folder``, sorted, listed as :func:`listed_logs` lists logs (no folder: none)."""
    return sorted(folder / entry.name for entry in _entries(folder, missing_ok=True))


def open_log_file(path: str) -> int:
    """A descriptor of the session log at ``path``, opened as ``_regular_file`` opens outside input (never waiting
    for a writer); anything but a regular file — a pipe, a device, a socket: blocking or endless — is
    :func:`not_a_log_file`. Raises OSError as ``os.open`` does."""
    try:
        return open_regular(path)[0]
    except NotRegularFile:
        raise not_a_log_file(path, pipes=False) from None


def open_log_stream(path: str) -> BinaryIO:
    """:func:`open_log_file` as a binary stream (closing it closes the descriptor)."""
    return os.fdopen(open_log_file(path), "rb")


def is_regular_log(mode: int, source: str) -> bool:
    """For a log read forward that may be a pipe (``Transcript`` with ``pipes``): True for a regular file, False for
    a pipe (read once, as it comes); anything else — a device, a socket, a folder — is :func:`not_a_log_file`."""
    if stat.S_ISREG(mode):
        return True
    if stat.S_ISFIFO(mode):
        return False
    raise not_a_log_file(source)


def not_a_log_file(source: str, *, pipes: bool = True) -> InputError:
    """The error for a device (``/dev/zero``, a terminal), a socket or a folder where a session log is expected; with
    ``pipes`` False (a reader of regular files only) for a pipe too."""
    if not pipes:
        return InputError("not a regular file: a session log is read from a regular file only (a pipe could wait "
                          "for a writer forever, a device never end)", source=source)
    return InputError("not a regular file or a pipe: a transcript is never read from a device", source=source)


#: Claude Code line types that carry a message (``message.content``)
CLAUDE_MESSAGE_TYPES = frozenset({"assistant", "user"})
#: Claude Code line types that never carry assistant prose or a prompt (``system`` holds compact boundaries).
#: 2.1.3xx adds the API request's bookkeeping: ``api-request`` (its parameters), ``api-request-shape``,
#: ``api-request-blob`` (copies of messages already sent — the transcript's own lines hold them), ``atis-latch``,
#: ``tools-used``.
CLAUDE_OTHER_TYPES = frozenset({
    "system", "summary", "progress", "file-history-snapshot", "queue-operation", "permission-mode", "ai-title",
    "custom-title", "last-prompt", "attachment", "mode", "agent-name", "cost-state", "result", "tag",
    "api-request", "api-request-shape", "api-request-blob", "atis-latch", "tools-used",
})
#: Codex rollout envelope types (``{timestamp, type, payload}``) whose payload can be a message or tool call
CODEX_MESSAGE_TYPES = frozenset({"response_item"})
#: Codex envelope types that carry no assistant text (``event_msg`` repeats the messages as telemetry)
CODEX_OTHER_TYPES = frozenset({
    "session_meta", "turn_context", "event_msg", "compacted", "world_state", "token_usage_record",
})
#: early Codex rollouts wrote response items without an envelope
CODEX_BARE_ITEM_TYPES = frozenset({
    "message", "function_call", "function_call_output", "reasoning", "custom_tool_call", "custom_tool_call_output",
    "local_shell_call",
})

_CLAUDE_COMMAND_PREFIXES = ("<command-name>", "<command-message>", "<bash-input>")
_CLAUDE_COMMAND_OUTPUT_PREFIXES = ("<local-command-stdout>", "<local-command-stderr>", "<bash-stdout>",
                                   "<bash-stderr>")
_CLAUDE_INJECTED_PREFIXES = ("<system-reminder>", "<task-notification>", "<user-prompt-submit-hook>",
                             "<bash-notification>", "<user-memory-input>")
_CLAUDE_CAVEAT_PREFIX = "Caveat: The messages below were generated by the user"
_CLAUDE_INTERRUPT_PREFIX = "[Request interrupted by user"
#: Codex injects these as user-role messages; they are context, not a person's request
_CODEX_CONTEXT_PREFIXES = ("<environment_context>", "<user_instructions>", "<permissions", "# AGENTS.md",
                           "<user_shell_command>", "<turn_aborted>")


def content_text(content: Any) -> str:
    """The text of a content field (Claude Code tool_result, Codex message/output): a string, or the text
    blocks of a list (images dropped)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(block["text"] for block in content
                         if isinstance(block, dict) and isinstance(block.get("text"), str))
    return ""


def claude_prompt_origin(record: Mapping[str, Any], text: str) -> PromptOrigin:
    """Who wrote the text of a Claude Code user line ``record``."""
    if record.get("isCompactSummary") is True:
        return "compact_summary"
    if record.get("isMeta") is True:
        return "meta"
    head = text.lstrip()[:80]
    if head.startswith(_CLAUDE_COMMAND_PREFIXES):
        return "command"
    if head.startswith(_CLAUDE_COMMAND_OUTPUT_PREFIXES):
        return "command_output"
    if head.startswith(_CLAUDE_CAVEAT_PREFIX):
        return "meta"
    if head.startswith(_CLAUDE_INTERRUPT_PREFIX):
        return "interrupt"
    if head.startswith(_CLAUDE_INJECTED_PREFIXES):
        return "injected"
    return "typed"


def codex_prompt_origin(text: str) -> PromptOrigin:
    """Who wrote the text of a Codex user-role message (the context Codex injects is ``meta``)."""
    return "meta" if text.lstrip().startswith(_CODEX_CONTEXT_PREFIXES) else "typed"


def is_typed_by_a_person(origin: PromptOrigin) -> bool:
    """A request a person typed (a slash command counts: the person typed it)."""
    return origin in ("typed", "command")
