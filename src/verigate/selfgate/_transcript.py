"""Incremental reading of a Claude Code or Codex session log: only the bytes after the saved cursor."""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from .._errors import InputError
from ._quick import Signature

if TYPE_CHECKING:
    from ._store import Cursor

# No attrs and no hashlib at import: the pre-tool-use fast path classifies new lines with this module.

__all__ = ["LineKind", "TranscriptLine", "TranscriptRead", "classify", "head_crc", "read_new_lines", "tail_lines"]

CHUNK = 1 << 20
#: bytes hashed to recognise the same file again (the start of an append-only log never changes)
HEAD_BYTES = 1024

#: Claude Code line types that never carry assistant prose or a typed prompt (trace-formats.md)
CLAUDE_SKIPPED_TYPES = frozenset({
    "system", "summary", "progress", "file-history-snapshot", "queue-operation", "permission-mode", "ai-title",
    "custom-title", "last-prompt", "attachment", "mode", "agent-name", "cost-state", "result",
})
#: Codex rollout line types; only ``response_item`` messages matter (``event_msg`` repeats them)
CODEX_TYPES = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted"})

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
    import hashlib

    handle.seek(0)
    return hashlib.sha256(handle.read(min(length, HEAD_BYTES))).hexdigest()


def head_crc(handle: Any, length: int) -> int:
    """crc32 of the first ``min(length, HEAD_BYTES)`` bytes, the part of the file a cursor's head covers."""
    handle.seek(0)
    return zlib.crc32(handle.read(min(length, HEAD_BYTES)))


def read_new_lines(path: str, cursor: Cursor) -> TranscriptRead:
    """Classify every complete line after ``cursor``. A final line without its newline is left for the next
    call (the host may be writing it). A missing or unreadable transcript is an InputError."""
    try:
        handle = open(path, "rb")  # noqa: PTH123, SIM115 - one descriptor for stat, head check and reading
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
        handle.seek(offset)
        lines: list[TranscriptLine] = []
        pending = b""
        while True:
            chunk = handle.read(CHUNK)
            if not chunk:
                break
            pending += chunk
            *complete, pending = pending.split(b"\n")
            for raw in complete:
                offset += len(raw) + 1
                line_number += 1
                if raw.strip():
                    lines.append(classify(raw, line_number))
        head = _head_sha(handle, offset) if offset else ""
        crc = head_crc(handle, offset)
    from ._store import Cursor

    signature = (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)
    return TranscriptRead(tuple(lines), Cursor(offset, line_number, status.st_dev, status.st_ino, head), restarted,
                          signature, crc)


def tail_lines(path: str, max_bytes: int = 256 * 1024) -> list[TranscriptLine]:
    """The classified complete lines among the last ``max_bytes`` of a transcript (line numbers 0: unknown)."""
    try:
        with open(path, "rb") as handle:  # noqa: PTH123
            size = os.fstat(handle.fileno()).st_size
            start = max(0, size - max_bytes)
            handle.seek(start)
            data = handle.read()
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
    import hashlib  # lines without a uuid (Codex) only

    return "sha256:" + hashlib.sha256(raw).hexdigest()


def classify(raw: bytes, number: int) -> TranscriptLine:
    """What one transcript line means for self-gates. Lines that cannot be read, or whose type is unknown, are
    problems (the line may hold a gate declaration verigate cannot see); known bookkeeping lines are skipped."""
    try:
        record = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        return TranscriptLine(number, "problem", problem=f"not JSON ({exc})")
    if not isinstance(record, dict):
        return TranscriptLine(number, "problem", problem=f"a JSON {type(record).__name__}, not an object")
    line_type = record.get("type")
    if not isinstance(line_type, str):
        return TranscriptLine(number, "problem", problem="no line type")
    if line_type in CODEX_TYPES:
        return _classify_codex(record, raw, number)
    if line_type in CLAUDE_SKIPPED_TYPES:
        return TranscriptLine(number, "skip")
    if line_type == "assistant":
        message = record.get("message")
        texts = _text_blocks(message.get("content") if isinstance(message, Mapping) else None,
                             frozenset({"text"}))
        if texts is None:
            return TranscriptLine(number, "problem", problem="an assistant line without readable content")
        uuid = record.get("uuid") if isinstance(record.get("uuid"), str) else None
        return TranscriptLine(number, "assistant_text", key=_line_key(record, raw), texts=texts,
                              sidechain=record.get("isSidechain") is True, uuid=uuid)
    if line_type == "user":
        return _classify_claude_user(record, raw, number)
    return TranscriptLine(number, "problem", problem=f"unknown line type {line_type!r}")


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
        # injected context blocks are not turns (trace-formats.md)
        not_human = "injected context" if text.lstrip().startswith(("<environment_context>",
                                                                     "<user_instructions>")) else ""
        return TranscriptLine(number, "user_prompt", key=_line_key(record, raw), texts=(text,),
                              timestamp=timestamp, not_human=not_human)
    return TranscriptLine(number, "skip")
