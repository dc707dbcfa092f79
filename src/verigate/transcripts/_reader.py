"""Streaming readers of Claude Code session JSONL and Codex rollout JSONL: one line at a time, typed events.

Slightly past 400 lines on purpose: the two readers share the line loop, the bounds and the call pairing, and
read each other's edge cases (docs/trace-formats.md); the fast decoder for the common lines is ``_fast``.
"""

from __future__ import annotations

import functools
import io
import json
import os
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from .. import _json as strict_json
from .._transcript_lines import (
    CLAUDE_OTHER_TYPES,
    CODEX_BARE_ITEM_TYPES,
    CODEX_OTHER_TYPES,
    MAX_LINE_BYTES,
    bounded_lines,
    claude_prompt_origin,
    codex_prompt_origin,
    content_text,
    is_regular_log,
    line_too_long,
    open_log_stream,
    past_the_bound,
)
from . import _fast
from ._events import AssistantText, CompactBoundary, Event, ToolResult, ToolUse, UserPrompt

__all__ = ["MAX_WARNING_SAMPLES", "Transcript", "decode_line", "read_claude_code", "read_codex"]

#: how many warning messages are kept verbatim (the counter itself is exact)
MAX_WARNING_SAMPLES = 20
#: how often (in lines) the progress callback is told the byte offset
PROGRESS_EVERY_LINES = 2048
#: how much of a transcript is decoded from UTF-8 at once
TEXT_CHUNK_BYTES = 64 * 1024
#: Claude Code files smaller than this skip the fast decoder (``_fast``): importing msgspec and building its
#: decoder costs ~10 ms once, and it saves ~1.2 ms per MB against the plain path (measured on generated
#: sessions: plain 3.6 ms/MB; fast 10 ms + 2.4 ms/MB), so below ~8 MB the plain path is the cheaper one. Both
#: give the same events (tests/transcripts/test_fast_decoder.py); a pipe, whose size is unknown, takes the fast one
FAST_MIN_BYTES = 8 * 1024 * 1024
#: a text line this long may be past :data:`MAX_LINE_BYTES` once encoded (a character is at most 4 bytes)
_LONG_TEXT_CHARS = MAX_LINE_BYTES // 4

#: Claude Code line types that carry nothing a grader or gate needs (the list grows with every release)
#: the exit status line of a Codex tool output's header ("Exit code: 2", "Process exited with code 3")
_CODEX_EXIT_CODE = re.compile(r"(?:Exit code: |Process exited with code )(-?\d+)\s*\Z")
#: a header line of a Codex tool output ("Chunk ID: …", "Wall time: 0.2 seconds", "Original token count: 12")
_CODEX_HEADER_LINE = re.compile(r"[A-Z][A-Za-z ]{0,40}: \S.*\Z|Process exited with code -?\d+\s*\Z")
#: what Codex (0.17x) puts in place of a tool's output when a PreToolUse hook denied the call
_CODEX_HOOK_DENIED = "Command blocked by PreToolUse hook"
#: a header is a few lines; output after it (or after "Output:") is the command's own text, never read for status
_CODEX_HEADER_LINES = 8
#: exec events whose outputs have not arrived yet, kept to mark failures; bounded so memory stays flat
_CODEX_PENDING_EXITS = 1024


#: the JSON decoder's own scanner (``json.loads`` minus its per-call wrappers), used by :func:`decode_line`;
#: ``JSONDecoder.__init__`` sets it, the type stubs do not declare it
_scan_value: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
#: the whitespace ``json.loads`` accepts after a value
_JSON_SPACE = " \t\n\r"


