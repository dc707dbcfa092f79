"""The ledger's hash chain, independent of any database: canonical JSON, row hashes and verification."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .. import _face
from .._errors import LedgerTamperedError, StoreError
from ._base import LedgerRow

__all__ = ["GENESIS_HASH", "canonical_json", "ledger_row_hash", "ledger_row_hash_of_json", "verify_chain"]

#: the ``prev_hash`` of the first ledger row
GENESIS_HASH = "0" * 64


def _plain(value: Any) -> Any:
    """json.dumps fallback: read-only mappings and non-list sequences are stored as objects and arrays."""
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, Sequence) and not isinstance(value, str | bytes | bytearray):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON-serializable")


# built once: json.dumps with options builds a new encoder per call (a few µs, ten times per finalize); an encoder
# keeps only its options, so one instance serves every thread
_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False,
                            default=_plain)


def canonical_json(value: Any, *, field: str | None = None) -> str:
    """Sorted keys, no insignificant whitespace, no NaN: equal values always give equal text (and hash)."""
    try:
        return _ENCODER.encode(value)
    except (TypeError, ValueError) as exc:
        raise StoreError(f"cannot be stored as JSON: {exc}", field=field) from exc


def ledger_row_hash(prev_hash: str, seq: int, kind: str, payload: Mapping[str, Any], created_at: str) -> str:
    """``sha256(prev_hash + canonical JSON of {seq, kind, payload, created_at})`` as hex."""
    return ledger_row_hash_of_json(prev_hash, seq, kind, canonical_json(payload, field="payload"), created_at)


def ledger_row_hash_of_json(prev_hash: str, seq: int, kind: str, payload_json: str, created_at: str) -> str:
    """:func:`ledger_row_hash` for a payload already in canonical JSON (saves encoding it twice per append)."""
    # the keys of {seq, kind, payload, created_at} in sorted order, exactly as canonical_json writes them
    body = (f'{{"created_at":{canonical_json(created_at)},"kind":{canonical_json(kind)},"payload":{payload_json},'
            f'"seq":{canonical_json(seq)}}}')
    return hashlib.sha256((prev_hash + body).encode("utf-8")).hexdigest()


def verify_chain(rows: Iterable[LedgerRow], *, source: str | None = None,
                 head: tuple[int, str] | None = None) -> int:
    """Re-hash rows given in ``seq`` order; return their number or raise naming the first bad ``seq``.

    ``head`` is the (seq, row_hash) of the last row as the store recorded it when appending; it catches rows
    cut off the end of the chain, which the chain alone cannot show.
    """
    prev_hash = GENESIS_HASH
    expected_seq = 1
    for row in rows:
        if row.seq != expected_seq:
            raise LedgerTamperedError(
                f"row missing or renumbered (the next row found is seq {row.seq})", source=source,
                field=f"seq {expected_seq}")
        if row.prev_hash != prev_hash:
            raise LedgerTamperedError("prev_hash does not match the previous row's hash (a row before it was "
                                      "deleted, reordered or rewritten)", source=source, field=f"seq {row.seq}")
        if ledger_row_hash(row.prev_hash, row.seq, row.kind, row.payload, row.created_at) != row.row_hash:
            raise LedgerTamperedError("row_hash does not match the row's content (the row or its hash was edited)",
                                      source=source, field=f"seq {row.seq}")
        prev_hash = row.row_hash
        expected_seq += 1
    count = expected_seq - 1
    if head is not None:
        head_seq, head_hash = head
        if head_seq > count:
            raise LedgerTamperedError(f"rows {count + 1}..{head_seq} are missing (the ledger was truncated)",
                                      source=source, field=f"seq {count + 1}")
        if head_seq < count:
            raise LedgerTamperedError("row was added without going through the store", source=source,
                                      field=f"seq {head_seq + 1}")
        if head_hash != prev_hash:
            raise LedgerTamperedError("the last row's hash differs from the recorded head (the chain was rewritten)",
                                      source=source, field=f"seq {count}")
    return count


_face.present_module(globals())  # the names verigate.store exports report it
