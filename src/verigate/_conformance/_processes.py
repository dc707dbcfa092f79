"""Conformance: several processes on one store (the ``store_url`` fixture) — raw writes, real gates, racing reviews.

Sized for a 2-core machine shared with other work: 4 workers × 25 finalizes; ``VERIGATE_STORE_STRESS=N`` multiplies
the workers' rows, finalizes and reviews by N (and doubles the workers for N > 1).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ._support import Fixtures

__all__ = ["ProcessesContract"]

#: each worker waits for the go file so that all of them open and write the store at the same time
_PRELUDE = """
import json, os, sys, time
from pathlib import Path
go, worker, args = Path(sys.argv[1]), sys.argv[2], sys.argv[3:]
url = os.environ["VERIGATE_CONFORMANCE_STORE_URL"]
while not go.exists():
    time.sleep(0.005)
"""

_RAW_WRITER = _PRELUDE + """
from verigate.store import open_store
rows = int(args[0])
store = open_store(url, lock_timeout_s=120)
for n in range(rows):
    store.append_ledger("verification_policy", {"worker": worker, "n": n})
    store.begin_attempt(f"session-{worker}", n, {"worker": worker, "n": n})
    if n % 50 == 0:
        store.create_pending_review("shared", policy_action="escalate", reason="r", pending_text=f"{worker}-{n}",
                                    candidate={}, verdict=None)
store.close()
"""

_RESOLVER = _PRELUDE + """
from verigate import ReviewError
from verigate.store import open_store
store = open_store(url, lock_timeout_s=120)
index = int(worker[1:])
for n, review_id in enumerate(args):
    # half the workers approve, half reject: each review must end one way only, recorded once
    decision = "approved" if (n + index) % 2 else "rejected"
    try:
        review = (store.approve_review if decision == "approved" else store.reject_review)(review_id, by=worker)
        seen = {"status": review.status, "by": review.resolved_by, "at": review.resolved_at}
    except ReviewError as exc:
        seen = {"error": str(exc)}
    print(json.dumps({"review_id": review_id, "tried": decision, **seen}), flush=True)
store.close()
"""

#: a real Gate per worker over the store URL, its judge scripted: n % 3 == 0 passes, 1 fails (a revise), 2 errs
#: (the judge is unavailable: a pending review); every outcome is printed as one JSON line
_GATE_WORKER = _PRELUDE + """
import asyncio
from verigate import Candidate, Gate, JudgeError, Termination, Verdict
from verigate.testing import ScriptedJudge
count, session_of = int(args[0]), args[1]

def step(n):
    failed = Verdict(passed=False, score=0.0, rubric_misses=("tests_missing",), retryable=True)
    return [Verdict(passed=True, score=1.0), failed, JudgeError("judge_timeout")][n % 3]

async def main():
    judge = ScriptedJudge([step(n) for n in range(count)])
    config = {"store": {"url": url, "lock_timeout_s": 120}, "judge": {"engine": "scripted"}}
    with Gate.from_config(config, plugins=[judge]) as gate:
        for n in range(count):
            session = session_of.format(worker=worker, n=n)
            result = await gate.finalize(Candidate(request=f"task {n}", final_text=f"done {worker} {n}",
                                                   session_id=session), Termination("natural"))
            print(json.dumps({"worker": worker, "n": n, "session": session, "outcome": result.outcome,
                              "attempt": result.attempt, "pending_id": result.pending_id,
                              "store_error": result.store_error}), flush=True)

asyncio.run(main())
"""

#: one session driven by several workers at once: each feeds back its own attempt number, as a runtime does, and
#: stops at the first outcome that is not a revise; the judge always fails retryably
_SAME_SESSION = _PRELUDE + """
import asyncio
from verigate import Candidate, Gate, Termination, Verdict
from verigate.testing import ScriptedJudge
session, attempt = args[0], int(args[1])

async def main():
    failed = Verdict(passed=False, score=0.0, rubric_misses=("tests_missing",), retryable=True)
    judge = ScriptedJudge([failed], repeat_last=True)
    config = {"store": {"url": url, "lock_timeout_s": 120}, "judge": {"engine": "scripted"}, "budget": {"revise": 2}}
    with Gate.from_config(config, plugins=[judge]) as gate:
        global attempt
        while True:
            result = await gate.finalize(Candidate(request="one task", final_text=f"try {worker} {attempt}",
                                                   session_id=session, attempt=attempt), Termination("natural"))
            print(json.dumps({"worker": worker, "outcome": result.outcome, "attempt": result.attempt,
                              "action": result.policy_action, "pending_id": result.pending_id,
                              "store_error": result.store_error}), flush=True)
            if result.outcome != "revise":
                return
            attempt = result.attempt + 1

