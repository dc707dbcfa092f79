"""What the work on the overhead of a finalize must keep: the worker-thread hop promises what ``asyncio.to_thread``
promised (``verigate.gate._offloop``), and the records are the same."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Mapping
from typing import Any

import pytest

from verigate import Candidate, Gate, Termination
from verigate.gate._offloop import off_loop
from verigate.store import SqliteStore

NATURAL = Termination("natural")
_SEEN: contextvars.ContextVar[str] = contextvars.ContextVar("test_offloop_seen", default="unset")


def test_the_function_runs_off_the_event_loop_in_a_copy_of_the_callers_context() -> None:
    async def main() -> tuple[str, bool, str]:
        _SEEN.set("caller")

        def inside() -> tuple[str, bool]:
            seen = _SEEN.get()
            _SEEN.set("worker")  # a copy: the caller's value stays
            return seen, threading.current_thread() is threading.main_thread()

        seen, on_main = await off_loop(inside)
        return seen, on_main, _SEEN.get()

    assert asyncio.run(main()) == ("caller", False, "caller")


@pytest.mark.parametrize("raised", [ValueError("store bug"), SystemExit(3), KeyboardInterrupt()])
def test_whatever_the_function_raises_is_raised_in_the_awaiting_coroutine(raised: BaseException) -> None:
    def fail() -> None:
        raise raised

    async def main() -> None:
        await off_loop(fail)

    with pytest.raises(type(raised)):
        asyncio.run(main())


class SlowBeginStore(SqliteStore):
    """A real SQLite store whose ``begin_attempt`` starts, then waits before writing (a busy store)."""

    def __init__(self) -> None:
        super().__init__(":memory:")
        self.entered = threading.Event()
        self.written = threading.Event()

    def begin_attempt(self, session_id: str, attempt: int, candidate: Mapping[str, Any]) -> None:
        self.entered.set()
        threading.Event().wait(0.3)
        super().begin_attempt(session_id, attempt, candidate)
        self.written.set()


def test_a_finalize_cancelled_during_a_store_write_stops_at_once_and_asyncio_run_waits_for_the_write() -> None:
    store = SlowBeginStore()
    gate = Gate.from_config({"judge": {"client": "callable"}}, judge_function=lambda request: "{}", store=store,
                            entry_points=False)

    async def main() -> None:
        task = asyncio.ensure_future(gate.finalize(Candidate(request="r", final_text="done", session_id="s1"),
                                                   NATURAL))
        while not store.entered.is_set():
            await asyncio.sleep(0.005)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not store.written.is_set()  # the caller did not wait for the write

    try:
        asyncio.run(main())
        # as with asyncio.to_thread, the loop's shutdown waited for the write in flight
        assert [stored["final_text"] for stored in store.attempts("s1")] == ["done"]
    finally:
        gate.close()
        store.close()


def test_the_ledger_row_hashes_the_stored_candidate_as_json_dumps_does(tmp_path: Any) -> None:
    """``candidate_sha256`` (whose encoder is built once) stays sha256 of ``json.dumps(sort_keys, no ASCII
    escaping)`` of the candidate as stored, here read back from the pending review that holds it."""
    import hashlib
    import json

    gate = Gate.from_config({}, store=str(tmp_path / "v.db"), entry_points=False)  # no judge: a pending review
    try:
        result = asyncio.run(gate.finalize(Candidate(request="Fix ünïcode", final_text="done — 3 passed ✓",
                                                     session_id="s1", usage={"b": 2, "a": 1}), NATURAL))
        assert result.outcome == "pending_review" and result.pending_id
        stored = gate.store.get_review(result.pending_id).candidate
        expected = hashlib.sha256(json.dumps(stored, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()
        assert [row.payload["candidate_sha256"] for row in gate.store.ledger()] == [expected]
    finally:
        gate.close()
