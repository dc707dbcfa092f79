"""Incremental reading of a Claude Code or Codex session log: only the bytes after the saved cursor."""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from .._errors import InputError
from .._transcript_lines import (
    CLAUDE_MESSAGE_TYPES,
    CLAUDE_OTHER_TYPES,
    CODEX_BARE_ITEM_TYPES,
    CODEX_MESSAGE_TYPES,
    CODEX_OTHER_TYPES,
    claude_prompt_origin,
    codex_prompt_origin,
    open_log_stream,
)
from ._lines import read_lines
from ._statsig import Signature, of_status

if TYPE_CHECKING:
    from ._store import Cursor

# No attrs and no hashlib at import: the pre-tool-use fast path classifies new lines with this module.

__all__ = ["LineKind", "TranscriptLine", "TranscriptRead", "classify", "head_crc", "read_new_lines", "tail_lines"]

#: bytes hashed to recognise the same file again (the start of an append-only log never changes)
HEAD_BYTES = 1024

#: every Codex envelope type; only ``response_item`` messages matter (``event_msg`` repeats them)
_CODEX_TYPES = CODEX_MESSAGE_TYPES | CODEX_OTHER_TYPES

LineKind = Literal["assistant_text", "user_prompt", "skip", "problem"]


# Plain slotted classes rather than attrs or NamedTuple (built with eval at import): see the note above. Instances
# are never changed after creation.
class TranscriptLine:
    """One classified line. ``key`` identifies the message for gate ids (its uuid, else a hash of the line)."""

    __slots__ = ("key", "kind", "not_human", "number", "problem", "sidechain", "texts", "timestamp", "uuid")

    def __init__(self, number: int, kind: LineKind, key: str = "", texts: tuple[str, ...] = (),
                 sidechain: bool = False, timestamp: str | None = None, not_human: str = "", problem: str = "",
                 uuid: str | None = None) -> None:
        self.number = number
        self.kind = kind
        self.key = key
        self.texts = texts
        self.sidechain = sidechain
        self.timestamp = timestamp
        #: for a user prompt: why it is not something a person typed ("" when it is)
        self.not_human = not_human
        self.problem = problem
        self.uuid = uuid

    def __repr__(self) -> str:
        return f"TranscriptLine({self.number}, {self.kind!r}, problem={self.problem!r})"


class TranscriptRead:
    __slots__ = ("cursor", "head_crc", "lines", "restarted", "signature")

    def __init__(self, lines: tuple[TranscriptLine, ...], cursor: Cursor, restarted: bool,
                 signature: Signature | None = None, head_crc: int = 0) -> None:
        self.lines = lines
        self.cursor = cursor
        #: the file was rotated or truncated since the last scan and was read again from its start
        self.restarted = restarted
        #: the file's stat signature taken before reading: every complete line it covers was read
        self.signature = signature
        #: crc32 of the bytes the cursor's ``head_sha`` covers (the fast path checks the head without hashlib)
        self.head_crc = head_crc


def _head_sha(handle: Any, length: int) -> str:
    from .._builtin_sha256 import sha256_hex

    handle.seek(0)
    return sha256_hex(handle.read(min(length, HEAD_BYTES)))


def head_crc(handle: Any, length: int) -> int:
    """crc32 of the first ``min(length, HEAD_BYTES)`` bytes, the part of the file a cursor's head covers."""
    handle.seek(0)
    return zlib.crc32(handle.read(min(length, HEAD_BYTES)))


