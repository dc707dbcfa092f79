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


def sha256_hex(data: bytes) -> str:
    digest: str = _sha256(data).hexdigest()
    return digest
