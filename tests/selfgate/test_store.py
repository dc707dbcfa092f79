"""The JSONL store: valid lines, torn and invalid lines reported, many writers at once, the fold's invariants."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from store_entries import append_gates, closing, opening, requesting

from verigate import InputError, StoreError
from verigate.selfgate import Cursor, GateEntry, GateSource, GateStore, fold, gate_id
from verigate.selfgate._entries import now_iso


def test_gate_id_is_stable_and_distinct() -> None:
    assert gate_id("s", "u", "Step 3 は再承認") == gate_id("s", "u", "Step 3 は再承認")
    assert len({gate_id("s", "u", "a"), gate_id("t", "u", "a"), gate_id("s", "v", "a"), gate_id("s", "u", "b")}) == 4


def test_append_read_and_schema(tmp_path: Path) -> None:
    store = GateStore(tmp_path / "gates.jsonl")
    entry = opening("s1", "I'll wait for your approval")
    request, closed = requesting(entry), closing(entry, 2)
    store.append([entry, request, closed])
    snapshot = store.read()
    assert snapshot.problems == () and snapshot.entries == (entry, request, closed) and snapshot.lines == (1, 2, 3)
    assert not fold(snapshot.entries, snapshot.lines).open_gates("s1")
    # a closed entry without its reason, or without citing its request, violates the schema and is not written
    for bad in ({"closed_reason": None}, {"request_line": None}, {"request_id": None}):
        with pytest.raises(InputError):
            store.append([attrs.evolve(closed, **bad)])
    with pytest.raises(InputError):  # a terminal's request carries its evidence
        store.append([attrs.evolve(request, evidence=None)])
    assert len(store.read().entries) == 3


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


def test_many_processes_append_at_once(tmp_path: Path) -> None:
    path = str(tmp_path / "gates.jsonl")
    workers, count = 6, 15
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=append_gates, args=(path, worker, count)) for worker in range(workers)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(60)
        assert process.exitcode == 0
    snapshot = GateStore(path).read()
    assert snapshot.problems == ()
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        json.loads(line)
    state = fold(snapshot.entries, snapshot.lines)
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
    """Open iff an open entry and a cited human closure exist; openings may come anywhere; others never close."""
    entries: list[GateEntry] = []
    for index, (session, number, kind) in enumerate(script):
        base = opening(session, f"gate {number}", key=str(number))
        if kind == "open":
            entries.append(base)
        elif kind == "human":
            entries += [requesting(base, f"r{index}"), closing(base, len(entries) + 1, f"r{index}")]
        elif kind == "ai-claim":
            entries.append(closing(base, 1, by_human=False))
        else:
            entries.append(GateEntry(ts=now_iso(), session_id=session, gate_id=base.gate_id, gate_text="",
                                     status="close_requested", closed_reason="Gate 解除",
                                     channel="user-prompt-submit", request_id="r1"))
    lines = list(range(1, len(entries) + 1))
    state = fold(entries)
    # move the openings anywhere, keeping every other entry's order and line
    numbered = list(zip(lines, entries, strict=True))
    opens = [item for item in numbered if item[1].status == "open"]
    moved = [item for item in numbered if item[1].status != "open"]
    for item in opens:
        moved.insert(random.randint(0, len(moved)), item)  # type: ignore[attr-defined]
    shuffled = fold([entry for _, entry in moved], [line for line, _ in moved])
    assert {(g.session_id, g.gate_id, g.is_open) for g in shuffled.gates} == \
        {(g.session_id, g.gate_id, g.is_open) for g in state.gates}
    for session in ("s1", "s2"):
        expected_open = {opening(session, f"gate {n}", key=str(n)).gate_id for s, n, k in script
                         if s == session and k == "open"} - {opening(session, f"gate {n}", key=str(n)).gate_id
                                                              for s, n, k in script if s == session and k == "human"}
        assert {gate.gate_id for gate in state.open_gates(session)} == expected_open


FORGERIES = {
    "no request at the cited line": lambda gate, request: [gate, closing(gate, 2)],
    "cites the opening's line": lambda gate, request: [gate, request, closing(gate, 1)],
    "another request id": lambda gate, request: [gate, request, closing(gate, 2, "forged")],
    "another gate": lambda gate, request: [gate, request, attrs.evolve(closing(gate, 2), gate_id="sg-00000000")],
    "another session": lambda gate, request: [gate, request, attrs.evolve(closing(gate, 2), session_id="other")],
    "another channel": lambda gate, request: [gate, request, attrs.evolve(
        closing(gate, 2), channel="user-prompt-submit", source=GateSource("/t.jsonl", 1, "u1"))],
    "request written after the closure": lambda gate, request: [gate, closing(gate, 3), request],
    "a refused request": lambda gate, request: [gate, request, closing(gate, 2), attrs.evolve(
        request, status="close_refused", closed_reason="not typed by a person: isMeta")],
    "a typed prompt's closure without its transcript line": lambda gate, request: [
        gate, attrs.evolve(request, channel="user-prompt-submit", evidence=None),
        attrs.evolve(closing(gate, 2), channel="user-prompt-submit")],
}


@pytest.mark.parametrize("forgery", FORGERIES)
def test_one_forged_line_does_not_close(forgery: str) -> None:
    gate = opening("s1", "I'll wait for your approval")
    entries = FORGERIES[forgery](gate, requesting(gate))
    state = fold(entries)
    assert [g.gate_id for g in state.open_gates("s1")] == [gate.gate_id]
    assert state.ignored_closures == 1
