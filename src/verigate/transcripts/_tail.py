"""The latest turn of a Claude Code transcript read from the end: only the lines from the last typed request on.

The Stop hook needs the latest turn only, and a long session is thousands of lines before it. This reader takes
the file's lines from the last one backwards until it meets the line that begins the latest turn (the line
``last_turn`` would take the request from), then folds those lines' events in file order with ``last_turn``'s
own fold (``_turn.TurnFold``). The result is ``last_turn``'s, field for field (tests/transcripts/test_tail.py
checks it against the forward reader on generated transcripts), because

* lines are split at the ``\\n`` byte, as the forward reader splits them, and each line is decoded and parsed by
  the forward reader's own code (``Transcript._events``, fed the lines in reverse order): a damaged, truncated or
  planted line gives here exactly the events (none, for a line the forward reader refuses) and the warning it
  gives there, so it can neither begin a turn nor hide one;
* the fold resets everything at the request (calls, their pairing, the final text): nothing before that line
  reaches the turn. The one piece of reader state a line inherits from earlier lines, a Claude Code line's
  ``cwd``, is not part of a turn;
* ``request_line`` is counted: the newlines before the request line, by ``bytes.count`` a megabyte at a time (a
  multi-GB session costs a pass at memory speed there, no decoding, nothing held).

What differs is only what is not read: ``warnings`` counts the skipped lines from the request line on (every
line's, when the whole file is read). A Codex rollout is read forward (``last_turn``): an ``exec_command_end``
line marks its call failed for a later output line, through a bounded table whose content at the turn's start
depends on every line before it. A file that is no regular file, or that shrinks while it is read, is read
forward too; one that grows is read as it was when opened (the hook reads again while results are missing).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from .._errors import InputError
from .._transcript_lines import MAX_LINE_BYTES, line_too_long, open_log_file, past_the_bound
from ._events import Event
from ._reader import Transcript, _claude_line
from ._turn import DEFAULT_OUTPUT_CHARS, Host, Turn, TurnFold, last_turn, read, starts_turn

__all__ = ["MAX_TAIL_BYTES", "PLAIN_BYTES", "last_request_from_end", "latest_turn_from_end"]

#: the lines read from the end in one read (a transcript line runs to kilobytes)
BLOCK_BYTES = 64 * 1024
#: how far from the end the request is looked for before the whole file is read forward instead: the events of
#: the lines read back are held until the request is found, so this bounds what a turn-less file holds
MAX_TAIL_BYTES = 64 * 1024 * 1024
#: how much of the end is read on the plain path (``_plain_claude_line``) before the fast decoder takes over
PLAIN_BYTES = 512 * 1024
#: how much of the part before the turn is read at once to count its lines
COUNT_BYTES = 1024 * 1024


class _Shrunk(Exception):
    """The file became shorter while it was read from the end."""


def _read_at(fd: int, size: int, offset: int) -> bytes:
    data = os.pread(fd, size, offset)
    if len(data) != size:
        raise _Shrunk
    return data


def _lines_from_end(fd: int, size: int, source: str) -> Iterator[tuple[int, bytes]]:
    """(offset, line) of the first ``size`` bytes, from the last line to the first; a line keeps its ``\\n``.

    The lines are those of iterating the file forward: split after each ``\\n``, the last one without it when the
    file does not end in one. A line longer than a block is read in doubling reads (linear, not quadratic), up to
    :data:`MAX_LINE_BYTES`: a longer one is an InputError, as forward."""
    position = size  # buffer holds the bytes from here to the end of the lines not yet given
    buffer = b""
    while True:
        stop = len(buffer)
        # the newline that ends the last held line is that line's own: a line begins after an earlier one
        cut = buffer.rfind(b"\n", 0, max(stop - 1, 0))
        while cut >= 0:
            line = buffer[cut + 1:stop]
            if past_the_bound(line):
                raise line_too_long(source)
            yield position + cut + 1, line
            stop = cut + 1
            cut = buffer.rfind(b"\n", 0, stop - 1)
        if stop - buffer.endswith(b"\n", 0, stop) > MAX_LINE_BYTES:
            raise line_too_long(source)  # the first line held is longer still: not read on
        if position == 0:
            if stop:
                yield 0, buffer[:stop]
            return
        size_read = min(position, max(BLOCK_BYTES, stop))
        position -= size_read
        buffer = _read_at(fd, size_read, position) + buffer[:stop]


def _plain_claude_line(reader: Transcript, number: int, record: dict[str, Any]) -> Iterable[Event]:
    """``_claude_line`` under another name: a reader given it takes the plain path (``json``) for every line,
    where ``_claude_line`` has it try the fast decoder first (same events; msgspec costs more to import than json
    takes for the few dozen lines of a turn)."""
    return _claude_line(reader, number, record)


class _FromEnd(Transcript):
    """A Claude Code transcript whose lines come from the end: the events of the last line first (each line's own
    events in their order), each numbered by its line's place from the end (1: the first line given). Setting
    ``stop`` ends the iteration after the current line's events; ``lines`` may go on in another reader."""

    def __init__(self, path: Path, lines: Iterator[tuple[int, bytes]], *, plain: bool) -> None:
        super().__init__(path, _plain_claude_line if plain else _claude_line)
        self._from_end = lines
        self.stop = False
        #: the byte offset of the line whose events are being given
        self.offset = -1

    def _lines(self) -> Iterator[str | bytes]:
        # a line as the forward reader gives it: text when it is UTF-8 (the fast decoder reads it), else bytes
        # (both decode to the same events: ``decode_line`` reads a text line as its UTF-8 bytes)
        for offset, raw in self._from_end:
            self.offset = offset
            try:
                yield raw.decode()
            except UnicodeDecodeError:
                yield raw
            if self.stop:
                return


