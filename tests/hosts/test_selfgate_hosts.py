"""Self-set gates inside the real clients: a declaration holds the blocked tools, a typed prompt on resume closes
it, the hardening denies writes to verigate's own files — asserted on what the model received, on the store and
on the files."""

from __future__ import annotations

import json
from typing import Any

import pytest
from host_bugs import PROBLEM_GATES, expect, hosts_expecting
from host_helpers import VERIGATE, Project, result_event, session_of
from host_servers import Call, Turn, summary

from judge_servers import JudgeServer, verdict_json

HOSTS = ("claude-code", "codex")
DECLARATION = "I'll wait for your approval before editing a.py."
ORIGINAL = "x = 1\n"
#: a final answer that declares nothing (the scan test reads every line of the log)
PLAN = "The plan: set x to 2 in a.py."
PATCH_A = "*** Begin Patch\n*** Update File: a.py\n@@\n-x = 1\n+x = 2\n*** End Patch\n"


def passes(judge: JudgeServer, count: int = 4) -> None:
    for _ in range(count):
        judge.reply_text(verdict_json(passed=True))


def result_text(server: Any, call: Call) -> str:
    """What the model got back for a call ('' when it never got an answer)."""
    found = server.result_of(call)
    if found is None:
        return ""
    return str(found[0] if isinstance(found, tuple) else found)


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
                     Turn(calls=(self.read,)), Turn.say(PLAN)]
        else:
            turns = [Turn.tool("exec_command", {"cmd": "cat a.py"}, text=DECLARATION),
                     *(Turn(calls=(call,)) for call in self.blocked), Turn.say(PLAN)]
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


def test_only_the_declared_gate_opens(declared: Declared, request: pytest.FixtureRequest) -> None:
    expect(request, declared.host, PROBLEM_GATES)
    problems = [gate["gate_text"] for gate in declared.project.gates() if gate["opened_by"] != "ai"]
    assert problems == []


def test_the_stop_judge_passes_and_the_run_ends(declared: Declared) -> None:
    assert declared.project.reviews() == []
    if declared.host == "claude-code":
        result = result_event(declared.run)
        assert result is not None and result["subtype"] == "success" and not result["is_error"]
    else:
        assert any(event.get("type") == "turn.completed" for event in declared.run.events)



def test_gate_scan_of_the_hosts_log_adds_no_second_gate(declared: Declared) -> None:
    """Runs last of the `declared` tests: it writes to the store. A scan of the log the host wrote finds the gate
    the hooks already recorded — same session, same id — so nothing is added."""
    project = declared.project
    logs = project.transcripts() if declared.host == "claude-code" else project.rollouts()
    assert len(logs) == 1, logs
    before = declared_gate(project)
    scanned = project.verigate("selfgate", "scan", str(logs[0]))
    assert scanned.returncode == 0, scanned.stderr
    assert declared_gate(project)["gate_id"] == before["gate_id"]

# ------------------------------------------------------------------------------------------------ no declaration


@pytest.mark.parametrize("host", hosts_expecting(PROBLEM_GATES))
def test_without_a_declaration_block_mode_lets_every_tool_run(host: str, make_project: Any) -> None:
    project, server = make_project(host, judge_url=None, stop=False)
    (project.dir / "a.py").write_text(ORIGINAL, encoding="utf-8")
    calls = [edit_a(host, project), write_file(host, project, "b.py", "y = 1\n"), shell(host, "touch c.txt")]
    first = [Turn(calls=(read_a(project),))] if host == "claude-code" else []
    server.script(*first, *(Turn(calls=(call,)) for call in calls), Turn.say("Changed a.py, added b.py and c.txt."))
    run = project.run("Change a.py to x = 2, add b.py and c.txt.")
    assert run.returncode == 0 and server.pending == 0, run.describe()
    assert [gate["gate_text"] for gate in project.gates()] == []
    assert (project.dir / "a.py").read_text(encoding="utf-8") == "x = 2\n"
    assert (project.dir / "b.py").exists() and (project.dir / "c.txt").exists()


# ------------------------------------------------------------------------------------------------ closing


