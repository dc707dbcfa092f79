"""``verigate review`` and ``verigate ledger verify`` run as a user runs them: a subprocess on a real store."""

from __future__ import annotations

import getpass
import json
import os
import pty
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from verigate.store import SqliteStore


def _hold(path: Path, session_id: str, text: str, *, age_s: float = 0) -> str:
    created = datetime.now(UTC) - timedelta(seconds=age_s)
    with SqliteStore(path, clock=lambda: created) as store:
        return store.create_pending_review(session_id, policy_action="escalate_verification_error",
                                           reason="judge_unavailable", pending_text=text,
                                           candidate={"text": text}, verdict={"passed": False})


@pytest.fixture
def held(tmp_path: Path) -> tuple[Path, str]:
    path = tmp_path / "st.db"
    return path, _hold(path, "sess-1", "All 12 tests pass.\nDetails follow.")


def test_list_shows_a_readable_table(held: tuple[Path, str], verigate_cli: Any) -> None:
    path, review_id = held
    _hold(path, "sess-2", "x" * 100, age_s=7200)
    result = verigate_cli("review", "list", "--store", str(path))
    assert result.returncode == 0, result.stderr
    header, *lines = result.stdout.splitlines()
    assert header.split() == ["ID", "SESSION", "AGE", "STATUS", "ACTION", "REASON", "TEXT"]
    assert len(lines) == 2
    older, newer = lines  # oldest first
    assert older.split()[1:3] == ["sess-2", "2h"]
    assert older.endswith("x" * 59 + "…")
    review, session, age, status = newer.split()[:4]
    assert (review, session, status) == (review_id, "sess-1", "pending")
    assert age.endswith("s") and int(age[:-1]) < 60  # seconds old (the CLI's own start-up counts on a busy machine)
    assert newer.endswith("judge_unavailable  All 12 tests pass.")
    assert "Details follow" not in result.stdout


def test_list_json_and_status_filter(held: tuple[Path, str], verigate_cli: Any) -> None:
    path, review_id = held
    pending = json.loads(verigate_cli("review", "list", "--store", str(path), "--json").stdout)
    assert [item["review_id"] for item in pending] == [review_id]
    assert pending[0]["pending_text"] == "All 12 tests pass.\nDetails follow."
    assert pending[0]["candidate"] == {"text": "All 12 tests pass.\nDetails follow."}
    assert verigate_cli("review", "reject", review_id, "--yes", "--store", str(path)).returncode == 0
    assert verigate_cli("review", "list", "--store", str(path)).stdout.strip() == "no pending reviews"
    for status, count in (("rejected", 1), ("approved", 0), ("all", 1)):
        listed = json.loads(verigate_cli("review", "list", "--store", str(path), "--status", status,
                                         "--json").stdout)
        assert len(listed) == count, status


def test_list_exit_code_tells_ci_a_run_ended_in_a_pending_review(held: tuple[Path, str],
                                                                   verigate_cli: Any) -> None:
    path, review_id = held
    listed = verigate_cli("review", "list", "--pending", "--exit-code", "--store", str(path))
    assert listed.returncode == 3 and review_id in listed.stdout
    other = verigate_cli("review", "list", "--pending", "--exit-code", "--session", "sess-other", "--store", str(path))
    assert other.returncode == 0 and other.stdout.strip() == "no pending reviews"
    assert verigate_cli("review", "list", "--store", str(path)).returncode == 0  # without the flag: a listing
    assert verigate_cli("review", "reject", review_id, "--yes", "--store", str(path)).returncode == 0
    assert verigate_cli("review", "list", "--pending", "--exit-code", "--store", str(path)).returncode == 0


def test_show(held: tuple[Path, str], verigate_cli: Any) -> None:
    path, review_id = held
    result = verigate_cli("review", "show", review_id, "--store", str(path))
    assert result.returncode == 0, result.stderr
    assert f"review        {review_id}" in result.stdout
    assert "status        pending" in result.stdout
    assert result.stdout.rstrip().endswith("held answer\nAll 12 tests pass.\nDetails follow.")
    shown = json.loads(verigate_cli("review", "show", review_id, "--store", str(path), "--json").stdout)
    assert shown["verdict"] == {"passed": False}
    assert shown["status"] == "pending"


def test_approve_prints_the_released_answer_and_records_who(held: tuple[Path, str], verigate_cli: Any) -> None:
    path, review_id = held
    result = verigate_cli("review", "approve", review_id, "--yes", "--store", str(path), "--note", "checked by hand")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "All 12 tests pass.\nDetails follow.\n"
    with SqliteStore(path) as store:
        review = store.get_review(review_id)
        assert (review.status, review.resolved_by, review.note) == ("approved", getpass.getuser(),
                                                                     "checked by hand")
        session = store.get_session("sess-1")
        assert session is not None and session.state == "completed"
    again = verigate_cli("review", "approve", review_id, "--yes", "--store", str(path), "--by", "someone-else")
    assert again.returncode == 0
    assert again.stdout == result.stdout
    refused = verigate_cli("review", "reject", review_id, "--yes", "--store", str(path))
    assert refused.returncode == 2
    assert "already approved" in refused.stderr
    assert review_id in refused.stderr


def test_reject_with_by(held: tuple[Path, str], verigate_cli: Any) -> None:
    path, review_id = held
    result = verigate_cli("review", "reject", review_id, "--yes", "--store", str(path), "--by", "carol")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"rejected {review_id} by carol")
    with SqliteStore(path) as store:
        session = store.get_session("sess-1")
        assert session is not None and session.state == "ended"


