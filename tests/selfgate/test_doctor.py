"""``verigate doctor``: one line per check with its fix, exit 0 only when every check passes; the settings it
prints are the ones it checks for, and the shipped examples are that output."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from selfgate_helpers import Session

from verigate.selfgate._snippets import claude_settings, snippet

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "host-settings"


def doctor(session: Session, *args: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    """The CLI as a subprocess; the hooks' ``verigate`` resolves on PATH to this environment's (``path``: the
    PATH the doctor sees instead)."""
    env = session.env(None)
    env["PATH"] = path if path is not None else os.pathsep.join([str(Path(sys.executable).parent), env["PATH"]])
    return subprocess.run([sys.executable, "-m", "verigate", "doctor", "--project", str(session.project), *args],
                          capture_output=True, text=True, env=env, timeout=90, check=False)


def report(session: Session, host: str) -> dict[str, Any]:
    ran = doctor(session, "--host", host, "--json")
    data: dict[str, Any] = json.loads(ran.stdout)
    assert ran.returncode == (0 if data["ok"] else 1)
    return data


def machine_ok() -> bool:
    """Whether this machine has what Claude Code's sandbox needs (the doctor checks it too)."""
    if not sys.platform.startswith("linux"):
        return True
    if not all(shutil.which(tool) for tool in ("bwrap", "socat", "rg")):
        return False
    return subprocess.run(["bwrap", "--ro-bind", "/", "/", "true"], capture_output=True, check=False).returncode == 0


def test_print_settings_is_what_the_checks_want(session: Session) -> None:
    claude = doctor(session, "--print-settings", "claude-code")
    assert claude.returncode == 0 and json.loads(claude.stdout) == claude_settings(session.env(None))
    codex = doctor(session, "--print-settings", "codex")
    parsed = tomllib.loads(codex.stdout)
    assert parsed["sandbox_mode"] == "workspace-write" and parsed["approval_policy"] == "on-request"


@pytest.mark.parametrize(("name", "host"), [("claude-code.settings.json", "claude-code"),
                                            ("codex.config.toml", "codex")])
def test_the_shipped_examples_are_the_printed_settings(name: str, host: str) -> None:
    assert (EXAMPLES / name).read_text(encoding="utf-8") == snippet(host, {"HOME": "/home/you"})


def test_a_bare_home_fails_with_a_fix_per_line(tmp_path: Path) -> None:
    session = Session(tmp_path, boundary=False)
    ran = doctor(session, "--host", "claude-code")
    assert ran.returncode == 1
    lines = [line.strip() for line in ran.stdout.splitlines() if line.strip().startswith("MISSING")]
    names = {line.split()[1].rstrip(":") for line in lines}
    assert {"sandbox.enabled", "sandbox.failIfUnavailable", "sandbox.allowUnsandboxedCommands",
            "sandbox.filesystem.denyWrite", "permissions.deny"} <= names
    assert all("fix:" in line for line in lines)


def test_the_snippet_passes_on_a_capable_machine(session: Session) -> None:
    data = report(session, "claude-code")
    checks = data["hosts"]["claude-code"]["checks"]
    settings = [check for check in checks if check["name"] not in ("bwrap", "socat", "rg", "user namespaces")]
    assert {"PreToolUse hook", "sandbox.enabled", "permissions.deny"} <= {check["name"] for check in settings}
    assert all(check["status"] == "ok" for check in settings if check["name"] != "SubagentStop hook"), settings
    assert {check["name"]: check["status"] for check in data["checks"]} == {
        "verigate.yaml": "ok", "Stop gate store": "ok", "judge": "warn"}  # no judge: fails closed, a warning
    assert data["ok"] is machine_ok()
    state = data["state_folder"]
    assert state.startswith(str(session.state_home)) and not state.startswith(str(session.project))


def test_the_hooks_must_reach_every_tool(session: Session) -> None:
    def checked() -> dict[str, str]:
        data = report(session, "claude-code")
        return {check["name"]: check["status"] for check in data["hosts"]["claude-code"]["checks"]}

    assert checked()["PreToolUse hook"] == "ok" and checked()["UserPromptSubmit hook"] == "ok"
    settings = session.home / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    data["hooks"]["PreToolUse"][0]["matcher"] = "Edit|Write|Bash"  # MCP tools would never be checked
    settings.write_text(json.dumps(data))
    assert checked()["PreToolUse hook"] == "missing"
    del data["hooks"]["UserPromptSubmit"]
    settings.write_text(json.dumps(data))
    assert checked()["UserPromptSubmit hook"] == "missing"


def test_codex_needs_the_protected_configuration(tmp_path: Path) -> None:
    session = Session(tmp_path, host="codex")
    data = report(session, "codex")
    by_name = {check["name"]: check for check in data["hosts"]["codex"]["checks"]}
    assert by_name["self-gate configuration"]["status"] == "ok"
    (session.project / ".codex" / "verigate.yaml").unlink()
    data = report(session, "codex")
    by_name = {check["name"]: check for check in data["hosts"]["codex"]["checks"]}
    assert by_name["self-gate configuration"]["status"] == "missing" and data["ok"] is False
    assert ".codex/verigate.yaml" in by_name["self-gate configuration"]["fix"]


def test_an_explicit_store_in_the_project_is_reported(session: Session) -> None:
    (session.project / "verigate.yaml").write_text("self_gate:\n  store: .verigate/self-gates.jsonl\n")
    ran = doctor(session, "--host", "claude-code")
    assert "WARN" in ran.stdout and "self_gate.store" in ran.stdout


def test_the_hosts_wired_to_verigate_are_checked_by_default(tmp_path: Path) -> None:
    session = Session(tmp_path, boundary=False)
    (session.project / ".codex").mkdir()
    (session.project / ".codex" / "hooks.json").write_text('{"command": "verigate hook codex pre-tool-use"}')
    data = json.loads(doctor(session, "--json").stdout)
    assert list(data["hosts"]) == ["codex"]


def test_doctor_changes_nothing(session: Session) -> None:
    legacy = session.project / ".verigate" / "self-gates.jsonl"
    legacy.parent.mkdir()
    legacy.write_text("")
    ran = doctor(session, "--host", "claude-code")
    assert "imported into the state folder by the next hook call" in ran.stdout
    assert not session.store.exists() and not session.state_home.exists()