class _Scan:
    """The events of a Claude Code transcript's first ``size`` bytes, from the last line back (``_FromEnd``): the
    last ``plain_bytes`` on the plain path, the rest with the fast decoder. ``offset`` is the byte offset of the
    line whose events are being given (a line's events come together); ``stop()`` ends the scan after them."""

    def __init__(self, path: Path, fd: int, size: int, plain_bytes: int) -> None:
        self.path, self.fd, self.size, self.plain_bytes = path, fd, size, plain_bytes
        self.offset = size
        self.warnings = 0
        self.truncated_tail = False
        self._stopped = False
        self._current: _FromEnd | None = None

    def stop(self) -> None:
        self._stopped = True
        if self._current is not None:
            self._current.stop = True

    def events(self) -> Iterator[Event]:
        lines = _lines_from_end(self.fd, self.size, str(self.path))
        for plain in (True, False):
            if self._stopped:
                return
            transcript = self._current = _FromEnd(self.path, lines, plain=plain)
            for event in transcript:
                if plain and self.size - transcript.offset > self.plain_bytes:
                    transcript.stop = True  # after this line, the next reader (the fast decoder) goes on
                self.offset = transcript.offset
                yield event
            self.warnings += transcript.warnings
            self.truncated_tail = self.truncated_tail or transcript.truncated_tail


def _lines_before(fd: int, offset: int) -> int:
    """The number of lines before ``offset`` (a line start): the newlines before it."""
    lines = 0
    for start in range(0, offset, COUNT_BYTES):
        lines += _read_at(fd, min(COUNT_BYTES, offset - start), start).count(b"\n")
    return lines


@contextlib.contextmanager
def _regular_file(source: Path) -> Iterator[tuple[int, int] | None]:
    """The open transcript's descriptor and size, or None when it is no regular file (a pipe, a device: it cannot
    be read from the end). Whether it is one is asked before opening it, since a pipe can be read once (by the
    forward reader); it is opened without waiting for a writer, and a file that stopped being a regular one
    meanwhile is an input error."""
    if not stat.S_ISREG(source.stat().st_mode):
        yield None
        return
    fd = open_log_file(str(source))  # a file that stopped being a regular one meanwhile: an input error
    try:
        yield fd, os.fstat(fd).st_size
    finally:
        os.close(fd)


def latest_turn_from_end(path: str | Path, *, host: Host = "claude-code", output_chars: int = DEFAULT_OUTPUT_CHARS,
                         subagent: bool = False, max_tail_bytes: int = MAX_TAIL_BYTES,
                         plain_bytes: int = PLAIN_BYTES) -> Turn:
    """:func:`~verigate.transcripts.last_turn` of ``path``, reading a Claude Code transcript from its end back
    to the latest turn's request line only (a Codex rollout, a non-regular file, or no request within
    ``max_tail_bytes`` of the end: the whole file, forward). ``warnings`` counts the skipped lines read."""
    source = Path(path)
    turn = None
    if host == "claude-code":
        try:
            with _regular_file(source) as opened:
                if opened is not None:
                    turn = _turn_from_end(_Scan(source, *opened, plain_bytes), output_chars, subagent,
                                          max_tail_bytes)
        except _Shrunk:
            turn = None
        except OSError as exc:
            raise InputError(f"cannot read transcript: {exc}", source=str(path)) from exc
    if turn is None:
        return last_turn(source, host=host, output_chars=output_chars, subagent=subagent)
    return turn


def _turn_from_end(scan: _Scan, output_chars: int, subagent: bool, max_tail_bytes: int) -> Turn | None:
    """The turn, or None when no request lies within ``max_tail_bytes`` of the end."""
    held: list[list[Event]] = []  # the events of the lines read, by line, the last line first
    found, offset = False, -1
    for event in scan.events():
        if scan.offset != offset:  # the first event of a line
            offset = scan.offset
            if scan.size - offset > max_tail_bytes:
                return None
            held.append([])
        held[-1].append(event)
        if not found and starts_turn(event, subagent):
            found = True
            scan.stop()  # the rest of this line's events still come
    fold = TurnFold(subagent)
    for events in reversed(held):
        fold.add(events)
    request_line = _lines_before(scan.fd, scan.offset) + 1 if found else None
    return fold.turn(output_chars, request_line, warnings=scan.warnings, truncated_tail=scan.truncated_tail)


def last_request_from_end(path: str | Path, accept: Callable[[str], bool], *, host: Host = "claude-code",
                          subagent: bool = False, plain_bytes: int = PLAIN_BYTES) -> str:
    """The text of the last request prompt (as ``last_turn`` finds requests) that ``accept`` takes; "" when there
    is none. A Claude Code transcript is read from the end back to that prompt's line; anything else forward."""
    source = Path(path)
    if host == "claude-code":
        try:
            with _regular_file(source) as opened:
                if opened is not None:
                    scan = _Scan(source, *opened, plain_bytes)
                    request = ""
                    for event in scan.events():
                        if starts_turn(event, subagent) and accept(event.text):
                            request = event.text
                            scan.stop()  # a later prompt of the same line would still win, as it does forward
                    return request
        except _Shrunk:
            pass
        except OSError as exc:
            raise InputError(f"cannot read transcript: {exc}", source=str(path)) from exc
    request = ""
    try:
        for event in read(source, host=host):
            if starts_turn(event, subagent) and accept(event.text):
                request = event.text
    except OSError as exc:
        raise InputError(f"cannot read transcript: {exc}", source=str(path)) from exc
    return request
