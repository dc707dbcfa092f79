"""How a pending review is resolved, as every backend must resolve it: who may decide, when a second decision is a
no-op or an error, the session state it leaves, and the timeline and ledger rows it appends. One place, so that
SQLite, PostgreSQL and a third party's backend write the same ledger a verifier reads."""

from __future__ import annotations

import hashlib
from typing import Any, Literal

from .. import _face
from .._errors import ReviewError
from .._models import SessionState
from ._base import PendingReview
from ._chain import canonical_json

__all__ = ["Decision", "check_resolver", "resolution_rows", "settled", "state_after"]

Decision = Literal["approved", "rejected", "expired"]


def check_resolver(by: str) -> None:
    """A resolution must name who decided."""
    if not by.strip():
        raise ReviewError("a resolution must name who decided (by)", field="by")


def settled(review: PendingReview, decision: Decision, *, source: str) -> bool:
    """True when ``review`` already carries ``decision`` (resolving again is a no-op; an expired review counts as
    rejected); a review resolved the other way is a :class:`ReviewError`; False when it is pending."""
    if review.status == decision or (decision == "rejected" and review.status == "expired"):
        return True
    if review.status != "pending":
        raise ReviewError(f"review {review.review_id!r} is already {review.status}; it cannot be {decision}",
                          source=source, field="review_id")
    return False


def state_after(decision: Decision) -> SessionState:
    """The state a paused session takes when its review is resolved."""
    return "completed" if decision == "approved" else "ended"


def resolution_rows(review: PendingReview, decision: Decision, *, by: str, note: str) -> tuple[dict[str, Any], str]:
    """The timeline payload of a resolution and the ledger row's payload (canonical JSON) — the note itself is
    never in either, only its sha256."""
    event = {"review_id": review.review_id, "decision": decision, "by": by,
             "note_sha256": hashlib.sha256(note.encode("utf-8")).hexdigest()}
    return event, canonical_json({**event, "session_id": review.session_id}, field="payload")


_face.present_module(globals())  # the names verigate.store exports report it
