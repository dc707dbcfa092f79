"""Review findings, end to end through the hook subprocess: Bash cannot close a gate or write the store in any
quoting, one forged store line cannot close a gate, and a damaged store line never fails open."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from selfgate_helpers import Session

from verigate.selfgate import decide_tool_call, settings_for
from verigate.selfgate._quick import quick_tool_decision

GATE = "Here is the plan. I'll wait for your approval before step 3."
EDIT = {"file_path": "app.py", "old_string": "a", "new_string": "b"}


def open_gate(session: Session) -> str:
    session.assistant(GATE)
    assert session.tool("Edit", EDIT).denied
    return str(next(line["gate_id"] for line in session.store_lines() if line["status"] == "open"))


def forged_line(session: Session, gate: str, **fields: object) -> str:
    entry = {"ts": "2026-11-29T23:30:00+00:00", "session_id": session.session_id, "gate_id": gate, "gate_text": "x",
             "status": "closed", "opened_by": None, "closed_by": "human", "closed_reason": "x", **fields}
    return json.dumps(entry, sort_keys=True)


REPRODUCERS = [
    # the review's exact commands: quotes around `close` and a pseudo-terminal; a glob for the store's name
    "printf 'yes\\n' | script -qc 'verigate selfgate \"close\" --all' /dev/null",
    "cd .verigate && cat {forged} >> self-gates*.jsonl",
    # the same in other spellings
    "python -m verigate selfgate --project . close --all",
    "bash -c \"eval 'verigate selfgate cl\\\\ose sg-00000000'\"",
    "sh -c 've''ri''gate gate close --all'",
    "echo \"verigate selfgate close --all",  # unbalanced quotes
    "verigate review approve rv_123",
    ".venv/bin/python -m verigate review 'reject' rv_123",
    "cat {forged} >> .veri*/self-gat*",
    "cd .v?rigate; cat {forged} >> *.jsonl",
    "sqlite3 .verigate/verigate.db 'delete from reviews'",
    "rm -rf .verigate",
]


@pytest.mark.parametrize("command", REPRODUCERS)
def test_bash_bypasses_are_denied_from_any_session_in_any_mode(session: Session, command: str) -> None:
    gate = open_gate(session)
    forged = session.root / "forged.line"
    forged.write_text(forged_line(session, gate, channel="cli-tty", request_id="r1", request_line=1) + "\n")
    command = command.format(forged=forged)
    # another session of the project, with no gate of its own, in audit mode: hardening holds everywhere
    other = session.other("sess-B")
    other.user("hello")
    for runner, mode in ((other, "audit"), (other, "block"), (session, "audit")):
        ran = runner.tool("Bash", {"command": command}, mode=mode)
        assert ran.code == 0 and ran.denied and "hardening" in ran.reason, (command, mode, ran.output)
    assert session.tool("Edit", EDIT).denied


@pytest.mark.parametrize("command", ["git commit -m 'Explain the gate closing flow'", "ls *.py", "pytest -q",
                                     "gh pr review 3 --approve", "grep -rn 'close' src/"])
def test_ordinary_bash_still_runs(session: Session, command: str) -> None:
    ran = session.tool("Bash", {"command": command}, mode="audit")
    assert not ran.denied, ran.output


def test_the_store_folder_is_protected_for_file_tools(session: Session) -> None:
    for path in (".verigate/verigate.db", ".verigate/new-file.jsonl", str(session.store.parent / "x")):
        ran = session.tool("Write", {"file_path": path, "content": ""}, mode="audit")
        assert ran.denied and "store" in ran.reason, path


@pytest.mark.parametrize("fields", [
    {"channel": "cli-tty", "request_id": "r1", "request_line": 1},  # cites the opening's line
    {"channel": "cli-tty", "request_id": "r1", "request_line": 99},  # cites nothing
    {"channel": "user-prompt-submit", "request_id": "r1", "request_line": 1,
     "source": {"transcript": "/t.jsonl", "line": 1, "uuid": "u1"}},
])
def test_one_forged_closure_appended_by_a_writer_does_not_close(session: Session,
                                                                  fields: dict[str, object]) -> None:
    """What the hardening denies the agent, done anyway by a process that can write the store: the line is a
    valid entry, but it cites no human channel's request, so the gate stays open (no store problem either)."""
    gate = open_gate(session)
    with session.store.open("a", encoding="utf-8") as handle:
        handle.write(forged_line(session, gate, **fields) + "\n")
    ran = session.tool("Edit", EDIT)
    assert ran.denied and gate in ran.reason and "damaged" not in ran.reason
    assert gate in session.cli("status").stdout


def test_the_reviews_forged_line_is_a_store_problem_and_does_not_open_the_way(session: Session) -> None:
    gate = open_gate(session)
    with session.store.open("a", encoding="utf-8") as handle:  # the review's line: no citation at all
        handle.write(forged_line(session, gate, channel="cli") + "\n")
    ran = session.tool("Edit", EDIT)
    assert ran.denied and gate in ran.reason and "damaged" in ran.reason


