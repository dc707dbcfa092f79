"""Many worker processes on one PostgreSQL store: the ledger chain, racing decisions, LISTEN/NOTIFY, a server
restart while workers finalize through the real Gate, and tampering by direct SQL."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from verigate_postgres import PostgresStore

from postgres_server import Server
from verigate import LedgerTamperedError

#: each worker waits for the go file so that all of them write at the same time
APPENDER = """
import sys, time
from pathlib import Path
from verigate_postgres import PostgresStore

url, worker, rows, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
store = PostgresStore(url, lock_timeout_s=60)
while not go.exists():
    time.sleep(0.005)
for n in range(rows):
    store.append_ledger("verification_policy", {"worker": worker, "n": n})
    store.begin_attempt(f"session-{worker}", n, {"worker": worker, "n": n})
store.close()
"""


def _run_all(script: str, args: list[list[str]], go: Path, timeout: float = 240) -> list[str]:
    workers = [subprocess.Popen([sys.executable, "-c", script, *each], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for each in args]
    go.touch()
    outputs = []
    for worker in workers:
        stdout, stderr = worker.communicate(timeout=timeout)
        assert worker.returncode == 0, stderr[-3000:]
        outputs.append(stdout)
    return outputs


def test_many_writers_chain_one_ledger(pg_url: str, tmp_path: Path) -> None:
    processes, rows = 8, 60
    go = tmp_path / "go"
    _run_all(APPENDER, [[pg_url, f"w{i}", str(rows), str(go)] for i in range(processes)], go)
    with PostgresStore(pg_url, lock_timeout_s=10) as store:
        assert store.verify_ledger() == processes * rows
        ledger = store.ledger()
        assert [row.seq for row in ledger] == list(range(1, processes * rows + 1))
        for i in range(processes):
            assert [row.payload["n"] for row in ledger if row.payload["worker"] == f"w{i}"] == list(range(rows))
            session = store.get_session(f"session-w{i}")
            assert session is not None and session.attempt == rows - 1
            assert len(store.attempts(f"session-w{i}")) == rows


RESOLVER = """
import json, sys, time
from pathlib import Path
from verigate import ReviewError
from verigate_postgres import PostgresStore

url, worker, go, ids = sys.argv[1], sys.argv[2], Path(sys.argv[3]), sys.argv[4:]
store = PostgresStore(url, lock_timeout_s=60)
while not go.exists():
    time.sleep(0.005)
won = {}
for review_id in ids:
    try:
        if int(worker[1:]) % 2:
            review = store.approve_review(review_id, by=worker)
        else:
            review = store.reject_review(review_id, by=worker)
        won[review_id] = [review.status, review.resolved_by]
    except ReviewError:
        won[review_id] = ["refused", None]
