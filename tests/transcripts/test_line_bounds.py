"""Every reader of a session log bounds a line: a line longer than ``MAX_LINE_BYTES`` is an InputError naming the
file and line, read forward or from the end, as text or as bytes, by the grader or by the self-gate — never a
line held in memory without bound, never skipped as if it said nothing (it could hold the failing tool result or
the declaration), and never a pass. A device is no transcript."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from verigate import InputError
from verigate._transcript_lines import MAX_LINE_BYTES
from verigate.selfgate._store import Cursor
from verigate.selfgate._transcript import read_new_lines, tail_lines
from verigate.trace._parsers import detect_format
from verigate.transcripts import last_turn, read_claude_code, read_codex, subagent_files
from verigate.transcripts._tail import last_request_from_end, latest_turn_from_end


def _user(text: str) -> str:
    return json.dumps({"type": "user", "uuid": "u1", "parentUuid": None, "isSidechain": False, "sessionId": "s",
                       "message": {"role": "user", "content": text}})


def _assistant_of_size(size: int) -> bytes:
    """An assistant line of exactly ``size`` bytes (its newline not counted)."""
    head = json.dumps({"type": "assistant", "uuid": "a1", "isSidechain": False, "sessionId": "s",
                       "message": {"role": "assistant", "content": [{"type": "text", "text": ""}]}})
    cut = head.index('"text": ""') + len('"text": "')
    filler = size - len(head)
    return (head[:cut] + "x" * filler + head[cut:]).encode()


def _write(path: Path, *lines: bytes, newline_at_end: bool = True) -> Path:
    with path.open("wb") as handle:
        handle.write(b"\n".join(lines))
        if newline_at_end:
            handle.write(b"\n")
    return path


READERS: dict[str, Callable[[Path], Any]] = {
    "forward": lambda path: list(read_claude_code(path)),
    "last_turn": last_turn,
    "from the end": latest_turn_from_end,
    "request from the end": lambda path: last_request_from_end(path, lambda text: True),
    "self-gate": lambda path: read_new_lines(str(path), Cursor(0, 0, 0, 0, "")),
}


@pytest.fixture(scope="module")
def long_logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("long")
    prompt = _user("fix the bug").encode()
    return {
        "at the bound": _write(folder / "at.jsonl", prompt, _assistant_of_size(MAX_LINE_BYTES)),
        "past the bound": _write(folder / "past.jsonl", prompt, _assistant_of_size(MAX_LINE_BYTES + 1)),
        # the long line before the latest turn's request: a reader from the end never reads it
        "before the turn": _write(folder / "before.jsonl", prompt, _assistant_of_size(MAX_LINE_BYTES + 1), prompt),
        # not UTF-8 before the long line: the forward reader reads the rest as bytes
        "past the bound, bytes": _write(folder / "bytes.jsonl", b'{"type": "user", "x": "\xff"}',
                                        _assistant_of_size(MAX_LINE_BYTES + 1)),
        # the host still writing it: no newline yet, but already past the bound (the self-gate, which leaves an
        # unfinished line for its next read, refuses it too: past the bound it can never become a line)
        "past the bound, unfinished": _write(folder / "tail.jsonl", prompt, _assistant_of_size(MAX_LINE_BYTES + 1),
                                             newline_at_end=False),
        "no newline at all": _write(folder / "one.jsonl", b"x" * (MAX_LINE_BYTES + 4096), newline_at_end=False),
    }


@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_line_at_the_bound_is_read(long_logs: dict[str, Path], reader: str) -> None:
    READERS[reader](long_logs["at the bound"])


#: every reader on every log whose long line it must read (from the end, a turn found before it ends the read)
LONG = [(reader, log) for reader in sorted(READERS)
        for log in ("past the bound", "past the bound, bytes", "before the turn", "past the bound, unfinished",
                    "no newline at all")
        if not (log == "before the turn" and "from the end" in reader)]


@pytest.mark.parametrize(("reader", "log"), LONG)
def test_a_longer_line_is_an_input_error_naming_the_file(long_logs: dict[str, Path], reader: str,
                                                         log: str) -> None:
    with pytest.raises(InputError) as caught:
        READERS[reader](long_logs[log])
    assert caught.value.source == str(long_logs[log])
    assert f"{MAX_LINE_BYTES:,}" in str(caught.value)


def test_a_reader_from_the_end_stops_at_the_latest_request_before_a_long_line(long_logs: dict[str, Path]) -> None:
    # what it never reads it cannot refuse: the turn it gives holds no part of the long line
    assert latest_turn_from_end(long_logs["before the turn"]).request == "fix the bug"
    assert last_request_from_end(long_logs["before the turn"], lambda text: True) == "fix the bug"


def test_the_forward_reader_names_the_line(long_logs: dict[str, Path]) -> None:
    with pytest.raises(InputError) as caught:
        list(read_codex(long_logs["past the bound"]))
    assert caught.value.line == 2


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
@pytest.mark.parametrize("reader", sorted(set(READERS) - {"self-gate"}))
def test_a_device_is_no_transcript(reader: str) -> None:
    with pytest.raises(InputError, match="not a regular file or a pipe"):
        READERS[reader](Path("/dev/zero"))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes need POSIX")
def test_a_pipe_is_still_read(tmp_path: Path) -> None:
    import threading

    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    writer = threading.Thread(target=fifo.write_bytes, args=((_user("from a pipe") + "\n").encode(),))
    writer.start()
    try:
        assert last_turn(fifo).request == "from a pipe"
    finally:
        writer.join(10)


@pytest.mark.skipif(not Path("/dev/urandom").exists() or not hasattr(os, "mkfifo"), reason="needs POSIX devices")
@pytest.mark.parametrize("target", ["/dev/urandom", "/dev/zero", "fifo"])
def test_the_self_gate_reads_regular_files_only(tmp_path: Path, target: str) -> None:
    # an endless device (short lines, never an end) or a pipe with no writer, linked where a log is expected
    log = tmp_path / "agent-x.jsonl"
    if target == "fifo":
        os.mkfifo(tmp_path / "pipe")
        target = str(tmp_path / "pipe")
    log.symlink_to(target)
    with pytest.raises(InputError, match="not a regular file: a session log is read from a regular file only"):
        read_new_lines(str(log), Cursor(0, 0, 0, 0, ""))
    with pytest.raises(InputError, match="not a regular file: a session log is read from a regular file only"):
        tail_lines(str(log))


def test_format_detection_reads_a_line_within_the_bound_only(long_logs: dict[str, Path]) -> None:
    # the first line past the bound is refused, not cut: the rest of a cut line would be read as a line of its own
    with pytest.raises(InputError) as caught:
        detect_format(long_logs["no newline at all"])
    assert caught.value.line == 1


def test_a_cut_line_is_never_read_as_the_next_one(tmp_path: Path) -> None:
    # a line past the bound whose tail is a line of another session: no session id is told from it
    session = tmp_path / "s1.jsonl"
    session.write_text(_user("go") + "\n", encoding="utf-8")
    planted = b"x" * (MAX_LINE_BYTES + 2) + json.dumps({"sessionId": "s1"}).encode() + b"\n"
    (tmp_path / "agent-planted.jsonl").write_bytes(planted)
    with pytest.raises(InputError) as caught:  # whose it is cannot be told: an error, never attached (nor dropped)
        subagent_files(session)
    assert caught.value.line == 1
