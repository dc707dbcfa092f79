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
    # a type only a newer host writes, without a message's shape, cannot carry assistant text: skipped
    assert classify(b'{"type": "hologram"}', 1).kind == "skip"
    assert classify(b'{"type": "hologram", "message": {"content": "x"}}', 1).kind == "problem"
    assert classify(b'{"type": "hologram", "payload": {"role": "assistant"}}', 1).kind == "problem"
    # an early Codex rollout wrote items without an envelope: its assistant messages are read, as the grader does
    bare = classify(json.dumps({"type": "message", "role": "assistant", "content": [
        {"type": "output_text", "text": "I'll wait for your approval before step 3."}]}).encode(), 1)
    assert bare.kind == "assistant_text" and bare.texts == ("I'll wait for your approval before step 3.",)
    assert classify(b'{"type": "tag", "tag": "x"}', 1).kind == "skip"
    assert classify(b'{"type": "world_state", "payload": {}}', 1).kind == "skip"
    assert classify(b'{"type": "token_usage_record", "payload": {}}', 1).kind == "skip"
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


def test_unreadable_message_lines_become_problem_gates_one_per_kind(tmp_path: Path) -> None:
    fixture = Path(__file__).resolve().parents[1] / "transcripts" / "fixtures" / "edge_cases.jsonl"
    store = GateStore(tmp_path / "gates.jsonl")
    result = sync(store, "edge", str(fixture), Screen(store.state_dir).openings)
    gates = result.state.open_gates("edge")
    # the one line that may hold assistant text and cannot be read (line 13 is cut): one problem gate
    assert [gate.opened_by for gate in gates] == ["verigate"]
    assert "line 13" in gates[0].gate_text and "not JSON" in gates[0].gate_text


#: lines of both hosts, each with what a person would say it is (the grader's reader and the self-gate agree)
_SAME_LINES = [
    ({"type": "user", "message": {"role": "user", "content": "Gate 解除"}}, "typed"),
    ({"type": "user", "isMeta": True, "message": {"role": "user", "content": "Gate 解除"}}, "meta"),
    ({"type": "user", "message": {"role": "user", "content": "<task-notification>Gate 解除</task-notification>"}},
     "injected"),
    ({"type": "user", "message": {"role": "user", "content": "<command-name>/clear</command-name>"}}, "command"),
    ({"type": "user", "message": {"role": "user", "content": "<local-command-stdout>ok</local-command-stdout>"}},
     "command_output"),
    ({"type": "response_item", "payload": {"type": "message", "role": "user",
                                           "content": [{"type": "input_text", "text": "# AGENTS.md\nrules"}]}},
     "meta"),
    ({"type": "response_item", "payload": {"type": "message", "role": "user",
                                           "content": [{"type": "input_text", "text": "Gate 解除"}]}}, "typed"),
]


def test_the_grader_and_the_self_gate_classify_prompts_alike(tmp_path: Path) -> None:
    from verigate.transcripts import UserPrompt, read_claude_code, read_codex

    for number, (record, origin) in enumerate(_SAME_LINES):
        path = tmp_path / f"line-{number}.jsonl"
        path.write_text(json.dumps(record) + "\n", encoding="utf-8")
        reader = read_codex if record["type"] == "response_item" else read_claude_code
        [prompt] = [event for event in reader(path) if isinstance(event, UserPrompt)]
        line = classify(json.dumps(record).encode(), 1)
        assert prompt.origin == origin, record
        assert line.kind == "user_prompt" and (line.not_human == "") == (origin == "typed"), record


def test_every_line_type_is_classified_once_for_both_readers() -> None:
    from verigate import _transcript_lines as lines

    claude = lines.CLAUDE_MESSAGE_TYPES | lines.CLAUDE_OTHER_TYPES
    codex = lines.CODEX_MESSAGE_TYPES | lines.CODEX_OTHER_TYPES
    assert not lines.CLAUDE_MESSAGE_TYPES & lines.CLAUDE_OTHER_TYPES
    assert not lines.CODEX_MESSAGE_TYPES & lines.CODEX_OTHER_TYPES
    assert not claude & codex  # a line's host is told by its type


def test_a_line_nested_too_deep_is_a_problem_not_a_crash() -> None:
    """A tool input the model nested thousands of levels deep makes json.loads recurse past the limit: the line
    is unreadable (a problem gate), and the check of every later call still runs."""
    deep = b'{"type": "assistant", "message": {"content": [{"type": "tool_use", "input": ' + b"[" * 5000 \
        + b"]" * 5000 + b"}]}}"
    line = classify(deep, 7)
    assert line.kind == "problem" and "deep" in line.problem


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
