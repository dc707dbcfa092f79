"""``verigate store migrate`` and ``verigate review watch`` as a user runs them: subprocesses on real SQLite files,
with another process filing reviews while the watch runs."""

from __future__ import annotations

import json
import queue
import signal
import sqlite3
import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any

import pytest

from verigate.store import SqliteStore
from verigate.store._schema import SCHEMA_VERSION


def _user_version(path: Path) -> int:
    """The schema version as SQLite itself reports it (not through verigate)."""
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
    finally:
        conn.close()


def test_migrate_creates_the_schema_and_prints_its_version(tmp_path: Path, verigate_cli: Any) -> None:
    path = tmp_path / "new" / "verigate.db"
    done = verigate_cli("store", "migrate", "--store", str(path))
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"schema version {_user_version(path)} in force at {path}\n"
    again = verigate_cli("store", "migrate", "--store", f"sqlite:///{path}", "--json")
    assert json.loads(again.stdout) == {"schema_version": _user_version(path), "store": f"sqlite:///{path}"}


def test_migrate_reads_the_store_of_the_configuration_relative_to_its_folder(tmp_path: Path,
                                                                             verigate_cli: Any) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "verigate.yaml").write_text("store:\n  url: state/v.db\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = verigate_cli("store", "migrate", "--config", str(project / "verigate.yaml"), cwd=elsewhere)
    assert done.returncode == 0, done.stderr
    assert _user_version(project / "state" / "v.db") >= 1
    assert not (elsewhere / "state").exists()
    here = verigate_cli("store", "migrate", cwd=project)  # ./verigate.yaml by default
    assert here.returncode == 0, here.stderr
    assert "state/v.db" in here.stdout


def test_migrate_refuses_a_newer_store_and_leaves_it_alone(tmp_path: Path, verigate_cli: Any) -> None:
    path = tmp_path / "v.db"
    SqliteStore(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    before = path.read_bytes()
    done = verigate_cli("store", "migrate", "--store", str(path))
    assert done.returncode == 2
    assert len(done.stderr.splitlines()) == 1
    assert "newer than this verigate understands" in done.stderr
    assert path.read_bytes() == before


def test_migrate_refuses_a_file_that_is_not_a_store(tmp_path: Path, verigate_cli: Any) -> None:
    path = tmp_path / "notes.db"
    path.write_text("my notes\n" * 100)
    done = verigate_cli("store", "migrate", "--store", str(path))
    assert (done.returncode, done.stdout) == (2, "")
    assert "not a SQLite database" in done.stderr


def _file(path: Path, session_id: str, *, text: str = "the held answer", age_s: float = 0) -> str:
    """File a review from this test process: for the watcher, another process."""
    created = datetime.now(UTC) - timedelta(seconds=age_s)
    with SqliteStore(path, clock=lambda: created) as store:
        return store.create_pending_review(session_id, policy_action="escalate_verification_error",
                                           reason="judge_unavailable", pending_text=text,
                                           candidate={"text": text}, verdict=None)


class Watch:
    """``verigate review watch`` running in the background; its stdout read line by line."""

    def __init__(self, cwd: Path, *args: str) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "verigate", "review", "watch", *args], cwd=cwd,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        assert self.process.stdout is not None
        threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True).start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self.lines.put(line.rstrip("\n"))

    def next(self) -> str:
        return self.lines.get(timeout=120)

    def stop(self) -> tuple[int, str]:
        self.process.send_signal(signal.SIGINT)
        _, stderr = self.process.communicate(timeout=120)
        return self.process.returncode, stderr

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def watches() -> Any:
    started: list[Watch] = []

    def start(cwd: Path, *args: str) -> Watch:
        started.append(Watch(cwd, *args))
        return started[-1]

    yield start
    for watch in started:
        watch.kill()