def decode_line(line: str | bytes) -> Any:
    """``json.loads`` of a line's bytes, exactly (same value, same error); a ``str`` line is the strict UTF-8
    decoding of those bytes.

    The common line (UTF-8, one value, then only whitespace) goes straight to the decoder's scanner, skipping the
    encoding sniffing and the Python wrappers ``json.loads`` runs on every call; any other line (a BOM, UTF-16,
    leading whitespace, extra data, malformed) takes ``json.loads`` of its bytes, so its result or error is the same.
    """
    try:
        text = line if isinstance(line, str) else line.decode()
        value, end = _scan_value(text, 0)
    except (ValueError, StopIteration, RecursionError):
        return json.loads(_line_bytes(line))
    rest = len(text) - end
    if rest and not (rest == 1 and text[end] == "\n") and text[end:].strip(_JSON_SPACE):
        return json.loads(_line_bytes(line))  # raises "Extra data", as it would have
    return value


def _line_bytes(line: str | bytes) -> bytes:
    return line.encode() if isinstance(line, str) else line  # a str line was decoded strictly: this is its bytes


class Transcript:
    """One pass over a transcript file: iterate it for events; ``warnings`` counts skipped lines.

    A truncated last line (a session still being written) sets ``truncated_tail`` and is not a warning.
    The file is read line by line; only the current line (and the reading buffer) is in memory.
    """

    def __init__(
        self,
        path: str | Path,
        parse_line: Callable[[Transcript, int, Any], Iterable[Event]],
        *,
        progress: Callable[[int], None] | None = None,
        pipes: bool = True,
    ) -> None:
        self.path = Path(path)
        #: a named pipe is read as it comes (False: only a regular file is read; a pipe is an input error at once)
        self.pipes = pipes
        self.warnings = 0
        self.warning_samples: list[str] = []
        self.truncated_tail = False
        self.lines = 0
        self.bytes_read = 0
        self.cwd: str | None = None
        self._parse_line = parse_line
        self._progress = progress
        self._consumed = False
        #: Codex: call_id -> True when the exec/patch event said the call failed
        self.pending_failures: OrderedDict[str, bool] = OrderedDict()

    def warn(self, line: int, message: str) -> None:
        self.warnings += 1
        if len(self.warning_samples) < MAX_WARNING_SAMPLES:
            self.warning_samples.append(f"{self.path.name}:{line}: {message}")

    def __iter__(self) -> Iterator[Event]:
        if self._consumed:
            raise RuntimeError("a Transcript is read once; call the reader again for a second pass")
        self._consumed = True
        return self._events()

    def _lines(self) -> Iterator[str | bytes]:
        """The file's lines; sets ``bytes_read`` and tells ``progress`` the offset now and then.

        A regular file is decoded as UTF-8 in bulk, by the text layer in C (a tenth of the cost of grading,
        against one ``decode`` call per line); from the first chunk that is not UTF-8 on, the file is read again
        from the line it stopped at, in binary, so that each later line is decoded — or warned about — on its own.
        """
        progress = self._progress
        done = 0
        source = str(self.path)
        # a line is read at most one past the bound (in characters, then checked in bytes): never held whole
        limit = MAX_LINE_BYTES + 2
        # a regular file can be read again, a pipe cannot; a regular file is opened without waiting for a writer
        # (open_log_stream), so one swapped for a pipe since the stat is an input error, never a wait
        regular = is_regular_log(self.path.stat().st_mode, source) if self.pipes else True
        if regular:
            with open_log_stream(source) as binary, io.TextIOWrapper(binary, encoding="utf-8", newline="\n") as stream:
                # decoded 64 KiB at a time rather than 8: fewer lines straddle two chunks (a tenth faster on
                # transcripts, whose lines run to kilobytes); a CPython attribute, not in the type stubs
                stream._CHUNK_SIZE = TEXT_CHUNK_BYTES  # type: ignore[attr-defined]
                try:
                    for done, text in enumerate(iter(functools.partial(stream.readline, limit), ""), 1):
                        if len(text) > _LONG_TEXT_CHARS and past_the_bound(text.encode()):
                            raise line_too_long(source, done)
                        if progress is not None and done % PROGRESS_EVERY_LINES == 0:
                            progress(binary.tell())
                        yield text
                except UnicodeDecodeError:
                    pass
                else:
                    self.bytes_read = binary.tell()
                    return
        read = 0
        with open_log_stream(source) if regular else self.path.open("rb") as binary:
            is_regular_log(os.fstat(binary.fileno()).st_mode, source)  # a pipe (or a device swapped in): refused
            for number, raw in enumerate(bounded_lines(binary, source), 1):
                read += len(raw)
                if number > done:  # lines already given as text are skipped
                    if progress is not None and number % PROGRESS_EVERY_LINES == 0:
                        progress(read)
                    yield raw
        self.bytes_read = read

    def _large(self) -> bool:
        """Whether the file is worth the fast decoder's fixed cost (:data:`FAST_MIN_BYTES`); not a regular file
        (a pipe) or unreadable: True (the reading itself reports an unreadable file)."""
        try:
            return not self.path.is_file() or self.path.stat().st_size >= FAST_MIN_BYTES
        except OSError:
            return True

    def _events(self) -> Iterator[Event]:
        parse_line = self._parse_line
        # Claude Code lines first try the fast decoder (``_fast``), which gives the same events or says "plain"
        fast = _fast.claude_reader() if parse_line is _claude_line and _fast.AVAILABLE and self._large() else None
        number = 0
        for number, line in enumerate(self._lines(), 1):
            if fast is not None:
                found = fast(self, number, line)
                if found is not None:
                    if found:
                        yield from found
                    continue
            try:
                record = decode_line(line)
            except (ValueError, RecursionError):
                raw = _line_bytes(line)
                if not raw.endswith(b"\n"):
                    self.truncated_tail = True  # the writer is mid-line: normal for a live session
                elif raw.strip():
                    self.warn(number, "not JSON")
                continue
            if type(record) is not dict:
                self.warn(number, "not a JSON object")
                continue
            events = parse_line(self, number, record)
            if events:
                yield from events
        self.lines = number
        if self._progress is not None:
            self._progress(self.bytes_read)


