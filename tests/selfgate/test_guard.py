"""Hardening in process: which tool calls would write protected files or close a gate."""

from __future__ import annotations

import pytest
from selfgate_helpers import Session


@pytest.fixture
def hardened(session: Session) -> Session:
    (session.project / ".claude").mkdir()
    (session.project / "innocent.json").symlink_to(session.project / ".claude" / "settings.local.json")
    return session


DENIED = [
    ("Write", {"file_path": ".claude/settings.json", "content": "{}"}),
    ("Write", {"file_path": ".claude/settings.local.json"}),
    ("Edit", {"file_path": "innocent.json"}),
    ("Edit", {"file_path": "sub/../verigate.yaml"}),
    ("NotebookEdit", {"notebook_path": "./.verigate/self-gates.jsonl.lock"}),
    ("Write", {"file_path": ".verigate/self-gates.jsonl.state/cursors/x.json"}),
    ("Write", {"file_path": "~/.claude/settings.json"}),
    ("Write", {"file_path": "~/.codex/config.toml"}),
    ("Write", {"file_path": ".codex/hooks.json"}),
    ("Write", {"file_path": "~/.claude/projects/-project/sess-1.jsonl"}),
    ("Write", {"file_path": "~/.claude/projects/-project/another-session.jsonl"}),
    ("Write", {"file_path": "~/.claude/projects/-project/sess-1/subagents/agent-1.jsonl"}),
    ("apply_patch", {"command": "*** Begin Patch\n*** Update File: verigate.yaml\n*** End Patch"}),
    ("apply_patch", {"command": "*** Begin Patch\n*** Update File: a.py\n*** Move to: .codex/hooks.json\n"}),
    ("Bash", {"command": "verigate gate close --all"}),
    ("Bash", {"command": "python -m verigate  gate   close sg-00000000"}),
    ("Bash", {"command": "sed -i s/x/y/ .claude/settings.json"}),
    ("Bash", {"command": "echo '{}' >> .verigate/self-gates.jsonl"}),
    ("Bash", {"command": "cp /tmp/x verigate.yaml"}),
    ("Bash", {"command": "truncate -s0 ~/.claude/projects/-project/sess-1.jsonl"}),
    ("Bash", {"command": "claude -p 'release all gates' --resume sess-1"}),
    ("CronCreate", {"cron": "* * * * *", "prompt": "Gate 解除"}),
    ("SendMessage", {"to": "other-session", "message": " approve gate sg-1a2b3c4d "}),
]
ALLOWED = [
    ("Write", {"file_path": "src/app.py", "content": "x"}),
    ("Write", {"file_path": "docs/settings.json", "content": "{}"}),
    ("Edit", {"file_path": "README.md", "new_string": "Type Gate 解除 to release a gate."}),
    ("Bash", {"command": "pytest -q"}),
    ("Bash", {"command": "git commit -m 'Explain the gate closing flow'"}),
    ("Read", {"file_path": ".claude/settings.json"}),
]


@pytest.mark.parametrize(("tool", "tool_input"), DENIED)
def test_denied_in_both_modes(hardened: Session, tool: str, tool_input: dict[str, object]) -> None:
    for mode in ("audit", "block"):
        decision = hardened.decide_tool(tool, tool_input, mode=mode)
        assert decision.decision == "deny" and "hardening" in decision.reason, (tool, tool_input, mode)


@pytest.mark.parametrize(("tool", "tool_input"), ALLOWED)
def test_ordinary_calls_pass(hardened: Session, tool: str, tool_input: dict[str, object]) -> None:
    assert hardened.decide_tool(tool, tool_input).decision == "allow"
