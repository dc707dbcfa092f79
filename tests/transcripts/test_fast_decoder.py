"""The msgspec fast path of the Claude Code reader gives exactly what the plain path (``json.loads``) gives: the same
events, warnings and working directory for every line, and it never accepts a line ``json.loads`` refuses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from verigate.transcripts import _fast, _reader
from verigate.transcripts._reader import Transcript, _claude_line, decode_line

pytestmark = pytest.mark.skipif(not _fast.AVAILABLE, reason="msgspec is not installed")

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(
    max_size=8)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    st.sampled_from(["type", "text", "id", "content", "x"]) | st.text(max_size=3), inner, max_size=3), max_leaves=6)
block_types = st.sampled_from(["text", "tool_use", "tool_result", "thinking", "image", None, 3])


def mostly(good: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``good`` four times in five, else any JSON value (the shapes the fast path hands to the plain path)."""
    return st.integers(0, 4).flatmap(lambda pick: good if pick else values)


@st.composite
def blocks(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 19)) == 0:
        return draw(values)  # not an object: the plain path warns
    block: dict[str, Any] = {"type": draw(block_types)}
    for key, strategy in (("id", mostly(st.sampled_from(["t1", "t2"]))), ("name", mostly(st.sampled_from(["Read"]))),
                          ("input", mostly(st.dictionaries(st.text(max_size=4), values, max_size=3))),
                          ("text", mostly(st.text(max_size=20))), ("tool_use_id", mostly(st.sampled_from(["t1"]))),
                          ("content", mostly(st.text(max_size=20) | st.lists(st.fixed_dictionaries(
                              {"type": st.just("text"), "text": st.text(max_size=8)}), max_size=2))),
                          ("is_error", mostly(st.booleans())), ("thinking", st.text(max_size=30)),
                          ("signature", st.text(max_size=30))):
        if draw(st.integers(0, 3)):
            block[key] = draw(strategy)
    return block


@st.composite
def records(draw: st.DrawFn) -> Any:
    record: dict[str, Any] = {}
    if draw(st.integers(0, 9)):
        record["type"] = draw(mostly(st.sampled_from(["user", "assistant", "user", "assistant", "system", "progress",
                                                      "weird"])))
    for key, strategy in (("cwd", mostly(st.sampled_from(["/repo", "/other"]))), ("isSidechain", mostly(st.booleans())),
                          ("subtype", mostly(st.sampled_from(["compact_boundary", "x"]))),
                          ("isMeta", mostly(st.booleans())), ("isCompactSummary", mostly(st.booleans())),
                          ("isApiErrorMessage", mostly(st.booleans())), ("agentId", mostly(st.just("a1"))),
                          ("toolUseResult", values), ("uuid", st.text(max_size=6))):
        if draw(st.booleans()):
            record[key] = draw(strategy)
    if draw(st.integers(0, 5)):
        content = draw(mostly(st.lists(blocks(), max_size=4) | st.text(max_size=30)))
        message: Any = {"id": draw(mostly(st.sampled_from(["m1"]))), "role": "x", "content": content}
        if not draw(st.integers(0, 4)):
            message.pop(draw(st.sampled_from(["id", "content"])))
        record["message"] = message if draw(st.integers(0, 19)) else draw(values)
    return record


