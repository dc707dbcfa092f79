"""Bring the store up to date with a session's transcript(s): new openings, problems, close confirmations."""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import attrs

from .._subagent_logs import subagent_files
from ._entries import GateEntry, GateSource, gate_id, now_iso
from ._fold import CloseRequest, SelfGate, SelfGateState, fold
from ._phrases import CloseCommand, PhraseHit
from ._statsig import Signature, signature
from ._store import Cursor, GateStore, StoreProblem
from ._tool_policy import problem_gate_text
from ._transcript import TranscriptLine, read_new_lines, tail_lines

__all__ = ["CONFIRM_WINDOW_S", "SyncResult", "request_close", "session_transcripts", "sync",
           "targets"]

#: a typed prompt confirms a close request when its transcript timestamp is this close to the request
CONFIRM_WINDOW_S = 120.0


@attrs.frozen
class SyncResult:
    state: SelfGateState
    new_entries: tuple[GateEntry, ...]
    store_problems: tuple[StoreProblem, ...]
    #: transcripts read again from their start (rotated or truncated since the last scan)
    restarted: tuple[str, ...] = ()
    #: what the state was folded from, for the fast path's cache: the store's signature after the writes, and
    #: each scanned source (the session log first, then its sub-agent folder and logs) with the signature it had
    #: before it was read; None when a signature could not be taken
    store_signature: Signature | None = None
    sources: tuple[tuple[str, Signature | None], ...] | None = None
    #: the session log's cursor after this scan, and the crc32 of the head bytes its ``head_sha`` covers
    cursor: Cursor | None = None
    head_crc: int = 0


def session_transcripts(transcript: str) -> tuple[list[str], list[tuple[str, Signature | None]]]:
    """The session's transcript and its sub-agent transcripts (``verigate.transcripts.subagent_files``: sub-agent
    messages count for the session that owns them), and the signature of every place that decided which those
    are, each taken before it was listed or read: a sub-agent log added afterwards changes one of them."""
    places: list[tuple[str, Signature | None]] = []

    def note(place: Path) -> None:
        try:
            places.append((str(place), signature(place)))
        except OSError:  # a link loop, no permission: the listing or reading that follows names the error
            places.append((str(place), None))

    subagents = subagent_files(transcript, before_reading=note)
    return [transcript, *(str(path) for path in subagents)], places


def _recordable(path: str) -> bool:
    """Whether the fast path's caches (UTF-8 JSON) can hold ``path``: a name that is not UTF-8 (another session's
    file beside this one, say) decodes to lone surrogates, and writing it would fail every full check."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _parse_ts(value: str | None) -> datetime.datetime | None:
    if not value:
        return None
    try:
        parsed = datetime.datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=datetime.UTC)


def _confirms(line: TranscriptLine, request: CloseRequest) -> bool:
    """The typed line is this request's prompt, written within the window around the request."""
    if line.kind != "user_prompt" or line.texts[0].strip() != request.prompt.strip():
        return False
    written, requested = _parse_ts(line.timestamp), _parse_ts(request.requested_at)
    return written is not None and requested is not None and \
        abs((written - requested).total_seconds()) <= CONFIRM_WINDOW_S


def _resolve_requests(session_id: str, transcript: str, lines: Iterable[TranscriptLine],
                      state: SelfGateState) -> list[GateEntry]:
    """Each typed user line resolves the oldest pending request with the same prompt: confirmed when a person
    typed it, refused when the transcript shows a scheduled prompt, a sub-agent result or injected text."""
    pending = list(state.pending_requests(session_id))
    used = set(state.used_confirmations)
    gates = {gate.gate_id: gate for gate in state.gates if gate.session_id == session_id}
    entries: list[GateEntry] = []
    for line in lines:
        if line.kind != "user_prompt" or line.key in used:
            continue
        request = next((candidate for candidate in pending if _confirms(line, candidate)), None)
        if request is None:
            continue
        pending.remove(request)
        used.add(line.key)
        source = GateSource(transcript, line.number, line.key)
        for target, request_line in zip(request.gate_ids, request.lines, strict=True):
            gate_text = gates[target].gate_text if target in gates else ""
            if line.not_human:
                entries.append(GateEntry(
                    ts=now_iso(), session_id=session_id, gate_id=target, gate_text=gate_text,
                    status="close_refused", closed_reason=f"not typed by a person: {line.not_human}",
                    channel="user-prompt-submit", request_id=request.request_id, source=source))
            else:
                entries.append(GateEntry(
                    ts=now_iso(), session_id=session_id, gate_id=target, gate_text=gate_text, status="closed",
                    closed_by="human", closed_reason=f"typed by a person: {request.prompt}",
                    channel="user-prompt-submit", request_id=request.request_id, request_line=request_line,
                    source=source))
    return entries


