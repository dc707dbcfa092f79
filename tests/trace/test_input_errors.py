"""A file with nothing recognised or no run fails the gate (exit 2, the file named) instead of a clean pass."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from grade_helpers import cli, config

from transcripts.builders import ClaudeSession, codex_lines


def _claude(tmp_path: Path) -> Path:
    session = ClaudeSession(session="s9").prompt("fix it").tool("t1", "Bash", {"command": "git push --force"})
    return session.write(tmp_path / "claude.jsonl")


def _codex(tmp_path: Path) -> Path:
    path = tmp_path / "rollout.jsonl"
    path.write_text(codex_lines([("session_meta", {"id": "c1", "cwd": "/repo"}),
                                 ("response_item", {"type": "function_call", "name": "shell", "call_id": "c",
                                                    "arguments": json.dumps({"command": ["ls"]})})]))
    return path


def _file(name: str, data: bytes) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        path = folder / name
        path.write_bytes(data)
        return path

    return make


@pytest.mark.parametrize(("option", "make"), [
    ("--codex", _claude),  # a Claude Code transcript given as a Codex rollout
    ("--transcript", _codex),  # and the other way round
    ("--transcript", _file("bin.jsonl", b"\x00\xff\xfe\x89PNG\n")),
    ("--transcript", _file("empty.jsonl", b"")),
    ("--codex", _file("cut.jsonl", b'{"type": "sess')),  # only a truncated line: nothing recognised
    ("--audit", _file("a.jsonl", b'{"ts": 1, "event": "stop"}\n')),  # no record with a tool: no run
    ("--traces", _file("t.json", b'{"runs": []}')),
])
def test_nothing_recognised_is_exit_2_naming_the_file(tmp_path: Path, option: str,
                                                      make: Callable[[Path], Path]) -> None:
    path = make(tmp_path)
    result = cli("grade", option, str(path), "--task", "t")
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert str(path) in result.stderr and ("no line was recognised" in result.stderr or "no run" in result.stderr)
    assert "clean-pass" not in result.stdout


def test_a_truncated_last_line_is_still_normal(tmp_path: Path) -> None:
    path = ClaudeSession(session="s9").prompt("fix it").tool("t1", "Read", {"file_path": "/repo/a.py"}).write(
        tmp_path / "live.jsonl", tail=b'{"type": "assistant", "mess')
    result = cli("grade", "--transcript", str(path))
    assert result.returncode == 0, result.stderr
    assert "last line is truncated" in result.stdout


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes need POSIX")
@pytest.mark.parametrize(("where", "option"), [
    ("subagents folder", "--transcript"),
    ("subagents folder", "--transcripts"),
    ("beside the session", "--transcript"),  # an old-layout file names its session in its lines: none told here
    ("beside the session", "--transcripts"),  # matched by the pattern too (left out there, as a folder is)
])
def test_a_named_pipe_where_a_transcript_is_found_never_makes_the_grader_wait(tmp_path: Path, where: str,
                                                                               option: str) -> None:
    # a pipe nobody writes to, planted where the grader looks for transcripts: opened for reading, it would wait
    # for a writer forever and hang the CI job (the timeout of ``cli`` fails the test instead)
    session = ClaudeSession(session="s9").prompt("fix it").tool("t1", "Read", {"file_path": "/repo/a.py"}).write(
        tmp_path / "s9.jsonl")
    folder = tmp_path / "s9" / "subagents" if where == "subagents folder" else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    fifo = folder / "agent-a1.jsonl"
    os.mkfifo(fifo)
    settings = tmp_path / "trace-grader.config.yaml"
    settings.write_text(json.dumps(config(subagents=True)), encoding="utf-8")
    target = str(tmp_path / "*.jsonl") if option == "--transcripts" else str(session)
    result = cli("grade", option, target, "--config", str(settings))
    assert result.returncode == 2, (result.stdout, result.stderr)  # a sub-agent that cannot be read: no verdict
    assert "not a regular file" in result.stderr
    assert option == "--transcripts" or "agent-a1.jsonl" in result.stderr  # the folder summary redacts paths


def test_an_audit_line_past_the_bound_is_refused_not_held(tmp_path: Path) -> None:
    # an audit-looking first line, then 70 MiB without a newline (a sparse file: 4 KB on disk): read whole before,
    # a few such files exhausted memory; now the line is refused at the bound like a transcript's
    from verigate._transcript_lines import MAX_LINE_BYTES

    path = tmp_path / "audit.jsonl"
    with path.open("wb") as stream:
        stream.write(b'{"ts": 1, "event": "PreToolUse", "session_id": "a", "tool_name": "Bash"}\n{"x": "')
        stream.truncate(MAX_LINE_BYTES + 6 * 1024 * 1024)
    result = cli("grade", "--audit", str(path), "--task", "t")
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert str(path) in result.stderr and "clean-pass" not in result.stdout


def test_a_workflow_agent_is_graded_with_its_session(tmp_path: Path) -> None:
    session = ClaudeSession(session="s9").prompt("fix it").say("Fixed.").write(tmp_path / "s9.jsonl")
    ClaudeSession(session="s9").prompt("go", sidechain=True).tool("t1", "Read", {"file_path": "/repo/a.py"}).write(
        tmp_path / "s9" / "subagents" / "workflows" / "wf_1" / "agent-a7.jsonl")
    settings = tmp_path / "trace-grader.config.yaml"
    settings.write_text(json.dumps(config(subagents=True)), encoding="utf-8")
    for option, target in (("--transcript", str(session)), ("--transcripts", str(tmp_path / "**" / "*.jsonl"))):
        result = cli("grade", option, target, "--config", str(settings), "--task", "fix")
        assert result.returncode == 0 and "s9:agent-a7" in result.stdout, (option, result.stdout, result.stderr)
        assert "sub-agent of s9" in result.stdout
        assert option == "--transcript" or "1 file(s)" in result.stderr + result.stdout  # attached, not twice


def test_a_workflow_journal_is_its_sessions_bookkeeping_not_a_run(tmp_path: Path) -> None:
    # ~/.claude/projects/**/*.jsonl matches each Workflow run's journal.jsonl: graded as a transcript of its own, it
    # was an error, and one made the whole folder's run exit 2
    session = ClaudeSession(session="s9").prompt("fix it").say("Fixed.").write(tmp_path / "s9.jsonl")
    run = tmp_path / "s9" / "subagents" / "workflows" / "wf_1"
    ClaudeSession(session="s9").prompt("go", sidechain=True).say("ok").write(run / "agent-a7.jsonl")
    journal = run / "journal.jsonl"
    journal.write_text("".join(json.dumps(line) + "\n" for line in (  # Claude Code 2.1's journal lines
        {"type": "started", "key": "v2:b672316a", "agentId": "a7"},
        {"type": "result", "key": "v2:b672316a", "agentId": "a7", "result": {"verdict": "ok"}})), encoding="utf-8")
    settings = tmp_path / "trace-grader.config.yaml"
    settings.write_text(json.dumps(config(subagents=True)), encoding="utf-8")
    from verigate.trace._stream import expand_transcripts

    left_out: list[str] = []
    assert expand_transcripts(str(tmp_path / "**" / "*.jsonl"), left_out=left_out) == [str(session)]
    assert left_out == [str(journal)]
    result = cli("grade", "--transcripts", str(tmp_path / "**" / "*.jsonl"), "--config", str(settings),
                 "--task", "fix")
    assert result.returncode == 0 and "1 file(s)" in result.stderr + result.stdout, (result.stdout, result.stderr)
    assert "1 Workflow journal(s) left out" in result.stderr  # said, never silent
    # matched without its session, a journal is what the pattern asked for: graded, and an error (no transcript)
    assert expand_transcripts(str(run / "*.jsonl")) == [str(run / "agent-a7.jsonl"), str(journal)]
    alone = cli("grade", "--transcripts", str(tmp_path / "**" / "journal.jsonl"), "--config", str(settings))
    assert alone.returncode == 2, (alone.stdout, alone.stderr)


@pytest.mark.parametrize("layout", ["a Codex rollout as the session", "a sub-agent's own sub-agent"])
def test_a_sub_agent_nobody_attaches_is_graded_on_its_own(tmp_path: Path, layout: str) -> None:
    # a sub-agent file was left out of a pattern's files whenever <session>.jsonl matched, but only a Claude Code
    # session attaches its sub-agents, and an attached sub-agent never attaches its own
    if layout == "a Codex rollout as the session":
        (tmp_path / "s9.jsonl").write_text(_codex(tmp_path).read_text(encoding="utf-8"), encoding="utf-8")
        agent = tmp_path / "s9" / "subagents" / "workflows" / "wf_1" / "agent-a7.jsonl"
    else:
        ClaudeSession(session="s9").prompt("fix it").say("Fixed.").write(tmp_path / "s9.jsonl")
        ClaudeSession(session="s9").prompt("go", sidechain=True).say("ok").write(
            tmp_path / "s9" / "subagents" / "agent-a1.jsonl")
        agent = tmp_path / "s9" / "subagents" / "agent-a1" / "subagents" / "agent-a7.jsonl"
    ClaudeSession(session="s9").prompt("go", sidechain=True).tool("t1", "Read", {"file_path": "/repo/a.py"}).write(
        agent)
    from verigate.trace._stream import expand_transcripts

    assert str(agent) in expand_transcripts(str(tmp_path / "**" / "*.jsonl"))


@pytest.mark.parametrize("session_kind", ["claude-code", "codex"])
def test_a_transcript_named_journal_is_graded_never_hidden(tmp_path: Path, session_kind: str) -> None:
    # a path alone left a failing run out of the grade (exit 0): only a file that is no transcript, beside a
    # Claude Code session's Workflow agents, is the session's bookkeeping
    if session_kind == "codex":
        (tmp_path / "s9.jsonl").write_text(_codex(tmp_path).read_text(encoding="utf-8"), encoding="utf-8")
    else:
        ClaudeSession(session="s9").prompt("fix it").say("Fixed.").write(tmp_path / "s9.jsonl")
    planted = tmp_path / "s9" / "subagents" / "workflows" / "wf_1" / "journal.jsonl"
    ClaudeSession(session="s8").prompt("go").tool("t1", "Bash", {"command": "rm -rf /"}).write(planted)
    lines = planted.read_text(encoding="utf-8").splitlines()
    # the run's lines without the keys the format is detected by, after a journal's own lines
    stripped = [json.dumps({k: v for k, v in json.loads(line).items() if k not in ("uuid", "sessionId")})
                for line in lines]
    journal_head = json.dumps({"type": "started", "key": "v2:x", "agentId": "a7"})
    planted.write_text("\n".join([journal_head, *stripped]) + "\n", encoding="utf-8")
    from verigate.trace._stream import expand_transcripts

    left_out: list[str] = []
    assert str(planted) in expand_transcripts(str(tmp_path / "**" / "*.jsonl"), left_out=left_out)
    assert left_out == []