asyncio.run(main())
"""


def _stress() -> int:
    try:
        return max(1, int(os.environ.get("VERIGATE_STORE_STRESS", "1")))
    except ValueError:
        return 1


def _workers() -> int:
    return 8 if _stress() > 1 else 4


def run_workers(code: str, url: str, folder: Path, arguments: Sequence[Sequence[str]],
                timeout_s: float = 600) -> list[list[dict[str, Any]]]:
    """Start one process per argument list, release them together, and return each one's JSON lines."""
    go = folder / f"go-{os.getpid()}-{id(arguments)}"
    # the URL (which may hold a password) in the environment, not in the command line any user of the machine reads
    env = {**os.environ, "VERIGATE_CONFORMANCE_STORE_URL": url}
    workers = [subprocess.Popen([sys.executable, "-c", code, str(go), f"w{index}", *args],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
               for index, args in enumerate(arguments)]
    go.touch()
    outputs = []
    try:
        for worker in workers:
            stdout, stderr = worker.communicate(timeout=timeout_s)
            assert worker.returncode == 0, stderr
            outputs.append([json.loads(line) for line in stdout.splitlines() if line.strip()])
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.wait()
    return outputs


class ProcessesContract(Fixtures):
    def test_concurrent_processes_chain_correctly_and_lose_nothing(self, store_url: str, tmp_path: Path) -> None:
        processes, rows = _workers(), 100 * _stress()
        run_workers(_RAW_WRITER, store_url, tmp_path, [[str(rows)]] * processes)
        store = self.open_url(store_url)
        try:
            assert store.verify_ledger() == processes * rows
            ledger = list(store.ledger())
            assert [row.seq for row in ledger] == list(range(1, processes * rows + 1))
            written = {(row.payload["worker"], row.payload["n"]) for row in ledger}
            assert written == {(f"w{i}", n) for i in range(processes) for n in range(rows)}
            for i in range(processes):
                # each worker's rows keep their own order inside the shared chain
                assert [row.payload["n"] for row in ledger if row.payload["worker"] == f"w{i}"] == list(range(rows))
                assert store.attempts(f"session-w{i}") == [{"worker": f"w{i}", "n": n} for n in range(rows)]
                session = store.get_session(f"session-w{i}")
                assert session is not None and session.attempt == rows - 1
            assert len(store.list_reviews("pending")) == processes * len(range(0, rows, 50))
        finally:
            store.close()

    def test_processes_opening_a_fresh_store_at_once_all_succeed(self, store_url: str, tmp_path: Path) -> None:
        """Hook invocations start together on a new project: only one creates the schema, none fails."""
        processes = _workers()
        run_workers(_RAW_WRITER, store_url, tmp_path, [["3"]] * processes)
        store = self.open_url(store_url)
        try:
            assert store.verify_ledger() == processes * 3
        finally:
            store.close()

    def test_racing_resolutions_decide_each_review_exactly_once(self, store_url: str, tmp_path: Path) -> None:
        store = self.open_url(store_url)
        try:
            ids = [store.create_pending_review(f"s{n}", policy_action="escalate", reason="r", pending_text=str(n),
                                               candidate={}, verdict=None) for n in range(20 * _stress())]
        finally:
            store.close()
        seen = [line for lines in run_workers(_RESOLVER, store_url, tmp_path, [ids] * _workers()) for line in lines]
        store = self.open_url(store_url)
        try:
            assert store.verify_ledger() == len(ids)  # one resolution row per review, however many tried
            recorded = {row.payload["review_id"]: row.payload for row in store.ledger()}
            assert sorted(recorded) == sorted(ids)
            for review_id in ids:
                review = store.get_review(review_id)
                winner = recorded[review_id]
                assert (review.status, review.resolved_by) == (winner["decision"], winner["by"])
                session = store.get_session(review.session_id)
                assert session is not None
                assert session.state == ("completed" if review.status == "approved" else "ended")
                assert store.timeline(review.session_id)[-1].payload["decision"] == review.status
                # the others see the winner: the same decision returns the winner's review, the other is refused
                for attempt in (line for line in seen if line["review_id"] == review_id):
                    if attempt["tried"] == review.status:
                        assert (attempt["status"], attempt["by"], attempt["at"]) == (
                            review.status, review.resolved_by, review.resolved_at), attempt
                    else:
                        assert f"already {review.status}" in attempt["error"], attempt
        finally:
            store.close()

    def test_many_gates_on_one_store_lose_nothing(self, store_url: str, tmp_path: Path) -> None:
        """Real Gates in several processes finalize at once: every outcome is recorded, every pending review is
        there, one ledger row per finalize, the chain verifies."""
        finalizes = 25 * _stress()
        outputs = run_workers(_GATE_WORKER, store_url, tmp_path, [[str(finalizes), "{worker}-{n}"]] * _workers())
        results = [line for lines in outputs for line in lines]
        assert len(results) == _workers() * finalizes
        assert [line["store_error"] for line in results] == [None] * len(results)
        expected = {0: "completed", 1: "revise", 2: "pending_review"}
        assert [line for line in results if line["outcome"] != expected[line["n"] % 3]] == []
        store = self.open_url(store_url)
        try:
            ledger = list(store.ledger())
            assert store.verify_ledger() == len(results)
            assert Counter(row.kind for row in ledger) == {"verification_policy": len(results)}
            pending = {review.review_id: review for review in store.list_reviews("pending")}
            held = [line for line in results if line["outcome"] == "pending_review"]
            assert sorted(pending) == sorted(line["pending_id"] for line in held)
            for line in held:
                assert pending[line["pending_id"]].session_id == line["session"]
                assert pending[line["pending_id"]].pending_text == f"done {line['worker']} {line['n']}"
            for line in results:
                session = store.get_session(line["session"])
                assert session is not None
                assert session.state == {"completed": "completed", "revise": "running",
                                         "pending_review": "paused"}[line["outcome"]]
                kinds = [row.kind for row in store.timeline(line["session"])]
                assert kinds.count("verdict") == 1 and kinds.count("evidence") == 1, kinds
        finally:
            store.close()

    def test_the_revise_budget_holds_across_processes(self, store_url: str, tmp_path: Path) -> None:
        """A revise counted by one process counts for the next: a process that starts the session's next
        attempt at 0 gets the stored counter, and the third attempt is refused whoever makes it."""
        one_turn = _SAME_SESSION.replace("attempt = result.attempt + 1", "return")
        assert one_turn != _SAME_SESSION
        turns: list[dict[str, Any]] = []
        for _ in range(3):  # three processes one after another, each starting the session's attempt at 0
            turns += run_workers(one_turn, store_url, tmp_path, [["shared", "0"]])[0]
        assert [(t["outcome"], t["attempt"], t["action"]) for t in turns] == [
            ("revise", 0, "revise"), ("revise", 1, "revise"), ("pending_review", 2, "escalate_budget_exhausted")]
        store = self.open_url(store_url)
        try:
            assert [review.review_id for review in store.list_reviews("pending")] == [turns[-1]["pending_id"]]
            assert store.verify_ledger() == 3
        finally:
            store.close()

    def test_one_session_from_several_processes_at_once(self, store_url: str, tmp_path: Path) -> None:
        """Workers racing on one session never revise past the budget; each ends held for review; nothing lost."""
        outputs = run_workers(_SAME_SESSION, store_url, tmp_path, [["shared", "0"]] * 2 * _stress())
        results = [line for lines in outputs for line in lines]
        assert [line["store_error"] for line in results] == [None] * len(results)
        for lines in outputs:
            assert [line["outcome"] for line in lines][-1] == "pending_review"
            assert all(line["outcome"] == "revise" for line in lines[:-1])
            attempts = [line["attempt"] for line in lines]
            assert attempts == sorted(set(attempts))  # each worker's attempts only go up
        assert all(line["attempt"] < 2 for line in results if line["outcome"] == "revise")
        assert all(line["action"] == "escalate_budget_exhausted" for line in results
                   if line["outcome"] == "pending_review")
        store = self.open_url(store_url)
        try:
            assert store.verify_ledger() == len(results)
            assert sorted(review.review_id for review in store.list_reviews("pending")) == sorted(
                line["pending_id"] for line in results if line["outcome"] == "pending_review")
            session = store.get_session("shared")
            assert session is not None and session.attempt <= 2
        finally:
            store.close()
