"""Store throughput: ledger appends/s and begin_attempt/s against bare sqlite3 inserts measured in the same run.

Usage: python benchmarks/bench_store.py [--rows N] [--dir FOLDER] [--quick]

Both sides use one file in WAL mode and one BEGIN IMMEDIATE transaction per row, first with the store's default
durability (synchronous NORMAL: these writes are not flushed one by one) and then with ``sync_every_write``
(synchronous FULL: an fsync per commit), so the ratio shows what the store adds — canonical JSON, the hash
chain (reading the last row, sha256, updating the recorded head), the session upsert, error mapping — and the
second table shows what flushing every write costs on this disk.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from verigate.store import SqliteStore

PAYLOAD = {"action": "accept", "attempt": 0, "reason": "passed", "session_id": "bench", "verdict": {"passed": True,
           "confidence": 0.93, "missing": []}}
CANDIDATE = {"text": "All 12 tests pass; the fix is in parser.py.", "termination": {"reason": "natural"},
             "tool_calls": [{"name": "Bash", "input": {"command": "pytest -q"}, "output": "12 passed"}]}
Write = Callable[[int], object]


def _rate(rows: int, write: Write) -> float:
    start = time.perf_counter()
    for n in range(rows):
        write(n)
    return rows / (time.perf_counter() - start)


def _bare_rate(path: Path, rows: int, payload: object, synchronous: str) -> float:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute(f"PRAGMA synchronous = {synchronous}")
    conn.execute("CREATE TABLE rows (seq INTEGER PRIMARY KEY, kind TEXT, payload TEXT, created_at TEXT)")

    def write(n: int) -> None:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO rows (seq, kind, payload, created_at) VALUES (?, ?, ?, ?)",
                     (n + 1, "k", json.dumps(payload), "2026-01-01T00:00:00.000000Z"))
        conn.execute("COMMIT")

    try:
        return _rate(rows, write)
    finally:
        conn.close()


OPERATIONS: tuple[tuple[str, object, Callable[[SqliteStore], Write]], ...] = (
    ("ledger append", PAYLOAD, lambda store: lambda n: store.append_ledger("verification_policy", PAYLOAD)),
    ("begin_attempt", CANDIDATE, lambda store: lambda n: store.begin_attempt(f"session-{n % 50}", n, CANDIDATE)),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--dir", type=Path, default=None, help="where to put the files (default: a temp folder)")
    parser.add_argument("--quick", action="store_true", help="a smoke run (50 rows)")
    args = parser.parse_args()
    if args.quick:
        args.rows = 50
    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        base = Path(folder)
        print(f"rows per measurement: {args.rows}; files in {base} (sqlite {sqlite3.sqlite_version})")
        for sync_every_write, synchronous in ((False, "NORMAL"), (True, "FULL")):
            rows = args.rows if not sync_every_write else max(1, args.rows // 10)  # fsyncs are slow
            print(f"\nsync_every_write={sync_every_write} (bare: synchronous {synchronous}), {rows} rows")
            print(f"{'operation':<15} {'store rows/s':>13} {'bare rows/s':>12} {'store/bare':>11}")
            for name, payload, measure in OPERATIONS:
                label = f"{name}-{synchronous}"
                bare_rate = _bare_rate(base / f"bare-{label}.db", rows, payload, synchronous)
                with SqliteStore(base / f"store-{label}.db", sync_every_write=sync_every_write) as store:
                    store_rate = _rate(rows, measure(store))
                print(f"{name:<15} {store_rate:>13,.0f} {bare_rate:>12,.0f} {store_rate / bare_rate:>11.2f}")
        with SqliteStore(base / "store-ledger append-NORMAL.db") as store:
            start = time.perf_counter()
            count = store.verify_ledger()
            print(f"\nverify_ledger: {count / (time.perf_counter() - start):,.0f} rows/s re-hashed ({count} rows)")


if __name__ == "__main__":
    main()
