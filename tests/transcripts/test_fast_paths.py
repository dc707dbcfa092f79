"""The reader's fast paths give exactly what the plain ones give: decoding, bulk UTF-8, pairing, event equality."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transcripts.builders import ClaudeSession
from verigate.transcripts import CallPairer, ToolCall, ToolResult, ToolUse, read_claude_code
from verigate.transcripts._reader import decode_line

json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
                           max_leaves=8)
lines = st.one_of(
    st.binary(max_size=60),
    json_values.map(lambda value: json.dumps(value, ensure_ascii=False).encode()),
    st.tuples(json_values, st.sampled_from(["", "\n", "\r\n", " \t\n", " x", "\x0b", "\n\n"]),
              st.sampled_from(["", " ", "\ufeff"]), st.sampled_from(["utf-8", "utf-16", "utf-16-le", "utf-32"]))
    .map(lambda parts: (parts[2] + json.dumps(parts[0], ensure_ascii=False) + parts[1]).encode(parts[3],
                                                                                              "surrogatepass")),
)


def _outcome(function: Any, argument: Any) -> tuple[str, Any]:
    try:
        return "value", function(argument)
    except (ValueError, RecursionError) as exc:
        return "error", type(exc)


@settings(max_examples=300, deadline=None)
@given(lines)
def test_decode_line_is_json_loads(raw: bytes) -> None:
    expected = _outcome(json.loads, raw)
    assert _outcome(decode_line, raw) == expected
    try:
        text = raw.decode()
    except UnicodeDecodeError:
        return
    assert _outcome(decode_line, text) == expected  # a line the bulk decoder gave as text


def _broken_lines(path: Path) -> int:
    """The lines plain ``json.loads`` cannot read (each one a warning of the reader)."""
    broken = 0
    for raw in path.read_bytes().splitlines(keepends=True):
        try:
            json.loads(raw)
        except ValueError:
            broken += 1
    return broken


@pytest.mark.parametrize("bad", [b"\xff\xfe not utf-8\n", b'{"type": "user", "message": "caf\xe9"}\n',
                                 b'\xef\xbb\xbf{"type": "progress"}\n', b"\xed\xa0\x80\n"])
def test_undecodable_lines_cost_only_themselves(tmp_path: Path, bad: bytes) -> None:
    session = ClaudeSession().prompt("first")
    for index in range(1200):  # past the text layer's first chunks, so that the fallback resumes mid-file
        session.tool(f"t{index}", "Read", {"file_path": f"/repo/{index}.py"}, "x" * 50)
    clean = session.write(tmp_path / "clean.jsonl")
    expected = [event if event.line <= 2000 else event._replace(line=event.line + 1)
                for event in read_claude_code(clean)]
    good = clean.read_bytes().splitlines(keepends=True)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(good[:2000]) + bad + b"".join(good[2000:]) + bad)
    transcript = read_claude_code(path)
    assert list(transcript) == expected
    assert transcript.warnings == _broken_lines(path) == (0 if bad.startswith(b"\xef\xbb\xbf") else 2)
    assert transcript.bytes_read == path.stat().st_size and transcript.lines == len(good) + 2
    assert not transcript.truncated_tail


@st.composite
def pairer_script(draw: st.DrawFn) -> list[tuple[str, str]]:
    ids = [f"c{index}" for index in range(draw(st.integers(1, 8)))]
    return draw(st.lists(st.tuples(st.sampled_from(["use", "result"]), st.sampled_from([*ids, "orphan"])),
                         max_size=30))


class _ReferencePairer:
    """The pairing rule stated plainly: release answered calls from the front, in issue order; evict the oldest."""

    def __init__(self, max_pending: int) -> None:
        self.slots: list[list[Any]] = []
        self.max_pending = max_pending

    def use(self, use: ToolUse) -> list[tuple[str, str | None]]:
        if any(slot[0].id == use.id for slot in self.slots):
            return []
        self.slots.append([use, None])
        out = []
        while len(self.slots) > self.max_pending:
            oldest = self.slots.pop(0)
            out.append((oldest[0].id, oldest[1].text if oldest[1] else None))
        return out + self._front()

    def result(self, result: ToolResult) -> list[tuple[str, str | None]]:
        for slot in self.slots:
            if slot[0].id == result.tool_use_id and slot[1] is None:
                slot[1] = result
        return self._front()

    def _front(self) -> list[tuple[str, str | None]]:
        out = []
        while self.slots and self.slots[0][1] is not None:
            use, result = self.slots.pop(0)
            out.append((use.id, result.text))
        return out


def _ids(calls: list[ToolCall]) -> list[tuple[str, str | None]]:
    return [(call.use.id, call.result.text if call.result else None) for call in calls]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pairer_script(), st.integers(1, 4))
def test_pairer_matches_the_plain_rule(script: list[tuple[str, str]], max_pending: int) -> None:
    pairer, reference = CallPairer(max_pending=max_pending), _ReferencePairer(max_pending)
    for step, (action, tool_id) in enumerate(script):
        if action == "use":
            use = ToolUse(tool_id, "Tool", {}, step)
            assert _ids(pairer.add_use(use)) == reference.use(use)
        else:
            result = ToolResult(tool_id, f"r{step}", False, step)
            assert _ids(pairer.add_result(result)) == reference.result(result)
    assert _ids(pairer.flush()) == [(slot[0].id, slot[1].text if slot[1] else None) for slot in reference.slots]


def test_events_are_value_objects_of_their_own_type() -> None:
    use = ToolUse("a", "Read", {"file_path": "/x"}, 1)
    assert use == ToolUse("a", "Read", {"file_path": "/x"}, 1) and use != ToolUse("b", "Read", {}, 1)
    assert use != tuple(use) and not (use == tuple(use))  # noqa: SIM201 (both operators are under test)
    result = ToolResult("a", "ok", None, 2)
    assert hash(result) == hash(ToolResult("a", "ok", None, 2)) and len({result, ToolResult("a", "ok", None, 2)}) == 1
    assert repr(use).startswith("ToolUse(id='a', name='Read'")
    call = ToolCall(use, result)
    assert call == ToolCall(use, ToolResult("a", "ok", None, 2)) and call != (use, result) and call.ok is True
