"""``flip_verified``: only the value token changes, whatever the layout; anything unclear is refused."""

from __future__ import annotations

import pytest

from verigate import ConfigError
from verigate.cli._config_cmd import flip_verified


@pytest.mark.parametrize(("before", "after"), [
    ("verified: false\n", "verified: true\n"),
    ("# head\nverified: False  # not yet\nx: 'a'  # keep\n", "# head\nverified: True  # not yet\nx: 'a'  # keep\n"),
    ("{verified: false, other: \"q\"}\n", "{verified: true, other: \"q\"}\n"),
    ("a:\n  - 1\nverified:    FALSE\r\nb: \"false\"\r\n", "a:\n  - 1\nverified:    TRUE\r\nb: \"false\"\r\n"),
    ("verified: false", "verified: true"),
])
def test_flip_changes_only_the_value(before: str, after: str) -> None:
    assert flip_verified(before, "c.yaml") == after


def test_already_true_is_left_alone() -> None:
    assert flip_verified("verified: true\n", "c.yaml") is None


@pytest.mark.parametrize(("text", "message"), [
    ("other: 1\n", "no top-level 'verified'"),
    ("- verified: false\n", "no top-level 'verified'"),
    ("verified: 'false'\n", "must be true or false"),
    ("verified: no\n", "must be true or false"),
    ("verified: !!bool false\n", "cannot locate"),
    ("verified: [\n", "invalid YAML"),
])
def test_unclear_files_are_refused(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        flip_verified(text, "c.yaml")
