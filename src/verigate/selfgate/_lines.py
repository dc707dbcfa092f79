"""Reading a session log's complete lines after an offset, in chunks, handing each to a callback.

Both the full scan (``_transcript.read_new_lines``) and the fast path's catch-up read new lines this way, so they
agree on what a line is: bytes up to a newline; a last line without its newline is left for the next read (the
host may be writing it) and blank lines are counted but not handed on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import BinaryIO

__all__ = ["CHUNK", "read_lines"]

CHUNK = 1 << 20


def read_lines(handle: BinaryIO, offset: int, line: int, on_line: Callable[[bytes, int], None],
               end: int | None = None) -> tuple[int, int]:
    """Call ``on_line(raw, number)`` for every complete non-blank line from ``offset`` on (``line`` lines lie
    before it), up to the end of the file or the byte offset ``end``; returns the offset after the last complete
    line and the number of lines up to it. An exception of the callback stops the reading and propagates."""
    handle.seek(offset)
    position = offset
    pending = b""
    while True:
        chunk = handle.read(CHUNK if end is None else min(CHUNK, end - position))
        position += len(chunk)
        if not chunk:
            return offset, line
        pending += chunk
        *complete, pending = pending.split(b"\n")
        for raw in complete:
            offset += len(raw) + 1
            line += 1
            if raw.strip():
                on_line(raw, line)
