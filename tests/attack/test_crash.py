"""Attack: processes sharing one store are killed with SIGKILL in the middle of their work. What was stored stays
stored (every pending review a worker was told about is there), the ledger still verifies, and the store keeps
working for the processes that were not killed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from verigate.store import SqliteStore

#: a worker: finalize in a loop against the shared store with a judge whose reply is no verdict (so every run
#: files a pending review), printing each review id once finalize has returned it
WORKER = r"""
import asyncio, sys
from verigate import Candidate, Gate, Termination

async def main(store, name, count):
    with Gate.from_config({"judge": {"client": "callable"}}, store=store,
                          judge_function=lambda request: "not a verdict") as gate:
        for number in range(count):
            candidate = Candidate(request="fix it", final_text=f"{name} answer {number}",
                                  session_id=f"{name}-{number}", contains_personal_data=False)
            result = await gate.finalize(candidate, Termination("natural"))
            print(result.pending_id or "NONE", flush=True)

asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
"""


def test_sigkill_mid_write_loses_nothing_stored_and_the_ledger_verifies(tmp_path: Path) -> None:
    path = tmp_path / "verigate.db"
    SqliteStore(path).close()  # created once, so the workers race on writes, not on the schema
    workers = {
        name: subprocess.Popen([sys.executable, "-c", WORKER, str(path), name, "400"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
        for name in ("w1", "w2", "w3", "w4")
    }
    time.sleep(2.0)
    for name in ("w1", "w3"):  # killed wherever they are: inside a transaction, between writes, in the judge
        os.killpg(workers[name].pid, signal.SIGKILL)
    told: list[str] = []
    for name, process in workers.items():
        out, err = process.communicate(timeout=300)
        if name in ("w2", "w4"):
            assert process.returncode == 0, err
        else:
            assert process.returncode == -signal.SIGKILL
        told += [line for line in out.splitlines() if line.strip()]
    assert told and "NONE" not in told  # every run filed its review in the store
    with SqliteStore(path) as store:
        stored = {review.review_id for review in store.list_reviews("pending")}
        assert set(told) <= stored  # a review a worker was told about is never lost
        rows = store.verify_ledger()
    assert rows >= len(told)
    verified = subprocess.run([sys.executable, "-m", "verigate", "ledger", "verify", "--store", str(path), "--json"],
                              capture_output=True, text=True, timeout=120, check=False)
    assert verified.returncode == 0, verified.stderr
    assert json.loads(verified.stdout)["rows"] == rows
