"""The shared transcript readers on real fixtures and on the traps of real session files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transcripts.builders import ClaudeSession, codex_lines
from verigate import InputError, ToolObservation
from verigate.transcripts import (
    AssistantText,
    CallPairer,
    CompactBoundary,
    ToolResult,
    ToolUse,
    UserPrompt,
    last_turn,
    read_claude_code,
    read_codex,
    subagent_files,
)

#: the team's shared real-format samples, beside a checkout (absent in a plain clone: those tests skip)
SHARED_FIXTURES = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures" / "claude-code"
#: this project's own fixtures, written from the formats (always present)
OWN_FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.mark.skipif(not SHARED_FIXTURES.is_dir(), reason=f"no shared fixtures at {SHARED_FIXTURES} (a plain clone); "
                    "tests/transcripts/fixtures covers the same shapes")
@pytest.mark.parametrize("name", ["edge_cases", "representative_messages", "session_b", "todowrite_examples"])
def test_shared_fixtures_parse(name: str) -> None:
    transcript = read_claude_code(SHARED_FIXTURES / f"{name}.jsonl")
    events = list(transcript)
    assert events
    assert all(event.line >= 1 for event in events)
    expected_warnings = {"edge_cases": 7}.get(name, 0)
    assert transcript.warnings == expected_warnings


def test_edge_cases_classify_prompts_and_errors() -> None:
    transcript = read_claude_code(OWN_FIXTURES / "edge_cases.jsonl")
    events = list(transcript)
    assert transcript.warnings == 1 and "edge_cases.jsonl:13" in transcript.warning_samples[0]  # the cut line
    assert any(isinstance(event, CompactBoundary) and event.line == 11 for event in events)
    prompts = {event.line: event for event in events if isinstance(event, UserPrompt)}
    assert prompts[1].typed and prompts[1].origin == "typed"
    assert prompts[6].origin == "meta" and not prompts[6].typed  # the local-command caveat
    assert prompts[7].origin == "command" and prompts[7].typed  # a slash command the person typed
    assert prompts[8].origin == "command_output" and not prompts[8].typed
    failing = next(event for event in events if isinstance(event, ToolResult))
    assert failing.line == 5 and failing.is_error is True and failing.failed
    uses = [event for event in events if isinstance(event, ToolUse)]
    assert [(use.name, use.line, use.cwd) for use in uses][:2] == [("FailingTool", 4, "/tmp"), ("MultiEdit", 9, "/tmp")]


def test_last_turn_of_representative_session(tmp_path: Path) -> None:
    session = (ClaudeSession().prompt("fix the bug").say("Looking.", message_id="m1")
               .tool("t1", "Read", {"file_path": "/repo/a.py"}, "contents")
               .tool("t2", "Edit", {"file_path": "/repo/a.py"}, "<tool_use_error>File has not been read yet",
                     is_error="missing")
               .say("Part one.", message_id="m9").say("Part two.", message_id="m9"))
    turn = last_turn(session.write(tmp_path / "s.jsonl"))
    assert turn.request == "fix the bug" and turn.request_line == 1
    assert turn.final_text == "Part one.\n\nPart two."
    assert turn.tool_calls == (ToolObservation("Read", {"file_path": "/repo/a.py"}, "contents", True),
                               ToolObservation("Edit", {"file_path": "/repo/a.py"},
                                               "<tool_use_error>File has not been read yet", False))


def test_last_turn_skips_tool_results_meta_and_sidechains(tmp_path: Path) -> None:
    session = (ClaudeSession().prompt("first").say("done first")
               .prompt("second request")
               .tool("t1", "Bash", {"command": "ls"}, "a b")
               .prompt("sub-agent task prompt", sidechain=True)
               .tool("s1", "Bash", {"command": "rm -rf x"}, "ok", sidechain=True)
               .say("sub-agent answer", sidechain=True)
               .prompt("<system-reminder>remember</system-reminder>")
               .prompt("[Request interrupted by user]")
               .prompt("meta text", isMeta=True)
               .say("final answer"))
    turn = last_turn(session.write(tmp_path / "s.jsonl"))
    assert turn.request == "second request"
    assert turn.final_text == "final answer"
    assert [call.name for call in turn.tool_calls] == ["Bash"]
    assert turn.tool_calls[0].input == {"command": "ls"}


def test_parallel_results_pair_by_id_not_position(tmp_path: Path) -> None:
    session = (ClaudeSession().prompt("go")
               .call("a", "Read", {"file_path": "/x"}, message_id="m1")
               .call("b", "Bash", {"command": "false"}, message_id="m1")
               .result("b", "Exit code 1", is_error=True)
               .result("a", "file x"))
    turn = last_turn(session.write(tmp_path / "s.jsonl"))
    assert [(call.name, call.output, call.ok) for call in turn.tool_calls] == [
        ("Read", "file x", True), ("Bash", "Exit code 1", False)]


def test_is_error_null_missing_and_sibling_cascade() -> None:
    assert ToolResult("x", "fine", None, 1).failed is False
    assert ToolResult("x", "<tool_use_error>bad</tool_use_error>", None, 1).failed is True
    assert ToolResult("x", "<tool_use_error>bad</tool_use_error>", False, 1).failed is False
    cascade = ToolResult("x", "<tool_use_error>Sibling tool call errored</tool_use_error>", True, 1)
    assert cascade.failed and cascade.sibling_cascade


def test_truncated_tail_is_not_a_warning(tmp_path: Path) -> None:
    path = ClaudeSession().prompt("hi").say("hello").write(tmp_path / "s.jsonl", tail=b'{"type": "assistant", "mes')
    transcript = read_claude_code(path)
    assert len(list(transcript)) == 2
    assert transcript.truncated_tail and transcript.warnings == 0


def test_unknown_types_and_compact_boundary_counted(tmp_path: Path) -> None:
    session = (ClaudeSession().prompt("hi")
               .raw({"type": "progress", "data": {}})
               .raw({"type": "brand-new-type"})
               .raw({"type": "system", "subtype": "compact_boundary", "parentUuid": None,
                     "logicalParentUuid": "u1"})
               .say("after compaction"))
    transcript = read_claude_code(session.write(tmp_path / "s.jsonl"))
    events = list(transcript)
    assert any(isinstance(event, CompactBoundary) and event.line == 4 for event in events)
    assert transcript.warnings == 1 and "brand-new-type" in transcript.warning_samples[0]


def test_a_transcript_is_read_once(tmp_path: Path) -> None:
    transcript = read_claude_code(ClaudeSession().prompt("x").write(tmp_path / "s.jsonl"))
    list(transcript)
    with pytest.raises(RuntimeError):
        iter(transcript)


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError):
        last_turn(tmp_path / "absent.jsonl")
    with pytest.raises(InputError):
        last_turn(tmp_path / "absent.jsonl", host="gemini")  # type: ignore[arg-type]


def test_codex_rollout(tmp_path: Path) -> None:
    text = codex_lines([
        ("session_meta", {"id": "abc", "cwd": "/work/proj", "cli_version": "0.40.0"}),
        ("response_item", {"type": "message", "role": "developer", "content": [{"type": "input_text",
                                                                                 "text": "rules"}]}),
        ("response_item", {"type": "message", "role": "user",
                           "content": [{"type": "input_text",
                                        "text": "<environment_context>cwd</environment_context>"}]}),
        ("response_item", {"type": "message", "role": "user",
                           "content": [{"type": "input_text", "text": "run tests"}]}),
        ("event_msg", {"type": "user_message", "message": "run tests"}),
        ("response_item", {"type": "function_call", "name": "shell", "arguments": json.dumps({"command": ["pytest"]}),
                           "call_id": "c1"}),
        ("event_msg", {"type": "exec_command_end", "call_id": "c1", "exit_code": 1}),
        ("response_item", {"type": "function_call_output", "call_id": "c1", "output": "1 failed"}),
        ("response_item", {"type": "custom_tool_call", "name": "apply_patch", "input": "*** Begin Patch",
                           "call_id": "c2"}),
        ("response_item", {"type": "custom_tool_call_output", "call_id": "c2",
                           "output": json.dumps({"output": "Done", "metadata": {"exit_code": 0}})}),
        ("response_item", {"type": "function_call", "name": "shell", "arguments": "{not json", "call_id": "c3"}),
        ("response_item", {"type": "function_call_output", "call_id": "c3", "output": "Exit code: 2\nOutput:\nboom"}),
        ("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text",
                                                                                "text": "Tests fail."}]}),
        ("mystery", {}),
    ])
    path = tmp_path / "rollout-2026-01-01T00-00-00-abc.jsonl"
    path.write_text(text)
    transcript = read_codex(path)
    events = list(transcript)
    assert transcript.warnings == 2  # the unknown "mystery" line and the arguments that are not strict JSON
    prompts = [event for event in events if isinstance(event, UserPrompt)]
    assert [(prompt.origin, prompt.typed) for prompt in prompts] == [("meta", False), ("typed", True)]
    uses = [event for event in events if isinstance(event, ToolUse)]
    assert [(use.name, use.cwd) for use in uses] == [("shell", "/work/proj")] * 1 + [("apply_patch", "/work/proj"),
                                                                                     ("shell", "/work/proj")]
    assert uses[2].input == {"arguments": "{not json"}
    turn = last_turn(path, host="codex")
    assert turn.request == "run tests" and turn.final_text == "Tests fail."
    assert [(call.name, call.ok) for call in turn.tool_calls] == [("shell", False), ("apply_patch", True),
                                                                  ("shell", False)]
    assert turn.tool_calls[1].output == "Done"
    assert any(isinstance(event, AssistantText) for event in events)


@pytest.mark.parametrize(
    ("output", "ok"),
    [
        ("Chunk ID: 1a2b\nWall time: 0.41 seconds\nProcess exited with code 3\nOriginal token count: 4\n"
         "Output:\nboom", False),
        ("Chunk ID: 1a2b\nWall time: 0.1 seconds\nProcess exited with code 0\nOutput:\nok", True),
        ("Exit code: 2\nWall time: 1 seconds\nOutput:\nboom", False),
        ("Exit code: 0\nOutput:\nok", True),
        # a call a PreToolUse hook denied never ran (Codex writes no status for it)
        ("Command blocked by PreToolUse hook: verigate self-gate hardening: apply_patch would write verigate.yaml",
         False),
        # only the header speaks: what the command printed is not its status (no status: a returned call is ok)
        ("Chunk ID: 9\nOutput:\nProcess exited with code 1", True),
        ("all good\nExit code: 1", True),
        ("Chunk ID: 9\nWall time: 0.1 seconds\n\nProcess exited with code 1", True),
    ],
)
def test_codex_exit_status_is_read_anywhere_in_the_output_header(tmp_path: Path, output: str,
                                                                 ok: bool) -> None:
    path = tmp_path / "rollout-2026-12-01T00-00-00-abc.jsonl"
    path.write_text(codex_lines([
        ("session_meta", {"id": "abc", "cwd": "/work/proj", "cli_version": "0.169.0"}),
        ("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}),
        ("response_item", {"type": "function_call", "name": "exec_command", "call_id": "c1",
                           "arguments": json.dumps({"cmd": "pytest"})}),
        ("response_item", {"type": "function_call_output", "call_id": "c1", "output": output}),
    ]))
    [call] = last_turn(path, host="codex").tool_calls
    assert call.ok is ok


def test_pairer_releases_in_issue_order_and_gives_up_on_old_calls() -> None:
    pairer = CallPairer(max_pending=2)
    assert pairer.add_use(ToolUse("a", "A", {}, 1)) == []
    assert pairer.add_use(ToolUse("b", "B", {}, 2)) == []
    assert pairer.add_result(ToolResult("b", "", False, 3)) == []  # waits for a
    released = pairer.add_use(ToolUse("c", "C", {}, 4))  # a waited too long: released without a result
    assert [(call.use.id, call.ok) for call in released] == [("a", None), ("b", True)]
    assert pairer.add_result(ToolResult("zzz", "", False, 5)) == [] and pairer.orphan_results == 1
    assert [call.use.id for call in pairer.flush()] == ["c"]


def test_subagent_files_current_and_old_layout(tmp_path: Path) -> None:
    main = ClaudeSession(session="sess").prompt("x").write(tmp_path / "sess.jsonl")
    new = ClaudeSession(session="sess").prompt("task", sidechain=True).write(
        tmp_path / "sess" / "subagents" / "agent-1.jsonl")
    old = ClaudeSession(session="sess").prompt("task", sidechain=True).write(tmp_path / "agent-2.jsonl")
    ClaudeSession(session="other").prompt("task", sidechain=True).write(tmp_path / "agent-3.jsonl")
    assert subagent_files(main) == [new, old]



def test_subagent_files_of_a_workflow(tmp_path: Path) -> None:
    # Claude Code's Workflow tool writes its agents one level deeper, beside a journal and meta files that are
    # no transcripts: subagents/workflows/<run>/agent-*.jsonl (left out, a workflow agent's run went ungraded)
    main = ClaudeSession(session="sess").prompt("x").write(tmp_path / "sess.jsonl")
    direct = ClaudeSession(session="sess").prompt("task", sidechain=True).write(
        tmp_path / "sess" / "subagents" / "agent-1.jsonl")
    runs = tmp_path / "sess" / "subagents" / "workflows"
    first = ClaudeSession(session="sess").prompt("task", sidechain=True).write(runs / "wf_a" / "agent-2.jsonl")
    second = ClaudeSession(session="sess").prompt("task", sidechain=True).write(runs / "wf_b" / "agent-3.jsonl")
    (runs / "wf_a" / "journal.jsonl").write_text("{}\n", encoding="utf-8")
    (runs / "wf_a" / "agent-2.meta.json").write_text("{}", encoding="utf-8")
    (runs / "wf_b.json").write_text("{}", encoding="utf-8")  # a file among the run folders: no run
    noted: list[Path] = []
    assert subagent_files(main, before_reading=noted.append) == [direct, first, second]
    # every entry among the runs is watched, a file too: a link there may lead to a folder later
    assert noted == [tmp_path / "sess" / "subagents", runs, runs / "wf_a", runs / "wf_b", runs / "wf_b.json", tmp_path]

def _loop(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(path.name)  # a link to itself: opening or listing it fails (ELOOP), even for root


@pytest.mark.parametrize("where", ["subagents folder", "session folder", "sibling"])
def test_a_sub_agent_place_that_cannot_be_read_is_an_error_not_no_sub_agents(tmp_path: Path, where: str) -> None:
    # a folder that cannot be listed, or a sibling whose session cannot be told, may hold the run that failed:
    # left out (Path.glob swallows the error), the session graded clean-pass without it
    main = ClaudeSession(session="sess").prompt("x").write(tmp_path / "sess.jsonl")
    broken = {"subagents folder": tmp_path / "sess" / "subagents", "session folder": tmp_path / "sess",
              "sibling": tmp_path / "agent-1.jsonl"}[where]
    _loop(broken)
    with pytest.raises(InputError) as caught:
        subagent_files(main)
    assert str(caught.value.source).startswith(str(broken))  # the folder, or the subagents folder through it


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads a folder of mode 000")
@pytest.mark.parametrize("mode", [0o000, 0o300])  # neither read nor search; search without read (not listable)
def test_a_subagents_folder_without_read_permission_is_an_error(tmp_path: Path, mode: int) -> None:
    main = ClaudeSession(session="sess").prompt("x").write(tmp_path / "sess.jsonl")
    agents = tmp_path / "sess" / "subagents"
    ClaudeSession(session="sess").prompt("task", sidechain=True).write(agents / "agent-1.jsonl")
    agents.chmod(mode)
    try:
        with pytest.raises(InputError, match="cannot be listed"):
            subagent_files(main)
    finally:
        agents.chmod(0o700)


def test_no_place_for_sub_agents_is_no_sub_agents(tmp_path: Path) -> None:
    # what cannot hold a sub-agent transcript is not an error: no folder, a file where the folder would be, a link
    # to nothing beside the session (nothing to read)
    main = ClaudeSession(session="sess").prompt("x").write(tmp_path / "sess.jsonl")
    assert subagent_files(main) == []
    (tmp_path / "sess").mkdir()
    (tmp_path / "sess" / "subagents").write_text("not a folder", encoding="utf-8")
    (tmp_path / "agent-gone.jsonl").symlink_to(tmp_path / "nowhere.jsonl")
    assert subagent_files(main) == []


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.lists(st.one_of(st.binary(max_size=200),
                               st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                                            lambda inner: st.lists(inner, max_size=3)
                                            | st.dictionaries(st.sampled_from(
                                                ["type", "message", "content", "payload", "id", "name", "input",
                                                 "tool_use_id", "is_error", "role", "call_id", "output", "text",
                                                 "isSidechain", "cwd", "arguments"]), inner, max_size=5),
                                            max_leaves=12).map(lambda value: json.dumps(value).encode())),
                     max_size=12))
def test_readers_never_raise_on_arbitrary_lines(tmp_path: Path, data: list[bytes]) -> None:
    path = tmp_path / "fuzz.jsonl"
    path.write_bytes(b"\n".join(data))
    for reader in (read_claude_code, read_codex):
        transcript = reader(path)
        events = list(transcript)
        assert transcript.warnings >= 0 and all(event.line >= 1 for event in events)
    last_turn(path)
    last_turn(path, host="codex")


def test_last_turn_of_a_subagent_transcript(tmp_path: Path) -> None:
    sub = (ClaudeSession(session="parent").prompt("find the pricing spec", sidechain=True)
           .tool("s1", "Glob", {"pattern": "docs/*.md"}, "/r/docs/pricing.md", sidechain=True)
           .say("It is docs/pricing.md.", sidechain=True))
    path = sub.write(tmp_path / "parent" / "subagents" / "agent-1.jsonl")
    turn = last_turn(path, subagent=True)
    assert turn.request == "find the pricing spec" and turn.final_text == "It is docs/pricing.md."
    assert [(call.name, call.ok) for call in turn.tool_calls] == [("Glob", True)]
    main_view = last_turn(path)  # read as a main session, a sub-agent file has no turn of its own
    assert main_view.request == "" and main_view.tool_calls == ()