def read_new_lines(path: str, cursor: Cursor) -> TranscriptRead:
    """Classify every complete line after ``cursor``. A final line without its newline is left for the next
    call (the host may be writing it). A missing or unreadable transcript is an InputError."""
    try:
        handle = open_log_stream(path)  # one descriptor for stat, head check and reading
    except FileNotFoundError as exc:
        raise InputError("the session transcript does not exist", source=path) from exc
    except OSError as exc:
        raise InputError(f"the session transcript cannot be read: {exc}", source=path) from exc
    with handle:
        status = os.fstat(handle.fileno())
        restarted = False
        offset, line_number = cursor.offset, cursor.line
        if cursor.offset:
            same_file = (cursor.device, cursor.inode) == (status.st_dev, status.st_ino)
            if not same_file or status.st_size < cursor.offset or _head_sha(handle, cursor.offset) != cursor.head_sha:
                offset, line_number, restarted = 0, 0, True
        lines: list[TranscriptLine] = []
        offset, line_number = read_lines(handle, offset, line_number,
                                         lambda raw, number: lines.append(classify(raw, number)), source=path)
        head = _head_sha(handle, offset) if offset else ""
        crc = head_crc(handle, offset)
    from ._store import Cursor

    return TranscriptRead(tuple(lines), Cursor(offset, line_number, status.st_dev, status.st_ino, head), restarted,
                          of_status(status), crc)


def tail_lines(path: str, max_bytes: int = 256 * 1024) -> list[TranscriptLine]:
    """The classified complete lines among the last ``max_bytes`` of a transcript (line numbers 0: unknown)."""
    try:
        with open_log_stream(path) as handle:
            size = os.fstat(handle.fileno()).st_size
            start = max(0, size - max_bytes)
            handle.seek(start)
            data = handle.read(size - start)  # not past the size taken: a file growing meanwhile adds nothing
    except OSError as exc:
        raise InputError(f"the session transcript cannot be read: {exc}", source=path) from exc
    parts = data.split(b"\n")
    if start:
        parts = parts[1:]  # the first part is the middle of a line
    parts = parts[:-1]  # the last part is incomplete (or empty after the final newline)
    # line numbers are unknown without reading the whole file: 0 says so
    return [classify(raw, 0) for raw in parts if raw.strip()]


def _text_blocks(content: Any, wanted: frozenset[str]) -> tuple[str, ...] | None:
    """Texts of the wanted block types; None when the content has no readable shape."""
    if isinstance(content, str):
        return (content,)
    if not isinstance(content, list):
        return None
    texts = []
    for block in content:
        if isinstance(block, Mapping) and block.get("type") in wanted and isinstance(block.get("text"), str):
            texts.append(block["text"])
    return tuple(texts)


def _line_key(record: Mapping[str, Any], raw: bytes) -> str:
    uuid = record.get("uuid")
    if isinstance(uuid, str) and uuid:
        return uuid
    from .._builtin_sha256 import sha256_hex  # lines without a uuid (Codex) only

    return "sha256:" + sha256_hex(raw)


def classify(raw: bytes, number: int) -> TranscriptLine:
    """What one transcript line means for self-gates. A line that may carry assistant text but cannot be read is a
    problem (it may hold a gate declaration verigate cannot see): malformed, without a type, a message without
    readable content, or a type no host format names that has the shape of a message. Every other line is skipped:
    by the hosts' formats (``verigate._transcript_lines``) only message lines carry assistant prose, so a telemetry
    type added by a new host version (Codex's ``world_state``) cannot hide a declaration and opens no gate."""
    try:
        record = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        return TranscriptLine(number, "problem", problem=f"not JSON ({exc})")
    except RecursionError:  # a tool input the model nested thousands deep: unreadable, never a crash of the check
        return TranscriptLine(number, "problem", problem="JSON nested too deep to read")
    if not isinstance(record, dict):
        return TranscriptLine(number, "problem", problem=f"a JSON {type(record).__name__}, not an object")
    line_type = record.get("type")
    if not isinstance(line_type, str):
        return TranscriptLine(number, "problem", problem="no line type")
    if line_type in _CODEX_TYPES:
        return _classify_codex(record, raw, number)
    if line_type in CODEX_BARE_ITEM_TYPES and "payload" not in record:  # an early rollout's item, no envelope
        return _classify_codex({"type": "response_item", "payload": record, "timestamp": record.get("timestamp")},
                               raw, number)
    if line_type not in CLAUDE_MESSAGE_TYPES:
        if line_type in CLAUDE_OTHER_TYPES or not _may_hold_a_message(record):
            return TranscriptLine(number, "skip")
        return TranscriptLine(number, "problem", problem=f"an unclassified line type {line_type!r} with a message")
    if line_type == "assistant":
        message = record.get("message")
        texts = _text_blocks(message.get("content") if isinstance(message, Mapping) else None,
                             frozenset({"text"}))
        if texts is None:
            return TranscriptLine(number, "problem", problem="an assistant line without readable content")
        uuid = record.get("uuid") if isinstance(record.get("uuid"), str) else None
        return TranscriptLine(number, "assistant_text", key=_line_key(record, raw), texts=texts,
                              sidechain=record.get("isSidechain") is True, uuid=uuid)
    return _classify_claude_user(record, raw, number)


