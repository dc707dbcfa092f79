"""Conformance: pending reviews (create, list, show, approve, reject, expiry) and a model-checked lifecycle."""

from __future__ import annotations

import hashlib
import re

import pytest

from .._errors import ReviewError, StoreError
from ..store import PendingReview, Store
from ._support import Fixtures, StepClock, StoreFactory, hold, state_of

__all__ = ["ReviewsContract"]


class ReviewsContract(Fixtures):
    def test_creating_a_review_pauses_the_session_and_keeps_everything(self, store: Store) -> None:
        store.begin_attempt("s", 0, {"text": "x"})
        review_id = hold(store)
        assert re.fullmatch(r"rv_[0-9a-f]{32}", review_id)
        assert state_of(store) == "paused"
        review = store.get_review(review_id)
        assert review == PendingReview(
            review_id=review_id, session_id="s", status="pending", policy_action="escalate_verification_error",
            reason="judge_unavailable", pending_text="The fix is in parser.py.",
            candidate={"text": "The fix is in parser.py.", "attempt": 0},
            verdict={"passed": False, "reason": "judge_unavailable"}, created_at=review.created_at)
        assert store.list_reviews("pending") == [review]

    def test_creating_a_review_creates_an_unknown_session(self, store: Store) -> None:
        hold(store, "never-seen")
        assert state_of(store, "never-seen") == "paused"

    def test_review_ids_are_unguessable(self, store: Store) -> None:
        assert len({hold(store, f"s{i}") for i in range(20)}) == 20

    def test_a_review_without_a_verdict(self, store: Store) -> None:
        review_id = store.create_pending_review("s", policy_action="escalate_unfixable_structural",
                                                reason="model_action_required", pending_text="",
                                                candidate={}, verdict=None)
        review = store.get_review(review_id)
        assert (review.verdict, review.pending_text, review.candidate) == (None, "", {})

    def test_approve_releases_the_held_answer_and_completes_the_session(self, store: Store,
                                                                         clock: StepClock) -> None:
        review_id = hold(store)
        clock.advance(30)
        review = store.approve_review(review_id, by="alice", note="looked at the diff")
        assert review.pending_text == "The fix is in parser.py."
        assert (review.status, review.resolved_by, review.note) == ("approved", "alice", "looked at the diff")
        assert review.resolved_at is not None and review.resolved_at > review.created_at
        assert state_of(store) == "completed"
        assert store.list_reviews("pending") == []
        assert store.list_reviews("approved") == [review]
        assert store.get_review(review_id) == review

    def test_reject_ends_the_session(self, store: Store) -> None:
        review_id = hold(store)
        review = store.reject_review(review_id, by="bob")
        assert (review.status, review.resolved_by, review.note) == ("rejected", "bob", "")
        assert state_of(store) == "ended"

    def test_every_resolution_appends_a_ledger_row_and_a_timeline_row(self, store: Store) -> None:
        approved, rejected = hold(store, "a"), hold(store, "b")
        store.approve_review(approved, by="alice", note="ok")
        store.reject_review(rejected, by="bob")
        rows = store.ledger()
        assert [row.kind for row in rows] == ["review_resolution", "review_resolution"]
        assert rows[0].payload == {"review_id": approved, "session_id": "a", "decision": "approved", "by": "alice",
                                   "note_sha256": hashlib.sha256(b"ok").hexdigest()}
        assert rows[1].payload["decision"] == "rejected"
        assert rows[1].payload["note_sha256"] == hashlib.sha256(b"").hexdigest()
        assert store.verify_ledger() == 2
        assert [row.kind for row in store.timeline("a")] == ["review"]
        assert store.timeline("a")[0].payload == {"review_id": approved, "decision": "approved", "by": "alice",
                                                  "note_sha256": hashlib.sha256(b"ok").hexdigest()}

    @pytest.mark.parametrize("resolve", ["approve_review", "reject_review"])
    def test_resolving_twice_the_same_way_is_a_no_op(self, store: Store, clock: StepClock, resolve: str) -> None:
        review_id = hold(store)
        first = getattr(store, resolve)(review_id, by="alice", note="first")
        clock.advance(60)
        second = getattr(store, resolve)(review_id, by="mallory", note="second")
        assert second == first
        assert len(store.ledger()) == 1
        assert len(store.timeline("s")) == 1

    def test_approving_a_rejected_review_or_rejecting_an_approved_one_is_refused(self, store: Store) -> None:
        rejected, approved = hold(store, "a"), hold(store, "b")
        store.reject_review(rejected, by="bob")
        store.approve_review(approved, by="alice")
        with pytest.raises(ReviewError, match=f"{rejected}.*already rejected; it cannot be approved"):
            store.approve_review(rejected, by="alice")
        with pytest.raises(ReviewError, match=f"{approved}.*already approved; it cannot be rejected"):
            store.reject_review(approved, by="bob")
        assert store.get_review(rejected).status == "rejected"
        assert (state_of(store, "a"), state_of(store, "b")) == ("ended", "completed")
        assert len(store.ledger()) == 2

    @pytest.mark.parametrize("call", ["get_review", "approve_review", "reject_review"])
    def test_an_unknown_review_id_is_named(self, store: Store, call: str) -> None:
        kwargs = {} if call == "get_review" else {"by": "alice"}
        with pytest.raises(ReviewError, match="rv_doesnotexist"):
            getattr(store, call)("rv_doesnotexist", **kwargs)
        assert store.ledger() == []

    def test_a_resolution_must_name_who_decided(self, store: Store) -> None:
        review_id = hold(store)
        with pytest.raises(ReviewError, match="who decided"):
            store.approve_review(review_id, by="  ")
        assert store.get_review(review_id).status == "pending"

    def test_expiry_uses_the_injected_clock(self, store: Store, clock: StepClock) -> None:
        old = hold(store, "old")
        clock.advance(3000)
        young = hold(store, "young")
        clock.advance(700)  # old is 3700 s old, young 700 s
        assert store.expire_reviews(3600) == [old]
        expired = store.get_review(old)
        assert (expired.status, expired.resolved_by) == ("expired", "verigate:expiry")
        assert state_of(store, "old") == "ended"
        assert store.get_review(young).status == "pending"
        assert state_of(store, "young") == "paused"
        assert store.expire_reviews(3600) == []  # nothing left to expire: no new ledger rows
        assert [row.payload["decision"] for row in store.ledger()] == ["expired"]
        assert store.verify_ledger() == 1

    def test_a_review_exactly_at_the_limit_is_not_yet_expired(self, store: Store, clock: StepClock) -> None:
        review_id = hold(store)
        clock.advance(60)
        assert store.expire_reviews(60) == []
        clock.advance(0.000001)
        assert store.expire_reviews(60) == [review_id]

    def test_expired_reviews_come_oldest_first(self, store: Store, clock: StepClock) -> None:
        ids = []
        for name in ("a", "b", "c"):
            ids.append(hold(store, name))
            clock.advance(1)
        assert store.expire_reviews(0) == ids

    def test_an_expired_review_counts_as_rejected(self, store: Store, clock: StepClock) -> None:
        review_id = hold(store)
        clock.advance(10)
        store.expire_reviews(5)
        with pytest.raises(ReviewError, match="already expired; it cannot be approved"):
            store.approve_review(review_id, by="alice")
        assert store.reject_review(review_id, by="alice").status == "expired"
        assert len(store.ledger()) == 1

    def test_resolved_reviews_never_expire(self, store: Store, clock: StepClock) -> None:
        review_id = hold(store)
        store.approve_review(review_id, by="alice")
        clock.advance(10_000)
        assert store.expire_reviews(1) == []
        assert store.get_review(review_id).status == "approved"

    @pytest.mark.parametrize("age", [-1, float("nan")])
    def test_expiry_age_must_be_valid(self, store: Store, age: float) -> None:
        with pytest.raises(StoreError, match="older_than_s"):
            store.expire_reviews(age)

    def test_an_old_review_does_not_complete_a_session_that_moved_on(self, store: Store) -> None:
        review_id = hold(store)
        store.reset_request("s")  # the user asked something new; the session runs again
        store.approve_review(review_id, by="alice")
        assert state_of(store) == "running"

    def test_list_reviews_filters_by_status_and_orders_oldest_first(self, store: Store, clock: StepClock) -> None:
        ids = []
        for name in ("a", "b", "c"):
            ids.append(hold(store, name))
            clock.advance(1)
        store.approve_review(ids[1], by="alice")
        assert [r.review_id for r in store.list_reviews()] == ids
        assert [r.review_id for r in store.list_reviews(None)] == ids
        assert [r.review_id for r in store.list_reviews("pending")] == [ids[0], ids[2]]
        assert [r.review_id for r in store.list_reviews("approved")] == [ids[1]]
        assert store.list_reviews("rejected") == []

    def test_reviews_survive_reopening(self, store_url: str, clock: StepClock) -> None:
        first = self.open_url(store_url, clock=clock)
        try:
            review_id = hold(first)
        finally:
            first.close()
        second = self.open_url(store_url, clock=clock)
        try:
            assert second.approve_review(review_id, by="alice").pending_text == "The fix is in parser.py."
        finally:
            second.close()

    def test_any_interleaving_of_review_operations_matches_a_model(self, store_factory: StoreFactory) -> None:
        """A hypothesis state machine: statuses, session states and the ledger checked after every step."""
        pytest.importorskip("hypothesis")
        from hypothesis import settings
        from hypothesis.stateful import run_state_machine_as_test

        from ._lifecycle import lifecycle

        run_state_machine_as_test(lifecycle(store_factory),
                                  settings=settings(max_examples=20, stateful_step_count=20, deadline=None))

