"""A phrase rule's phrases share one pair of Latin boundaries per run (``_kinds._alternation``): the same matches as
the plain alternation of each phrase's own regex, checked against that plain alternation as the oracle."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from verigate.rules._kinds import _alternation, phrase_regex
from verigate.rules._text import fold

#: Latin letters and digits (bounded phrases), kana and punctuation (unbounded edges), spaces between words
_ALPHABET = "abcé1 はで、.'"
_PHRASES = st.lists(st.text(_ALPHABET, min_size=1, max_size=6).filter(str.strip), min_size=1, max_size=8)
_PATTERNS = st.lists(st.sampled_from([r"n't\b", r"a|b", r"(c)+", r"で\s*は"]), max_size=2)


def _plain(regexes: list[str], patterns: list[str]) -> str:
    return "|".join(f"(?:{regex})" for regex in [*regexes, *patterns])


@settings(max_examples=400, deadline=None)
@given(phrases=_PHRASES, patterns=_PATTERNS, text=st.text(_ALPHABET, max_size=40))
def test_the_shared_boundaries_match_what_each_phrase_matches(phrases: list[str], patterns: list[str],
                                                              text: str) -> None:
    regexes = [phrase_regex(phrase) for phrase in phrases]
    folded = fold(text)
    merged = re.compile(_alternation(regexes, patterns), re.IGNORECASE)
    oracle = re.compile(_plain(regexes, patterns), re.IGNORECASE)
    assert [m.span() for m in merged.finditer(folded)] == [m.span() for m in oracle.finditer(folded)]


def test_a_pattern_is_never_merged() -> None:
    # a pattern with its own | and the boundaries at its ends would bind differently inside a merged run
    bounded = phrase_regex("can")
    tricky = bounded[:-len("(?![0-9a-z\u00c0-\u024f])")] + "|x(?![0-9a-z\u00c0-\u024f])"
    merged = re.compile(_alternation([bounded], [tricky]))
    assert merged.search("xy") is None and merged.search("x") is not None
    assert _alternation([phrase_regex("not"), phrase_regex("never")], []).count("(?<!") == 1
