"""Opening a file that must be a regular one, for every reader of outside input: the evidence readers
(``evidence._files``) and the session-log readers (``_transcript_lines``).

Whoever writes the input can put a FIFO where a file is expected (an open that waits for ever for a writer), a
link to a device (``/dev/zero``: a read that never ends) or a folder. So the path is checked with stat before it is
opened (a device or FIFO is never opened), opened with O_NONBLOCK (a FIFO swapped in after that stat opens at once
instead of waiting), and checked again on the open descriptor: the file actually read. Links are followed.

A top-level module with nothing heavy imported: the self-gate's pre-tool-use fast path opens the session log.
"""

from __future__ import annotations

import os
import stat

__all__ = ["NotRegularFile", "RefusedFile", "open_regular"]

_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
               | getattr(os, "O_BINARY", 0))
_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


class RefusedFile(Exception):
    """A file the readers will not read (a refusal of the input, not an I/O failure); ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class NotRegularFile(RefusedFile):
    """The path names something other than a regular file (a folder, a FIFO, a device, a socket)."""


def _regular(mode: int) -> None:
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "something else")
        raise NotRegularFile(f"it is {kind}, not a regular file")


def open_regular(path: str) -> tuple[int, os.stat_result]:
    """A descriptor of the regular file ``path`` (links followed), the caller's to close, with its ``os.fstat``.
    Raises NotRegularFile, or OSError / ValueError (no such file, no permission, a NUL) as ``os`` does."""
    _regular(os.stat(path).st_mode)  # noqa: PTH116 -- a str path: before the open, a device or FIFO is never opened
    fd = os.open(path, _OPEN_FLAGS)
    try:
        status = os.fstat(fd)  # what was opened, which may not be what was stat'ed a moment ago
        _regular(status.st_mode)
    except BaseException:
        os.close(fd)
        raise
    return fd, status
