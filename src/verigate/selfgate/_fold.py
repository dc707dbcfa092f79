"""Gate state is a fold over store entries: open until a provably human ``closed`` entry exists."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from ._entries import GateEntry, GateSource

__all__ = ["CloseRequest", "SelfGate", "SelfGateState", "fold"]


@attrs.frozen
class SelfGate:
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
    """A close phrase received on a human channel, waiting for its confirmation (the transcript's typed line)."""

    request_id: str
    session_id: str
    prompt: str
    requested_at: str
    gate_ids: tuple[str, ...]
    resolved: bool
    #: the store line of each gate's ``close_requested`` entry (parallel to ``gate_ids``), which its closure cites
    lines: tuple[int, ...] = ()


@attrs.frozen
class SelfGateState:
    #: every gate in store order of its opening
    gates: tuple[SelfGate, ...]
    requests: tuple[CloseRequest, ...]
    #: transcript line uuids already used to confirm a close (one typed line confirms one request)
    used_confirmations: frozenset[str]
    #: closed entries the fold ignored (not provably from a human channel): an AI claim or a forged write
    ignored_closures: int = 0

    def open_gates(self, session_id: str) -> tuple[SelfGate, ...]:
        return tuple(gate for gate in self.gates if gate.session_id == session_id and gate.is_open)

    def known_ids(self, session_id: str) -> frozenset[str]:
        return frozenset(gate.gate_id for gate in self.gates if gate.session_id == session_id)

    def pending_requests(self, session_id: str) -> tuple[CloseRequest, ...]:
        return tuple(request for request in self.requests if request.session_id == session_id
                     and not request.resolved)


def _cites(closure: GateEntry, request: GateEntry | None) -> bool:
    """The closure names the request entry on its line: same request, session, gate and channel, with the
    channel's evidence (the confirming transcript line for a typed prompt, the terminal for the CLI)."""
    if request is None or request.status != "close_requested" or closure.closed_by != "human":
        return False
    if (request.request_id, request.session_id, request.gate_id, request.channel) != \
            (closure.request_id, closure.session_id, closure.gate_id, closure.channel):
        return False
    if closure.channel == "user-prompt-submit":
        return closure.source is not None and closure.source.uuid is not None
    return closure.channel == "cli-tty" and request.evidence is not None


def fold(entries: Sequence[GateEntry], lines: Sequence[int] | None = None) -> SelfGateState:
    """Fold entries into gates. ``lines[i]`` is the store line of ``entries[i]`` (default: the i-th line);
    entries past ``lines`` are about to be written after them.

    A gate is open while it has an ``open`` entry and no accepted closure. A ``closed`` entry is accepted only
    when it cites, by ``request_id`` and ``request_line``, an earlier ``close_requested`` entry of the same
    session, gate and channel written by that human channel, carries the channel's evidence, and no
    ``close_refused`` names its request: one appended line cannot close a gate. Opening and closure may come in
    any order, so a rescan that meets an old opening again cannot re-open a gate a person closed."""
    numbers = list(lines) if lines is not None else list(range(1, len(entries) + 1))
    last = numbers[-1] if numbers else 0
    numbers += range(last + 1, last + 1 + len(entries) - len(numbers))
    opened: dict[tuple[str, str], GateEntry] = {}
    request_at: dict[int, GateEntry] = {}
    requested: dict[str, list[tuple[int, GateEntry]]] = {}
    refused: set[str] = set()
    candidates: list[GateEntry] = []
    used: set[str] = set()
    ignored = 0
    for line, entry in zip(numbers, entries, strict=True):
        if entry.status == "open":
            opened.setdefault((entry.session_id, entry.gate_id), entry)
        elif entry.status == "closed":
            # the cited request must already be on an earlier line
            cited = request_at.get(entry.request_line) if entry.request_line is not None else None
            if _cites(entry, cited):
                candidates.append(entry)
            else:
                ignored += 1
            if entry.source is not None and entry.source.uuid is not None:
                used.add(entry.source.uuid)
        elif entry.status == "close_requested" and entry.request_id is not None:
            request_at[line] = entry
            requested.setdefault(entry.request_id, []).append((line, entry))
        elif entry.status == "close_refused" and entry.request_id is not None:
            refused.add(entry.request_id)
            if entry.source is not None and entry.source.uuid is not None:
                used.add(entry.source.uuid)
    closed: dict[tuple[str, str], GateEntry] = {}
    resolved = set(refused)
    for entry in candidates:
        if entry.request_id in refused:  # a refusal wins, whatever the order
            ignored += 1
            continue
        closed.setdefault((entry.session_id, entry.gate_id), entry)
        resolved.add(entry.request_id or "")
    gates = []
    for key, entry in opened.items():
        closure = closed.get(key)
        gates.append(SelfGate(
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
            session_id=group[0][1].session_id,
            prompt=group[0][1].closed_reason or "",
            requested_at=group[0][1].ts,
            gate_ids=tuple(entry.gate_id for _, entry in group),
            resolved=request_id in resolved,
            lines=tuple(line for line, _ in group),
        )
        for request_id, group in requested.items()
    )
    return SelfGateState(tuple(gates), requests, frozenset(used), ignored)
