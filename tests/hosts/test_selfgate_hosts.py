"""Self-set gates inside the real clients: a declaration holds the blocked tools, a typed prompt on resume closes
it, the hardening denies writes to verigate's own files — asserted on what the model received, on the store and
on the files."""

from __future__ import annotations

from typing import Any

import pytest
from host_helpers import Project, result_event, session_of
from host_servers import Call, Turn

from judge_servers import JudgeServer, verdict_json

HOSTS = ("claude-code", "codex")
DECLARATION = "I'll wait for your approval before editing a.py."
ORIGINAL = "x = 1\n"
PATCH_A = "*** Begin Patch\n*** Update File: a.py\n@@\n-x = 1\n+x = 2\n*** End Patch\n"
ITEM_2 = ("issue 10 item 2: line types verigate does not know open problem gates that hold every blocked tool "
          "(Claude Code 2.1.332 writes atis-latch, api-request-shape, api-request-blob, api-request, tools-used; "
          "Codex 0.171 writes world_state, token_usage_record)")


def passes(judge: JudgeServer, count: int = 4) -> None:
    for _ in range(count):
        judge.reply_text(verdict_json(passed=True))


def result_text(server: Any, call: Call) -> str:
    """What the model got back for a call ('' when it never got an answer)."""
    found = server.result_of(call)
    if found is None:
        return ""
    return found[0] if isinstance(found, tuple) else found


def declared_gate(project: Project) -> dict[str, Any]:
    gates = [gate for gate in project.gates() if gate["opened_by"] == "ai"]
    assert len(gates) == 1, gates
    return gates[0]


def write_file(host: str, project: Project, name: str, content: str) -> Call:
    """A tool call creating a new file."""
    if host == "claude-code":
        return Call("Write", {"file_path": str(project.dir / name), "content": content})
    lines = "".join(f"+{line}\n" for line in content.splitlines())
    return Call("apply_patch", f"*** Begin Patch\n*** Add File: {name}\n{lines}*** End Patch\n", kind="custom")


def edit_a(host: str, project: Project) -> Call:
    if host == "claude-code":
        return Call("Edit", {"file_path": str(project.dir / "a.py"), "old_string": "x = 1", "new_string": "x = 2"})
    return Call("apply_patch", PATCH_A, kind="custom")


def shell(host: str, command: str) -> Call:
    if host == "claude-code":
        return Call("Bash", {"command": command, "description": "run a command"})
    return Call("exec_command", {"cmd": command})


def read_a(project: Project) -> Call:
    return Call("Read", {"file_path": str(project.dir / "a.py")})


# ------------------------------------------------------------------------------------------------ declaration


class Declared:
    """One run: the agent declares a gate, then tries Edit (apply_patch), Write (a new file) and Bash, then Read."""

    def __init__(self, host: str, make: Any, judge: JudgeServer) -> None:
        self.host = host
        self.project, self.server = make(host, judge_url=judge.base_url)
        self.judge = judge
        (self.project.dir / "a.py").write_text(ORIGINAL, encoding="utf-8")
        passes(judge)
        self.edit = edit_a(host, self.project)
        self.write = write_file(host, self.project, "b.py", "y = 1\n")
        self.bash = shell(host, "touch c.txt")
        self.blocked = [self.edit, self.write, self.bash]
        if host == "claude-code":
            # Claude Code refuses an Edit of a file not Read first ("File has not been read yet") before any hook
            self.first_read, self.read = read_a(self.project), read_a(self.project)
            turns = [Turn(text=DECLARATION, calls=(self.first_read,)), *(Turn(calls=(call,)) for call in self.blocked),
                     Turn(calls=(self.read,)), Turn.say("Waiting for your approval.")]
        else:
            turns = [Turn.tool("exec_command", {"cmd": "cat a.py"}, text=DECLARATION),
                     *(Turn(calls=(call,)) for call in self.blocked), Turn.say("Waiting for your approval.")]
        self.server.script(*turns)
        self.run = self.project.run("Plan a change to a.py and wait for my approval before editing.")


@pytest.fixture(scope="module", params=HOSTS)
def declared(request: pytest.FixtureRequest, module_projects: Any, module_judge: JudgeServer) -> Declared:
    return Declared(request.param, module_projects, module_judge)


def test_blocked_tools_are_denied_with_the_gate_text(declared: Declared) -> None:
    run, server = declared.run, declared.server
    assert run.returncode == 0 and not run.timed_out, run.describe()
    assert server.pending == 0, "the host stopped before every scripted turn"
    gate = declared_gate(declared.project)
    for call in declared.blocked:
        text = result_text(server, call)
        assert f"[{gate['gate_id']}]" in text, (call.name, text)
        assert "blocked until a person closes the gate" in text
        assert "approve gate sg-" in text
        if declared.host == "claude-code":
            assert server.result_of(call)[1] is True  # an error result, not output


def test_read_is_allowed_while_the_gate_is_open(declared: Declared) -> None:
    if declared.host != "claude-code":
        pytest.skip("Codex has no read-only tool: every command is Bash")
    text, is_error = declared.server.result_of(declared.read)
    assert not is_error and "x = 1" in text


def test_the_files_are_unchanged(declared: Declared) -> None:
    folder = declared.project.dir
    assert (folder / "a.py").read_text(encoding="utf-8") == ORIGINAL
    assert not (folder / "b.py").exists()
    assert not (folder / "c.txt").exists()


def test_the_store_holds_the_declared_gate_open(declared: Declared) -> None:
    gate = declared_gate(declared.project)
    assert gate["open"] is True
    assert gate["gate_text"].startswith("I'll wait for your approval before editing a")
    assert gate["session_id"] == session_of(declared.run)


def test_the_gate_text_is_kept_whole(declared: Declared) -> None:
    """issue 10 item 6: the text was cut at the dot inside the file name ('…before editing a.')."""
    assert declared_gate(declared.project)["gate_text"] == DECLARATION


@pytest.mark.xfail(strict=True, reason=ITEM_2)
def test_only_the_declared_gate_opens(declared: Declared) -> None:
    problems = [gate["gate_text"] for gate in declared.project.gates() if gate["opened_by"] != "ai"]
    assert problems == []


def test_the_stop_judge_passes_and_the_run_ends(declared: Declared) -> None:
    assert declared.project.reviews() == []
    if declared.host == "claude-code":
        result = result_event(declared.run)
        assert result is not None and result["subtype"] == "success" and not result["is_error"]
    else:
        assert any(event.get("type") == "turn.completed" for event in declared.run.events)
