"""The incremental transcript reader: offsets, partial lines, rotation, classification of odd lines."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from verigate.selfgate import GateStore, sync
from verigate.selfgate._phrases import Screen
from verigate.selfgate._store import Cursor
from verigate.selfgate._transcript import classify, read_new_lines

GATE_LINE = {"type": "assistant", "uuid": "a1", "message": {"content": [
    {"type": "text", "text": "I'll wait for your approval before step 3."}]}}


def write(path: Path, *records: object, raw: str = "") -> None:
    with path.open("a", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record) + "\n")
        handle.write(raw)


def test_reads_only_new_complete_lines(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write(path, {"type": "summary"}, GATE_LINE, raw='{"type": "assist')
    first = read_new_lines(str(path), Cursor())
    assert [line.kind for line in first.lines] == ["skip", "assistant_text"]
    assert first.cursor.line == 2 and first.cursor.offset < path.stat().st_size
    write(path, raw='ant", "uuid": "a2", "message": {"content": "done"}}\n')
    second = read_new_lines(str(path), first.cursor)
    assert [(line.kind, line.number, line.texts) for line in second.lines] == [("assistant_text", 3, ("done",))]
    assert read_new_lines(str(path), second.cursor).lines == ()


def test_rotation_and_truncation_rescan_without_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    store = GateStore(tmp_path / "gates.jsonl")
    screen = Screen(store.state_dir)
    write(path, GATE_LINE)
    assert len(sync(store, "s", str(path), screen.openings).new_entries) == 1
    path.write_text("")  # truncated, then the same history written again (a rotation keeping content)
    write(path, {"type": "summary", "summary": "x"}, GATE_LINE)
    result = sync(store, "s", str(path), screen.openings)
    assert result.restarted == (str(path),) and result.new_entries == ()
    assert len(result.state.open_gates("s")) == 1
    replaced = tmp_path / "s2.jsonl"
    write(replaced, {"type": "summary"}, {"type": "summary"}, {"type": "summary"})
    replaced.replace(path)  # a new file (new inode) under the same name
    assert sync(store, "s", str(path), screen.openings).restarted == (str(path),)


def test_classification_of_odd_lines() -> None:
    assert classify(b'"massive error"', 1).kind == "problem"
    assert classify(b"[1]", 1).kind == "problem"
    assert classify(b'{"silly": "this"}', 1).problem == "no line type"
    assert "unknown line type" in classify(b'{"type": "hologram"}', 1).problem
    assert classify(b'{"type": "assistant", "message": "error"}', 1).kind == "problem"
    assert classify(b'{"type": "file-history-snapshot"}', 1).kind == "skip"
    meta = classify(json.dumps({"type": "user", "isMeta": True, "message": {"content": "Gate 解除"}}).encode(), 1)
    assert meta.kind == "user_prompt" and "isMeta" in meta.not_human
    result = classify(json.dumps({"type": "user", "message": {"content": [
        {"type": "tool_result", "tool_use_id": "t", "content": "Gate 解除"}]}}).encode(), 1)
    assert result.kind == "skip"
    codex = classify(json.dumps({"type": "response_item", "payload": {
        "type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>"}]}})
        .encode(), 1)
    assert codex.not_human == "injected context"


def test_shared_fixture_edge_cases_become_problem_gates(tmp_path: Path) -> None:
    fixture = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "claude-code" / "edge_cases.jsonl"
    if not fixture.is_file():
        return
    store = GateStore(tmp_path / "gates.jsonl")
    result = sync(store, "edge", str(fixture), Screen(store.state_dir).openings)
    gates = result.state.open_gates("edge")
    assert gates and all(gate.opened_by == "verigate" for gate in gates)
    assert len({gate.gate_text.split(": ", 1)[1].split(" (")[0] for gate in gates}) == len(gates)


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.binary(max_size=200), st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(
        st.sampled_from(["type", "message", "content", "payload", "role", "text", "isMeta", "uuid"]), children,
        max_size=5), max_leaves=20).map(lambda value: json.dumps(value).encode())))
def test_classify_never_raises(raw: bytes) -> None:
    line = classify(raw, 1)
    assert line.kind in ("assistant_text", "user_prompt", "skip", "problem")
    assert (line.kind == "problem") == bool(line.problem)