print(json.dumps(won))
store.close()
"""


def test_racing_decisions_one_wins_and_is_recorded_once(pg_url: str, tmp_path: Path) -> None:
    with PostgresStore(pg_url, lock_timeout_s=10) as store:
        ids = [store.create_pending_review(f"s{n}", policy_action="escalate", reason="r", pending_text=f"held {n}",
                                           candidate={}, verdict=None) for n in range(30)]
    go = tmp_path / "go"
    outputs = _run_all(RESOLVER, [[pg_url, f"w{i}", str(go), *ids] for i in range(6)], go)
    seen = [json.loads(output) for output in outputs]
    with PostgresStore(pg_url, lock_timeout_s=10) as store:
        resolutions = [row.payload for row in store.ledger() if row.kind == "review_resolution"]
        assert sorted(row["review_id"] for row in resolutions) == sorted(ids)  # each decided exactly once
        for review_id in ids:
            final = store.get_review(review_id)
            winner = final.resolved_by
            # every worker saw either the winning decision (its own, or the same one made by another: a no-op)
            # or a refusal because the other decision had won
            for worker_view in seen:
                status, by = worker_view[review_id]
                assert status in (final.status, "refused")
                if status != "refused":
                    assert by == winner
            session = store.get_session(final.session_id)
            assert session is not None
            assert session.state == ("completed" if final.status == "approved" else "ended")
        assert store.verify_ledger() == len(ids)


def test_a_new_review_wakes_a_waiting_listener(pg_url: str) -> None:
    with PostgresStore(pg_url, lock_timeout_s=10) as watcher, PostgresStore(pg_url, lock_timeout_s=10) as worker:
        watcher.wait_for_reviews(60)  # the first call starts listening and returns: the caller lists next
        assert watcher.list_reviews("pending") == []
        woke = threading.Event()

        def wait() -> None:
            watcher.wait_for_reviews(600)
            woke.set()

        thread = threading.Thread(target=wait, daemon=True)
        thread.start()
        worker.create_pending_review("s", policy_action="escalate", reason="r", pending_text="held", candidate={},
                                     verdict=None)
        # far less than the 600 s the waiter would otherwise sleep: only the notification can wake it
        assert woke.wait(120)
        thread.join(120)
        assert [review.pending_text for review in watcher.list_reviews("pending")] == ["held"]


def test_a_listener_that_lost_its_connection_listens_again(pg_server: Server, pg_url: str) -> None:
    with PostgresStore(pg_url, lock_timeout_s=10) as watcher, PostgresStore(pg_url, lock_timeout_s=10) as worker:
        watcher.wait_for_reviews(60)
        with pg_server.admin() as conn:
            conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%%' "
                         "AND pid <> pg_backend_pid()")
        watcher.wait_for_reviews(600)  # the lost connection is a (spurious) wake-up, not an error
        watcher.wait_for_reviews(600)  # listening again: returns at once
        done = threading.Event()
        thread = threading.Thread(target=lambda: (watcher.wait_for_reviews(600), done.set()), daemon=True)
        thread.start()
        worker.create_pending_review("s", policy_action="escalate", reason="r", pending_text="held", candidate={},
                                     verdict=None)
        assert done.wait(120)


FINALIZER = """
import asyncio, json, sys, time
from pathlib import Path
from verigate import Candidate, Gate, Termination, StoreError
from verigate_postgres import PostgresStore

url, worker, go, stop = sys.argv[1], sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4])
REPLY = json.dumps({"passed": True, "score": 1.0, "rubric_misses": [],
                    "reflection": {"observation": "", "lesson": "", "next_check": ""}})

async def judge(request):
    if "review" in request.user:
        raise RuntimeError("the judge is down")  # a verification error: the gate files a pending review
    return REPLY

async def main():
    store = PostgresStore(url, lock_timeout_s=30)
    gate = Gate.from_config({"judge": {"client": "callable"}}, judge_function=judge, store=store,
                            entry_points=False)
    while not go.exists():
        await asyncio.sleep(0.005)
    results = []
    n = 0
    while not stop.exists():
        n += 1
        text = f"{worker} answer {n}" + (" for review" if n % 3 == 0 else "")
        result = await gate.finalize(Candidate(request="do it", final_text=text, session_id=f"{worker}-{n}"),
                                     Termination("natural"))
        results.append({"text": text, "outcome": result.outcome, "pending_id": result.pending_id,
                        "pending_text": result.pending_text, "answer": result.answer})
    gate.close()
    store.close()
    print(json.dumps(results))

