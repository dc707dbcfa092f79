"""Several processes writing one store file at once: the chain stays valid and no row is lost."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from verigate.store import SqliteStore

#: each worker waits for the go file so that all of them open and write the store at the same time
WORKER = """
import sys, time
from pathlib import Path
from verigate.store import open_store

path, worker, rows, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
while not go.exists():
    time.sleep(0.005)
store = open_store(path, lock_timeout_s=60)
for n in range(rows):
    store.append_ledger("verification_policy", {"worker": worker, "n": n})
    store.begin_attempt(f"session-{worker}", n, {"worker": worker, "n": n})
    if n % 50 == 0:
        store.create_pending_review("shared", policy_action="escalate", reason="r", pending_text=f"{worker}-{n}",
                                    candidate={}, verdict=None)
store.close()
"""

PROCESSES, ROWS = 4, 200


def test_concurrent_processes_chain_correctly_and_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    go = tmp_path / "go"
    workers = [subprocess.Popen([sys.executable, "-c", WORKER, str(path), f"w{i}", str(ROWS), str(go)],
                                stderr=subprocess.PIPE, text=True) for i in range(PROCESSES)]
    go.touch()
    for worker in workers:
        _, stderr = worker.communicate(timeout=240)
        assert worker.returncode == 0, stderr

    with SqliteStore(path) as store:
        assert store.verify_ledger() == PROCESSES * ROWS
        rows = store.ledger()
        assert [row.seq for row in rows] == list(range(1, PROCESSES * ROWS + 1))
        written = {(row.payload["worker"], row.payload["n"]) for row in rows}
        assert written == {(f"w{i}", n) for i in range(PROCESSES) for n in range(ROWS)}
        # each worker's rows keep their own order inside the shared chain
        for i in range(PROCESSES):
            assert [row.payload["n"] for row in rows if row.payload["worker"] == f"w{i}"] == list(range(ROWS))
            assert store.attempts(f"session-{i}") == []
            assert store.attempts(f"session-w{i}") == [{"worker": f"w{i}", "n": n} for n in range(ROWS)]
            session = store.get_session(f"session-w{i}")
            assert session is not None and session.attempt == ROWS - 1
        assert len(store.list_reviews("pending")) == PROCESSES * (ROWS // 50)


def test_processes_opening_a_fresh_file_at_once_all_succeed(tmp_path: Path) -> None:
    """Hook invocations start together on a new project: only one creates the schema, none fails."""
    path = tmp_path / "fresh" / "verigate.db"
    go = tmp_path / "go"
    workers = [subprocess.Popen([sys.executable, "-c", WORKER, str(path), f"w{i}", "3", str(go)],
                                stderr=subprocess.PIPE, text=True) for i in range(PROCESSES)]
    go.touch()
    for worker in workers:
        _, stderr = worker.communicate(timeout=120)
        assert worker.returncode == 0, stderr
    with SqliteStore(path) as store:
        assert store.verify_ledger() == PROCESSES * 3


RESOLVER = """
import sys, time
from pathlib import Path
from verigate import ReviewError
from verigate.store import open_store

path, worker, go, ids = sys.argv[1], sys.argv[2], Path(sys.argv[3]), sys.argv[4:]
while not go.exists():
    time.sleep(0.005)
store = open_store(path, lock_timeout_s=60)
for n, review_id in enumerate(ids):
    try:
        # half the workers approve, half reject: each review must end one way only, recorded once
        if (n + int(worker[1:])) % 2:
            store.approve_review(review_id, by=worker)
        else:
            store.reject_review(review_id, by=worker)
    except ReviewError as exc:
        assert "already" in str(exc), exc
store.close()
"""


def test_concurrent_resolutions_resolve_each_review_exactly_once(tmp_path: Path) -> None:
    path = tmp_path / "reviews.db"
    go = tmp_path / "go"
    with SqliteStore(path) as store:
        ids = [store.create_pending_review(f"s{n}", policy_action="escalate", reason="r", pending_text=str(n),
                                           candidate={}, verdict=None) for n in range(30)]
    workers = [subprocess.Popen([sys.executable, "-c", RESOLVER, str(path), f"w{i}", str(go), *ids],
                                stderr=subprocess.PIPE, text=True) for i in range(PROCESSES)]
    go.touch()
    for worker in workers:
        _, stderr = worker.communicate(timeout=120)
        assert worker.returncode == 0, stderr
    with SqliteStore(path) as store:
        assert store.verify_ledger() == len(ids)
        by_review = {row.payload["review_id"]: row.payload for row in store.ledger()}
        assert sorted(by_review) == sorted(ids)
        for review_id in ids:
            review = store.get_review(review_id)
            recorded = by_review[review_id]
            assert (review.status, review.resolved_by) == (recorded["decision"], recorded["by"])
            session = store.get_session(review.session_id)
            assert session is not None
            assert session.state == ("completed" if review.status == "approved" else "ended")
