"""The store's exclusive lock (``flock`` on ``<store>.lock``), taken by every writer: the full check waits for
it, the fast path only tries once (a busy lock costs it nothing but a cache it does not save)."""

# os rather than pathlib: the pre-tool-use fast path imports this module on every tool call
from __future__ import annotations

import errno
import fcntl
import os
import time

__all__ = ["LockBusy", "hold", "open_lock"]


class LockBusy(OSError):
    """Another process held the lock for the whole wait."""


def open_lock(path: str | os.PathLike[str], *, create: bool = True) -> int:
    """A descriptor on the lock file (created when ``create``); closing it releases a lock held on it."""
    return os.open(path, os.O_RDWR | os.O_CREAT, 0o644) if create else os.open(path, os.O_RDWR)


def hold(fd: int, timeout_s: float = 0.0) -> None:
    """Take the exclusive flock on ``fd``, retrying for up to ``timeout_s`` seconds (0: one try). LockBusy when
    the wait ran out; any other OSError is the lock failing."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            if time.monotonic() >= deadline:
                raise LockBusy(exc.errno, f"stayed locked for {timeout_s:g} s") from exc
            time.sleep(0.005)