#: textual changes json.dumps never makes: each is a way two decoders could part
MUTATIONS = [
    lambda text: text,
    lambda text: text.replace("{", '{"type": "user", ', 1),  # a repeated key (the last one wins in both)
    lambda text: text.replace("{", '{"type": "assistant", ', 1),
    lambda text: text.replace("{", '{"message": {"content": "dup"}, ', 1),
    lambda text: text.replace("{", '{"x": NaN, ', 1),
    lambda text: text.replace("{", '{"x": -Infinity, ', 1),
    lambda text: text.replace("{", '{"x": 1e999, ', 1),
    lambda text: text.replace("{", '{"x": "\\ud800", ', 1),
    lambda text: text.replace("{", '{"x": "\\ud83d\\ude00", ', 1),
    lambda text: text.replace("{", '{"x": "\\q", ', 1),
    lambda text: text.replace("{", '{"x": "\x01", ', 1),
    lambda text: text.replace("{", '{"x": 01, ', 1),
    lambda text: text.replace("{", '{"x": ' + "9" * (sys.get_int_max_str_digits() + 1) + ", ", 1),
    lambda text: text.replace("{", '{"x": ' + "9" * sys.get_int_max_str_digits() + ", ", 1),
    lambda text: text.replace("{", '{"x": ' + "[" * 2000 + "]" * 2000 + ", ", 1),
    lambda text: text.replace("{", '{"x": ' + "[" * 300 + "]" * 300 + ", ", 1),
    lambda text: text.replace("{", '{"x": 123456789012345678901234567890, ', 1),
    lambda text: text + " x",
    lambda text: text + "\x0b",
    lambda text: "\ufeff" + text,
    lambda text: " \t" + text + " \r",
    lambda text: text[: len(text) // 2],
    lambda text: text.replace(":", ": ", 3).replace(",", " ,", 2),
]


def _outcome(text: str, *, fast: bool) -> tuple[Any, ...]:
    reader = Transcript("x.jsonl", _claude_line)
    reader.cwd = "/before"
    events = _fast.claude_events(reader, 7, text) if fast else None
    if events is None:
        try:
            record = decode_line(text)
        except (ValueError, RecursionError):
            return ("not json", reader.warnings)
        if type(record) is not dict:
            return ("not an object", reader.warnings)
        events = _claude_line(reader, 7, record)
    return ("events", list(events), reader.warnings, reader.warning_samples, reader.cwd)


def _json_accepts(text: str) -> bool:
    try:
        json.loads(text.encode())
    except (ValueError, RecursionError):
        return False
    return True


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(records(), st.sampled_from(range(len(MUTATIONS))), st.sampled_from(["\n", ""]))
@example({"type": "user", "message": {"content": [{"type": "text", "text": "hi"}]}}, 0, "\n")
def test_the_fast_path_gives_what_json_loads_gives(record: Any, mutation: int, end: str) -> None:
    text = MUTATIONS[mutation](json.dumps(record, ensure_ascii=bool(mutation % 2))) + end
    fast = _fast.claude_events(Transcript("x.jsonl", _claude_line), 7, text)
    if fast is not None:
        assert _json_accepts(text)  # the fast path never takes a line json.loads refuses
    assert _outcome(text, fast=True) == _outcome(text, fast=False)


def test_the_fast_path_is_taken_for_the_common_lines() -> None:
    lines = [{"type": "user", "cwd": "/repo", "message": {"role": "user", "content": "fix it"}},
             {"type": "assistant", "message": {"id": "m", "content": [
                 {"type": "thinking", "thinking": "hm", "signature": "Eq" * 50},
                 {"type": "tool_use", "id": "t", "name": "Read", "input": {"file_path": "/repo/a.py"}}]}},
             {"type": "user", "toolUseResult": {"stdout": "x" * 9000}, "message": {"content": [
                 {"type": "tool_result", "tool_use_id": "t", "content": "1\n2", "is_error": False}]}},
             {"type": "progress", "data": {"type": "hook_progress"}}]
    for record in lines:
        text = json.dumps(record) + "\n"
        assert _fast.claude_events(Transcript("x.jsonl", _claude_line), 1, text) is not None
        assert _outcome(text, fast=True) == _outcome(text, fast=False)


@pytest.mark.parametrize("text", [
    '{"type": "progress", "x": ' + "7" * (sys.get_int_max_str_digits() + 1) + "}\n",
    '{"type": "progress", "x": ' + "[" * 3000 + "]" * 3000 + "}\n",
    '{"type": "progress", "x": NaN}\n',
    '{"type": "progress", "x": "\\udc00"}\n',
])
def test_lines_msgspec_would_read_differently_take_the_plain_path(text: str) -> None:
    assert _fast.claude_events(Transcript("x.jsonl", _claude_line), 1, text) is None



def _nested(kinds: str, depth: int) -> str:
    value = '"y"'
    for level in range(depth):
        value = f"[{value}]" if kinds[level % len(kinds)] == "[" else f'{{"k": {value}}}'
    return value


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 3 * sys.get_int_max_str_digits() + 9), st.sampled_from([0, 1]), st.sampled_from([0, 1, 7]),
       st.sampled_from(["[", "{", "[{"]), st.integers(0, 20))