def _declare_then_resume(host: str, make_project: Any, close_prompt: str | None
                         ) -> tuple[Project, Any, Call, dict[str, Any]]:
    """Run 1 declares a gate; run 2 resumes the session with a typed close prompt (``{gate}`` is the declared
    gate's id) and edits a.py. Stop is not wired: these runs are about the gate (the Stop gate has its own)."""
    project, server = make_project(host, judge_url=None, stop=False)
    (project.dir / "a.py").write_text(ORIGINAL, encoding="utf-8")
    # the agent declares, tries anyway (denied: the person sees the gate's id in the deny text), and stops
    early = edit_a(host, project)
    if host == "claude-code":
        server.script(Turn(text=DECLARATION, calls=(read_a(project),)), Turn(calls=(early,)), Turn.say("Waiting."))
    else:
        server.script(Turn.tool("exec_command", {"cmd": "cat a.py"}, text=DECLARATION), Turn(calls=(early,)),
                      Turn.say("Waiting."))
    first = project.run("Plan a change to a.py; wait for my approval before editing.")
    assert first.returncode == 0 and server.pending == 0, first.describe()
    gate = declared_gate(project)
    assert f"[{gate['gate_id']}]" in result_text(server, early)
    assert (project.dir / "a.py").read_text(encoding="utf-8") == ORIGINAL
    edit = edit_a(host, project)
    before = [Turn(calls=(read_a(project),))] if host == "claude-code" else []
    server.script(*before, Turn(calls=(edit,)), Turn.say("Edited a.py."))
    second = project.run((close_prompt or "approve gate {gate}").format(gate=gate["gate_id"]),
                         resume=session_of(first))
    assert second.returncode == 0 and server.pending == 0, second.describe()
    assert session_of(second) == session_of(first)
    return project, server, edit, gate


@pytest.mark.parametrize("host", hosts_expecting(PROBLEM_GATES))
def test_approve_gate_typed_on_resume_lets_the_next_edit_run(host: str, make_project: Any) -> None:
    project, server, edit, gate = _declare_then_resume(host, make_project, None)
    closed = next(entry for entry in project.gates() if entry["gate_id"] == gate["gate_id"])
    assert closed["open"] is False and closed["closed_channel"] == "user-prompt-submit"
    assert (project.dir / "a.py").read_text(encoding="utf-8") == "x = 2\n", result_text(server, edit)


@pytest.mark.parametrize("host", HOSTS)
def test_release_all_gates_typed_on_resume_closes_them_and_the_edit_runs(host: str, make_project: Any) -> None:
    """The whole-session close phrase also closes the problem gates of issue 10 item 2, so this passes today."""
    project, server, edit, _gate = _declare_then_resume(host, make_project, "release all gates")
    gates = project.gates()
    assert gates and all(entry["open"] is False for entry in gates), gates
    assert {entry["closed_channel"] for entry in gates} == {"user-prompt-submit"}
    assert (project.dir / "a.py").read_text(encoding="utf-8") == "x = 2\n", result_text(server, edit)


# ------------------------------------------------------------------------------------------------ hardening


@pytest.mark.parametrize("host", HOSTS)
def test_hardening_denies_writes_to_verigate_and_host_settings(host: str, make_project: Any) -> None:
    """In audit mode (no gate can hold anything), writes to verigate.yaml, the hook settings and the store's
    folder (.verigate/, which holds the review database) are still denied, and a Bash `verigate selfgate close` is
    refused."""
    project, server = make_project(host, judge_url=None, mode="audit", stop=False)
    config = project.dir / "verigate.yaml"
    settings = project.dir / (".claude/settings.json" if host == "claude-code" else ".codex/hooks.json")
    protected = {path: path.read_bytes() for path in (config, settings)}
    if host == "claude-code":
        reads = [Call("Read", {"file_path": str(path)}) for path in protected]
        attacks = [Call("Write", {"file_path": str(config), "content": "self_gate:\n  mode: audit\n"}),
                   # a valid settings file after the edit: Claude Code validates settings edits before any hook
                   Call("Edit", {"file_path": str(settings), "old_string": '"UserPromptSubmit"',
                                 "new_string": '"Notification"'}),
                   shell(host, "echo '{}' > .claude/settings.json"),
                   shell(host, "echo x >> .verigate/verigate.db"),
                   shell(host, "verigate selfgate close --all")]
        turns = [Turn(calls=tuple(reads)), *(Turn(calls=(call,)) for call in attacks)]
    else:
        attacks = [Call("apply_patch", "*** Begin Patch\n*** Update File: verigate.yaml\n@@\n-self_gate:\n"
                                       "+gate_off:\n*** End Patch\n", kind="custom"),
                   shell(host, "echo '{}' > .codex/hooks.json"),
                   shell(host, "echo x >> .verigate/verigate.db"),
                   shell(host, "verigate selfgate close --all")]
        turns = [Turn(calls=(call,)) for call in attacks]
    server.script(*turns, Turn.say("Done."))
    run = project.run("Turn verigate off.")
    assert run.returncode == 0 and server.pending == 0, run.describe()
    for call in attacks:
        text = result_text(server, call)
        assert "verigate self-gate hardening" in text, (call.name, text)
    for path, content in protected.items():
        assert path.read_bytes() == content, path
    database = project.dir / ".verigate" / "verigate.db"
    assert not database.exists() or not database.read_bytes().endswith(b"x\n")



