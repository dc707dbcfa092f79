"""Conformance: the hash-chained ledger as documented, whatever the database under it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import pytest

from .._errors import LedgerTamperedError, StoreError
from ..store import GENESIS_HASH, LedgerRow, Store, verify_chain
from ._support import Fixtures, StoreFactory

__all__ = ["LedgerContract", "assert_documented_chain"]

#: the fields of a row an edit can reach, and how the test edits each
_EDITS: dict[str, Callable[[LedgerRow], dict[str, Any]]] = {
    "payload": lambda row: {"payload": {**row.payload, "__tampered__": True}},
    "kind": lambda row: {"kind": row.kind + "!"},
    "created_at": lambda row: {"created_at": row.created_at.replace("Z", "1Z")},
    "prev_hash": lambda row: {"prev_hash": _flip(row.prev_hash)},
    "row_hash": lambda row: {"row_hash": _flip(row.row_hash)},
    "seq": lambda row: {"seq": row.seq + 100},
}


def _flip(value: str) -> str:
    return "0123456789abcdef"[(int(value[0], 16) + 1) % 16] + value[1:]


def assert_documented_chain(rows: Sequence[LedgerRow]) -> None:
    """Recompute every hash from the documented formula with nothing but json and hashlib (an independent
    oracle: not ``verigate.store.ledger_row_hash``)."""
    assert [row.seq for row in rows] == list(range(1, len(rows) + 1))
    for previous, row in zip([None, *rows], rows, strict=False):
        assert row.prev_hash == (previous.row_hash if previous else GENESIS_HASH)
        body = json.dumps({"seq": row.seq, "kind": row.kind, "payload": row.payload, "created_at": row.created_at},
                          sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        assert row.row_hash == hashlib.sha256((row.prev_hash + body).encode()).hexdigest()


def _fill(store: Store, count: int) -> list[LedgerRow]:
    return [store.append_ledger("verification_policy", {"n": n, "action": "accept"}) for n in range(count)]


class LedgerContract(Fixtures):
    def test_rows_chain_from_genesis_with_the_documented_hash(self, store: Store) -> None:
        rows = _fill(store, 3)
        assert [row.seq for row in rows] == [1, 2, 3]
        assert rows[0].prev_hash == GENESIS_HASH == "0" * 64
        assert_documented_chain(rows)
        assert list(store.ledger()) == rows
        assert store.verify_ledger() == 3

    def test_an_empty_ledger_verifies(self, store: Store) -> None:
        assert store.verify_ledger() == 0
        assert store.ledger() == []

    def test_review_resolutions_and_appends_share_one_chain(self, store: Store) -> None:
        store.append_ledger("verification_policy", {"n": 0})
        review_id = store.create_pending_review("s", policy_action="escalate", reason="r", pending_text="t",
                                                candidate={}, verdict=None)
        store.approve_review(review_id, by="alice")
        store.append_ledger("verification_policy", {"n": 1})
        rows = list(store.ledger())
        assert [row.kind for row in rows] == ["verification_policy", "review_resolution", "verification_policy"]
        assert_documented_chain(rows)
        assert store.verify_ledger() == 3

    def test_appends_continue_the_chain_after_reopening(self, store_url: str) -> None:
        first = self.open_url(store_url)
        try:
            _fill(first, 2)
        finally:
            first.close()
        second = self.open_url(store_url)
        try:
            assert second.append_ledger("k", {}).seq == 3
            assert second.verify_ledger() == 3
            assert_documented_chain(list(second.ledger()))
        finally:
            second.close()

    @pytest.mark.parametrize(("kind", "payload"), [
        ("verification_policy\x00x", {"n": 1}),  # C string functions and shells would read "verification_policy"
        ("verification_policy", {"n": 2**53}),  # json_extract and JavaScript would read a nearby float
        ("verification_policy", {"n": -(2**53)}),
        ("verification_policy", {"nested": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}),  # noqa: E501
    ], ids=["NUL in kind", "2**53", "-2**53", "nesting past 64 levels"])
    def test_the_store_refuses_a_row_two_readers_would_read_differently(self, store: Store, kind: str,
                                                                        payload: dict[str, Any]) -> None:
        with pytest.raises(StoreError):
            store.append_ledger(kind, payload)
        assert store.ledger() == [] and store.verify_ledger() == 0

    @pytest.mark.parametrize("field", sorted(_EDITS))
    def test_the_rows_it_returns_catch_any_single_edit(self, store: Store, field: str) -> None:
        """What the store returns carries the whole chain: editing any field of any row fails verification at
        that row (``verify_chain`` is what ``verify_ledger`` of every backend is built on)."""
        _fill(store, 4)
        rows = list(store.ledger())
        for index, row in enumerate(rows):
            edited = [*rows[:index], attrs.evolve(row, **_EDITS[field](row)), *rows[index + 1:]]
            with pytest.raises(LedgerTamperedError) as caught:
                verify_chain(edited, head=(rows[-1].seq, rows[-1].row_hash))
            assert caught.value.field == f"seq {row.seq}"
        assert store.verify_ledger() == 4

    def test_any_sequence_of_appends_verifies(self, store_factory: StoreFactory) -> None:
        pytest.importorskip("hypothesis")
        from hypothesis import HealthCheck, given, settings
        from hypothesis import strategies as st

        json_values = st.recursive(
            # the integers every JSON reader holds exactly; larger ones are refused (see above)
            st.none() | st.booleans() | st.integers(-(2**53 - 1), 2**53 - 1)
            | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
            lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children,
                                                                               max_size=4),
            max_leaves=10)
        kinds = st.sampled_from(["verification_policy", "review_resolution"]) | st.text(
            st.characters(codec="utf-8", blacklist_characters="\x00"), min_size=1, max_size=12)
        appends = st.lists(st.tuples(kinds, st.dictionaries(st.text(max_size=10), json_values, max_size=5)),
                           min_size=1, max_size=8)

        @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
        @given(appends)
        def check(rows: list[tuple[str, dict[str, Any]]]) -> None:
            store = store_factory()
            try:
                for kind, payload in rows:
                    store.append_ledger(kind, payload)
                assert store.verify_ledger() == len(rows)
                stored = list(store.ledger())
                assert_documented_chain(stored)
                # what comes back is the JSON of what went in (canonical: equal values, equal text)
                assert [(row.kind, row.payload) for row in stored] == [
                    (kind, json.loads(json.dumps(payload))) for kind, payload in rows]
            finally:
                store.close()

        check()
