"""Bounded reads of every file produce and verify take from outside the process: the EV, the task folder's files,
the arbiter records and a ``--schema`` file. Only a regular file is read, only up to its size bound, never waiting.

Whoever writes a task folder can put a FIFO where a file is expected, a link to /dev/zero or a sparse file of many
GiB (one read that takes all memory). So a file is opened as ``verigate._regular_file`` opens outside input (a
regular file only, never waiting), refused when fstat gives a size past the bound, and read for at most bound + 1
bytes (a file that grows while it is read is refused too). Links are followed, as the readers always did: a task
folder or an artifact may be a link, and what it names is held to the same rules.
"""

from __future__ import annotations

import errno
import os

from .. import _json as strict_json
from .._errors import EvidenceError
from .._regular_file import NotRegularFile, RefusedFile, open_regular

__all__ = [
    "MAX_ARTIFACT_BYTES",
    "MAX_JSON_BYTES",
    "MAX_RECORD_BYTES",
    "MAX_RUNS_BYTES",
    "NotRegularFile",
    "RefusedFile",
    "TooLarge",
    "read_if_file",
    "read_input",
    "read_regular",
    "utf8_text",
]

#: one JSON document (the EV, c3.json, one arbiter record, a --schema file): the strict reader's own bound
MAX_JSON_BYTES = strict_json.MAX_RECORD_CHARS
#: delivery/record.jsonl, append-only (each line is bounded again by the strict reader)
MAX_RECORD_BYTES = strict_json.DEFAULT_MAX_CHARS
#: one Plan Package artifact (markdown): far past any real one
MAX_ARTIFACT_BYTES = 16 * 1024 * 1024
#: every *.json of a runs folder together: the records are all held in memory at once
MAX_RUNS_BYTES = 64 * 1024 * 1024

#: the errors for which pathlib's is_file() answers False instead of raising (absent, or a path through a file)
_ABSENT = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP})
_ABSENT_WINDOWS = frozenset({21, 123, 1921})


class TooLarge(RefusedFile):
    """The file holds more bytes than its bound."""


def _within(size: int, limit: int) -> None:
    if size > limit:
        raise TooLarge(f"it holds {size} bytes, past the bound of {limit}")


def read_regular(path: str, limit: int) -> bytes:
    """The bytes of the regular file ``path`` (links followed), at most ``limit`` of them. Raises NotRegularFile,
    TooLarge, or OSError / ValueError (no such file, no permission, a NUL in the path) as os does."""
    fd, status = open_regular(path)  # a str path, as the readers always read (a Path per file costs more)
    try:
        _within(status.st_size, limit)
        return read_bounded(fd, status.st_size, limit)
    finally:
        os.close(fd)


def read_bounded(fd: int, size: int, limit: int) -> bytes:
    """The rest of the open file ``fd``, expected to hold ``size`` bytes, refused (TooLarge) past ``limit``.

    One read when the file holds what fstat gave. A shorter read is not the end (a read may stop early: Linux
    gives at most 2 GiB - 4 KiB at once), and a file that grew is read on, so reading goes on until a read is
    empty, never asking for more than ``limit`` + 1 bytes in all."""
    data = os.read(fd, min(size, limit) + 1)
    if len(data) == size:
        return data
    chunks, total = [data], len(data)
    while total <= limit:
        chunk = os.read(fd, min(1 << 20, limit + 1 - total))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
    raise TooLarge(f"it holds more than {limit} bytes, past its bound")


def read_input(path: str, label: str, limit: int) -> bytes:
    """``read_regular`` for a file that must be there: every failure is an EvidenceError (exit 1) naming ``label``."""
    try:
        return read_regular(path, limit)
    except RefusedFile as exc:
        raise EvidenceError([f"{label} is refused: {exc.reason}"]) from None
    except (OSError, ValueError) as exc:
        raise EvidenceError([f"{label} cannot be read: {exc}"]) from None


def read_if_file(path: str, label: str, limit: int) -> bytes | None:
    """``read_input`` for a file that may be absent: None when ``path`` is not a regular file (absent, a folder, a
    FIFO, a device), as pathlib's ``is_file()`` answers; a file past its bound or unreadable is an EvidenceError."""
    try:
        return read_regular(path, limit)
    except NotRegularFile:
        return None
    except TooLarge as exc:
        raise EvidenceError([f"{label} is refused: {exc.reason}"]) from None
    except OSError as exc:
        if exc.errno in _ABSENT or getattr(exc, "winerror", None) in _ABSENT_WINDOWS:
            return None
        raise EvidenceError([f"{label} cannot be read: {exc}"]) from None
    except ValueError:  # a path the OS cannot take (an embedded NUL): is_file() answers False
        return None


def utf8_text(data: bytes, label: str) -> str:
    """``data`` as UTF-8 text with universal newlines (CR LF and a lone CR read as LF, as text mode reads them)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EvidenceError([f"{label} cannot be read: {exc}"]) from None
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text
