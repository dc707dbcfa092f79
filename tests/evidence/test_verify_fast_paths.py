"""The verifier's fast paths answer as the plain code they replace: file reads as pathlib's (for the regular files
the bounded reader takes), the task name as resolve()'s, the shared walk as the verifier's own, same_json as a
comparison of JSON texts."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verigate._errors import EvidenceError
from verigate.evidence._canonical import same_json
from verigate.evidence._files import NotRegularFile, TooLarge, read_bounded, read_regular
from verigate.evidence._privacy import texts_of
from verigate.evidence._sources import read_c3_sources, read_record_text
from verigate.evidence._verify import _folder_name, _unavailable_paths, unavailable_paths

# bytes rich in what text mode changes or refuses: CR, LF, CR LF, invalid UTF-8, a BOM, multi-byte characters
_PIECES = st.sampled_from([b"\r", b"\n", b"\r\n", b"\xff", b"\xef\xbb\xbf", "é𝄞".encode(), b"{}", b"a"])
_CONTENT = st.lists(st.one_of(_PIECES, st.binary(max_size=8)), max_size=24).map(b"".join)


def _outcome(action: object) -> tuple[str, object]:
    try:
        return "value", action()  # type: ignore[operator]
    except EvidenceError as exc:
        return "evidence", list(exc.reasons)
    except (OSError, RuntimeError) as exc:
        return "error", (type(exc), str(exc))


def _text_outcome(path: Path, label: str) -> tuple[str, object]:
    """pathlib's text read of ``path``, or the verifier's refusal of the bytes it cannot decode."""
    try:
        return "value", path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        return "evidence", [f"{label} cannot be read: {exc}"]


@settings(max_examples=150, deadline=None)
@given(content=_CONTENT)
def test_texts_and_bytes_are_pathlibs(content: bytes) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        task = Path(scratch)
        (task / "approvals").mkdir()
        (task / "delivery").mkdir()
        (task / "approvals" / "c3.json").write_bytes(content)
        (task / "delivery" / "record.jsonl").write_bytes(content)
        (task / "plan.md").write_bytes(content)
        assert read_regular(str(task / "plan.md"), 1 << 20) == (task / "plan.md").read_bytes()
        assert _outcome(lambda: read_record_text(task)) == _text_outcome(task / "delivery" / "record.jsonl",
                                                                         "delivery/record.jsonl")
        expected = _text_outcome(task / "approvals" / "c3.json", "approvals/c3.json")
        if expected[0] == "evidence":
            assert _outcome(lambda: read_c3_sources(task)) == expected
        else:
            got_text, artifacts = read_c3_sources(task)
            assert got_text == expected[1] and artifacts["plan.md"] == content


def test_unreadable_places_are_refused_or_absent(tmp_path: Path) -> None:
    (tmp_path / "approvals" / "c3.json").mkdir(parents=True)  # a folder where the file should be: refused
    (tmp_path / "delivery" / "record.jsonl").mkdir(parents=True)  # not a file: no record (pathlib's is_file)
    assert _outcome(lambda: read_c3_sources(tmp_path)) == (
        "evidence", ["approvals/c3.json is refused: it is a folder, not a regular file"])
    assert read_record_text(tmp_path) is None
    with pytest.raises(OSError) as absent:  # a missing c3.json is named with pathlib's own error
        (tmp_path / "absent" / "approvals" / "c3.json").read_text(encoding="utf-8")
    assert _outcome(lambda: read_c3_sources(tmp_path / "absent")) == (
        "evidence", [f"approvals/c3.json cannot be read: {absent.value}"])
    with pytest.raises(OSError):
        read_regular(str(tmp_path / "absent"), 10)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc/self/fd to name a pipe")
def test_a_pipe_is_refused_before_it_is_opened() -> None:
    read, write = os.pipe()  # the write end stays open: an open or a read of the pipe would wait for ever
    try:
        with pytest.raises(NotRegularFile, match="a FIFO"):
            read_regular(f"/proc/self/fd/{read}", 1 << 20)
    finally:
        os.close(read)
        os.close(write)


def test_a_file_past_its_bound_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "sparse.json"
    with path.open("wb") as handle:
        handle.truncate(1 << 40)  # 1 TiB, sparse: one read of it would take all memory
    with pytest.raises(TooLarge, match="past the bound of 1024"):
        read_regular(str(path), 1024)
    path.write_bytes(b"x" * 1024)
    assert read_regular(str(path), 1024) == b"x" * 1024  # the bound itself is allowed


@pytest.mark.skipif(not hasattr(os, "pipe") or sys.platform == "win32", reason="needs a POSIX pipe")
def test_a_file_that_grows_past_its_bound_while_it_is_read_is_refused() -> None:
    read, write = os.pipe()  # fstat said 10 bytes; 30 arrive: at most bound + 1 are read, then refused
    os.write(write, b"y" * 30)
    os.close(write)
    try:
        with pytest.raises(TooLarge):
            read_bounded(read, 10, 20)
    finally:
        os.close(read)


@pytest.mark.skipif(not hasattr(os, "pipe") or sys.platform == "win32", reason="needs a POSIX pipe and FIONREAD")
def test_a_short_read_is_not_the_end_of_the_file() -> None:
    """A read may return fewer bytes than asked before the end (Linux gives at most 2 GiB - 4 KiB per read, so a
    larger record.jsonl lost its tail; a pipe shows it with a few bytes): only an empty read is the end."""
    import fcntl
    import termios

    read, write = os.pipe()
    os.write(write, b"first half ")

    def rest() -> None:  # once the first half was taken (a short read of the 22 bytes announced), the rest
        pending = bytearray(4)
        while True:
            fcntl.ioctl(read, termios.FIONREAD, pending)
            if int.from_bytes(pending, sys.byteorder) == 0:
                break
            time.sleep(0.001)
        os.write(write, b"second half")
        os.close(write)

    writer = threading.Thread(target=rest)
    writer.start()
    try:
        assert read_bounded(read, 22, 1 << 20) == b"first half second half"
    finally:
        writer.join()
        os.close(read)


_NAMES = st.sampled_from(["TASK-0001", "TASK-0002", "link", "loop", "..", ".", "missing", "sub"])


@settings(max_examples=200, deadline=None)
@given(parts=st.lists(_NAMES, min_size=1, max_size=5))
def test_folder_name_is_the_resolved_name(parts: list[str]) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / "TASK-0001" / "sub").mkdir(parents=True)
        (root / "TASK-0002").mkdir()
        (root / "link").symlink_to(root / "TASK-0002")
        (root / "TASK-0001" / "link").symlink_to("../TASK-0002")
        (root / "loop").symlink_to(root / "loop")
        task = Path(scratch).joinpath(*parts)
        assert _outcome(lambda: _folder_name(task)) == _outcome(lambda: task.resolve().name)


# JSON-shaped values with the verifier's sentinels and the types whose == disagrees with their JSON text
_SCALARS = st.one_of(st.sampled_from(["unavailable", "x", "", 0, 1, -0.0, 0.0, 1.0, True, False, None]),
                     st.text(max_size=3), st.integers(-3, 3))
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["a", "b", "unavailable"]), inner, max_size=3)),
    max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(value=_VALUES)
def test_the_shared_walk_finds_unavailable_where_the_own_walk_does(value: object) -> None:
    # the oracle: the path walk itself, which visits every node
    assert ("unavailable" in texts_of(value)[1]) == bool(_unavailable_paths(value, ""))
    assert unavailable_paths(value) == _unavailable_paths(value, "")


@settings(max_examples=300, deadline=None)
@given(left=_VALUES, right=_VALUES)
def test_same_json_is_equality_of_json_text(left: object, right: object) -> None:
    assert same_json(left, right) == (json.dumps(left, sort_keys=True) == json.dumps(right, sort_keys=True))
    assert same_json(left, left)
