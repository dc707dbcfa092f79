"""Self-gate store entries as the hooks and the CLI write them, for tests; a module of its own so that processes
started with ``spawn`` can import the writer by name (a test module is not importable in a child)."""

from __future__ import annotations

from verigate.selfgate import GateEntry, GateStore, gate_id
from verigate.selfgate._entries import now_iso


def opening(session: str, text: str, key: str = "uuid-1") -> GateEntry:
    return GateEntry(ts=now_iso(), session_id=session, gate_id=gate_id(session, key, text), gate_text=text,
                     status="open", opened_by="ai")


def requesting(entry: GateEntry, request_id: str = "r1") -> GateEntry:
    return GateEntry(ts=now_iso(), session_id=entry.session_id, gate_id=entry.gate_id, gate_text=entry.gate_text,
                     status="close_requested", closed_reason="test", channel="cli-tty", request_id=request_id,
                     evidence="terminal /dev/pts/0, user test")


def closing(entry: GateEntry, request_line: int, request_id: str = "r1", by_human: bool = True) -> GateEntry:
    """A closure citing the request on ``request_line`` (as the CLI writes it)."""
    return GateEntry(ts=now_iso(), session_id=entry.session_id, gate_id=entry.gate_id, gate_text=entry.gate_text,
                     status="closed", closed_by="human" if by_human else None,
                     closed_reason="test" if by_human else None, channel="cli-tty", request_id=request_id,
                     request_line=request_line)


def close_as_person(store: GateStore, entry: GateEntry, request_id: str) -> None:
    with store.locked():
        store.append([requesting(entry, request_id)])
        line = store.read().lines[-1]
        store.append([closing(entry, line, request_id)])


def append_gates(path: str, worker: int, count: int) -> None:
    store = GateStore(path)
    for index in range(count):
        entry = opening(f"s{worker % 3}", f"gate {worker}-{index}", key=f"k{worker}-{index}")
        store.append([entry])
        if index % 2:
            close_as_person(store, entry, f"r{worker}-{index}")
