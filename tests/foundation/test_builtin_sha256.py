"""verigate._builtin_sha256 gives hashlib's sha256 digests (the oracle) without importing hashlib."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verigate._builtin_sha256 import sha256_hex


@settings(max_examples=300)
@given(st.binary(max_size=4096))
def test_the_digest_is_hashlibs(data: bytes) -> None:
    assert sha256_hex(data) == hashlib.sha256(data).hexdigest()


def test_a_large_input() -> None:
    data = bytes(range(256)) * 40_000  # 10 MB: past every internal block boundary
    assert sha256_hex(data) == hashlib.sha256(data).hexdigest()


def test_a_buffer_past_the_chunk_is_fed_in_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past ``CHUNK_BYTES`` the digest is built piece by piece (CPython 3.11's builtin module gets one buffer of
    4 GiB or more wrong): with the chunk shrunk, the pieces still give hashlib's digest, at every boundary."""
    import verigate._builtin_sha256 as module

    monkeypatch.setattr(module, "CHUNK_BYTES", 1000)
    for size in (999, 1000, 1001, 2000, 2001, 10_000, 123_457):
        data = bytes(index % 251 for index in range(size))
        assert module.sha256_hex(data) == hashlib.sha256(data).hexdigest(), size
