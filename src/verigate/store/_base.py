"""The store interface the gate, hooks and CLI use; SQLite is the embedded default (DESIGN §4)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol, runtime_checkable

import attrs

from .. import _face
from .._models import SessionState

__all__ = ["LedgerRow", "PendingReview", "ReviewStatus", "SessionRecord", "Store", "TimelineRow"]

ReviewStatus = Literal["pending", "approved", "rejected", "expired"]


@attrs.frozen
class SessionRecord:
    """One agent session as the store knows it."""

    session_id: str
    state: SessionState
    #: the attempt number of the current request (first attempt = 0); the revise counter
    attempt: int
    created_at: str
    updated_at: str
    #: set while a revise is outstanding: the follow-up instruction the next attempt must receive
    follow_up: str = ""


@attrs.frozen
class PendingReview:
    """A candidate withheld from the normal response until a person decides (not a notification)."""

    review_id: str
    session_id: str
    status: ReviewStatus
    policy_action: str
    reason: str
    #: the withheld answer (already redacted for storage)
    pending_text: str
    candidate: Mapping[str, Any]
    verdict: Mapping[str, Any] | None
    created_at: str
    resolved_at: str | None = None
    resolved_by: str | None = None
    note: str = ""


@attrs.frozen
class TimelineRow:
    """One observability row: kind is ``verdict``, ``evidence``, ``pending``, ``hook``, ``session`` …"""

    row_id: int
    session_id: str
    kind: str
    payload: Mapping[str, Any]
    created_at: str


@attrs.frozen
class LedgerRow:
    """One append-only, hash-chained ledger row (``verification_policy`` rows, review resolutions …)."""

    seq: int
    kind: str
    payload: Mapping[str, Any]
    created_at: str
    prev_hash: str
    row_hash: str


@runtime_checkable
class Store(Protocol):
    """Everything the gate persists. Implementations are safe for several processes on one store.

    Every method raises :class:`verigate.StoreError` on failure (corrupt file, lock timeout …). Writes that
    are "records" (timeline, ledger, checkpoints) are best effort for the gate: it logs their failure and
    never lets it change a decision. ``create_pending_review`` is the one write the gate must know about.
    """

    # schema and notification
    def migrate(self) -> int:
        """Apply pending schema migrations now (idempotent); return the schema version in force."""
    def wait_for_reviews(self, timeout_s: float) -> None:
        """Block until a new pending review may exist or ``timeout_s`` passed; a spurious wake-up is allowed
        (callers list the pending reviews again after it returns)."""

    # sessions and attempts
    def get_session(self, session_id: str) -> SessionRecord | None: ...
    def begin_attempt(self, session_id: str, attempt: int, candidate: Mapping[str, Any]) -> None:
        """Ensure the session exists (state running) and store this attempt's candidate."""
    def attempts(self, session_id: str) -> Sequence[Mapping[str, Any]]:
        """The stored candidates of the session's current request, in attempt order."""
    def set_revise(self, session_id: str, next_attempt: int, follow_up: str) -> None:
        """Record a revise: the next attempt number and the follow-up it must receive."""
    def set_session_state(self, session_id: str, state: SessionState) -> None: ...
    def reset_request(self, session_id: str) -> None:
        """A new request begins in this session: attempt counter back to 0, stored attempts cleared."""

    # checkpoints
    def save_checkpoint(self, session_id: str, payload: Mapping[str, Any]) -> None: ...
    def latest_checkpoint(self, session_id: str) -> Mapping[str, Any] | None: ...

    # pending reviews
    def create_pending_review(
        self,
        session_id: str,
        *,
        policy_action: str,
        reason: str,
        pending_text: str,
        candidate: Mapping[str, Any],
        verdict: Mapping[str, Any] | None,
    ) -> str:
        """Store a pending review and return its id; the session becomes ``paused``."""
    def list_reviews(self, status: ReviewStatus | None = None) -> Sequence[PendingReview]: ...
    def get_review(self, review_id: str) -> PendingReview: ...
    def approve_review(self, review_id: str, *, by: str, note: str = "") -> PendingReview:
        """Release the held answer and complete the session; approving an approved review is a no-op."""
    def reject_review(self, review_id: str, *, by: str, note: str = "") -> PendingReview:
        """Reject the held answer and end the session; rejecting a rejected review is a no-op."""
    def expire_reviews(self, older_than_s: float) -> Sequence[str]:
        """Reject (status ``expired``) pending reviews older than the given age; returns their ids."""

    # records
    def append_timeline(self, session_id: str, kind: str, payload: Mapping[str, Any]) -> None: ...
    def timeline(self, session_id: str) -> Sequence[TimelineRow]: ...
    def append_ledger(self, kind: str, payload: Mapping[str, Any]) -> LedgerRow: ...
    def ledger(self) -> Sequence[LedgerRow]: ...
    def verify_ledger(self) -> int:
        """Re-hash the chain; return the number of rows or raise LedgerTamperedError naming the first bad row."""

    # the judge-call cache (``judge.cache``): best effort for the gate, like the records
    def cached_verdict(self, key: str) -> Mapping[str, Any] | None:
        """The entry stored under ``key`` (a sha256 hex digest) that has not expired by the store's clock, else
        None. The caller validates it (the gate reads it like a fresh judge reply)."""
    def cache_verdict(self, key: str, verdict: Mapping[str, Any], ttl_s: float) -> None:
        """Store (or replace) the entry under ``key``, expiring ``ttl_s`` seconds from now by the store's clock."""

    def close(self) -> None: ...


_face.present_module(globals())  # the names verigate.store exports report it