def _may_hold_a_message(record: Mapping[str, Any]) -> bool:
    """Whether a line of a type no host format names has the shape of a message (Claude Code's ``message``, a Codex
    payload with a role or content): such a line may hold assistant text; any other cannot."""
    payload = record.get("payload")
    return isinstance(record.get("message"), Mapping) or (
        isinstance(payload, Mapping) and ("role" in payload or "content" in payload))


def _classify_claude_user(record: Mapping[str, Any], raw: bytes, number: int) -> TranscriptLine:
    message = record.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    if isinstance(content, list) and any(isinstance(block, Mapping) and block.get("type") != "text"
                                         for block in content):
        return TranscriptLine(number, "skip")  # tool results and images are not typed prompts
    texts = _text_blocks(content, frozenset({"text"}))
    if not texts:
        return TranscriptLine(number, "skip")
    reasons = []
    origin = claude_prompt_origin(record, "".join(texts))
    if origin != "typed" and not record.get("isMeta"):  # isMeta has its own reason below
        reasons.append(f"not typed by a person ({origin})")
    if record.get("isMeta"):
        reasons.append("a scheduled or injected prompt (isMeta)")
    if record.get("isSidechain"):
        reasons.append("a sub-agent's message (isSidechain)")
    if record.get("userType") not in (None, "external"):
        reasons.append(f"userType {record.get('userType')!r}")
    for marker in ("toolUseResult", "isCompactSummary", "isVisibleInTranscriptOnly", "sourceToolAssistantUUID"):
        if record.get(marker):
            reasons.append(f"marked {marker}")
    uuid = record.get("uuid") if isinstance(record.get("uuid"), str) else None
    timestamp = record.get("timestamp") if isinstance(record.get("timestamp"), str) else None
    return TranscriptLine(number, "user_prompt", key=_line_key(record, raw), texts=("".join(texts),),
                          timestamp=timestamp, not_human="; ".join(reasons), uuid=uuid)


def _classify_codex(record: Mapping[str, Any], raw: bytes, number: int) -> TranscriptLine:
    if record.get("type") != "response_item":
        return TranscriptLine(number, "skip")
    payload = record.get("payload")
    if not isinstance(payload, Mapping) or not isinstance(payload.get("type"), str):
        return TranscriptLine(number, "problem", problem="a response_item without a readable payload")
    if payload.get("type") != "message":
        return TranscriptLine(number, "skip")
    role = payload.get("role")
    timestamp = record.get("timestamp") if isinstance(record.get("timestamp"), str) else None
    if role == "assistant":
        texts = _text_blocks(payload.get("content"), frozenset({"output_text", "text"}))
        if texts is None:
            return TranscriptLine(number, "problem", problem="an assistant message without readable content")
        return TranscriptLine(number, "assistant_text", key=_line_key(record, raw), texts=texts,
                              timestamp=timestamp)
    if role == "user":
        texts = _text_blocks(payload.get("content"), frozenset({"input_text", "text"}))
        if not texts:
            return TranscriptLine(number, "skip")
        text = "".join(texts)
        not_human = "injected context" if codex_prompt_origin(text) != "typed" else ""
        return TranscriptLine(number, "user_prompt", key=_line_key(record, raw), texts=(text,),
                              timestamp=timestamp, not_human=not_human)
    return TranscriptLine(number, "skip")