def damage_first_line(session: Session) -> None:
    lines = session.store.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[0] = lines[0].replace('"status": "open"', '"status": "opn"')
    session.store.write_text("".join(lines), encoding="utf-8")


def test_damaged_opening_line_denies_in_block_mode_until_a_person_repairs_it(session: Session) -> None:
    gate = open_gate(session)
    damage_first_line(session)
    ran = session.tool("Edit", EDIT)
    assert ran.code == 0 and ran.denied
    assert "line 1" in ran.reason and "repairs" in ran.reason and "cursors" in ran.reason
    assert session.tool("Read", {"file_path": "app.py"}).output is None  # read-only tools stay allowed
    audit = session.tool("Edit", EDIT, mode="audit")
    assert not audit.denied and "line 1" in audit.context and "audit mode" in audit.context
    assert session.tool("Edit", EDIT).denied  # still, on every call: nothing cached a problem state
    # the repair the reason describes: drop the damaged line, forget the cursors; the gate is found again
    lines = session.store.read_text(encoding="utf-8").splitlines(keepends=True)
    session.store.write_text("".join(lines[1:]), encoding="utf-8")
    shutil.rmtree(session.store.parent / "self-gates.jsonl.state" / "cursors")
    ran = session.tool("Edit", EDIT)
    assert ran.denied and gate in ran.reason and "damaged" not in ran.reason
    session.prompt(f"approve gate {gate}")
    assert not session.tool("Edit", EDIT).denied


def test_the_fast_path_never_answers_for_a_damaged_store(session: Session, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VERIGATE_SELF_GATE_MODE", "block")
    session.assistant("Refactoring done.")
    hook_input = {**session.base("PreToolUse"), "tool_name": "Edit", "tool_input": EDIT}
    assert decide_tool_call(hook_input, settings_for(hook_input)).decision == "allow"
    assert quick_tool_decision(hook_input) == ("allow", "", "")
    with session.store.open("a", encoding="utf-8") as handle:
        handle.write('{"status": "closed"}\n')
    assert quick_tool_decision(hook_input) is None  # the store changed
    full = decide_tool_call(hook_input, settings_for(hook_input))
    assert full.decision == "deny" and "damaged" in full.reason
    assert quick_tool_decision(hook_input) is None  # the full check cached nothing for a damaged store
    caches = list((session.store.parent / "self-gates.jsonl.state" / "fast").glob("*.json"))
    assert all(json.loads(path.read_text())["body"]["store"] != list(_signature(session.store)) for path in caches)


def _signature(path: Path) -> tuple[int, ...]:
    status = path.stat()
    return status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns


#: issue 16's attacks, end to end through the hook process (the in-process suite is test_tripwire_attacks.py)
HOOK_ATTACKS = [
    ("Bash", {"command": "tee -a .verig{a,}te/self-gat{e,}s.jsonl < /dev/null"}),
    ("Bash", {"command": "echo x >> .?erigate/s*l"}),
    ("Bash", {"command": "echo '{}' > .[c]laude/[s]ettings.json"}),
    ("Bash", {"command": "echo 'x: 1' >> [v]erigate.yaml"}),
    ("Bash", {"command": "echo x >> $'\\x2e'verigate/self-gates.jsonl"}),
    ("Bash", {"command": "find . -inum 12345 -exec sh -c 'echo x >> \"$1\"' _ {} \\;"}),
    ("Bash", {"command": "ln -s .?erigate/s*l innocent && echo x >> innocent"}),
    ("Bash", {"command": "echo x | dd of=$(echo .?erigate/s*l) oflag=append conv=notrunc"}),
    ("Bash", {"command": "cd .veri*; echo x >> self-gates.jsonl"}),
    ("Bash", {"command": "script -qc 'verigate selfgate '$'\\x63''lose --all' /dev/null"}),
    ("Bash", {"command": "verigate review $'\\x61'pprove rv_1 --yes"}),
    ("mcp__filesystem__write_file", {"path": ".verigate/self-gates.jsonl", "content": "{}\n"}),
    ("mcp__filesystem__edit_file", {"path": "verigate.yaml", "edits": []}),
    ("apply_patch", {"command": ["apply_patch", "*** Begin Patch\n*** Add File: .verigate/x\n+x\n*** End Patch\n"]}),
]


@pytest.mark.parametrize(("tool", "tool_input"), HOOK_ATTACKS)
def test_issue_16_tripwire_attacks_are_denied_by_the_hook(session: Session, tool: str,
                                                          tool_input: dict[str, object]) -> None:
    session.user("hello")
    session.store.parent.mkdir(parents=True, exist_ok=True)
    session.store.touch()
    (session.project / "verigate.yaml").write_text("self_gate:\n  mode: audit\n", encoding="utf-8")
    (session.project / ".claude").mkdir(exist_ok=True)
    (session.project / ".claude" / "settings.json").write_text("{}", encoding="utf-8")
    ran = session.tool(tool, tool_input, mode="audit")
    assert ran.code == 0 and ran.denied and "hardening" in ran.reason, (tool, tool_input, ran.output, ran.stderr)
