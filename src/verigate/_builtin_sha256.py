"""sha256 as hex digits without importing :mod:`hashlib`: importing it loads OpenSSL (~4 ms), and the self-gate
hooks hash a little (gate ids, cursor names, a transcript's head) on every tool call."""

from __future__ import annotations

__all__ = ["sha256_hex"]

try:
    from _sha256 import sha256 as _sha256  # type: ignore[import-not-found]  # CPython <= 3.11
except ImportError:  # pragma: no cover - the interpreter decides
    try:
        from _sha2 import sha256 as _sha256  # type: ignore[import-not-found]  # CPython >= 3.12
    except ImportError:
        from hashlib import sha256 as _sha256

#: CPython 3.11's builtin module digests one buffer of 4 GiB or more wrongly (a 32-bit length); fed in pieces
#: of at most this size it gives hashlib's digest (no caller hashes that much today: the bound keeps it so)
CHUNK_BYTES = 1 << 30


def sha256_hex(data: bytes) -> str:
    if len(data) <= CHUNK_BYTES:
        digest: str = _sha256(data).hexdigest()
        return digest
    state = _sha256()
    view = memoryview(data)
    for start in range(0, len(view), CHUNK_BYTES):
        state.update(view[start:start + CHUNK_BYTES])
    chunked: str = state.hexdigest()
    return chunked
