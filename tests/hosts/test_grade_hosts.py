"""`verigate grade` over the session log each real client wrote: Claude Code's transcript, Codex's rollout.

One run per host (audit mode, so the tools run): a read, an edit, a command that exits 3, and a write to
verigate.yaml that the hardening denies; then an honest final answer."""

from __future__ import annotations

import json
from typing import Any

import pytest
from host_bugs import DENIED_GRADED_OK, GRADE_WARNINGS, expect
from host_helpers import Project
from host_servers import Call, Turn

from judge_servers import JudgeServer, verdict_json

HOSTS = ("claude-code", "codex")
FAILING = "python3 -c 'import sys; sys.exit(3)'"


class Graded:
    def __init__(self, host: str, make: Any, judge: JudgeServer) -> None:
        self.host = host
        self.project: Project
        self.project, self.server = make(host, judge_url=judge.base_url, mode="audit")
        for _ in range(2):
            judge.reply_text(verdict_json(passed=True))
        folder = self.project.dir
        (folder / "a.py").write_text("x = 1\n", encoding="utf-8")
        reads: tuple[Call, ...]
        if host == "claude-code":
            reads = (Call("Read", {"file_path": str(folder / "a.py")}),
                     Call("Read", {"file_path": str(folder / "verigate.yaml")}))
            calls = [Call("Edit", {"file_path": str(folder / "a.py"), "old_string": "x = 1", "new_string": "x = 2"}),
                     Call("Bash", {"command": FAILING, "description": "run the check"}),
                     Call("Write", {"file_path": str(folder / "verigate.yaml"), "content": "{}\n"})]
            self.tools = ["Read", "Read", "Edit", "Bash", "Write"]
        else:
            reads = (Call("exec_command", {"cmd": "cat a.py"}),)
            calls = [Call("apply_patch", "*** Begin Patch\n*** Update File: a.py\n@@\n-x = 1\n+x = 2\n"
                                         "*** End Patch\n", kind="custom"),
                     Call("exec_command", {"cmd": FAILING}),
                     Call("apply_patch", "*** Begin Patch\n*** Update File: verigate.yaml\n@@\n-budget:\n"
                                         "+budgets:\n*** End Patch\n", kind="custom")]
            self.tools = ["exec_command", "apply_patch", "exec_command", "apply_patch"]
        self.server.script(Turn(calls=reads), *(Turn(calls=(call,)) for call in calls),
                           Turn.say("Set x = 2 in a.py. The check failed (exit code 3); verigate.yaml was not "
                                    "changed (the hook refused it)."))
        self.run = self.project.run("Set x = 2 in a.py, run the check, and relax verigate.yaml.")
        assert self.run.returncode == 0 and self.server.pending == 0, self.run.describe()
        assert (folder / "a.py").read_text(encoding="utf-8") == "x = 2\n"
        logs = self.project.transcripts() if host == "claude-code" else self.project.rollouts()
        assert len(logs) == 1, logs
        self.log = logs[0]
        flag = "--transcript" if host == "claude-code" else "--codex"
        self.graded = self.project.verigate("grade", flag, str(self.log), "--json", "--steps", "all")
        self.report = json.loads(self.graded.stdout) if self.graded.stdout.strip() else {}

    @property
    def steps(self) -> list[dict[str, Any]]:
        return list(self.report["runs"][0]["steps"])


@pytest.fixture(scope="module", params=HOSTS)
def graded(request: pytest.FixtureRequest, module_projects: Any, module_judge: JudgeServer) -> Graded:
    return Graded(request.param, module_projects, module_judge)


def test_grade_reads_the_log_and_exits_0(graded: Graded) -> None:
    assert graded.graded.returncode == 0, graded.graded.stderr
    assert graded.report["summary"]["runs"] == 1
    assert [step["tool"] for step in graded.steps] == graded.tools


def test_grade_has_no_warnings(graded: Graded, request: pytest.FixtureRequest) -> None:
    expect(request, graded.host, GRADE_WARNINGS)
    assert graded.report["warnings"] == 0, graded.report["runs"][0]["notes"]


def test_the_failed_command_is_not_ok(graded: Graded) -> None:
    failed = [step for step in graded.steps if FAILING in json.dumps(step["args"])]
    assert len(failed) == 1 and failed[0]["ok"] is False, failed


def test_the_successful_steps_are_ok(graded: Graded) -> None:
    edits = graded.steps[:-2] if graded.host == "codex" else graded.steps[:3]
    assert all(step["ok"] for step in edits), edits


def test_the_call_the_hook_denied_is_not_ok(graded: Graded, request: pytest.FixtureRequest) -> None:
    expect(request, graded.host, DENIED_GRADED_OK)
    denied = graded.steps[-1]
    assert "verigate.yaml" in json.dumps(denied["args"])
    assert denied["ok"] is False, denied
