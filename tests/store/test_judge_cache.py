"""The store's judge-call cache methods (``cached_verdict`` / ``cache_verdict``) on a real SQLite file: expiry by the
store's clock, replacement, strict reads, bounded inputs, and the migration of a store made before the table."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verigate import StoreError
from verigate.store import SqliteStore
from verigate.store._schema import MIGRATIONS, SCHEMA_VERSION


def _key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


ENTRY = {"format": 1, "verdict": {"passed": True}, "note": "déjà vu"}


def test_an_entry_is_returned_until_its_ttl_passes_by_the_stores_clock(store: SqliteStore, clock: object) -> None:
    store.cache_verdict(_key("a"), ENTRY, 60)
    assert store.cached_verdict(_key("a")) == ENTRY and store.cached_verdict(_key("b")) is None
    clock.advance(59.999)  # type: ignore[attr-defined]
    assert store.cached_verdict(_key("a")) == ENTRY
    clock.advance(0.001)  # type: ignore[attr-defined]
    assert store.cached_verdict(_key("a")) is None


def test_an_entry_is_replaced_and_expired_rows_are_dropped_on_write(
    store: SqliteStore, clock: object, db_path: Path, raw: Callable[[Path], sqlite3.Connection]
) -> None:
    store.cache_verdict(_key("a"), ENTRY, 10)
    store.cache_verdict(_key("a"), {"replaced": True}, 100)
    assert store.cached_verdict(_key("a")) == {"replaced": True}
    store.cache_verdict(_key("b"), ENTRY, 10)
    clock.advance(50)  # type: ignore[attr-defined]
    store.cache_verdict(_key("c"), ENTRY, 10)
    keys = {row[0] for row in raw(db_path).execute("SELECT cache_key FROM judge_cache")}
    assert keys == {_key("a"), _key("c")}


@pytest.mark.parametrize("key", ["", "A" * 64, "g" * 64, _key("a")[:-1], _key("a") + "0", 7])
def test_a_key_that_is_not_a_sha256_hex_digest_is_refused(store: SqliteStore, key: object) -> None:
    with pytest.raises(StoreError, match="sha256"):
        store.cache_verdict(key, ENTRY, 10)  # type: ignore[arg-type]
    with pytest.raises(StoreError, match="sha256"):
        store.cached_verdict(key)  # type: ignore[arg-type]


@pytest.mark.parametrize("ttl", [0, -1, float("nan"), float("inf"), True, "10", 1e12])
def test_a_ttl_outside_its_bounds_is_refused(store: SqliteStore, ttl: object) -> None:
    with pytest.raises(StoreError, match="ttl_s"):
        store.cache_verdict(_key("a"), ENTRY, ttl)  # type: ignore[arg-type]


def test_an_entry_that_is_not_json_or_too_large_is_refused(store: SqliteStore) -> None:
    with pytest.raises(StoreError):
        store.cache_verdict(_key("a"), {"x": float("nan")}, 10)
    with pytest.raises(StoreError, match="limited"):
        store.cache_verdict(_key("a"), {"x": "y" * 300_000}, 10)


@pytest.mark.parametrize("stored", ['{"a": 1, "a": 2}', "NaN", "[1]", '{"a": ' * 200 + "1" + "}" * 200])
def test_a_damaged_row_is_a_store_error_never_a_value(
    store: SqliteStore, db_path: Path, raw: Callable[[Path], sqlite3.Connection], stored: str
) -> None:
    store.cache_verdict(_key("a"), ENTRY, 60)
    raw(db_path).execute("UPDATE judge_cache SET entry = ?", (stored,))
    with pytest.raises(StoreError):
        store.cached_verdict(_key("a"))


def test_a_store_made_before_the_cache_table_is_migrated(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(db_path, isolation_level=None)
    for statement in MIGRATIONS[0]:
        conn.execute(statement)
    conn.execute("PRAGMA user_version = 1")
    conn.close()
    with SqliteStore(db_path) as store:
        store.cache_verdict(_key("a"), ENTRY, 60)
        assert store.cached_verdict(_key("a")) == ENTRY
    with sqlite3.connect(db_path) as check:
        assert check.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION >= 2


@settings(max_examples=60, deadline=None)
@given(ttls=st.lists(st.integers(1, 1000), min_size=1, max_size=6), elapsed=st.integers(0, 1200))
def test_expiry_matches_an_independent_clock(tmp_path_factory: pytest.TempPathFactory, ttls: list[int],
                                             elapsed: int) -> None:
    from datetime import UTC, datetime, timedelta

    now = [datetime(2026, 3, 1, tzinfo=UTC)]
    path = tmp_path_factory.mktemp("cache") / "verigate.db"
    with SqliteStore(path, clock=lambda: now[0]) as store:
        for index, ttl in enumerate(ttls):
            store.cache_verdict(_key(str(index)), {"n": index}, ttl)
        now[0] += timedelta(seconds=elapsed)
        live = [index for index in range(len(ttls)) if store.cached_verdict(_key(str(index))) is not None]
    assert live == [index for index, ttl in enumerate(ttls) if elapsed < ttl]