def test_an_unknown_review_id_exits_2_naming_it(held: tuple[Path, str], verigate_cli: Any) -> None:
    path, _ = held
    for command in ("show", "approve", "reject"):
        confirm = () if command == "show" else ("--yes",)
        result = verigate_cli("review", command, "rv_missing", "--store", str(path), *confirm)
        assert result.returncode == 2
        assert "rv_missing" in result.stderr
        assert "Traceback" not in result.stderr


def test_the_store_and_expiry_come_from_verigate_yaml(tmp_path: Path, verigate_cli: Any) -> None:
    path = tmp_path / "data" / "reviews.db"
    old = _hold(path, "old", "stale answer", age_s=7200)
    fresh = _hold(path, "fresh", "fresh answer")
    (tmp_path / "verigate.yaml").write_text("store:\n  url: data/reviews.db\n  review_expiry_s: 3600\n")
    listed = verigate_cli("review", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [item["review_id"] for item in json.loads(listed.stdout)] == [fresh]
    assert f"expired {old}" in listed.stderr
    approve = verigate_cli("review", "approve", old, "--yes")
    assert approve.returncode == 2
    assert "already expired" in approve.stderr
    verified = verigate_cli("ledger", "verify")
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout.startswith("ledger ok: 1 row verified")


def test_a_missing_store_is_an_error_not_a_new_file(tmp_path: Path, verigate_cli: Any) -> None:
    for args in (("review", "list"), ("ledger", "verify")):
        result = verigate_cli(*args)
        assert result.returncode == 2
        assert "no store here" in result.stderr
    assert not (tmp_path / ".verigate").exists()


def test_ledger_verify_exit_codes(held: tuple[Path, str], tmp_path: Path, verigate_cli: Any) -> None:
    path, review_id = held
    assert verigate_cli("review", "approve", review_id, "--yes", "--store", str(path)).returncode == 0
    with SqliteStore(path) as store:
        store.append_ledger("verification_policy", {"action": "accept"})
    ok = verigate_cli("ledger", "verify", "--store", str(path), "--json")
    assert ok.returncode == 0, ok.stderr
    report = json.loads(ok.stdout)
    assert (report["ok"], report["rows"]) == (True, 2)
    assert len(report["head"]) == 64

    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("DROP TRIGGER ledger_no_update")
    conn.execute("""UPDATE ledger SET payload = '{"action":"escalate"}' WHERE seq = 2""")
    conn.close()
    tampered = verigate_cli("ledger", "verify", "--store", str(path))
    assert tampered.returncode == 1
    assert "seq 2" in tampered.stderr
    assert str(path) in tampered.stderr

    garbage = tmp_path / "garbage.db"
    garbage.write_text("not sqlite at all " * 100)
    unreadable = verigate_cli("ledger", "verify", "--store", str(garbage))
    assert unreadable.returncode == 2
    assert "not a SQLite database" in unreadable.stderr
    assert garbage.read_text() == "not sqlite at all " * 100


def test_terminal_escapes_in_held_text_are_shown_not_obeyed(tmp_path: Path, verigate_cli: Any) -> None:
    path = tmp_path / "st.db"
    text = "\x1b[2J\x1b]0;owned\x07clean screen \u202eevil\nline two\tok 日本語"
    review_id = _hold(path, "s", text)
    listed = verigate_cli("review", "list", "--store", str(path)).stdout
    shown = verigate_cli("review", "show", review_id, "--store", str(path)).stdout
    for output in (listed, shown):
        assert "\x1b" not in output and "\x07" not in output and "\u202e" not in output
        assert "\\x1b[2J" in output and "\\u202eevil" in output
    assert "line two\tok 日本語" in shown
    approved = verigate_cli("review", "approve", review_id, "--yes", "--store", str(path)).stdout
    assert approved == text + "\n"  # the released answer itself is handed over unchanged


def test_a_locked_store_exits_2_saying_so_and_the_review_waits(held: tuple[Path, str], tmp_path: Path,
                                                               verigate_cli: Any) -> None:
    path, review_id = held
    (tmp_path / "verigate.yaml").write_text("store:\n  lock_timeout_s: 0.3\n")
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    locked = verigate_cli("review", "approve", review_id, "--yes", "--store", str(path))
    assert locked.returncode == 2
    assert "locked by another process" in locked.stderr
    assert locked.stdout == ""  # nothing released while the decision could not be recorded
    other.execute("COMMIT")
    other.close()
    released = verigate_cli("review", "approve", review_id, "--yes", "--store", str(path))
    assert released.returncode == 0, released.stderr
    assert released.stdout == "All 12 tests pass.\nDetails follow.\n"


def test_a_resolution_without_a_terminal_or_yes_is_refused(held: tuple[Path, str], verigate_cli: Any) -> None:
    # an agent running the command from its own tool shell has no terminal: nothing is resolved
    path, review_id = held
    for command in ("approve", "reject"):
        result = verigate_cli("review", command, review_id, "--store", str(path))
        assert result.returncode == 2
        assert "interactive terminal" in result.stderr
    shown = verigate_cli("review", "show", review_id, "--store", str(path), "--json")
    assert json.loads(shown.stdout)["status"] == "pending"


@pytest.mark.parametrize(("typed", "expected_status"), [("yes", "approved"), ("no", "pending")])
def test_a_person_confirms_at_a_terminal(held: tuple[Path, str], typed: str, expected_status: str) -> None:
    path, review_id = held
    controller, terminal = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "verigate", "review", "approve", review_id, "--store",
                                str(path)], stdin=terminal, stdout=subprocess.PIPE, stderr=terminal)
    os.close(terminal)
    prompt = b""
    while b"type 'yes'" not in prompt:
        prompt += os.read(controller, 1024)
    os.write(controller, typed.encode() + b"\n")
    process.communicate(timeout=60)
    os.close(controller)
    with SqliteStore(path) as store:
        assert store.get_review(review_id).status == expected_status
