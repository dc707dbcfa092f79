"""The review lifecycle as a hypothesis state machine over any backend (imported only when hypothesis is)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, rule

from .._errors import ReviewError
from ._support import StoreFactory

__all__ = ["lifecycle"]

SESSIONS = st.sampled_from(["a", "b", "c"])
RESOLVED_STATE = {"approved": "completed", "rejected": "ended", "expired": "ended"}


def lifecycle(store_factory: StoreFactory) -> type[RuleBasedStateMachine]:
    """A machine whose every run opens a fresh store from ``store_factory``."""

    class ReviewLifecycle(RuleBasedStateMachine):
        """A model of statuses and session states checked against the real store after every step."""

        reviews = Bundle("reviews")

        def __init__(self) -> None:
            super().__init__()
            self.now = datetime(2026, 1, 1, tzinfo=UTC)
            self.store = store_factory(lambda: self.now)
            self.status: dict[str, str] = {}
            self.created: dict[str, datetime] = {}
            self.session_of: dict[str, str] = {}
            self.session_state: dict[str, str] = {}
            self.resolutions = 0

        def _resolved(self, review_id: str, status: str) -> None:
            self.status[review_id] = status
            self.resolutions += 1
            session = self.session_of[review_id]
            if self.session_state[session] == "paused":
                self.session_state[session] = RESOLVED_STATE[status]

        @rule(target=reviews, session=SESSIONS)
        def create(self, session: str) -> str:
            review_id = self.store.create_pending_review(session, policy_action="escalate", reason="r",
                                                         pending_text=f"held for {session}", candidate={},
                                                         verdict=None)
            self.status[review_id] = "pending"
            self.created[review_id] = self.now
            self.session_of[review_id] = session
            self.session_state[session] = "paused"
            return review_id

        @rule(review_id=reviews)
        def approve(self, review_id: str) -> None:
            before = self.status[review_id]
            if before in ("rejected", "expired"):
                with pytest.raises(ReviewError, match="cannot be approved"):
                    self.store.approve_review(review_id, by="alice")
                return
            review = self.store.approve_review(review_id, by="alice")
            assert review.pending_text == f"held for {self.session_of[review_id]}"
            if before == "pending":
                self._resolved(review_id, "approved")

        @rule(review_id=reviews)
        def reject(self, review_id: str) -> None:
            before = self.status[review_id]
            if before == "approved":
                with pytest.raises(ReviewError, match="cannot be rejected"):
                    self.store.reject_review(review_id, by="bob")
                return
            assert self.store.reject_review(review_id, by="bob").status == ("rejected" if before == "pending"
                                                                             else before)
            if before == "pending":
                self._resolved(review_id, "rejected")

        @rule(seconds=st.integers(0, 600))
        def wait(self, seconds: int) -> None:
            self.now += timedelta(seconds=seconds)

        @rule(older_than=st.integers(0, 900))
        def expire(self, older_than: int) -> None:
            cutoff = self.now - timedelta(seconds=older_than)
            due = sorted((self.created[review_id], review_id) for review_id, status in self.status.items()
                         if status == "pending" and self.created[review_id] < cutoff)
            assert self.store.expire_reviews(older_than) == [review_id for _, review_id in due]
            for _, review_id in due:
                self._resolved(review_id, "expired")

        @rule(session=SESSIONS)
        def new_request(self, session: str) -> None:
            self.store.reset_request(session)
            self.session_state[session] = "running"

        @invariant()
        def store_matches_the_model(self) -> None:
            assert {r.review_id: r.status for r in self.store.list_reviews()} == self.status
            for session, state in self.session_state.items():
                record = self.store.get_session(session)
                assert record is not None and record.state == state
            assert self.store.verify_ledger() == self.resolutions

        def teardown(self) -> None:
            self.store.close()

    return ReviewLifecycle
