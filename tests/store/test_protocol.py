"""The Store protocol on real SQLite files: sessions, attempts, checkpoints, timeline, opening and URLs."""

from __future__ import annotations

import re
from collections.abc import Callable
from contextlib import closing
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from verigate import StoreError
from verigate.store import (
    DEFAULT_STORE_PATH,
    SessionRecord,
    SqliteStore,
    Store,
    TimelineRow,
    open_store,
)

TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$")


def test_open_store_creates_the_folder_and_satisfies_the_protocol(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "store.db"
    store = open_store(str(path))
    try:
        assert isinstance(store, Store)
        assert isinstance(store, SqliteStore)
        assert path.is_file()
        store.begin_attempt("s", 0, {"text": "x"})
    finally:
        store.close()
    with closing(open_store(f"sqlite:///{path}")) as reopened:
        assert reopened.attempts("s") == [{"text": "x"}]


def test_the_file_is_in_wal_mode_with_a_schema_version(db_path: Path, store: SqliteStore, raw: Any) -> None:
    conn = raw(db_path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA user_version").fetchone()[0] >= 1


def _synchronous(store: SqliteStore) -> int:
    assert store._conn is not None
    return int(store._conn.execute("PRAGMA synchronous").fetchone()[0])


def test_reviews_are_flushed_to_disk_and_other_writes_ride_along(db_path: Path) -> None:
    normal, full = 1, 2
    with SqliteStore(db_path) as store:
        assert _synchronous(store) == normal
        review_id = store.create_pending_review("s", policy_action="escalate", reason="r", pending_text="t",
                                                candidate={}, verdict=None)
        store.approve_review(review_id, by="alice")
        assert _synchronous(store) == normal  # restored after each durable commit
    with SqliteStore(db_path, sync_every_write=True) as store:
        assert _synchronous(store) == full
        store.append_ledger("k", {})
        store.approve_review(review_id, by="alice")
        assert _synchronous(store) == full


def test_relative_sqlite_url_and_default_path_resolve_against_the_working_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with closing(open_store("sqlite:///rel/x.db")) as store:
        store.append_ledger("k", {})
    assert (tmp_path / "rel" / "x.db").is_file()
    with closing(open_store()) as default:
        default.append_ledger("k", {})
    assert (tmp_path / DEFAULT_STORE_PATH).is_file()


@pytest.mark.parametrize("url", [":memory:", "sqlite://", "sqlite:///:memory:"])
def test_memory_stores_work_and_are_private(url: str) -> None:
    first, second = open_store(url), open_store(url)
    first.begin_attempt("s", 0, {"n": 1})
    assert first.attempts("s") == [{"n": 1}]
    assert second.get_session("s") is None
    assert first.verify_ledger() == 0
    first.close()
    second.close()


@pytest.mark.parametrize(("url", "words"), [
    ("postgresql://db.example/verigate", "no built-in store for 'postgresql'"),
    ("sqlite:relative.db", "sqlite:///relative/path"),
    ("sqlite:///", "names no file"),
])
def test_unsupported_urls_are_refused(url: str, words: str) -> None:
    with pytest.raises(StoreError, match=re.escape(words)) as caught:
        open_store(url)
    assert caught.value.source == url


def test_create_false_refuses_a_missing_store(tmp_path: Path) -> None:
    missing = tmp_path / "none.db"
    with pytest.raises(StoreError, match="no store here") as caught:
        open_store(str(missing), create=False)
    assert caught.value.source == str(missing)
    assert not missing.exists()


@pytest.mark.parametrize("timeout", [-1, float("nan"), float("inf")])
def test_lock_timeout_must_be_a_finite_non_negative_number(tmp_path: Path, timeout: float) -> None:
    with pytest.raises(StoreError, match="lock_timeout_s"):
        open_store(str(tmp_path / "x.db"), lock_timeout_s=timeout)


def test_a_closed_store_raises_store_error(store: SqliteStore) -> None:
    store.close()
    store.close()  # closing twice is harmless
    with pytest.raises(StoreError, match="closed"):
        store.get_session("s")


def test_begin_attempt_creates_a_running_session_at_that_attempt(store: SqliteStore) -> None:
    assert store.get_session("s") is None
    store.begin_attempt("s", 0, {"text": "first"})
    session = store.get_session("s")
    assert isinstance(session, SessionRecord)
    assert (session.state, session.attempt, session.follow_up) == ("running", 0, "")
    assert TIMESTAMP.match(session.created_at)
    assert TIMESTAMP.match(session.updated_at)


def test_revise_then_next_attempt(store: SqliteStore, clock: Any) -> None:
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
    assert (session.attempt, session.follow_up) == (0, "")


def test_attempts_are_in_attempt_order_and_an_attempt_can_be_restored(store: SqliteStore) -> None:
    store.begin_attempt("s", 2, {"n": 2})
    store.begin_attempt("s", 0, {"n": 0})
    store.begin_attempt("s", 1, {"n": 1})
    store.begin_attempt("s", 1, {"n": "1 again"})
    assert store.attempts("s") == [{"n": 0}, {"n": "1 again"}, {"n": 2}]
    assert store.attempts("other") == []


def test_reset_request_clears_attempts_and_the_counter_of_that_session_only(store: SqliteStore) -> None:
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


@pytest.mark.parametrize("state", ["running", "completed", "paused", "ended"])
def test_set_session_state(store: SqliteStore, state: Any) -> None:
    store.begin_attempt("s", 0, {})
    store.set_revise("s", 1, "again")
    store.set_session_state("s", state)
    session = store.get_session("s")
    assert session is not None
    assert (session.state, session.attempt, session.follow_up) == (state, 1, "again")


def test_an_invalid_session_state_is_a_store_error(store: SqliteStore) -> None:
    with pytest.raises(StoreError, match="CHECK constraint"):
        store.set_session_state("s", "sleeping")  # type: ignore[arg-type]
    assert store.get_session("s") is None


@pytest.mark.parametrize("call", [
    lambda s: s.begin_attempt("s", 2**70, {}),
    lambda s: s.set_revise("s", 2**70, "x"),
    lambda s: s.get_session({"not": "a string"}),
])
def test_values_sqlite_cannot_bind_are_store_errors(store: SqliteStore, call: Callable[[SqliteStore], object]) -> None:
    with pytest.raises(StoreError):
        call(store)
    assert store.get_session("s") is None


def test_checkpoints_latest_wins_per_session(store: SqliteStore) -> None:
    assert store.latest_checkpoint("s") is None
    store.save_checkpoint("s", {"step": 1})
    store.save_checkpoint("t", {"step": "t"})
    store.save_checkpoint("s", {"step": 2, "messages": [{"role": "user", "content": "日本語"}]})
    assert store.latest_checkpoint("s") == {"step": 2, "messages": [{"role": "user", "content": "日本語"}]}
    assert store.latest_checkpoint("t") == {"step": "t"}


def test_timeline_rows_per_session_in_order(store: SqliteStore) -> None:
    store.append_timeline("s", "verdict", {"passed": False})
    store.append_timeline("t", "verdict", {"passed": True})
    store.append_timeline("s", "evidence", {"files": ["a.py"]})
    rows = store.timeline("s")
    assert [(row.kind, row.payload) for row in rows] == [("verdict", {"passed": False}),
                                                       ("evidence", {"files": ["a.py"]})]
    assert all(isinstance(row, TimelineRow) and row.session_id == "s" for row in rows)
    assert rows[0].row_id < rows[1].row_id


def test_payloads_are_stored_as_canonical_json(db_path: Path, store: SqliteStore, raw: Any) -> None:
    store.append_timeline("s", "verdict", MappingProxyType({"b": (1, 2), "a": {"z": 1, "y": None}}))
    stored = raw(db_path).execute("SELECT payload FROM timeline").fetchone()[0]
    assert stored == '{"a":{"y":null,"z":1},"b":[1,2]}'


@pytest.mark.parametrize("call", [
    lambda s: s.append_timeline("s", "k", {"bad": object()}),
    lambda s: s.append_ledger("k", {"nan": float("nan")}),
    lambda s: s.begin_attempt("s", 0, {"bytes": b"x"}),
    lambda s: s.save_checkpoint("s", {1: "mixed", "a": "keys"}),
])
def test_unstorable_payloads_are_a_store_error_and_store_nothing(store: SqliteStore,
                                                                 call: Callable[[SqliteStore], None]) -> None:
    with pytest.raises(StoreError, match="cannot be stored as JSON"):
        call(store)
    assert store.get_session("s") is None
    assert store.timeline("s") == []
    assert store.ledger() == []


def test_timestamps_are_utc_with_microseconds(db_path: Path) -> None:
    moment = datetime(2026, 5, 6, 9, 8, 7, 123, tzinfo=timezone(timedelta(hours=9)))
    with SqliteStore(db_path, clock=lambda: moment) as store:
        store.begin_attempt("s", 0, {})
        session = store.get_session("s")
        assert session is not None
        assert session.created_at == "2026-05-06T00:08:07.000123Z"


def test_a_naive_clock_is_refused(db_path: Path) -> None:
    with SqliteStore(db_path, clock=lambda: datetime(2026, 1, 1)) as store, \
            pytest.raises(StoreError, match="naive"):
        store.begin_attempt("s", 0, {})


def test_one_store_is_safe_across_threads(store: SqliteStore) -> None:
    from concurrent.futures import ThreadPoolExecutor

    def work(n: int) -> None:
        store.begin_attempt(f"s{n % 3}", n, {"n": n})
        store.append_ledger("k", {"n": n})

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(work, range(40)))
    assert store.verify_ledger() == 40
    assert sum(len(store.attempts(f"s{i}")) for i in range(3)) == 40

