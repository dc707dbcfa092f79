"""``verigate selfgate``: scan, list, status, and close — refused without a terminal, confirmed through a pty."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time

from selfgate_helpers import Session


def scanned(session: Session) -> str:
    session.assistant("Step 2 の実装前にユーザーの再承認を取ります。")
    ran = session.cli("scan", str(session.transcript), "--session", session.session_id)
    assert ran.returncode == 0, ran.stderr
    assert "1 new gate(s); 1 open" in ran.stdout
    rescanned = session.cli("scan", str(session.transcript), "--session", session.session_id)
    assert "0 new gate(s); 1 open" in rescanned.stdout
    status = json.loads(session.cli("status", "--json").stdout)
    return str(status["gates"][0]["gate_id"])


def test_scan_list_status(session: Session) -> None:
    gate = scanned(session)
    listed = session.cli("list", "--session", session.session_id)
    assert gate in listed.stdout and "OPEN" in listed.stdout and "再承認" in listed.stdout
    assert json.loads(session.cli("status", "--json", "--session", "other").stdout)["gates"] == []


def test_close_refuses_without_a_terminal(session: Session) -> None:
    gate = scanned(session)
    ran = session.cli("close", gate, stdin="yes\n")
    assert ran.returncode == 2 and "interactive terminal" in ran.stderr
    assert all(line["status"] != "closed" for line in session.store_lines())


def run_in_pty(session: Session, answer: str, *args: str) -> tuple[int, str]:
    controller, terminal = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "verigate", "selfgate", "--project", str(session.project), *args],
                               stdin=terminal, stdout=terminal, stderr=terminal, env=session.env(None),
                               close_fds=True)
    os.close(terminal)
    output = b""
    answered = False
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([controller], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # the terminal closed: the process is done
                break
            if not chunk:
                break
            output += chunk
            if not answered and b"confirm" in output:
                os.write(controller, answer.encode() + b"\n")
                answered = True
        elif process.poll() is not None:
            break
    code = process.wait(30)
    os.close(controller)
    return code, output.decode("utf-8", "replace")


def test_close_at_a_terminal_records_a_human_closure(session: Session) -> None:
    gate = scanned(session)
    code, output = run_in_pty(session, "no", "close", gate)
    assert code == 1 and "nothing closed" in output
    code, output = run_in_pty(session, "yes", "close", gate, "--reason", "reviewed the diff")
    assert code == 0 and f"closed {gate}" in output, output
    closed = [line for line in session.store_lines() if line["status"] == "closed"]
    assert len(closed) == 1 and closed[0]["channel"] == "cli-tty" and closed[0]["closed_by"] == "human"
    # the closure cites the terminal's request, which records the terminal and the user
    request = session.store_lines()[closed[0]["request_line"] - 1]
    assert request["status"] == "close_requested" and request["request_id"] == closed[0]["request_id"]
    assert request["evidence"].startswith("terminal /dev/")
    assert "reviewed the diff" in closed[0]["closed_reason"]
    assert not session.tool("Edit", {"file_path": "app.py"}).denied


def test_close_unknown_gate_is_an_input_error(session: Session) -> None:
    scanned(session)
    code, output = run_in_pty(session, "yes", "close", "sg-00000000")
    assert code == 2 and "no open gate" in output
