"""The JSONL store: valid lines, torn and invalid lines reported, many writers at once, the fold's invariants."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verigate import InputError, StoreError
from verigate.selfgate import Cursor, GateEntry, GateStore, fold, gate_id
from verigate.selfgate._entries import now_iso


def opening(session: str, text: str, key: str = "uuid-1") -> GateEntry:
    return GateEntry(ts=now_iso(), session_id=session, gate_id=gate_id(session, key, text), gate_text=text,
                     status="open", opened_by="ai")


def closing(entry: GateEntry, by_human: bool = True) -> GateEntry:
    return GateEntry(ts=now_iso(), session_id=entry.session_id, gate_id=entry.gate_id, gate_text=entry.gate_text,
                     status="closed", closed_by="human" if by_human else None,
                     closed_reason="test" if by_human else None, channel="cli")


def test_gate_id_is_stable_and_distinct() -> None:
    assert gate_id("s", "u", "Step 3 は再承認") == gate_id("s", "u", "Step 3 は再承認")
    assert len({gate_id("s", "u", "a"), gate_id("t", "u", "a"), gate_id("s", "v", "a"), gate_id("s", "u", "b")}) == 4


def test_append_read_and_schema(tmp_path: Path) -> None:
    store = GateStore(tmp_path / "gates.jsonl")
    entry = opening("s1", "I'll wait for your approval")
    closed = closing(entry)
    store.append([entry, closed])
    snapshot = store.read()
    assert snapshot.problems == () and snapshot.entries == (entry, closed)
    with pytest.raises(InputError):  # a closed entry without its reason violates the schema and is not written
        store.append([GateEntry(ts=now_iso(), session_id="s1", gate_id=entry.gate_id, gate_text="", status="closed",
                                closed_by="human", channel="cli")])
    assert len(store.read().entries) == 2


def test_torn_last_line_is_reported_then_sealed(tmp_path: Path) -> None:
    store = GateStore(tmp_path / "gates.jsonl")
    first = opening("s1", "first")
    store.append([first])
    with store.path.open("ab") as handle:
        handle.write(b'{"ts": "2026-01-01T00:00:00', )  # a writer died mid-line
    snapshot = store.read()
    assert [entry.gate_id for entry in snapshot.entries] == [first.gate_id]
    assert len(snapshot.problems) == 1 and "torn" in snapshot.problems[0].reason and snapshot.problems[0].line == 2
    second = opening("s1", "second")
    store.append([second])  # seals the torn fragment as its own line instead of gluing onto it
    snapshot = store.read()
    assert [entry.gate_id for entry in snapshot.entries] == [first.gate_id, second.gate_id]
    assert [problem.line for problem in snapshot.problems] == [2] and "not JSON" in snapshot.problems[0].reason


def test_invalid_lines_are_reported_not_dropped_silently(tmp_path: Path) -> None:
    store = GateStore(tmp_path / "gates.jsonl")
    store.path.write_text('{"status": "closed"}\n[1]\n', encoding="utf-8")
    snapshot = store.read()
    assert snapshot.entries == () and [problem.line for problem in snapshot.problems] == [1, 2]


def _writer(path: str, worker: int, count: int) -> None:
    store = GateStore(path)
    for index in range(count):
        entry = opening(f"s{worker % 3}", f"gate {worker}-{index}", key=f"k{worker}-{index}")
        store.append([entry, closing(entry)] if index % 2 else [entry])


def test_many_processes_append_at_once(tmp_path: Path) -> None:
    path = str(tmp_path / "gates.jsonl")
    workers, count = 6, 15
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=_writer, args=(path, worker, count)) for worker in range(workers)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(60)
        assert process.exitcode == 0
    snapshot = GateStore(path).read()
    assert snapshot.problems == ()
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        json.loads(line)
    state = fold(snapshot.entries)
    assert len(state.gates) == workers * count
    assert sum(gate.is_open for gate in state.gates) == workers * ((count + 1) // 2)


def test_lock_timeout_is_a_store_error(tmp_path: Path) -> None:
    holder = GateStore(tmp_path / "gates.jsonl")
    waiter = GateStore(tmp_path / "gates.jsonl")
    with holder.locked(), pytest.raises(StoreError, match="locked"), waiter.locked(timeout_s=0.05):
        pass


def test_cursor_round_trip_and_garbage(tmp_path: Path) -> None:
    store = GateStore(tmp_path / "gates.jsonl")
    assert store.read_cursor("s", "/t.jsonl") == Cursor()
    store.write_cursor("s", "/t.jsonl", Cursor(10, 2, 1, 2, "ab"))
    assert store.read_cursor("s", "/t.jsonl") == Cursor(10, 2, 1, 2, "ab")
    next((store.state_dir / "cursors").iterdir()).write_text("{broken")
    assert store.read_cursor("s", "/t.jsonl") == Cursor()  # a lost cursor only costs a rescan


events = st.lists(st.tuples(st.sampled_from(["s1", "s2"]), st.integers(0, 4),
                            st.sampled_from(["open", "human", "ai-claim", "request"])), max_size=30)


@settings(max_examples=60, deadline=None)
@given(events, st.randoms(use_true_random=False))
def test_fold_invariants(script: list[tuple[str, int, str]], random: object) -> None:
    """Open iff an open entry and a human closed entry exist; order-independent; others never close."""
    entries = []
    for session, number, kind in script:
        base = opening(session, f"gate {number}", key=str(number))
        if kind == "open":
            entries.append(base)
        elif kind == "human":
            entries.append(closing(base))
        elif kind == "ai-claim":
            entries.append(closing(base, by_human=False))
        else:
            entries.append(GateEntry(ts=now_iso(), session_id=session, gate_id=base.gate_id, gate_text="",
                                     status="close_requested", closed_reason="Gate 解除",
                                     channel="user-prompt-submit", request_id="r1"))
    state = fold(entries)
    shuffled = list(entries)
    random.shuffle(shuffled)  # type: ignore[attr-defined]
    assert {(g.session_id, g.gate_id, g.is_open) for g in fold(shuffled).gates} == \
        {(g.session_id, g.gate_id, g.is_open) for g in state.gates}
    for session in ("s1", "s2"):
        expected_open = {opening(session, f"gate {n}", key=str(n)).gate_id for s, n, k in script
                         if s == session and k == "open"} - {opening(session, f"gate {n}", key=str(n)).gate_id
                                                              for s, n, k in script if s == session and k == "human"}
        assert {gate.gate_id for gate in state.open_gates(session)} == expected_open
