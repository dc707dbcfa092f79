"""The hook answer's own descriptor: a hook process's stdout carries its JSON answer and nothing else.

A host that cannot parse a hook's stdout proceeds, so text before or after the answer turns a block into a pass.
``print`` is redirected while a handler runs (``run_hook``), but a plug-in's C code, a process it starts or a thread
that outlives the handler writes to descriptor 1 itself: :func:`hold_stdout` moves descriptor 1 away and keeps a
private copy for the answer, which every writer of an answer takes from :func:`answer_descriptor`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys

__all__ = ["answer_descriptor", "hold_stdout", "identity"]

#: where this process writes its answer once :func:`hold_stdout` has run: a private copy of descriptor 1, and the
#: (device, inode) of the file it was made of
_answer_fd: int | None = None
_answer_file: tuple[int, int] | None = None


def hold_stdout(*, host_stdout: tuple[int, int] | None = None) -> int | None:
    """Keep this process's stdout for the hook's answer alone: from now on the answer goes to a private copy of
    descriptor 1, and descriptor 1 itself points at stderr. Idempotent; returns the copy (None when descriptor 1
    is not open: no answer can be written, and the hook exits 2).

    ``print`` is redirected while the handler runs, but a plug-in's C code, a process it starts (which inherits
    descriptor 1) or a thread that outlives the handler writes below Python. Text before or after the JSON answer
    makes it unparseable, and a host that cannot parse a hook's answer proceeds: a block would become a pass.

    - The copy is numbered above 2: were stderr closed, a copy in its place would take both roles.
    - It is close-on-exec: a program a plug-in starts never holds it (a forked child without exec does).
    - It is recorded before descriptor 1 moves: the watchdog may answer at any moment.
    - Descriptor 1 points at /dev/null instead when stderr is closed or is the same file as stdout (a host that
      merges the two is not supported: what is written to stderr would reach the answer's stream).
    - What Python had buffered for stdout is flushed after the move: to stderr, never before the answer.
    - ``host_stdout`` is the (device, inode) of the host's stdout when descriptor 1 is not it (the supervised
      child's is a pipe to the supervisor): whether stderr is merged into stdout is asked of the host's.
    - A hook process owns its stdout: call this (``run_hook`` does, with no stream given) only in a process that
      answers a host.
    """
    global _answer_fd, _answer_file
    if _answer_fd is not None:
        return _answer_fd
    try:
        copy = _dup_above_stdio(1)
        answer_file = identity(copy)
    except OSError:
        return None
    _answer_fd, _answer_file = copy, answer_file
    try:
        merged = identity(2) in (answer_file, host_stdout)
    except OSError:  # stderr is closed: it gets /dev/null too, so that no file opened later takes its number
        merged = True
        _to_devnull(2)
    if merged:
        _to_devnull(1)
    else:
        os.dup2(2, 1)
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
    return copy


def _dup_above_stdio(descriptor: int) -> int:
    """A copy of ``descriptor`` numbered 3 or more (``os.dup`` takes the lowest free number, which may be 0-2)."""
    low: list[int] = []
    try:
        copy = os.dup(descriptor)
        while copy <= 2:
            low.append(copy)
            copy = os.dup(descriptor)
        return copy
    finally:
        for held in low:
            os.close(held)


def identity(descriptor: int) -> tuple[int, int]:
    """The (device, inode) of the file open at ``descriptor`` (OSError when none is)."""
    info = os.fstat(descriptor)
    return info.st_dev, info.st_ino


def _to_devnull(descriptor: int) -> None:
    sink = os.open(os.devnull, os.O_WRONLY)
    if sink != descriptor:
        os.dup2(sink, descriptor)
        os.close(sink)


def answer_descriptor() -> int:
    """Where an answer is written: the held copy, else descriptor 1. OSError when the copy no longer is the file it
    was made of (a plug-in closed it and another file took its number): then no answer can be written (exit 2)."""
    if _answer_fd is None:
        return 1
    if identity(_answer_fd) != _answer_file:
        raise OSError(errno.EBADF, "the answer's descriptor was closed and its number reused")
    return _answer_fd
