"""Store throughput: ledger appends/s and begin_attempt/s against bare sqlite3 inserts measured in the same run.

Usage: python benchmarks/bench_store.py [--rows N] [--dir FOLDER]

Both sides use one file in WAL mode with SQLite's default (FULL) synchronous setting and one BEGIN IMMEDIATE
transaction per row, so the ratio shows what the store adds: canonical JSON, the hash chain (reading the last
row, sha256, updating the recorded head), the session upsert and error mapping.
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


def _rate(rows: int, write: Callable[[int], object]) -> float:
    start = time.perf_counter()
    for n in range(rows):
        write(n)
    return rows / (time.perf_counter() - start)


def _bare(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE rows (seq INTEGER PRIMARY KEY, kind TEXT, payload TEXT, created_at TEXT)")
    return conn


def _bare_insert(conn: sqlite3.Connection, payload: object) -> Callable[[int], object]:
    def write(n: int) -> None:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO rows (seq, kind, payload, created_at) VALUES (?, ?, ?, ?)",
                     (n + 1, "k", json.dumps(payload), "2026-01-01T00:00:00.000000Z"))
        conn.execute("COMMIT")

    return write


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--dir", type=Path, default=None, help="where to put the files (default: a temp folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        base = Path(folder)
        results = []
        for name, payload, measure in (
            ("ledger append", PAYLOAD, lambda s: lambda n: s.append_ledger("verification_policy", PAYLOAD)),
            ("begin_attempt", CANDIDATE, lambda s: lambda n: s.begin_attempt(f"session-{n % 50}", n, CANDIDATE)),
        ):
            bare = _bare(base / f"bare-{name}.db")
            bare_rate = _rate(args.rows, _bare_insert(bare, payload))
            bare.close()
            with SqliteStore(base / f"store-{name}.db") as store:
                store_rate = _rate(args.rows, measure(store))
            results.append((name, store_rate, bare_rate))
        with SqliteStore(base / "store-ledger append.db") as store:
            verify_start = time.perf_counter()
            store.verify_ledger()
            verify_rate = args.rows / (time.perf_counter() - verify_start)
        print(f"rows per measurement: {args.rows}; files in {base} (sqlite {sqlite3.sqlite_version})")
        print(f"{'operation':<15} {'store rows/s':>13} {'bare rows/s':>12} {'store/bare':>11}")
        for name, store_rate, bare_rate in results:
            print(f"{name:<15} {store_rate:>13,.0f} {bare_rate:>12,.0f} {store_rate / bare_rate:>11.2f}")
        print(f"verify_ledger   {verify_rate:>13,.0f} rows/s re-hashed")


if __name__ == "__main__":
    main()
