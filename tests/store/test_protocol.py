"""SQLite specifics of the Store protocol: opening files and URLs, WAL, durability settings, the stored bytes.

The backend-generic contract is ``verigate.testing.StoreConformance``, run on SQLite by test_conformance.py."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from contextlib import closing
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

import verigate.store
from verigate import StoreError
from verigate.store import (
    DEFAULT_STORE_PATH,
    SqliteStore,
    Store,
    open_store,
)
from verigate.store._schema import SCHEMA_VERSION


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
    # a scheme no installed plug-in serves (the PostgreSQL plug-in may be installed here)
    ("nosuchdb://db.example/verigate", "no store backend for 'nosuchdb' URLs is installed"),
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


def test_payloads_are_stored_as_canonical_json(db_path: Path, store: SqliteStore, raw: Any) -> None:
    store.append_timeline("s", "verdict", MappingProxyType({"b": (1, 2), "a": {"z": 1, "y": None}}))
    stored = raw(db_path).execute("SELECT payload FROM timeline").fetchone()[0]
    assert stored == '{"a":{"y":null,"z":1},"b":[1,2]}'




def test_the_public_face_is_complete() -> None:
    """Every exported name exists and every public name is exported (ruff RUF022 keeps the order)."""
    for name in verigate.store.__all__:
        assert hasattr(verigate.store, name), name
    public = {name for name in vars(verigate.store) if not name.startswith("_")} - {"annotations"}
    assert public == set(verigate.store.__all__)


def test_migrate_brings_an_empty_file_to_the_current_version(tmp_path: Path, raw: Any) -> None:
    path = tmp_path / "empty.db"
    path.touch()
    with SqliteStore(path) as store:
        assert store.migrate() == SCHEMA_VERSION
        assert store.migrate() == SCHEMA_VERSION
    assert raw(path).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_migrate_refuses_a_store_a_newer_verigate_wrote_meanwhile(db_path: Path, store: SqliteStore, raw: Any) -> None:
    raw(db_path).execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(StoreError, match="newer than this verigate understands"):
        store.migrate()


def _waiter(store: SqliteStore) -> threading.Thread:
    waiting = threading.Thread(target=store.wait_for_reviews, args=(600,), daemon=True)
    waiting.start()
    return waiting


def test_wait_for_reviews_wakes_when_another_thread_files_one(store: SqliteStore) -> None:
    waiting = _waiter(store)
    store.create_pending_review("s", policy_action="escalate", reason="r", pending_text="t", candidate={},
                                verdict=None)
    waiting.join(120)  # a liveness bound far below the 600 s the waiter would otherwise sleep
    assert not waiting.is_alive()


def test_wait_for_reviews_wakes_when_another_process_files_one(db_path: Path, store: SqliteStore) -> None:
    waiting = _waiter(store)
    code = ("import sys\nfrom verigate.store import SqliteStore\nwith SqliteStore(sys.argv[1]) as s:\n"
            "    s.create_pending_review('s', policy_action='escalate', reason='r', pending_text='t', candidate={},"
            " verdict=None)\n")
    subprocess.run([sys.executable, "-c", code, str(db_path)], check=True, timeout=120)
    waiting.join(120)
    assert not waiting.is_alive()
    assert len(store.list_reviews("pending")) == 1