def test_a_long_integer_anywhere_in_a_long_line_takes_the_plain_path(offset: int, longer: int, digits_before: int,
                                                                     kinds: str, depth: int) -> None:
    # the guard reads long lines sparsely (digits every few thousand characters, brackets one by one up to a few):
    # wherever the integer starts and whatever comes before it, the fast path never takes a line json.loads
    # refuses, and gives what the plain path gives
    limit = sys.get_int_max_str_digits()
    text = ('{"type": "progress", "pad": "' + "a" * offset + "1" * digits_before + '", "n": '
            + _nested(kinds, depth) + ', "x": ' + "7" * (limit + longer)
            + ', "type": "user", "message": {"content": "hi"}}\n')
    fast = _fast.claude_events(Transcript("x.jsonl", _claude_line), 1, text)
    if fast is not None:
        assert _json_accepts(text)
    assert _outcome(text, fast=True) == _outcome(text, fast=False)
    assert (fast is None) == bool(longer)  # an integer json.loads still reads is no reason to leave the fast path


@pytest.mark.parametrize("kinds", ["[", "{", "[{"])
@pytest.mark.parametrize("depth", [7, 8, 9, 60, 249, 250, 400, 2000])
def test_nesting_is_counted_however_the_brackets_mix(kinds: str, depth: int) -> None:
    text = ('{"type": "user", "pad": "' + "b" * 600 + '", "n": ' + _nested(kinds, depth)
            + ', "message": {"content": "hi"}}\n')
    fast = _fast.claude_events(Transcript("x.jsonl", _claude_line), 1, text)
    if fast is not None:
        assert _json_accepts(text)
    assert _outcome(text, fast=True) == _outcome(text, fast=False)
    assert (fast is None) == (depth + 2 >= sys.getrecursionlimit() // 4)  # the line's own braces count too


def _read_whole(path: Path, monkeypatch: pytest.MonkeyPatch, min_bytes: int) -> tuple[Any, ...]:
    monkeypatch.setattr(_reader, "FAST_MIN_BYTES", min_bytes)
    reader = _reader.read_claude_code(path)
    events = list(reader)
    return events, reader.warnings, reader.warning_samples, reader.cwd, reader.truncated_tail, reader.lines


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                                 HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(records(), st.sampled_from(range(len(MUTATIONS)))), max_size=8), st.booleans())
def test_a_whole_file_reads_the_same_on_either_side_of_the_size_threshold(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lines: list[tuple[Any, int]], cut_tail: bool) -> None:
    # the oracle is the plain path (json.loads per line); the threshold only picks which decoder reads the file
    text = "".join(MUTATIONS[mutation](json.dumps(record)) + "\n" for record, mutation in lines)
    path = tmp_path / "session.jsonl"
    path.write_text(text[:-1] if cut_tail and text else text, encoding="utf-8")
    assert _read_whole(path, monkeypatch, 0) == _read_whole(path, monkeypatch, 1 << 62)


def test_a_small_transcript_is_read_without_importing_msgspec(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_text(json.dumps({"type": "user", "message": {"role": "user", "content": "fix it"}}) + "\n",
                    encoding="utf-8")
    code = ("import sys; from verigate.transcripts import read_claude_code; "
            f"events = list(read_claude_code({str(path)!r})); print(len(events), 'msgspec' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["1", "False"]
