"""Gate state is a fold over store entries: open until a human ``closed`` entry exists (order-independent)."""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from ._entries import GateEntry, GateSource

__all__ = ["CloseRequest", "Gate", "GateState", "fold"]


@attrs.frozen
class Gate:
    session_id: str
    gate_id: str
    gate_text: str
    opened_at: str
    opened_by: str
    rule_id: str | None
    source: GateSource | None
    #: the human closure, if any
    closed_at: str | None = None
    closed_reason: str | None = None
    closed_channel: str | None = None

    @property
    def is_open(self) -> bool:
        return self.closed_at is None


@attrs.frozen
class CloseRequest:
    """A close phrase received on the human channel, waiting for the transcript to confirm it."""

    request_id: str
    session_id: str
    prompt: str
    requested_at: str
    gate_ids: tuple[str, ...]
    resolved: bool


@attrs.frozen
class GateState:
    #: every gate in store order of its opening
    gates: tuple[Gate, ...]
    requests: tuple[CloseRequest, ...]
    #: transcript line uuids already used to confirm a close (one typed line confirms one request)
    used_confirmations: frozenset[str]
    #: closed entries the fold ignored (not by a human) — an AI or a forged write cannot close a gate
    ignored_closures: int = 0

    def open_gates(self, session_id: str) -> tuple[Gate, ...]:
        return tuple(gate for gate in self.gates if gate.session_id == session_id and gate.is_open)

    def known_ids(self, session_id: str) -> frozenset[str]:
        return frozenset(gate.gate_id for gate in self.gates if gate.session_id == session_id)

    def pending_requests(self, session_id: str) -> tuple[CloseRequest, ...]:
        return tuple(request for request in self.requests if request.session_id == session_id
                     and not request.resolved)


def fold(entries: Iterable[GateEntry]) -> GateState:
    """Fold entries into gates. A gate is open when it has an ``open`` entry and no ``closed`` entry with
    ``closed_by: "human"``; the order of the two does not matter, so a rescan that meets an old opening again
    cannot re-open a gate a person closed. Closed entries not made by a human are counted and ignored."""
    opened: dict[tuple[str, str], GateEntry] = {}
    closed: dict[tuple[str, str], GateEntry] = {}
    requested: dict[str, list[GateEntry]] = {}
    resolved_requests: set[str] = set()
    used: set[str] = set()
    ignored = 0
    for entry in entries:
        key = (entry.session_id, entry.gate_id)
        if entry.status == "open":
            opened.setdefault(key, entry)
        elif entry.status == "closed":
            if entry.closed_by != "human":
                ignored += 1
                continue
            closed.setdefault(key, entry)
            if entry.request_id is not None:
                resolved_requests.add(entry.request_id)
            if entry.source is not None and entry.source.uuid is not None:
                used.add(entry.source.uuid)
        elif entry.status == "close_requested" and entry.request_id is not None:
            requested.setdefault(entry.request_id, []).append(entry)
        elif entry.status == "close_refused" and entry.request_id is not None:
            resolved_requests.add(entry.request_id)
            if entry.source is not None and entry.source.uuid is not None:
                used.add(entry.source.uuid)
    gates = []
    for key, entry in opened.items():
        closure = closed.get(key)
        gates.append(Gate(
            session_id=entry.session_id,
            gate_id=entry.gate_id,
            gate_text=entry.gate_text,
            opened_at=entry.ts,
            opened_by=entry.opened_by or "ai",
            rule_id=entry.rule_id,
            source=entry.source,
            closed_at=closure.ts if closure else None,
            closed_reason=closure.closed_reason if closure else None,
            closed_channel=closure.channel if closure else None,
        ))
    requests = tuple(
        CloseRequest(
            request_id=request_id,
            session_id=group[0].session_id,
            prompt=group[0].closed_reason or "",
            requested_at=group[0].ts,
            gate_ids=tuple(entry.gate_id for entry in group),
            resolved=request_id in resolved_requests,
        )
        for request_id, group in requested.items()
    )
    return GateState(tuple(gates), requests, frozenset(used), ignored)