def test_watch_prints_each_new_review_as_it_arrives_and_ctrl_c_ends_it(tmp_path: Path, watches: Any) -> None:
    path = tmp_path / "w.db"
    secret = "sk-" + "x" * 8 + datetime.now(UTC).strftime("%f")  # a held answer the watch must never print
    first = _file(path, "sess-1", text=secret)
    watch = watches(tmp_path, "--store", str(path), "--json")
    seen = [json.loads(watch.next())]  # the backlog: what is pending when the watch starts
    later = [_file(path, f"sess-{n}", text=secret) for n in (2, 3)]
    seen += [json.loads(watch.next()), json.loads(watch.next())]
    code, stderr = watch.stop()
    assert code == 0, stderr
    assert [item["review_id"] for item in seen] == [first, *later]
    with SqliteStore(path) as store:
        for item in seen:
            review = store.get_review(item["review_id"])
            assert item == {"review_id": review.review_id, "session_id": review.session_id,
                            "policy_action": review.policy_action, "reason": review.reason,
                            "created_at": review.created_at}
    assert secret not in json.dumps(seen) + stderr


def test_watch_once_prints_the_backlog_in_text_and_stops(tmp_path: Path, verigate_cli: Any) -> None:
    path = tmp_path / "w.db"
    older = _file(path, "sess-old", age_s=60)
    newer = _file(path, "sess-\x1b[31mred")
    with SqliteStore(path) as store:
        resolved = _file(path, "sess-done")
        store.approve_review(resolved, by="alice")
    done = verigate_cli("review", "watch", "--store", str(path), "--once")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split("  ")[1] for line in lines] == [older, newer]  # oldest first, resolved ones not at all
    assert lines[1].split("  ")[2:] == ["sess-\\x1b[31mred", "escalate_verification_error", "judge_unavailable"]
    assert "\x1b" not in done.stdout


def test_watch_once_waits_for_the_first_review(tmp_path: Path, watches: Any) -> None:
    path = tmp_path / "w.db"
    SqliteStore(path).close()
    watch = watches(tmp_path, "--store", str(path), "--once", "--json")
    review_id = _file(path, "late")
    assert json.loads(watch.next())["review_id"] == review_id
    assert watch.process.wait(timeout=120) == 0


def test_watch_with_a_timeout_and_nothing_pending_ends_quietly(tmp_path: Path, verigate_cli: Any) -> None:
    path = tmp_path / "w.db"
    SqliteStore(path).close()
    done = verigate_cli("review", "watch", "--store", str(path), "--timeout", "0.3")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_watch_expires_overdue_reviews_instead_of_announcing_them(tmp_path: Path, verigate_cli: Any) -> None:
    path = tmp_path / "w.db"
    (tmp_path / "verigate.yaml").write_text("store:\n  review_expiry_s: 600\n")
    overdue = _file(path, "old", age_s=3600)
    fresh = _file(path, "new")
    done = verigate_cli("review", "watch", "--store", str(path), "--once", "--json")
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["review_id"] for line in done.stdout.splitlines()] == [fresh]
    assert f"expired {overdue}" in done.stderr


@pytest.mark.parametrize("args", [["--timeout", "-1"], ["--timeout", "nan"], ["--bogus"]])
def test_watch_refuses_bad_options(tmp_path: Path, verigate_cli: Any, args: list[str]) -> None:
    done = verigate_cli("review", "watch", "--store", str(tmp_path / "w.db"), *args)
    assert done.returncode == 2
    assert not (tmp_path / "w.db").exists()


def test_watch_never_creates_a_store(tmp_path: Path, verigate_cli: Any) -> None:
    done = verigate_cli("review", "watch", "--store", str(tmp_path / "missing.db"), "--once")
    assert done.returncode == 2
    assert "no store here" in done.stderr
    assert not (tmp_path / "missing.db").exists()


def test_watch_json_never_prints_a_raw_c1_control_or_bidi_override(tmp_path: Path, verigate_cli: Any) -> None:
    # json.dumps escapes only the C0 controls; U+009B is a one-character CSI to some terminals and U+202E turns
    # the rest of the line around: agent text (a session id) must not drive the watching operator's terminal
    path = tmp_path / "w.db"
    review_id = _file(path, "sess-\x9b31m-\u202eder-\x7f-\U000e0041")
    done = verigate_cli("review", "watch", "--store", str(path), "--once", "--json")
    assert done.returncode == 0, done.stderr
    assert not any(char in done.stdout for char in "\x9b\u202e\x7f\U000e0041")
    line = json.loads(done.stdout)
    assert (line["review_id"], line["session_id"]) == (review_id, "sess-\x9b31m-\u202eder-\x7f-\U000e0041")
