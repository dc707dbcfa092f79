"""A file's stat signature: what the fast path's caches record for every file the full check read."""

# os rather than pathlib: the pre-tool-use fast path imports this module on every tool call
from __future__ import annotations

import os
from typing import Any

__all__ = ["Signature", "as_json", "of_status", "signature"]

#: (device, inode, size, mtime ns, ctime ns); ctime cannot be set back by a process, so a file rewritten to the
#: same size and modification time still differs
Signature = tuple[int, int, int, int, int]


def of_status(status: os.stat_result) -> Signature:
    """The signature of a stat result (of ``os.stat`` or ``os.fstat`` on an open file)."""
    return status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns


def signature(path: str | os.PathLike[str]) -> Signature | None:
    """The stat signature of a file or folder, None when it does not exist (other errors propagate)."""
    try:
        status = os.stat(path)
    except FileNotFoundError:
        return None
    return of_status(status)


def as_json(sig: Signature | None) -> list[Any] | None:
    """A signature as the caches record it: a JSON list, or null for "did not exist"."""
    return list(sig) if sig is not None else None
