"""Conformance: sessions and the revise counter, attempts, checkpoints, timeline, payloads, errors, schema, waiting."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone
from types import MappingProxyType
from typing import Any

import pytest

from .._errors import StoreError
from ..store import SessionRecord, Store, TimelineRow
from ._support import Fixtures, StepClock, StoreFactory, hold

__all__ = ["SessionsContract"]

TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$")




def _assert_nothing_stored(store: Store) -> None:
    """A refused write left no session, timeline row, ledger row or review behind."""
    assert store.get_session("s") is None
    assert store.timeline("s") == []
    assert store.ledger() == []
    assert store.list_reviews() == []

class SessionsContract(Fixtures):
    def test_the_store_implements_the_protocol(self, store: Store) -> None:
        assert isinstance(store, Store)

    def test_a_fresh_store_is_empty(self, store: Store) -> None:
        assert store.get_session("s") is None
        assert store.attempts("s") == []
        assert store.latest_checkpoint("s") is None
        assert store.list_reviews() == []
        assert store.timeline("s") == []
        assert store.ledger() == []
        assert store.verify_ledger() == 0

    @pytest.mark.parametrize("call", [
        lambda s: s.get_session("s"), lambda s: s.begin_attempt("s", 0, {}), lambda s: s.attempts("s"),
        lambda s: s.set_revise("s", 1, "x"), lambda s: s.set_session_state("s", "ended"),
        lambda s: s.reset_request("s"), lambda s: s.save_checkpoint("s", {}), lambda s: s.latest_checkpoint("s"),
        lambda s: hold(s), lambda s: s.list_reviews(), lambda s: s.get_review("rv_x"),
        lambda s: s.approve_review("rv_x", by="alice"), lambda s: s.reject_review("rv_x", by="alice"),
        lambda s: s.expire_reviews(0), lambda s: s.append_timeline("s", "k", {}), lambda s: s.timeline("s"),
        lambda s: s.append_ledger("k", {}), lambda s: s.ledger(), lambda s: s.verify_ledger(),
        lambda s: s.migrate(), lambda s: s.wait_for_reviews(0),
    ])
    def test_every_method_of_a_closed_store_raises_store_error(self, store_factory: StoreFactory,
                                                               call: Callable[[Store], object]) -> None:
        store = store_factory()
        store.close()
        store.close()  # closing twice is harmless
        with pytest.raises(StoreError):  # ReviewError is no StoreError: a closed store is not a missing review
            call(store)

    def test_a_gate_on_an_unusable_store_keeps_the_pending_candidate(self, store_factory: StoreFactory) -> None:
        """A database that is down (here: a closed store) is handled like a locked SQLite file: the decision
        stands, the records are skipped, and the held answer comes back to the caller instead of being lost."""
        from .. import Candidate, Gate, Termination, finalize_and_return

        store = store_factory()
        store.close()
        with Gate.from_config({}, store=store) as gate:  # no judge: fails closed into a pending review
            result = finalize_and_return(gate, Candidate(request="r", final_text="the held answer", session_id="s"),
                                         Termination("natural"))
        assert (result.outcome, result.pending_id, result.pending_text) == ("pending_review", None,
                                                                             "the held answer")
        assert result.store_error

    def test_begin_attempt_creates_a_running_session_at_that_attempt(self, store: Store) -> None:
        store.begin_attempt("s", 0, {"text": "first"})
        session = store.get_session("s")
        assert isinstance(session, SessionRecord)
        assert (session.session_id, session.state, session.attempt, session.follow_up) == ("s", "running", 0, "")
        assert TIMESTAMP.match(session.created_at)
        assert TIMESTAMP.match(session.updated_at)

    def test_revise_then_next_attempt(self, store: Store, clock: StepClock) -> None:
        store.begin_attempt("s", 0, {"text": "first"})
        clock.advance(1)
        store.set_revise("s", 1, "cite the test output")
        session = store.get_session("s")
        assert session is not None
        assert (session.state, session.attempt, session.follow_up) == ("running", 1, "cite the test output")
        assert session.updated_at > session.created_at
        store.begin_attempt("s", 1, {"text": "second"})
        session = store.get_session("s")
        assert session is not None
        # outstanding until the attempt's outcome replaces it: a crash mid-attempt still counts against the budget
        assert (session.state, session.attempt, session.follow_up) == ("running", 1, "cite the test output")
        assert store.attempts("s") == [{"text": "first"}, {"text": "second"}]
        store.set_revise("s", 2, "and the coverage")
        store.begin_attempt("s", 2, {"text": "third"})
        store.reset_request("s")
        session = store.get_session("s")
        assert session is not None
        assert (session.state, session.attempt, session.follow_up) == ("running", 0, "")

    def test_attempts_are_in_attempt_order_and_an_attempt_can_be_restored(self, store: Store) -> None:
        store.begin_attempt("s", 2, {"n": 2})
        store.begin_attempt("s", 0, {"n": 0})
        store.begin_attempt("s", 1, {"n": 1})
        store.begin_attempt("s", 1, {"n": "1 again"})
        assert store.attempts("s") == [{"n": 0}, {"n": "1 again"}, {"n": 2}]
        assert store.attempts("other") == []

    def test_reset_request_clears_attempts_and_the_counter_of_that_session_only(self, store: Store) -> None:
        store.begin_attempt("s", 0, {"n": 0})
        store.set_revise("s", 1, "more")
        store.begin_attempt("s", 1, {"n": 1})
        store.begin_attempt("t", 0, {"n": "t"})
        store.set_session_state("s", "paused")
        store.reset_request("s")
        session = store.get_session("s")
        assert session is not None
        assert (session.state, session.attempt, session.follow_up) == ("running", 0, "")
        assert store.attempts("s") == []
        assert store.attempts("t") == [{"n": "t"}]
        other = store.get_session("t")
        assert other is not None and other.attempt == 0

    def test_reset_request_creates_a_session_it_does_not_know(self, store: Store) -> None:
        store.reset_request("new")
        session = store.get_session("new")
        assert session is not None
        assert (session.state, session.attempt, session.follow_up) == ("running", 0, "")

    @pytest.mark.parametrize("state", ["running", "completed", "paused", "ended"])
    def test_set_session_state_keeps_the_counter(self, store: Store, state: Any) -> None:
        store.begin_attempt("s", 0, {})
        store.set_revise("s", 1, "again")
        store.set_session_state("s", state)
        session = store.get_session("s")
        assert session is not None
        assert (session.state, session.attempt, session.follow_up) == (state, 1, "again")

    def test_an_invalid_session_state_is_a_store_error_and_stores_nothing(self, store: Store) -> None:
        with pytest.raises(StoreError):
            store.set_session_state("s", "sleeping")  # type: ignore[arg-type]
        assert store.get_session("s") is None

    @pytest.mark.parametrize("call", [
        lambda s: s.begin_attempt("s", 2**70, {}),
        lambda s: s.set_revise("s", 2**70, "x"),
        lambda s: s.begin_attempt("s", -1, {}),
        lambda s: s.get_session({"not": "a string"}),
    ], ids=["huge attempt", "huge revise", "negative attempt", "non-string id"])
    def test_values_the_database_cannot_hold_are_store_errors(self, store: Store,
                                                              call: Callable[[Store], object]) -> None:
        """A driver's own error (overflow, a constraint, an unadaptable type) is mapped into StoreError."""
        with pytest.raises(StoreError):
            call(store)
        assert store.get_session("s") is None
        store.begin_attempt("s", 0, {})  # the store is still usable afterwards
        assert store.attempts("s") == [{}]

    def test_checkpoints_latest_wins_per_session(self, store: Store) -> None:
        store.save_checkpoint("s", {"step": 1})
        store.save_checkpoint("t", {"step": "t"})
        store.save_checkpoint("s", {"step": 2, "messages": [{"role": "user", "content": "日本語"}]})
        assert store.latest_checkpoint("s") == {"step": 2, "messages": [{"role": "user", "content": "日本語"}]}
        assert store.latest_checkpoint("t") == {"step": "t"}

    def test_timeline_rows_per_session_in_order(self, store: Store) -> None:
        store.append_timeline("s", "verdict", {"passed": False})
        store.append_timeline("t", "verdict", {"passed": True})
        store.append_timeline("s", "evidence", {"files": ["a.py"]})
        rows = store.timeline("s")
        assert [(row.kind, row.payload) for row in rows] == [("verdict", {"passed": False}),
                                                           ("evidence", {"files": ["a.py"]})]
        assert all(isinstance(row, TimelineRow) and row.session_id == "s" for row in rows)
        assert all(TIMESTAMP.match(row.created_at) for row in rows)
        assert rows[0].row_id < rows[1].row_id

    def test_payloads_read_back_as_plain_json(self, store: Store) -> None:
        store.append_timeline("s", "verdict", MappingProxyType({"b": (1, 2), "a": {"z": 1, "y": None},
                                                                "text": "naïve \u2028 \U0001f600 'quoted' \"too\""}))
        payload = store.timeline("s")[0].payload
        assert payload == {"a": {"y": None, "z": 1}, "b": [1, 2], "text": "naïve \u2028 \U0001f600 'quoted' \"too\""}

    @pytest.mark.parametrize("call", [
        lambda s: s.append_timeline("s", "k", {"bad": object()}),
        lambda s: s.append_ledger("k", {"nan": float("nan")}),
        lambda s: s.begin_attempt("s", 0, {"bytes": b"x"}),
        lambda s: s.save_checkpoint("s", {1: "mixed", "a": "keys"}),
        lambda s: s.create_pending_review("s", policy_action="a", reason="r", pending_text="t",
                                          candidate={"inf": float("inf")}, verdict=None),
    ], ids=["object", "NaN", "bytes", "mixed keys", "infinity"])
    def test_unstorable_payloads_are_a_store_error_and_store_nothing(self, store: Store,
                                                                     call: Callable[[Store], None]) -> None:
        with pytest.raises(StoreError):
            call(store)
        _assert_nothing_stored(store)

    @pytest.mark.parametrize("call", [
        lambda s: s.append_ledger("\ud800", {}),
        lambda s: s.append_ledger("k", {"text": "\udfff"}),
        lambda s: s.append_timeline("s", "\ud800", {}),
        lambda s: s.begin_attempt("s\ud800", 0, {}),
        lambda s: s.create_pending_review("s", policy_action="a", reason="r", pending_text="\ud800",
                                          candidate={}, verdict=None),
    ], ids=["ledger kind", "ledger payload", "timeline kind", "session id", "pending text"])
    def test_text_that_is_not_unicode_is_a_store_error_and_stores_nothing(
            self, store: Store, call: Callable[[Store], None]) -> None:
        """A lone surrogate cannot be encoded as UTF-8 by any driver: a StoreError, never a UnicodeEncodeError."""
        with pytest.raises(StoreError):
            call(store)
        _assert_nothing_stored(store)

    def test_timestamps_are_utc_with_microseconds(self, store_factory: StoreFactory) -> None:
        moment = datetime(2026, 5, 6, 9, 8, 7, 123, tzinfo=timezone(timedelta(hours=9)))
        store = store_factory(lambda: moment)
        try:
            store.begin_attempt("s", 0, {})
            session = store.get_session("s")
            assert session is not None
            assert session.created_at == "2026-05-06T00:08:07.000123Z"
        finally:
            store.close()

    def test_a_naive_clock_is_refused(self, store_factory: StoreFactory) -> None:
        store = store_factory(lambda: datetime(2026, 1, 1))  # naive on purpose
        try:
            with pytest.raises(StoreError, match="naive"):
                store.begin_attempt("s", 0, {})
        finally:
            store.close()

    def test_one_store_is_safe_across_threads(self, store: Store) -> None:
        def work(n: int) -> None:
            store.begin_attempt(f"s{n % 3}", n, {"n": n})
            store.append_ledger("k", {"n": n})

        with ThreadPoolExecutor(4) as pool:
            list(pool.map(work, range(40)))
        assert store.verify_ledger() == 40
        assert sum(len(store.attempts(f"s{i}")) for i in range(3)) == 40

    # schema and notification

    def test_migrate_is_explicit_idempotent_and_keeps_everything(self, store: Store) -> None:
        store.begin_attempt("s", 0, {"text": "kept"})
        store.append_ledger("k", {"n": 1})
        version = store.migrate()
        assert isinstance(version, int) and version >= 1
        assert store.migrate() == version
        assert store.attempts("s") == [{"text": "kept"}]
        assert store.verify_ledger() == 1

    @pytest.mark.parametrize("timeout", [-1, float("nan"), float("inf")])
    def test_wait_for_reviews_refuses_an_invalid_timeout(self, store: Store, timeout: float) -> None:
        with pytest.raises(StoreError, match="timeout_s"):
            store.wait_for_reviews(timeout)

    def test_wait_for_reviews_returns_and_a_relisting_sees_new_reviews(self, store: Store) -> None:
        store.wait_for_reviews(0)
        waited = threading.Thread(target=store.wait_for_reviews, args=(0.2,))
        waited.start()
        review_id = hold(store)
        waited.join()
        store.wait_for_reviews(0.05)
        assert [review.review_id for review in store.list_reviews("pending")] == [review_id]
