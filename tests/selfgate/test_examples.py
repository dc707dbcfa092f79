"""The shipped hook wiring examples: valid, pointing at real events, generous timeouts, and they run."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from selfgate_helpers import Session

from verigate.cli._hook import EVENTS
from verigate.judge._base import MAX_JUDGE_TIMEOUT_S

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
WIRING = {"claude-code": EXAMPLES / "claude-code" / "settings.json", "codex": EXAMPLES / "codex" / "hooks.json"}


def handlers(host: str) -> dict[str, list[dict[str, Any]]]:
    data = json.loads(WIRING[host].read_text(encoding="utf-8"))
    return {event: [{**hook, "matcher": group.get("matcher")} for group in groups for hook in group["hooks"]]
            for event, groups in data["hooks"].items()}


@pytest.mark.parametrize("host", sorted(WIRING))
def test_wiring_names_real_events_with_timeouts_above_the_judge(host: str) -> None:
    wired = handlers(host)
    assert {"PreToolUse", "UserPromptSubmit", "Stop"} <= set(wired)
    for hooks in wired.values():
        for hook in hooks:
            words = shlex.split(hook["command"])
            assert words[:2] == ["verigate", "hook"] and (words[2], words[3]) in EVENTS
            assert hook["timeout"] > MAX_JUDGE_TIMEOUT_S


def test_pre_tool_use_sees_every_tool_that_can_write() -> None:
    claude = handlers("claude-code")["PreToolUse"][0]["matcher"]
    assert claude in ("*", "", None)  # hardening must see every tool, not only the blocked ones
    codex = re.compile(f"^(?:{handlers('codex')['PreToolUse'][0]['matcher']})$")
    assert all(codex.match(tool) for tool in ("Bash", "apply_patch", "mcp__fs__write"))


def test_the_wired_commands_run(session: Session) -> None:
    """Run the Claude Code commands exactly as written, with the installed console script on PATH."""
    scripts = Path(sys.executable).parent
    if not (scripts / "verigate").exists():
        pytest.skip("the verigate console script is not installed next to this interpreter")
    env = {**session.env("block"), "PATH": f"{scripts}:/usr/bin:/bin"}
    session.assistant("I'll wait for your approval before step 2.")
    wired = handlers("claude-code")
    pre = {**session.base("PreToolUse"), "tool_name": "Edit", "tool_input": {"file_path": "a.py"}}
    ran = subprocess.run(wired["PreToolUse"][0]["command"], shell=True, input=json.dumps(pre), text=True,
                         capture_output=True, env=env, cwd=session.project, timeout=60, check=False)
    assert json.loads(ran.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    session.user("release all gates")
    prompt = {**session.base("UserPromptSubmit"), "prompt": "release all gates"}
    ran = subprocess.run(wired["UserPromptSubmit"][0]["command"], shell=True, input=json.dumps(prompt), text=True,
                         capture_output=True, env=env, cwd=session.project, timeout=60, check=False)
    assert "closed" in json.loads(ran.stdout)["hookSpecificOutput"]["additionalContext"]