asyncio.run(main())
"""


def _finalized(url: str) -> int:
    import psycopg

    with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
        row = conn.execute("SELECT count(*) FROM verigate_sessions").fetchone()
    return int(row[0]) if row else 0


def _until(condition: Callable[[], bool], processes: list[subprocess.Popen[str]]) -> None:
    for _ in range(2400):
        if condition():
            return
        for process in processes:  # a worker that died says why, instead of a bare "no progress" two minutes on
            if process.poll() is not None:
                raise AssertionError(f"a worker exited with {process.returncode}: {process.communicate()[1][-3000:]}")
        time.sleep(0.05)
    raise AssertionError("the workers made no progress")


def _finalize_during(restart: Callable[[], None], url: str, tmp_path: Path, workers: int) -> list[dict[str, Any]]:
    """Workers finalize until told to stop; the restart lands after each made progress and before any stops."""
    go, stop = tmp_path / "go", tmp_path / "stop"
    processes = [subprocess.Popen([sys.executable, "-c", FINALIZER, url, f"w{i}", str(go), str(stop)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(workers)]
    go.touch()
    _until(lambda: _finalized(url) >= 3 * workers, processes)
    restart()
    assert all(process.poll() is None for process in processes)  # mid-run: every worker is still finalizing
    before = _finalized(url)
    _until(lambda: _finalized(url) >= before + 3 * workers, processes)  # and they go on after it
    stop.touch()
    results = []
    for process in processes:
        stdout, stderr = process.communicate(timeout=280)
        assert process.returncode == 0, stderr[-3000:]
        results += json.loads(stdout)
    return results


@pytest.mark.slow
def test_a_server_restart_mid_run_loses_no_pending_review(own_server: Server, tmp_path: Path) -> None:
    assert own_server.owned is not None
    url = own_server.fresh_url()
    PostgresStore(url, lock_timeout_s=10).close()
    results = _finalize_during(own_server.owned.restart, url, tmp_path, workers=4)
    with PostgresStore(url, lock_timeout_s=10) as store:
        stored = {review.review_id: review for review in store.list_reviews()}
        for result in results:
            if "for review" in result["text"]:
                assert result["outcome"] == "pending_review", result
                if result["pending_id"] is not None:  # filed: it is in the database, holding the answer
                    assert stored[result["pending_id"]].pending_text == result["text"]
                else:  # the store could not take it: the caller still holds the candidate
                    assert result["pending_text"] == result["text"]
            else:
                assert result["outcome"] == "completed", result
                assert result["answer"] == result["text"]
        # records are best effort, yet the chain verifies whatever the restart cut short
        assert store.verify_ledger() == len(store.ledger()) > 0
        assert len(stored) == len({r["pending_id"] for r in results if r["pending_id"] is not None})


def _tamper(url: str, pg_server: Server, *statements: str) -> None:
    schema = url.rsplit("%3D", 1)[1]
    with pg_server.admin() as conn:
        conn.execute(f"SET search_path = {schema}")
        conn.execute("ALTER TABLE verigate_ledger DISABLE TRIGGER USER")
        for statement in statements:
            conn.execute(statement)  # type: ignore[arg-type]


TAMPERING = {
    "edited payload": ("UPDATE verigate_ledger SET payload = '{\"n\":99}' WHERE seq = 2", "seq 2"),
    "payload with a repeated key": ("UPDATE verigate_ledger SET payload = '{\"n\":1,\"n\":1}' WHERE seq = 2",
                                    "seq 2"),
    "non-canonical payload": ("UPDATE verigate_ledger SET payload = '{\"n\": 1}' WHERE seq = 2", "seq 2"),
    "edited kind": ("UPDATE verigate_ledger SET kind = 'other' WHERE seq = 3", "seq 3"),
    "edited timestamp": ("UPDATE verigate_ledger SET created_at = '2020-01-01T00:00:00.000000Z' WHERE seq = 1",
                         "seq 1"),
    "malformed hash": ("UPDATE verigate_ledger SET row_hash = 'x' WHERE seq = 4", "seq 4"),
    "deleted row": ("DELETE FROM verigate_ledger WHERE seq = 2", "seq 2"),
    "truncated tail": ("DELETE FROM verigate_ledger WHERE seq = 5", "seq 5"),
    "renumbered row": ("UPDATE verigate_ledger SET seq = 10 WHERE seq = 5", "seq 5"),
}


@pytest.mark.parametrize("name", sorted(TAMPERING))
def test_tampering_by_direct_sql_is_detected(pg_server: Server, pg_url: str, name: str) -> None:
    statement, where = TAMPERING[name]
    with PostgresStore(pg_url, lock_timeout_s=10) as store:
        for n in range(5):
            store.append_ledger("verification_policy", {"n": n})
        assert store.verify_ledger() == 5
        _tamper(pg_url, pg_server, statement)
        with pytest.raises(LedgerTamperedError) as raised:
            store.verify_ledger()
        assert raised.value.field == where


def test_the_ledger_refuses_updates_deletes_and_truncation(pg_server: Server, pg_url: str) -> None:
    import psycopg

    with PostgresStore(pg_url, lock_timeout_s=10) as store:
        store.append_ledger("k", {"n": 1})
    schema = pg_url.rsplit("%3D", 1)[1]
    for statement in ("UPDATE verigate_ledger SET kind = 'x'", "DELETE FROM verigate_ledger",
                      "TRUNCATE verigate_ledger"):
        with pg_server.admin() as conn:
            conn.execute(f"SET search_path = {schema}")
            with pytest.raises(psycopg.Error, match="append-only"):
                conn.execute(statement)  # type: ignore[arg-type]
