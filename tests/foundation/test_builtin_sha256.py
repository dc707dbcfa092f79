"""verigate._builtin_sha256 gives hashlib's sha256 digests (the oracle) without importing hashlib."""

from __future__ import annotations

import hashlib

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
