"""Where the gate keeps sessions, attempts, pending reviews and the hash-chained ledger (embedded: SQLite; other
backends from ``verigate_store_backends`` plug-ins)."""

from __future__ import annotations

from .. import _face

#: type checkers read this constant as typing.TYPE_CHECKING
_TYPE_CHECKING = False
if _TYPE_CHECKING:
    from ._base import LedgerRow, PendingReview, ReviewStatus, SessionRecord, Store, TimelineRow
    from ._cache_entry import (
        MAX_CACHE_ENTRY_CHARS,
        MAX_CACHE_TTL_S,
        cache_entry_text,
        check_cache_key,
        read_cache_entry,
    )
    from ._chain import GENESIS_HASH, canonical_json, ledger_row_hash, ledger_row_hash_of_json, verify_chain
    from ._clock import Clock
    from ._open import StoreOpener, open_store
    from ._resolution import Decision, check_resolver, resolution_rows, settled, state_after
    from ._sqlite import DEFAULT_STORE_PATH, SqliteStore

#: the module each exported name lives in: it is imported on first use (see verigate._face.lazy)
_EXPORTS: dict[str, tuple[str, ...]] = {
    "_base": ("LedgerRow", "PendingReview", "ReviewStatus", "SessionRecord", "Store", "TimelineRow"),
    "_cache_entry": (
        "MAX_CACHE_ENTRY_CHARS", "MAX_CACHE_TTL_S", "cache_entry_text", "check_cache_key", "read_cache_entry",
    ),
    "_chain": ("GENESIS_HASH", "canonical_json", "ledger_row_hash", "ledger_row_hash_of_json", "verify_chain"),
    "_clock": ("Clock",),
    "_open": ("StoreOpener", "open_store"),
    "_resolution": ("Decision", "check_resolver", "resolution_rows", "settled", "state_after"),
    "_sqlite": ("DEFAULT_STORE_PATH", "SqliteStore"),
}

__all__ = [
    "DEFAULT_STORE_PATH",
    "GENESIS_HASH",
    "MAX_CACHE_ENTRY_CHARS",
    "MAX_CACHE_TTL_S",
    "Clock",
    "Decision",
    "LedgerRow",
    "PendingReview",
    "ReviewStatus",
    "SessionRecord",
    "SqliteStore",
    "Store",
    "StoreOpener",
    "TimelineRow",
    "cache_entry_text",
    "canonical_json",
    "check_cache_key",
    "check_resolver",
    "ledger_row_hash",
    "ledger_row_hash_of_json",
    "open_store",
    "read_cache_entry",
    "resolution_rows",
    "settled",
    "state_after",
    "verify_chain",
]

__getattr__, __dir__ = _face.lazy(globals())
