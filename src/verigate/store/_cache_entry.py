"""The judge-call cache's entries as every backend stores them: one key format, one size bound, one TTL bound and
one strict reading, so SQLite, PostgreSQL and a third party's backend refuse exactly the same things."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from .. import _face
from .. import _json as strict_json
from .._errors import StoreError
from ._chain import canonical_json

__all__ = ["MAX_CACHE_ENTRY_CHARS", "MAX_CACHE_TTL_S", "cache_entry_text", "check_cache_key", "read_cache_entry"]

#: a verdict entry is a few hundred characters; far more is not one verigate wrote
MAX_CACHE_ENTRY_CHARS = 256_000
#: ten years: past that an expiry timestamp stops being a meaningful bound
MAX_CACHE_TTL_S = 315_360_000.0
_KEY = re.compile(r"[0-9a-f]{64}")


def check_cache_key(key: object) -> None:
    """A cache key is a sha256 hex digest; anything else is a :class:`StoreError`."""
    if not isinstance(key, str) or not _KEY.fullmatch(key):
        raise StoreError("a judge cache key is a sha256 hex digest (64 lowercase hex characters)", field="key")


def cache_entry_text(verdict: Mapping[str, Any], ttl_s: float) -> str:
    """The text to store for ``verdict`` (canonical JSON) after checking ``ttl_s`` and the size bound."""
    if not (isinstance(ttl_s, int | float) and not isinstance(ttl_s, bool) and math.isfinite(ttl_s)
            and 0 < ttl_s <= MAX_CACHE_TTL_S):
        raise StoreError(f"ttl_s must be a number in (0, {MAX_CACHE_TTL_S:g}], got {ttl_s!r}", field="ttl_s")
    entry = canonical_json(verdict, field="verdict")
    if len(entry) > MAX_CACHE_ENTRY_CHARS:
        raise StoreError(f"a judge cache entry is limited to {MAX_CACHE_ENTRY_CHARS} characters", field="verdict")
    return entry


def read_cache_entry(stored: object, *, source: str) -> Mapping[str, Any]:
    """A stored entry read back strictly: bounded text holding one JSON object, else a :class:`StoreError` (the
    gate then judges afresh; it also validates the entry itself, like a fresh judge reply)."""
    if not isinstance(stored, str) or len(stored) > MAX_CACHE_ENTRY_CHARS:
        raise StoreError("a stored judge cache entry is not text of a bounded size", source=source)
    try:
        entry = strict_json.loads(stored)
    except strict_json.StrictJSONError as exc:
        raise StoreError(f"stored judge cache entry is not strict JSON: {exc.message}", source=source) from None
    if not isinstance(entry, dict):
        raise StoreError("a stored judge cache entry is not a JSON object", source=source)
    return entry


_face.present_module(globals())  # the names verigate.store exports report it
