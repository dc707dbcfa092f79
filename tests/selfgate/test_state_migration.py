"""The store's move out of the project: an old ``.verigate/self-gates.jsonl`` is imported once, losing nothing."""

from __future__ import annotations

import shutil

from selfgate_helpers import Session

EDIT = {"file_path": "app.py", "old_string": "a", "new_string": "b"}


def upgraded(session: Session) -> tuple[str, str]:
    """A project as an older verigate left it: one gate open, one closed by a person, the store in .verigate/."""
    session.assistant("Step 1 first. I'll wait for your approval before step 2.")
    assert session.tool("Edit", EDIT).denied
    opened = [line["gate_id"] for line in session.store_lines() if line["status"] == "open"]
    session.prompt(f"approve gate {opened[0]}")
    assert not session.tool("Edit", EDIT).denied
    session.assistant("Step 2 done. Step 3 は成果物提示後に再承認とします。")
    assert session.tool("Edit", EDIT).denied
    still_open = [line["gate_id"] for line in session.store_lines() if line["status"] == "open"][-1]
    legacy = session.project / ".verigate" / "self-gates.jsonl"
    legacy.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(session.store, legacy)
    shutil.rmtree(session.store.parent)  # the whole per-user state folder: cursors and caches too
    return opened[0], still_open


def test_the_old_store_is_imported_once_and_its_gates_hold(session: Session) -> None:
    closed, still_open = upgraded(session)
    legacy = session.project / ".verigate" / "self-gates.jsonl"
    old = legacy.read_bytes()
    ran = session.tool("Edit", EDIT)
    assert ran.denied and still_open in ran.reason and closed not in ran.reason  # the closure still counts
    message = (ran.output or {}).get("systemMessage", "")
    assert "imported" in message and str(legacy) in message
    assert session.store.read_bytes().startswith(old)  # appended as it was: request_line citations hold
    assert legacy.read_bytes() == old  # the old file is left alone
    again = session.tool("Edit", EDIT)
    assert again.denied and "imported" not in (again.output or {}).get("systemMessage", "")
    assert session.cli("status").stdout.count("OPEN") == 1
    # once only: a store removed afterwards is not filled from the old file again
    session.store.unlink()
    session.tool("Read", {"file_path": "app.py"})
    ran = session.tool("Edit", EDIT)
    assert "imported" not in (ran.output or {}).get("systemMessage", "")
    assert not session.store.exists() or not session.store.read_bytes().startswith(old)


def test_the_cli_finds_the_imported_store(session: Session) -> None:
    _, still_open = upgraded(session)
    listed = session.cli("list")
    assert listed.returncode == 0 and still_open in listed.stdout
    assert (session.store.parent / "project.json").is_file()


def test_an_allowed_call_reports_the_import_to_the_person(session: Session) -> None:
    upgraded(session)
    legacy = session.project / ".verigate" / "self-gates.jsonl"
    legacy.write_bytes(legacy.read_bytes() + b'{"torn": ')  # a crashed writer's last line
    ran = session.tool("Read", {"file_path": "app.py"})
    assert ran.output is not None and "imported" in ran.output["systemMessage"]
    assert "hookSpecificOutput" not in ran.output  # nothing for the agent, nothing decided
    assert session.store.read_bytes().endswith(b'{"torn": \n')  # sealed: one reported problem, as before
    assert "torn" in session.cli("status").stderr or "not JSON" in session.cli("status").stderr
