"""Self-gate store entries: the value object, its stable id, and (de)serialisation checked by the schema."""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Literal

import attrs

from .._builtin_sha256 import sha256_hex

__all__ = [
    "GATE_ID_PATTERN",
    "Channel",
    "GateEntry",
    "GateSource",
    "Status",
    "entry_from_mapping",
    "gate_id",
    "now_iso",
]

Status = Literal["open", "closed", "close_requested", "close_refused"]
Channel = Literal["user-prompt-submit", "cli-tty"]
#: how a person names a gate when closing it; the matching regex lives next to the derivation
GATE_ID_PATTERN = r"sg-[0-9a-f]{8}"


def gate_id(session_id: str, message_key: str, matched_text: str) -> str:
    """The stable id of a gate: the same session, message and matched text always give the same id, so
    re-scanning a transcript (after a crash, a rotation or a lost cursor) never duplicates a gate."""
    digest = sha256_hex("\x1f".join((session_id, message_key, matched_text)).encode("utf-8"))
    return f"sg-{digest[:8]}"


def now_iso() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="microseconds")


@attrs.frozen
class GateSource:
    """Where an opening was found: transcript path, 1-based line, the line's uuid, sidechain or not."""

    transcript: str
    line: int
    uuid: str | None = None
    sidechain: bool = False

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"transcript": self.transcript, "line": self.line}
        if self.uuid is not None:
            data["uuid"] = self.uuid
        if self.sidechain:
            data["sidechain"] = True
        return data


@attrs.frozen
class GateEntry:
    """One line of the store. ``status`` open/closed change the gate; the close_* statuses record a human
    channel's two-step close: a request, then a closure citing it (``request_id`` and its store line
    ``request_line``) once confirmed (a typed transcript line, a terminal), or a refusal."""

    ts: str
    session_id: str
    gate_id: str
    gate_text: str
    status: Status
    opened_by: Literal["ai", "verigate"] | None = None
    closed_by: Literal["human"] | None = None
    closed_reason: str | None = None
    channel: Channel | None = None
    request_id: str | None = None
    #: a closure's citation: the store line of the ``close_requested`` entry it confirms
    request_line: int | None = None
    #: a CLI request's proof of a terminal: the terminal device and the user at it
    evidence: str | None = None
    rule_id: str | None = None
    source: GateSource | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "ts": self.ts,
            "session_id": self.session_id,
            "gate_id": self.gate_id,
            "gate_text": self.gate_text,
            "status": self.status,
            "opened_by": self.opened_by,
            "closed_by": self.closed_by,
            "closed_reason": self.closed_reason,
        }
        for key in ("channel", "request_id", "request_line", "evidence", "rule_id"):
            value = getattr(self, key)
            if value is not None:
                data[key] = value
        if self.source is not None:
            data["source"] = self.source.to_json()
        return data


def entry_from_mapping(data: Mapping[str, Any]) -> GateEntry:
    """Build an entry from a mapping that already passed ``schemas/self-gate.schema.json``."""
    source = data.get("source")
    return GateEntry(
        ts=data["ts"],
        session_id=data["session_id"],
        gate_id=data["gate_id"],
        gate_text=data["gate_text"],
        status=data["status"],
        opened_by=data["opened_by"],
        closed_by=data["closed_by"],
        closed_reason=data["closed_reason"],
        channel=data.get("channel"),
        request_id=data.get("request_id"),
        request_line=data.get("request_line"),
        evidence=data.get("evidence"),
        rule_id=data.get("rule_id"),
        source=GateSource(source["transcript"], source["line"], source.get("uuid"), source.get("sidechain", False))
        if source is not None
        else None,
    )
