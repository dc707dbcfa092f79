"""How much the gate adds to one judge call: µs per finalize vs the bare judge, measured in the same run.

Run: ``.venv/bin/python benchmarks/bench_finalize.py [--iterations N] [--rounds N] [--quick]``. Nothing is
asserted; it prints ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

from bench_peers import answer_text  # the 4 KB answer of bench_peers row 1 (this folder is on sys.path)

from verigate import Candidate, Gate, Termination, ToolObservation
from verigate.gate import unstructure
from verigate.gate._offloop import off_loop
from verigate.judge import ChatRequest, JudgeRequest
from verigate.store import open_store

REPLY = json.dumps({"passed": True, "score": 1.0, "rubric_misses": [],
                    "reflection": {"observation": "", "lesson": "", "next_check": ""}})


async def judge_function(request: ChatRequest) -> str:
    """The runtime's own (in-process, instant) model call."""
    return REPLY


def candidate(index: int) -> Candidate:
    """Texts differ per call, as they do in real runs (the gate remembers the redaction of short recurring texts:
    identical candidates would measure that memory, not redaction); tool names and input keys recur."""
    return Candidate(
        request=f"Fix the failing test test_add_{index} in calc.py and run the test suite.",
        final_text=f"Fixed calc.add() for case {index}; the suite passes: 12 passed.",
        tool_calls=(ToolObservation("Edit", {"path": f"calc_{index}.py"}, "ok", True),
                    ToolObservation("Bash", {"command": f"pytest -q -k {index}"}, f"12 passed in 0.{index}s",
                                    True)),
        session_id=f"bench-{index}",
        contains_personal_data=False,
    )


Operation = Callable[[int], Awaitable[object]]


async def per_call_us(operations: Mapping[str, tuple[Operation, int]], rounds: int) -> dict[str, float]:
    """µs per call of each operation: the best of ``rounds`` rounds of its iteration count. The operations take
    turns within every round, so a busy phase of the (shared) machine slows all of them alike; other processes
    only ever add time, so the fastest round is the closest to the code's own cost."""
    calls = 0
    for operation, _ in operations.values():
        for _ in range(20):
            calls += 1
            await operation(-calls)
    best = dict.fromkeys(operations, float("inf"))
    for _ in range(rounds):
        for name, (operation, iterations) in operations.items():
            start = time.perf_counter()
            for _ in range(iterations):
                calls += 1
                await operation(calls)
            best[name] = min(best[name], (time.perf_counter() - start) / iterations * 1e6)
    return best


async def bench(iterations: int, folder: Path, rounds: int | None = None) -> None:
    config = {"judge": {"client": "callable"}}
    memory = Gate.from_config(config, judge_function=judge_function, store=":memory:", entry_points=False)
    sqlite = Gate.from_config(config, judge_function=judge_function, store=str(folder / "bench.db"),
                              entry_points=False)
    engine = memory.judge
    assert engine is not None
    chat = ChatRequest(system="judge", user="candidate")
    request = JudgeRequest(candidate=candidate(0))
    natural = Termination("natural")

    async def bare_function(_: int) -> object:
        return await judge_function(chat)

    async def bare_engine(_: int) -> object:
        return await engine.judge(request, timeout_s=120)

    async def redact_candidate(index: int) -> object:
        return memory.egress.candidate(candidate(index))

    records_store = open_store(":memory:")
    stored = unstructure(candidate(0))

    async def store_writes(index: int) -> object:
        """The store calls one completed finalize makes, with payloads of the same shape, on a :memory: store."""
        session = f"store-{index}"
        records_store.get_session(session)
        records_store.begin_attempt(session, 0, stored)
        records_store.append_timeline(session, "verdict", {"attempt": 0, "verdict": {"passed": True}})
        records_store.append_timeline(session, "evidence", {"attempt": 0, "hook_records": []})
        records_store.append_ledger("verification_policy", {"session_id": session, "policy_action": "accept"})
        records_store.attempts(session)
        records_store.save_checkpoint(session, {"kind": "completed", "answer": stored["final_text"]})
        records_store.reset_request(session)
        records_store.set_session_state(session, "completed")
        return session

    def nothing() -> None:
        return None

    async def hop(_: int) -> object:
        """One worker-thread hop of a finalize (store I/O never runs on the event loop), with no work in it."""
        return await off_loop(nothing)

    async def finalize_memory(index: int) -> object:
        result = await memory.finalize(candidate(index), natural)
        assert result.outcome == "completed", result
        return result

    async def finalize_4k(index: int) -> object:
        """bench_peers row 1: a 4 KB answer, no tool calls."""
        result = await memory.finalize(Candidate(request="Fix the failing parser test.", final_text=answer_text(index),
                                                 session_id=f"bench-4k-{index}", contains_personal_data=False), natural)
        assert result.outcome == "completed", result
        return result

    async def finalize_sqlite(index: int) -> object:
        return await sqlite.finalize(candidate(index), natural)

    rounds = rounds or max(7, 3000 // iterations)
    measured = await per_call_us({
        "function": (bare_function, iterations), "engine": (bare_engine, iterations),
        "redact": (redact_candidate, iterations), "store": (store_writes, iterations), "hop": (hop, iterations),
        "memory": (finalize_memory, iterations), "4k": (finalize_4k, iterations),
        "sqlite": (finalize_sqlite, max(10, iterations // 20)),
    }, rounds)
    function_us, engine_us, redact_us, store_us, hop_us, memory_us, memory_4k_us, sqlite_us = (
        measured[name] for name in ("function", "engine", "redact", "store", "hop", "memory", "4k", "sqlite"))
    memory.close()
    sqlite.close()
    records_store.close()
    rows = [
        ("bare judge function call", function_us),
        ("bare judge engine call (llm_judge over callable)", engine_us),
        ("redaction of the candidate (default packs)", redact_us),
        ("the store calls of one finalize (:memory:)", store_us),
        ("one worker-thread hop, nothing in it (finalize: 2)", hop_us),
        ("finalize, :memory: store", memory_us),
        ("finalize, :memory:, 4 KB answer (bench_peers 1)", memory_4k_us),
        ("finalize, SQLite file store", sqlite_us),
    ]
    for label, micros in rows:
        print(f"{label:50s} {micros:10.1f} µs   {micros / engine_us:7.2f}x the engine call")
    overhead = memory_us - engine_us
    rest = overhead - redact_us - store_us - 2 * hop_us
    print(f"gate overhead per finalize (:memory: store): {overhead:.1f} µs = {redact_us:.1f} redaction + "
          f"{store_us:.1f} store calls + {2 * hop_us:.1f} two hops + {rest:.1f} the chain itself")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=None, help="default: max(7, 3000 // iterations)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 5 iterations, 2 rounds")
    args = parser.parse_args()
    iterations, rounds = (5, 2) if args.quick else (args.iterations, args.rounds)
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(bench(iterations, Path(folder), rounds))


if __name__ == "__main__":
    main()