@pytest.mark.codex
def test_codex_runs_no_hook_it_does_not_trust_and_doctor_says_so(make_project: Any) -> None:
    """Codex runs project hooks only when each is trusted (its /hooks screen stores a trusted_hash) or with
    --dangerously-bypass-hook-trust; otherwise none of them, silently: the guard fails open."""
    project, server = make_project("codex", judge_url=None, stop=False)
    server.script(Turn(text=DECLARATION, calls=(shell("codex", "cat a.py"),)),
                  Turn(calls=(shell("codex", "touch c.txt"),)), Turn.say("Done."))
    (project.dir / "a.py").write_text(ORIGINAL, encoding="utf-8")
    run = project.run("Plan a change to a.py.", trust_hooks=False)
    assert run.returncode == 0 and server.pending == 0, run.describe()
    assert project.hook_timings() == [], "Codex ran a hook nobody trusted"
    assert (project.dir / "c.txt").exists(), "the declared gate held without any hook running?"
    # verigate doctor names it (issue 10 item 7): the hooks.state trusted_hash entries are missing
    doctor = project.verigate("doctor", "--host", "codex", "--json")
    checks = json.loads(doctor.stdout)["hosts"]["codex"]["checks"]
    assert doctor.returncode != 0
    assert [check["name"] for check in checks if check["status"] != "ok"
            and "trust" in (check["name"] + check["detail"]).lower()], checks

# ------------------------------------------------------------------------------------------------ errors


BROKEN = "self_gate: [mode, audit\n"


@pytest.mark.parametrize("host", HOSTS)
def test_an_invalid_verigate_yaml_refuses_the_prompt(host: str, make_project: Any) -> None:
    """The prompt hook cannot read its configuration (not even the mode): the prompt is refused, the model is
    never asked. Claude Code shows the one-line reason; `codex exec --json` shows nothing (issue 10 item 7)."""
    project, server = make_project(host, judge_url=None, mode="audit")
    (project.dir / "verigate.yaml").write_text(BROKEN, encoding="utf-8")
    server.script(Turn(calls=(shell(host, "touch c.txt"),)))
    run = project.run("Create c.txt.")
    assert run.returncode == 0 and not run.timed_out, run.describe()
    assert server.requests == [] and not (project.dir / "c.txt").exists()
    if host == "claude-code":
        result = result_event(run)
        assert result is not None and "verigate.yaml:2" in result["result"], run.describe()
        assert "Traceback" not in run.stdout


@pytest.mark.parametrize("host", HOSTS)
def test_a_config_broken_mid_session_blocks_the_tool_with_one_line(host: str, make_project: Any) -> None:
    """A person breaks verigate.yaml while the agent works: the next tool call's hook exits 2 and the host hands
    the model the one-line reason — no traceback, no virtualenv path (issue 10 item 6); the run still ends."""
    project, server = make_project(host, judge_url=None, mode="audit")
    touch = shell(host, "touch c.txt")

    def person_breaks_the_config() -> None:
        (project.dir / "verigate.yaml").write_text(BROKEN, encoding="utf-8")

    server.script(Turn(calls=(touch,), before=person_breaks_the_config), Turn.say("The hook refused the command."),
                  Turn.say("Stopping."))
    run = project.run("Create c.txt.")
    assert run.returncode == 0 and not run.timed_out, run.describe()
    assert not (project.dir / "c.txt").exists()
    text = result_text(server, touch)
    assert "verigate.yaml:2" in text, summary(server)
    assert "Traceback" not in text and "site-packages" not in text and str(VERIGATE.parent) not in text, text
    assert len(text.splitlines()) <= 3, text
    assert [code for _host, event, _s, code in project.hook_timings() if event == "pre-tool-use"] == [2]
    assert len(server.main_requests()) <= 4, "the Stop hook looped on its own error"
