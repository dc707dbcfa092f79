"""Finalizes per second with 1, 4 and 16 worker processes on one store: PostgreSQL against SQLite, same workers.

Usage: python benchmarks/bench_store_workers.py [--workers 1,4,16] [--finalizes N] [--url postgresql://…]
       [--synchronous-commit on|off] [--quick]

Each worker is a process with its own Gate (the instant in-process judge of bench_finalize.py, so the store is what
differs) and its own store connection: for SQLite one shared file (WAL, the store's default durability), for
PostgreSQL one shared schema on a server this script starts itself (``verigate_postgres.testing``: initdb into a
temporary folder, 127.0.0.1 only, the server's default ``fsync=on`` and ``synchronous_commit=on``) or on the
server ``--url`` names (a fresh schema, dropped at the end). SQLite's default does not flush each commit (WAL,
``synchronous=NORMAL``); PostgreSQL's does, and ``--synchronous-commit off`` measures it without that flush (the
server then may lose the last commits in a crash of its own, never consistency). The workers get ready, then
start together; the rate is all their finalizes over the time from the start to the last one's end. Nothing is
asserted: the ratio PostgreSQL / SQLite is the result, and it depends on the machine (on one host SQLite's file
lock is cheap; the point of PostgreSQL is many hosts).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

REPLY = json.dumps({"passed": True, "score": 1.0, "rubric_misses": [],
                    "reflection": {"observation": "", "lesson": "", "next_check": ""}})


async def _worker(url: str, name: str, finalizes: int, ready: Path, go: Path) -> None:
    from verigate import Candidate, Gate, Termination, ToolObservation
    from verigate.store import open_store

    async def judge(request: object) -> str:
        return REPLY

    store = open_store(url, lock_timeout_s=120)  # postgresql:// through the plug-in's store-backend hook
    gate = Gate.from_config({"judge": {"client": "callable"}}, judge_function=judge, store=store, entry_points=False)
    natural = Termination("natural")

    def candidate(index: int) -> Candidate:
        return Candidate(request=f"Fix test_add_{index} in calc.py and run the suite.",
                         final_text=f"Fixed calc.add() for case {index}; the suite passes: 12 passed.",
                         tool_calls=(ToolObservation("Bash", {"command": f"pytest -q -k {index}"}, "12 passed", True),),
                         session_id=f"{name}-{index}", contains_personal_data=False)

    await gate.finalize(candidate(-1), natural)  # warm: the first call builds what later calls reuse
    ready.touch()
    while not go.exists():
        await asyncio.sleep(0.001)
    for index in range(finalizes):
        result = await gate.finalize(candidate(index), natural)
        if result.outcome != "completed":
            raise SystemExit(f"finalize ended {result.outcome}: {result.store_error or result.policy_action}")
    print(time.monotonic())  # CLOCK_MONOTONIC is one clock for every process of the machine
    gate.close()
    store.close()


def _rate(url: str, workers: int, finalizes: int, folder: Path) -> float:
    """Finalizes per second of ``workers`` processes started together on the store at ``url``."""
    run = folder / uuid.uuid4().hex
    run.mkdir()
    go = run / "go"
    readies = [run / f"ready-{n}" for n in range(workers)]
    processes = [subprocess.Popen([sys.executable, __file__, "--worker", url, f"w{n}", str(finalizes), str(ready),
                                   str(go)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for n, ready in enumerate(readies)]
    try:
        while not all(ready.exists() for ready in readies):
            if any(process.poll() is not None for process in processes):
                break
            time.sleep(0.01)
        start = time.monotonic()
        go.touch()
        ends = []
        for process in processes:
            stdout, stderr = process.communicate(timeout=1800)
            if process.returncode != 0:
                raise SystemExit(f"a worker failed:\n{stderr[-3000:]}")
            ends.append(float(stdout.strip().splitlines()[-1]))
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
    return workers * finalizes / (max(ends) - start)


@contextmanager
def _postgres(url: str | None) -> Iterator[tuple[str | None, str]]:
    """(a superuser URL of a server, or None with the reason it is unavailable)."""
    if url is not None:
        yield url, ""
        return
    try:
        from verigate_postgres.testing import PostgresUnavailable, TemporaryServer
    except ImportError as exc:
        yield None, f"verigate-agents-postgres is not installed ({exc})"
        return
    try:
        server = TemporaryServer(fsync=True)
    except PostgresUnavailable as exc:
        yield None, str(exc)
        return
    with server:
        yield server.url(), ""


def _fresh_schema(url: str, synchronous_commit: str) -> tuple[str, str]:
    import psycopg

    schema = "bench_" + uuid.uuid4().hex[:12]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")  # type: ignore[arg-type]  # a name made here
    joiner = "&" if "?" in url else "?"
    options = f"-c search_path={schema} -c synchronous_commit={synchronous_commit}"
    return schema, f"{url}{joiner}options={quote(options, safe='')}"


def _drop_schema(url: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")  # type: ignore[arg-type]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", default="1,4,16", help="worker counts, comma-separated (default 1,4,16)")
    parser.add_argument("--finalizes", type=int, default=100, help="finalizes per worker (default 100)")
    parser.add_argument("--url", default=None, help="a PostgreSQL superuser URL (default: start a server here)")
    parser.add_argument("--synchronous-commit", choices=("on", "off"), default="on",
                        help="PostgreSQL's synchronous_commit for the workers (default on, the server's default)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 1 and 2 workers, 3 finalizes each")
    parser.add_argument("--worker", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        url, name, finalizes, ready, go = args.worker
        asyncio.run(_worker(url, name, int(finalizes), Path(ready), Path(go)))
        return
    counts = [1, 2] if args.quick else [int(part) for part in args.workers.split(",")]
    finalizes = 3 if args.quick else args.finalizes
    with tempfile.TemporaryDirectory() as temporary, _postgres(args.url) as (server, unavailable):
        folder = Path(temporary)
        where = f"{server.split('@')[-1]}, synchronous_commit={args.synchronous_commit}" if server else unavailable
        print(f"{finalizes} finalizes per worker; PostgreSQL: {where}")
        print(f"{'workers':>7} {'SQLite finalizes/s':>19} {'PostgreSQL finalizes/s':>23} {'PostgreSQL/SQLite':>18}")
        for workers in counts:
            sqlite = _rate(str(folder / f"sqlite-{workers}.db"), workers, finalizes, folder)
            if server is None:
                print(f"{workers:>7} {sqlite:>19,.1f} {'n/a':>23} {'n/a':>18}")
                continue
            schema, url = _fresh_schema(server, args.synchronous_commit)
            try:
                postgres = _rate(url, workers, finalizes, folder)
            finally:
                _drop_schema(server, schema)
            print(f"{workers:>7} {sqlite:>19,.1f} {postgres:>23,.1f} {postgres / sqlite:>18.2f}")


if __name__ == "__main__":
    main()
