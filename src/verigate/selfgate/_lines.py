"""Reading a session log's complete lines after an offset, in chunks, handing each to a callback.

Both the full scan (``_transcript.read_new_lines``) and the fast path's catch-up read new lines this way, so they
agree on what a line is: bytes up to a newline; a last line without its newline is left for the next read (the
host may be writing it) and blank lines are counted but not handed on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import BinaryIO

from .._transcript_lines import MAX_LINE_BYTES, line_too_long, past_the_bound

__all__ = ["CHUNK", "read_lines"]

CHUNK = 1 << 20


def read_lines(handle: BinaryIO, offset: int, line: int, on_line: Callable[[bytes, int], None],
               end: int | None = None, *, source: str = "<transcript>") -> tuple[int, int]:
    """Call ``on_line(raw, number)`` for every complete non-blank line from ``offset`` on (``line`` lines lie
    before it), up to the end of the file or the byte offset ``end``; returns the offset after the last complete
    line and the number of lines up to it. An exception of the callback stops the reading and propagates.

    A line longer than :data:`~verigate._transcript_lines.MAX_LINE_BYTES` — complete or not: past the bound it
    can never become one — is an InputError naming ``source`` and the line; the part of a line read so far is
    held as its chunks and joined once its newline comes (reading stays linear in the line's length)."""
    handle.seek(offset)
    position = offset
    held: list[bytes] = []  # the chunks of the line not yet complete
    held_bytes = 0
    while True:
        chunk = handle.read(CHUNK if end is None else min(CHUNK, end - position))
        position += len(chunk)
        if not chunk:
            return offset, line
        if b"\n" not in chunk:
            held.append(chunk)
            held_bytes += len(chunk)
        else:
            *complete, rest = (b"".join(held) + chunk if held else chunk).split(b"\n")
            held, held_bytes = [rest], len(rest)
            for raw in complete:
                if past_the_bound(raw):
                    raise line_too_long(source, line + 1)
                offset += len(raw) + 1
                line += 1
                if raw.strip():
                    on_line(raw, line)
        if held_bytes > MAX_LINE_BYTES:  # the line not yet complete is longer already
            raise line_too_long(source, line + 1)
