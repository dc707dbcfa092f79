"""The candidate the Stop hook verifies: the latest turn of the transcript, the person's request it answers (not
verigate's own feedback), and the per-request counters that belong to that request."""

from __future__ import annotations

import hashlib
import time
from typing import TYPE_CHECKING

from .._errors import InputError
from ._stop_answers import FEEDBACK_MARKER
from ._stop_deadline import RESULT_POLL_S
from ._stop_input import StopInput
from ._stop_state import StopState

if TYPE_CHECKING:
    from .._models import Candidate
    from ..gate import Gate
    from ..transcripts import Turn

__all__ = ["candidate", "current_request", "latest_turn"]


def latest_turn(stop: StopInput, wait_until: float) -> Turn:
    """The latest turn of the (sub-agent's) transcript, re-read until every tool call of it has its result or
    ``wait_until`` (a ``time.monotonic()`` value) passes; a result still missing then is marked as missing in the
    candidate (``MISSING_RESULT``), never judged as an empty output."""
    from ..transcripts._tail import latest_turn_from_end

    if stop.transcript_path is None:
        raise InputError("the hook input has no transcript_path: the request cannot be read", source="<stdin>",
                         field="transcript_path")
    while True:
        turn = latest_turn_from_end(stop.transcript_path, host=stop.host, subagent=stop.event == "subagent-stop")
        # written so that a NaN deadline ends the wait as well (a comparison with NaN is False)
        if not turn.missing_results or not time.monotonic() + RESULT_POLL_S <= wait_until:
            return turn
        time.sleep(RESULT_POLL_S)


def _person_request(stop: StopInput) -> str:
    """The person's latest request when the latest prompt is verigate's own feedback (the host feeds a block reason
    back as a prompt): the last request prompt before it that is not feedback, from the lines ``last_turn`` reads
    (from the end back to it). "" when the transcript holds none."""
    from ..transcripts._tail import last_request_from_end

    assert stop.transcript_path is not None  # latest_turn has read it already
    return last_request_from_end(stop.transcript_path, lambda text: FEEDBACK_MARKER not in text, host=stop.host,
                                 subagent=stop.event == "subagent-stop")


def _stored_request(gate: Gate, session_key: str) -> str:
    """The request verigate's own feedback answers, as the store holds it (redacted)."""
    stored = gate.store.attempts(session_key)
    if stored and isinstance(stored[0].get("request"), str):
        return str(stored[0]["request"])
    raise InputError("the latest prompt is verigate's own feedback and the request it answers is not stored",
                     source="<transcript>")


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def candidate(stop: StopInput, turn: Turn, request: str) -> Candidate:
    """The final answer to verify, with the turn's tool calls."""
    from .._models import Candidate

    return Candidate(
        request=request,
        # the host's own copy of the final message wins: the transcript may not have it written yet
        final_text=stop.last_assistant_message or turn.final_text,
        tool_calls=turn.tool_calls,
        session_id=stop.session_key,
        turn_id=stop.turn_id,
    )


def current_request(stop: StopInput, turn: Turn, gate: Gate, state: StopState) -> tuple[str, StopState]:
    """The person's request the answer is for, and the counters that belong to it: named by the sha256 of the raw
    request (the store holds it redacted, so a stored copy never matches), and reset with the gate's attempts when
    a new request begins while a revise of the previous one is outstanding."""
    request = turn.request
    if FEEDBACK_MARKER in request:
        request = _person_request(stop)
        if not request:  # the transcript lost it: the stored (redacted) copy, counters unchanged
            return _stored_request(gate, stop.session_key), state
    request_sha = _sha256(request)
    if request_sha != state.request_sha256:
        state = StopState(request_sha256=request_sha)
        session = gate.store.get_session(stop.session_key)
        if session is not None and session.follow_up:
            gate.store.reset_request(stop.session_key)
    return request, state