# ------------------------------------------------------------------------------------------- Claude Code



def _claude_user(reader: Transcript, number: int, record: Mapping[str, Any], content: Any,
                 sidechain: bool) -> list[Event]:
    if isinstance(content, str):
        return [UserPrompt(content, number, claude_prompt_origin(record, content), sidechain)]
    if not isinstance(content, list):
        reader.warn(number, "user message without content")
        return []
    events: list[Event] = []
    texts: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            reader.warn(number, "content block is not an object")
            continue
        kind = block.get("type")
        if kind == "tool_result":
            tool_use_id = block.get("tool_use_id")
            if not isinstance(tool_use_id, str):
                reader.warn(number, "tool_result without tool_use_id")
                continue
            is_error = block.get("is_error")
            events.append(ToolResult(tool_use_id, content_text(block.get("content")),
                                     is_error if isinstance(is_error, bool) else None, number, sidechain,
                                     _agent_id(record)))
        elif kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
    if texts:
        text = "\n".join(texts)
        events.append(UserPrompt(text, number, claude_prompt_origin(record, text), sidechain))
    return events


def _claude_assistant(reader: Transcript, number: int, record: Mapping[str, Any], content: Any,
                      sidechain: bool) -> list[Event]:
    message_id = record["message"].get("id")
    message_id = message_id if isinstance(message_id, str) else ""
    if isinstance(content, str):
        return [AssistantText(content, number, message_id, sidechain, record.get("isApiErrorMessage") is True)]
    if not isinstance(content, list):
        reader.warn(number, "assistant message without content")
        return []
    events: list[Event] = []
    for block in content:
        if not isinstance(block, dict):
            reader.warn(number, "content block is not an object")
            continue
        kind = block.get("type")
        if kind == "tool_use":
            tool_id, name, tool_input = block.get("id"), block.get("name"), block.get("input")
            if not isinstance(tool_id, str) or not isinstance(name, str):
                reader.warn(number, "tool_use without id or name")
                continue
            if not isinstance(tool_input, dict):
                tool_input = {} if tool_input is None else {"input": tool_input}
            events.append(ToolUse(tool_id, name, tool_input, number, reader.cwd, sidechain, message_id,
                                  _agent_id(record)))
        elif kind == "text" and isinstance(block.get("text"), str):
            events.append(AssistantText(block["text"], number, message_id, sidechain,
                                        record.get("isApiErrorMessage") is True))
    return events


