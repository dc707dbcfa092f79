"""The public face: a sorted __all__ of names that exist (like httpx's test_exported_members)."""

from __future__ import annotations

import verigate


def test_all_is_sorted_and_complete() -> None:
    assert verigate.__all__ == sorted(verigate.__all__)
    for name in verigate.__all__:
        assert hasattr(verigate, name), name


def test_public_members_are_exported() -> None:
    public = {name for name in vars(verigate) if not name.startswith("_")}
    submodules = {"hookspecs", "cli", "judge", "store", "gate", "rules", "redact", "transcripts", "trace",
                  "selfgate", "evidence", "hooks", "testing", "annotations"}
    assert public - submodules == set(verigate.__all__)
