"""The hash-chained ledger: rows chain from genesis, and every class of tampering names the first bad row."""

from __future__ import annotations

import json
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verigate import LedgerTamperedError, StoreError
from verigate.store import GENESIS_HASH, LedgerRow, SqliteStore, canonical_json, ledger_row_hash, verify_chain

Tamper = Callable[[sqlite3.Connection], None]


def _attacker(path: Path) -> sqlite3.Connection:
    """A connection that has removed the append-only triggers, as someone editing the file by hand would."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("DROP TRIGGER IF EXISTS ledger_no_update")
    conn.execute("DROP TRIGGER IF EXISTS ledger_no_delete")
    return conn


def _fill(store: SqliteStore, count: int) -> list[LedgerRow]:
    return [store.append_ledger("verification_policy", {"n": n, "action": "accept"}) for n in range(count)]


def test_the_ledger_refuses_updates_and_deletes(db_path: Path, store: SqliteStore) -> None:
    _fill(store, 2)
    conn = sqlite3.connect(db_path, isolation_level=None)
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("UPDATE ledger SET payload = '{}' WHERE seq = 1")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("DELETE FROM ledger WHERE seq = 2")
    assert store.verify_ledger() == 2


TAMPERS: dict[str, tuple[Tamper, int]] = {
    "edited payload": (lambda c: c.execute("""UPDATE ledger SET payload = '{"action":"accept","n":99}'
                                              WHERE seq = 3"""), 3),
    "non-JSON payload": (lambda c: c.execute("UPDATE ledger SET payload = 'not json' WHERE seq = 2"), 2),
    "edited kind": (lambda c: c.execute("UPDATE ledger SET kind = 'other' WHERE seq = 4"), 4),
    "edited timestamp": (lambda c: c.execute("UPDATE ledger SET created_at = '2000-01-01T00:00:00.000000Z' "
                                             "WHERE seq = 1"), 1),
    "edited row hash": (lambda c: c.execute(f"UPDATE ledger SET row_hash = '{'f' * 64}' WHERE seq = 2"), 2),
    "edited prev hash": (lambda c: c.execute(f"UPDATE ledger SET prev_hash = '{'a' * 64}' WHERE seq = 3"), 3),
    "deleted middle row": (lambda c: c.execute("DELETE FROM ledger WHERE seq = 3"), 3),
    "deleted first row": (lambda c: c.execute("DELETE FROM ledger WHERE seq = 1"), 1),
    "deleted last row": (lambda c: c.execute("DELETE FROM ledger WHERE seq = 5"), 5),
    "renumbered row": (lambda c: c.execute("UPDATE ledger SET seq = 50 WHERE seq = 2"), 2),
    "reordered rows": (lambda c: c.executescript("""UPDATE ledger SET seq = 100 WHERE seq = 2;
                                                    UPDATE ledger SET seq = 2 WHERE seq = 3;
                                                    UPDATE ledger SET seq = 3 WHERE seq = 100;"""), 2),
    # a repeated key: json_extract (first wins) reads "completed", a last-wins reader the original value
    "prepended repeated key": (lambda c: c.execute(
        """UPDATE ledger SET payload = '{"action":"escalate","action":"accept","n":1}' WHERE seq = 2"""), 2),
    "NaN in payload": (lambda c: c.execute("""UPDATE ledger SET payload = '{"action":"accept","n":NaN}'
                                              WHERE seq = 2"""), 2),
    "non-canonical payload": (lambda c: c.execute("""UPDATE ledger SET payload = '{"n": 0, "action": "accept"}'
                                                     WHERE seq = 1"""), 1),
    "deeply nested payload": (lambda c: c.execute(
        "UPDATE ledger SET payload = '" + '{"a":' * 200 + "1" + "}" * 200 + "' WHERE seq = 3"), 3),
    "lone surrogate in payload": (lambda c: c.execute(
        """UPDATE ledger SET payload = CAST(X'7B226E223A22EDA080227D' AS TEXT) WHERE seq = 4"""), 4),
    "BLOB kind": (lambda c: c.execute("UPDATE ledger SET kind = CAST('verification_policy' AS BLOB) WHERE seq = 2"),
                  2),
    "integer timestamp": (lambda c: c.execute("UPDATE ledger SET created_at = 1 WHERE seq = 5"), 5),
    # SQLite's own functions and the sqlite3 shell stop at a NUL: "verification_policy\0x" reads as the real kind
    "NUL in kind": (lambda c: c.execute("UPDATE ledger SET kind = 'verification_policy' || char(0) || 'x' "
                                        "WHERE seq = 2"), 2),
    "short row hash": (lambda c: c.execute("UPDATE ledger SET row_hash = 'abc' WHERE seq = 3"), 3),
    "row inserted behind the store's back": (lambda c: c.execute(
        f"INSERT INTO ledger VALUES (6, 'k', '{{}}', '2030-01-01T00:00:00.000000Z', '{'0' * 64}', '{'0' * 64}')"),
        6),
}


@pytest.mark.parametrize("name", TAMPERS)
def test_tampering_is_detected_naming_the_first_bad_row(db_path: Path, store: SqliteStore, name: str) -> None:
    _fill(store, 5)
    tamper, bad_seq = TAMPERS[name]
    tamper(_attacker(db_path))
    with pytest.raises(LedgerTamperedError) as caught:
        store.verify_ledger()
    assert caught.value.field == f"seq {bad_seq}"
    assert caught.value.source == str(db_path)
    assert f"seq {bad_seq}:" in str(caught.value)
    assert caught.value.exit_code == 1
    assert isinstance(caught.value, StoreError)


def test_a_removed_head_record_is_tampering(db_path: Path, store: SqliteStore) -> None:
    _fill(store, 2)
    _attacker(db_path).execute("DELETE FROM ledger_head")
    with pytest.raises(LedgerTamperedError, match="head is missing") as caught:
        store.verify_ledger()
    assert caught.value.field == "ledger_head"


def test_a_consistently_rewritten_chain_is_caught_by_the_recorded_head(db_path: Path, store: SqliteStore) -> None:
    """Rewriting a row and re-hashing everything after it still differs from the head the store recorded."""
    rows = _fill(store, 3)
    conn = _attacker(db_path)
    prev = rows[0].row_hash
    for row in rows[1:]:
        payload = {**row.payload, "action": "forged"}
        new_hash = ledger_row_hash(prev, row.seq, row.kind, payload, row.created_at)
        conn.execute("UPDATE ledger SET payload = ?, row_hash = ?, prev_hash = ? WHERE seq = ?",
                     (canonical_json(payload), new_hash, prev, row.seq))
        prev = new_hash
    with pytest.raises(LedgerTamperedError, match="head") as caught:
        store.verify_ledger()
    assert caught.value.field == "seq 3"


def test_verify_chain_works_on_rows_from_any_backend() -> None:
    rows, prev = [], GENESIS_HASH
    for seq in (1, 2):
        row_hash = ledger_row_hash(prev, seq, "k", {"seq": seq}, "2026-01-01T00:00:00.000000Z")
        rows.append(LedgerRow(seq=seq, kind="k", payload={"seq": seq}, created_at="2026-01-01T00:00:00.000000Z",
                              prev_hash=prev, row_hash=row_hash))
        prev = row_hash
    assert verify_chain(rows) == 2
    assert verify_chain(rows, head=(2, prev)) == 2
    with pytest.raises(LedgerTamperedError, match="truncated"):
        verify_chain(rows[:1], head=(2, prev))


# properties: any sequence of appends verifies; any single-row mutation fails, naming that row

json_values = st.recursive(
    # the integers every JSON reader holds exactly; larger ones are refused (test_the_store_refuses_…)
    st.none() | st.booleans() | st.integers(-(2**53 - 1), 2**53 - 1) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=10,
)
payloads = st.dictionaries(st.text(max_size=10), json_values, max_size=5)
kinds = st.sampled_from(["verification_policy", "review_resolution"]) | st.text(
    # a NUL or a lone surrogate is refused (see the conformance suite)
    st.characters(codec="utf-8", blacklist_characters="\x00"), min_size=1, max_size=12)
appends = st.lists(st.tuples(kinds, payloads),
                   min_size=1, max_size=8)
PROPERTY_SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


MUTATIONS = ["payload", "kind", "created_at", "prev_hash", "row_hash", "delete", "renumber"]


def _flip_first_hex(value: str) -> str:
    return "0123456789abcdef"[(int(value[0], 16) + 1) % 16] + value[1:]


def _mutate(conn: sqlite3.Connection, mutation: str, seq: int, count: int) -> None:
    if mutation == "delete":
        conn.execute("DELETE FROM ledger WHERE seq = ?", (seq,))
        return
    kind, payload, created_at, prev_hash, row_hash = conn.execute(
        "SELECT kind, payload, created_at, prev_hash, row_hash FROM ledger WHERE seq = ?", (seq,)).fetchone()
    edited = {
        # the generated keys are at most 10 characters long, so this key is always new
        "payload": ("payload", canonical_json({**json.loads(payload), "__tampered_by_the_test__": True})),
        "kind": ("kind", kind + "!"),
        "created_at": ("created_at", created_at.replace("Z", "1Z")),
        "prev_hash": ("prev_hash", _flip_first_hex(prev_hash)),
        "row_hash": ("row_hash", _flip_first_hex(row_hash)),
        "renumber": ("seq", count + 10),
    }
    column, value = edited[mutation]
    conn.execute(f"UPDATE ledger SET {column} = ? WHERE seq = ?", (value, seq))


@PROPERTY_SETTINGS
@given(appends, st.data())
def test_any_single_row_mutation_fails_verification(rows: list[tuple[str, dict[str, Any]]],
                                                    data: st.DataObject) -> None:
    seq = data.draw(st.integers(1, len(rows)), label="seq")
    mutation = data.draw(st.sampled_from(MUTATIONS), label="mutation")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "l.db"
        with SqliteStore(path) as store:
            for kind, payload in rows:
                store.append_ledger(kind, payload)
            attacker = _attacker(path)
            _mutate(attacker, mutation, seq, len(rows))
            attacker.close()
            with pytest.raises(LedgerTamperedError) as caught:
                store.verify_ledger()
        assert caught.value.field == f"seq {seq}"