def _agent_id(record: Mapping[str, Any]) -> str | None:
    agent_id = record.get("agentId")
    return agent_id if isinstance(agent_id, str) else None


def _claude_line(reader: Transcript, number: int, record: dict[str, Any]) -> Iterable[Event]:
    """The events of one line (a list: cheaper than a generator on the hot path of multi-GB files)."""
    kind = record.get("type")
    if kind == "assistant" or kind == "user":
        message = record.get("message")
        if not isinstance(message, dict):
            reader.warn(number, f"{kind} line without a message object")
            return ()
        cwd = record.get("cwd")
        if isinstance(cwd, str):
            reader.cwd = cwd  # a line without a cwd keeps the last one seen
        parse = _claude_assistant if kind == "assistant" else _claude_user
        return parse(reader, number, record, message.get("content"), record.get("isSidechain") is True)
    if not isinstance(kind, str):
        reader.warn(number, "line without a type")
    elif kind == "system":
        if record.get("subtype") == "compact_boundary":
            return (CompactBoundary(number, record.get("isSidechain") is True),)
    elif kind not in CLAUDE_OTHER_TYPES:
        reader.warn(number, f"unclassified line type {kind!r}")
    return ()


def read_claude_code(path: str | Path, *, progress: Callable[[int], None] | None = None,
                     pipes: bool = True) -> Transcript:
    """Read a Claude Code session (or sub-agent) JSONL file as a stream of events (``pipes`` False: a named pipe is
    an input error rather than read as it comes)."""
    return Transcript(path, _claude_line, progress=progress, pipes=pipes)


# ------------------------------------------------------------------------------------------------- Codex


def _codex_output(output: Any) -> tuple[str, bool | None]:
    """The text of a function_call_output and whether it says the call failed (None: it does not say)."""
    if isinstance(output, dict):
        text = content_text(output.get("content")) or str(output.get("output", ""))
        success = output.get("success")
        return text, (not success) if isinstance(success, bool) else None
    if not isinstance(output, str):
        return "", None
    if output.startswith("{"):
        try:  # strictly: a repeated "output" or exit_code key must not pick what the grade sees
            wrapped = strict_json.loads(output, max_chars=len(output))
        except strict_json.StrictJSONError:
            wrapped = None
        if isinstance(wrapped, dict) and "output" in wrapped:
            metadata = wrapped.get("metadata")
            exit_code = metadata.get("exit_code") if isinstance(metadata, dict) else None
            text = str(wrapped["output"])
            return text, (exit_code != 0) if isinstance(exit_code, int) else None
    if output.startswith(_CODEX_HOOK_DENIED):  # the call never ran: a refusal is not a success
        return output, True
    exit_code = _codex_exit_code(output)
    return output, (exit_code != 0) if exit_code is not None else None


def _codex_exit_code(output: str) -> int | None:
    """The exit status in the header of a Codex tool output, wherever in the header it stands: older Codex
    starts with ``Exit code: N``, 0.169 with ``Chunk ID: …`` and ``Wall time: …`` before ``Process exited with
    code N``. Only the header is read (it ends at ``Output:`` or at the first line that is not ``Key: value``),
    so a command that prints "Exit code: 0" itself cannot set its own status."""
    for line in output.split("\n", _CODEX_HEADER_LINES)[:_CODEX_HEADER_LINES]:
        line = line.rstrip("\r")
        match = _CODEX_EXIT_CODE.match(line)
        if match is not None:
            return int(match.group(1))
        if line == "Output:" or not _CODEX_HEADER_LINE.match(line):
            return None
    return None


def _remember_failure(reader: Transcript, call_id: Any, failed: bool) -> None:
    if isinstance(call_id, str):
        reader.pending_failures[call_id] = failed
        while len(reader.pending_failures) > _CODEX_PENDING_EXITS:
            reader.pending_failures.popitem(last=False)


