"""Atomic replacement of small state files, shared by every writer (cheap to import: hooks use it)."""

# os rather than pathlib: the PreToolUse fast path imports this, and pathlib costs ms on every tool call
from __future__ import annotations

import contextlib
import itertools
import os

__all__ = ["replace_file"]

_calls = itertools.count()


def replace_file(path: str | os.PathLike[str], data: bytes, *, mode: int | None = None) -> None:
    """Write ``data`` beside ``path`` and rename it over ``path``: a concurrent reader sees the old or the new
    content, never half of it. ``mode`` sets the file's permissions exactly (umask ignored). Raises OSError and
    leaves no temporary file behind."""
    target = os.fspath(path)
    # unique per process and call, so concurrent writers (threads or processes) never share a temporary file
    temporary = f"{target}.{os.getpid()}.{next(_calls)}.tmp"
    try:
        handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 if mode is None else mode)
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
