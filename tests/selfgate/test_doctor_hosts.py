"""``verigate doctor`` beyond the sandbox: every hook wired, the hook command is this verigate, Codex trusts the
project and each hook, and the Stop gate has a valid configuration, a writable store and a judge that answers.
Each check both ways, on real files under a fake HOME, the CLI as a subprocess."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from selfgate_helpers import Session
from test_doctor import doctor

from judge_servers import JudgeServer, refused_url, verdict_json
from verigate.cli._doctor_checks import codex_hook_hash
from verigate.selfgate._wiring import hook_entries

SNAKE = {"PreToolUse": "pre_tool_use", "UserPromptSubmit": "user_prompt_submit", "Stop": "stop"}
CODEX = Path(__file__).resolve().parents[2] / ".cache" / "host-clis" / "node_modules" / ".bin" / "codex"


def checks(session: Session, host: str, *args: str, path: str | None = None) -> tuple[dict[str, str], int]:
    """``{check name: status}`` of one host and of the Stop gate, and the exit code."""
    ran = doctor(session, "--host", host, "--json", "--no-judge-probe", *args, path=path)
    data: dict[str, Any] = json.loads(ran.stdout)
    assert ran.returncode == (0 if data["ok"] else 1)
    found = {check["name"]: check["status"] for check in data["hosts"][host]["checks"]}
    found |= {check["name"]: check["status"] for check in data["checks"]}
    return found, ran.returncode


def codex_session(tmp_path: Path) -> Session:
    """A Codex user with verigate's hooks in the project's .codex/hooks.json, as the README wires them."""
    session = Session(tmp_path, host="codex")
    (session.home / ".codex" / "hooks.json").unlink()
    hooks = Path(__file__).resolve().parents[2] / "examples" / "codex" / "hooks.json"
    shutil.copy(hooks, session.project / ".codex" / "hooks.json")
    return session


def trust(session: Session, *, project: bool = True, hashes: dict[str, str] | None = None,
          disabled: bool = False) -> None:
    """Write what Codex writes: the project's trust and, per hook, ``[hooks.state."<key>"] trusted_hash``
    (default: the hook's current hash)."""
    config = session.home / ".codex" / "config.toml"
    text = config.read_text(encoding="utf-8")
    if project:
        text += f'\n[projects.{json.dumps(str(session.project))}]\ntrust_level = "trusted"\n'
    for entry in hook_entries("codex", str(session.project), session.env(None)):
        key = f"{entry.path}:{SNAKE[entry.event]}:{entry.group}:{entry.handler}"
        value = (hashes or {}).get(entry.event) or codex_hook_hash(entry)
        text += f"\n[hooks.state.{json.dumps(key)}]\ntrusted_hash = {json.dumps(value)}\n"
        if disabled:
            text += "enabled = false\n"
    config.write_text(text, encoding="utf-8")


# ------------------------------------------------------------------------------------------- hooks wired


def test_the_stop_hook_must_be_wired(session: Session) -> None:
    found, code = checks(session, "claude-code")
    assert found["Stop hook"] == "ok" and found["SubagentStop hook"] == "warn"
    settings = session.home / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    data["hooks"]["SubagentStop"] = [{"hooks": [{"type": "command",
                                                 "command": "verigate hook claude-code subagent-stop"}]}]
    del data["hooks"]["Stop"]
    settings.write_text(json.dumps(data))
    found, code = checks(session, "claude-code")
    assert found["Stop hook"] == "missing" and found["SubagentStop hook"] == "ok" and code == 1


# ------------------------------------------------------------------------------------------- the hook's PATH


def test_the_hook_command_must_be_this_verigate(session: Session, tmp_path: Path) -> None:
    found, _ = checks(session, "claude-code")
    assert found["hook command verigate"] == "ok"
    found, code = checks(session, "claude-code", path="/nonexistent")
    assert found["hook command verigate"] == "missing" and code == 1
    other = tmp_path / "other-bin"
    other.mkdir()
    (other / "verigate").write_text("#!/bin/sh\necho verigate 0.0.1\n")
    (other / "verigate").chmod(0o755)
    found, code = checks(session, "claude-code", path=f"{other}{os.pathsep}{os.environ['PATH']}")
    assert found["hook command verigate"] == "missing" and code == 1


def test_an_absolute_hook_command_is_checked(session: Session) -> None:
    settings = session.home / ".claude" / "settings.json"
    text = settings.read_text().replace('"verigate hook', f'"{Path(sys.executable).parent / "verigate"} hook')
    settings.write_text(text)
    found, _ = checks(session, "claude-code", path="/nonexistent")
    assert found[f"hook command {Path(sys.executable).parent / 'verigate'}"] == "ok"


def test_a_python_m_hook_command_is_checked_as_written(session: Session) -> None:
    settings = session.home / ".claude" / "settings.json"
    settings.write_text(settings.read_text().replace('"verigate hook', f'"{sys.executable} -m verigate hook'))
    found, _ = checks(session, "claude-code", path="/nonexistent")
    assert found[f"hook command {sys.executable} -m verigate"] == "ok"
    settings.write_text(settings.read_text().replace(" -m verigate hook", " -m no_such_module hook"))
    found, code = checks(session, "claude-code", path="/nonexistent")
    assert found[f"hook command {sys.executable} -m no_such_module"] == "missing" and code == 1


# ------------------------------------------------------------------------------------------- the Stop gate


def test_an_invalid_configuration_fails(session: Session) -> None:
    (session.project / "verigate.yaml").write_text("budget:\n  revise: many\n")
    ran = doctor(session, "--host", "claude-code", "--no-judge-probe")
    assert ran.returncode == 1
    line = next(line for line in ran.stdout.splitlines() if "verigate.yaml:" in line and "MISSING" in line)
    assert "revise" in line and "fix:" in line
    found, _ = checks(session, "claude-code")
    assert found["Stop gate store"] == "skip" and found["judge"] == "skip"


def test_the_store_folder_must_be_writable(session: Session) -> None:
    found, _ = checks(session, "claude-code")
    assert found["Stop gate store"] == "ok"
    assert not (session.project / ".verigate").exists()  # doctor creates nothing
    (session.project / "blocker").write_text("a file where the store's folder should be")
    (session.project / "verigate.yaml").write_text("store:\n  url: blocker/verigate.db\n")
    found, code = checks(session, "claude-code")
    assert found["Stop gate store"] == "missing" and code == 1
    assert sorted(path.name for path in session.project.iterdir()) == ["blocker", "verigate.yaml"]


@pytest.mark.skipif(os.geteuid() == 0 if hasattr(os, "geteuid") else True, reason="root writes any folder")
def test_a_read_only_store_folder_fails(session: Session) -> None:
    store = session.project / "ro"
    store.mkdir(mode=0o555)
    (session.project / "verigate.yaml").write_text("store:\n  url: ro/verigate.db\n")
    try:
        found, code = checks(session, "claude-code")
    finally:
        store.chmod(0o755)
    assert found["Stop gate store"] == "missing" and code == 1


# ------------------------------------------------------------------------------------------- the judge


def judge_config(session: Session, url: str) -> None:
    (session.project / "verigate.yaml").write_text(
        f"judge:\n  engine: llm_judge\n  client: openai\n  model: gpt-4o-mini\n  base_url: {url}\n"
        "  timeout_s: 5\n")


def probe(session: Session) -> tuple[dict[str, Any], subprocess.CompletedProcess[str]]:
    ran = doctor(session, "--host", "claude-code", "--json")
    data: dict[str, Any] = json.loads(ran.stdout)
    return next(check for check in data["checks"] if check["name"] == "judge"), ran


def test_a_judge_that_answers_passes(session: Session) -> None:
    with JudgeServer("openai") as server:
        server.reply_text(verdict_json(passed=True))
        judge_config(session, server.base_url)
        check, _ = probe(session)
        assert check["status"] == "ok", check
        assert len(server.requests) == 1
    assert not (session.project / ".verigate").exists()  # the probe's store is in memory


def test_a_judge_that_is_down_warns_fail_closed(session: Session) -> None:
    judge_config(session, refused_url() + "/v1")
    started = time.monotonic()
    check, ran = probe(session)
    assert time.monotonic() - started < 60
    assert check["status"] == "warn" and "judge_transport_error" in check["detail"]
    assert "pending review" in check["detail"] and "fails closed" in check["detail"]
    data = json.loads(ran.stdout)
    # a warning does not fail the run by itself: the exit code follows the other checks
    assert data["ok"] is all(entry["status"] != "missing" for host in data["hosts"].values()
                             for entry in host["checks"])


def test_no_judge_probe_sends_nothing(session: Session) -> None:
    with JudgeServer("openai") as server:
        judge_config(session, server.base_url)
        found, _ = checks(session, "claude-code")
        assert found["judge"] == "skip" and server.requests == []


# ------------------------------------------------------------------------------------------- Codex trust


def test_codex_needs_the_project_and_each_hook_trusted(tmp_path: Path) -> None:
    session = codex_session(tmp_path)
    found, code = checks(session, "codex")
    assert found["Stop hook"] == "ok"
    assert found["codex project trust"] == "missing" and found["codex hook trust"] == "missing" and code == 1
    trust(session)
    found, _ = checks(session, "codex")
    assert found["codex project trust"] == "ok" and found["codex hook trust"] == "ok"


def test_codex_trust_of_another_hook_does_not_count(tmp_path: Path) -> None:
    session = codex_session(tmp_path)
    trust(session, hashes={"Stop": "sha256:" + "0" * 64})  # Stop edited after it was trusted
    found, code = checks(session, "codex")
    assert found["codex project trust"] == "ok" and found["codex hook trust"] == "missing" and code == 1


def test_codex_disabled_hooks_fail(tmp_path: Path) -> None:
    session = codex_session(tmp_path)
    trust(session, disabled=True)
    found, _ = checks(session, "codex")
    assert found["codex hook trust"] == "missing"


def test_codex_user_hooks_need_no_project_trust(tmp_path: Path) -> None:
    session = Session(tmp_path, host="codex")  # hooks in ~/.codex/hooks.json
    trust(session, project=False)
    found, _ = checks(session, "codex")
    assert "codex project trust" not in found and found["codex hook trust"] == "ok"


@pytest.mark.skipif(not CODEX.exists() or shutil.which("node") is None, reason="the Codex CLI is not installed "
                    "(scripts/install-host-clis.sh)")
def test_the_hash_is_the_one_the_real_codex_computes(tmp_path: Path) -> None:
    """``codex app-server``'s hooks/list reports each hook's key and currentHash: doctor's must be the same."""
    session = codex_session(tmp_path)
    trust(session, hashes=dict.fromkeys(("PreToolUse", "UserPromptSubmit", "Stop"), "sha256:x"))
    env = session.env(None) | {"CODEX_HOME": str(session.home / ".codex")}
    requests = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {
        "name": "verigate-doctor-test", "version": "1"}}}, {"jsonrpc": "2.0", "method": "initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [str(session.project)]}}]
    process = subprocess.Popen([str(CODEX), "app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, env=env, cwd=session.project)
    try:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write("".join(json.dumps(request) + "\n" for request in requests))
        process.stdin.flush()
        deadline = time.monotonic() + 60
        listed: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            message = json.loads(line)
            if message.get("id") == 2:
                listed = message["result"]["data"][0]["hooks"]
                break
    finally:
        process.kill()
        process.wait(timeout=10)
    assert len(listed) == 3
    entries = hook_entries("codex", str(session.project), session.env(None))
    hashes = {(entry.path, entry.event.lower()): codex_hook_hash(entry) for entry in entries}
    for hook in listed:
        assert hook["trustStatus"] == "modified"  # a trusted_hash exists under exactly our key, but is wrong
        assert hashes[(hook["sourcePath"], hook["eventName"].lower())] == hook["currentHash"]