def _codex_item(reader: Transcript, number: int, item: Mapping[str, Any]) -> Iterator[Event]:
    kind = item.get("type")
    if kind == "message":
        role = item.get("role")
        text = content_text(item.get("content"))
        if role == "user":
            yield UserPrompt(text, number, codex_prompt_origin(text))
        elif role == "assistant":
            yield AssistantText(text, number, str(item.get("id") or ""))
        # developer / system roles are instructions, not turns
    elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
        call_id, name = item.get("call_id"), item.get("name", "local_shell" if kind == "local_shell_call" else None)
        if not isinstance(call_id, str) or not isinstance(name, str):
            reader.warn(number, f"{kind} without call_id or name")
            return
        tool_input: dict[str, Any]
        if kind == "function_call":
            arguments = item.get("arguments")
            try:  # strictly: {"command": "ls", "command": "rm -rf /"} is no input to pick one command from
                parsed = strict_json.loads(arguments) if isinstance(arguments, str) else arguments
            except strict_json.StrictJSONError as exc:
                reader.warn(number, f"function_call arguments are not strict JSON ({exc.kind})")
                parsed = None
            tool_input = parsed if isinstance(parsed, dict) else {"arguments": arguments}
        elif kind == "custom_tool_call":
            tool_input = {"input": item.get("input")}
        else:
            action = item.get("action")
            tool_input = action if isinstance(action, dict) else {}
        yield ToolUse(call_id, name, tool_input, number, reader.cwd)
    elif kind in ("function_call_output", "custom_tool_call_output"):
        call_id = item.get("call_id")
        if not isinstance(call_id, str):
            reader.warn(number, f"{kind} without call_id")
            return
        text, failed = _codex_output(item.get("output"))
        exec_failed = reader.pending_failures.pop(call_id, None)
        yield ToolResult(call_id, text, exec_failed if exec_failed is not None else failed, number)


def _codex_line(reader: Transcript, number: int, record: dict[str, Any]) -> Iterator[Event]:
    kind = record.get("type")
    payload = record.get("payload")
    if "payload" not in record and isinstance(kind, str) and kind in CODEX_BARE_ITEM_TYPES:
        yield from _codex_item(reader, number, record)  # early rollouts wrote items without an envelope
        return
    if kind in ("session_meta", "turn_context"):
        if isinstance(payload, dict) and isinstance(payload.get("cwd"), str):
            reader.cwd = payload["cwd"]
    elif kind == "response_item":
        if isinstance(payload, dict):
            yield from _codex_item(reader, number, payload)
        else:
            reader.warn(number, "response_item without a payload object")
    elif kind == "event_msg":
        if not isinstance(payload, dict):
            reader.warn(number, "event_msg without a payload object")
        elif payload.get("type") == "exec_command_end":
            exit_code = payload.get("exit_code")
            if isinstance(exit_code, int):
                _remember_failure(reader, payload.get("call_id"), exit_code != 0)
        elif payload.get("type") == "patch_apply_end":
            success = payload.get("success")
            if isinstance(success, bool):
                _remember_failure(reader, payload.get("call_id"), not success)
        # user_message / agent_message repeat the response_item messages; the rest is telemetry
    elif kind == "compacted":
        yield CompactBoundary(number)
    elif "record_type" in record or ("id" in record and "instructions" in record):
        pass  # early rollouts: state records and the session header
    elif not isinstance(kind, str):
        reader.warn(number, "line without a type")
    elif kind not in CODEX_OTHER_TYPES:
        reader.warn(number, f"unclassified line type {kind!r}")


def read_codex(path: str | Path, *, progress: Callable[[int], None] | None = None, pipes: bool = True
               ) -> Transcript:
    """Read a Codex CLI rollout JSONL file (``~/.codex/sessions/…/rollout-*.jsonl``) as a stream of events
    (``pipes`` as in :func:`read_claude_code`)."""
    return Transcript(path, _codex_line, progress=progress, pipes=pipes)