def _openings_and_problems(session_id: str, transcript: str, lines: Sequence[TranscriptLine],
                           known: set[str], openings: Callable[[str], list[PhraseHit]]) -> list[GateEntry]:
    entries: list[GateEntry] = []
    for line in lines:
        if line.kind == "assistant_text":
            for text in line.texts:
                for hit in openings(text):
                    identifier = gate_id(session_id, line.key, hit.matched)
                    if identifier in known:
                        continue
                    known.add(identifier)
                    entries.append(GateEntry(
                        ts=now_iso(), session_id=session_id, gate_id=identifier, gate_text=hit.sentence,
                        status="open", opened_by="ai", rule_id=hit.rule_id,
                        source=GateSource(transcript, line.number, line.uuid, line.sidechain)))
        elif line.kind == "problem":
            # one gate per kind of problem and transcript: a drifted format must not flood the store
            category = line.problem.split(" (")[0]
            identifier = gate_id(session_id, f"problem:{transcript}", category)
            if identifier in known:
                continue
            known.add(identifier)
            entries.append(GateEntry(
                ts=now_iso(), session_id=session_id, gate_id=identifier,
                gate_text=problem_gate_text(line.number, line.problem),
                status="open", opened_by="verigate", source=GateSource(transcript, line.number)))
    return entries


def sync(store: GateStore, session_id: str, transcript: str | None,
         openings: Callable[[str], list[PhraseHit]]) -> SyncResult:
    """Under the store lock: read the store, scan what is new in the session's transcripts, append the new
    entries (fsync'd) and only then move the cursors. Without a transcript only the store is folded."""
    with store.locked():
        snapshot = store.read()
        state = fold(snapshot.entries, snapshot.lines)
        if transcript is None:
            return SyncResult(state, (), snapshot.problems)
        known = set(state.known_ids(session_id))
        new_entries: list[GateEntry] = []
        cursors = []
        restarted = []
        sources: list[tuple[str, Signature | None]] = []
        vouched = True
        logs, places = session_transcripts(transcript)
        for path in logs:
            saved = store.read_cursor(session_id, path)
            read = read_new_lines(path, saved)
            sources.append((path, read.signature))
            if path == transcript:
                sources += places
                session_read = read
            if read.restarted:
                restarted.append(path)
            new_entries += _openings_and_problems(session_id, path, read.lines, known, openings)
            if path == transcript:  # a person types into the session itself, never into a sub-agent's log
                interim = fold(snapshot.entries + tuple(new_entries), snapshot.lines)
                new_entries += _resolve_requests(session_id, path, read.lines, interim)
            if read.cursor != saved:  # an unchanged cursor is not rewritten: a quiet call writes nothing
                cursors.append((path, read.cursor))
        store.append(new_entries)
        for path, cursor in cursors:
            store.write_cursor(session_id, path, cursor)
        try:
            store_signature = signature(store.path)  # still under the lock: no one else has written since
        except OSError:
            store_signature, vouched = None, False
        if not all(_recordable(path) for path, _ in sources):  # a name the caches cannot hold: no fast path
            vouched = False
        return SyncResult(fold(snapshot.entries + tuple(new_entries), snapshot.lines), tuple(new_entries),
                          snapshot.problems, tuple(restarted), store_signature,
                          tuple(sources) if vouched else None, session_read.cursor, session_read.head_crc)


def targets(command: CloseCommand, open_gates: Sequence[SelfGate]) -> tuple[SelfGate, ...]:
    """The gates a close command names: one id, all, or the gates of the latest declaring message."""
    if command.role == "close_all":
        return tuple(open_gates)
    if command.role == "close_id":
        return tuple(gate for gate in open_gates if gate.gate_id == command.gate_id)
    if not open_gates:
        return ()
    latest = open_gates[-1].source
    if latest is None:
        return (open_gates[-1],)
    return tuple(gate for gate in open_gates if gate.source is not None
                 and (gate.source.transcript, gate.source.line) == (latest.transcript, latest.line))

def request_close(store: GateStore, session_id: str, transcript: str | None, command: CloseCommand,
                  prompt: str) -> tuple[tuple[SelfGate, ...], tuple[GateEntry, ...]]:
    """Record a close request for the gates the command names, then try to confirm it from the transcript's
    last lines (the typed prompt may already be there; if not, the next scan confirms it). Returns the
    targeted gates and the entries written."""
    with store.locked():
        snapshot = store.read()
        state = fold(snapshot.entries, snapshot.lines)
        chosen = targets(command, state.open_gates(session_id))
        if not chosen:
            return (), ()
        request_id = uuid.uuid4().hex
        requested = [GateEntry(
            ts=now_iso(), session_id=session_id, gate_id=gate.gate_id, gate_text=gate.gate_text,
            status="close_requested", closed_reason=prompt.strip(), channel="user-prompt-submit",
            request_id=request_id) for gate in chosen]
        store.append(requested)
        written = list(requested)
        if transcript is not None:
            snapshot = store.read()
            state = fold(snapshot.entries, snapshot.lines)
            typed = [line for line in tail_lines(transcript) if line.kind == "user_prompt"][-1:]
            resolved = _resolve_requests(session_id, transcript, typed, state)
            store.append(resolved)
            written += resolved
        return chosen, tuple(written)
