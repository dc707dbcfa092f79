"""The phrase rules' keyword test, decided once per text for all of them (rules/_keywords.py): the same rules as
every rule testing its own keywords, by re2 and by the searches alike; a scan finds what every rule's find finds."""

from __future__ import annotations

import functools

from hypothesis import given, settings
from hypothesis import strategies as st

from verigate.rules import PhraseKind, RuleSet
from verigate.rules._keywords import FoldedKeywords
from verigate.rules._text import TextView

# ASCII, Japanese, a letter whose case folding grows ("ß"), one half of a surrogate pair (no UTF-8 form: re2 cannot
# take the text, the searches decide)
_PIECE = st.sampled_from(["a", "b", "ab", "結果", "を", "ß", "ss", " ", "\ud800"])
_WORD = st.lists(_PIECE, min_size=1, max_size=4).map("".join)
_KEYWORDS = st.lists(_WORD, min_size=1, max_size=8)


@settings(max_examples=300, deadline=None)
@given(_KEYWORDS, st.data(), st.lists(st.lists(_PIECE, max_size=20).map("".join), min_size=1, max_size=4))
def test_the_chosen_rules_are_those_with_a_keyword_in_the_text(keywords: list[str], data: st.DataObject,
                                                               texts: list[str]) -> None:
    """The oracle is each keyword's own substring test; rules are drawn at random over the keywords."""
    rules_of = {keyword: frozenset(data.draw(st.sets(st.integers(0, 5), min_size=1), label=keyword))
                for keyword in keywords}
    with_re2 = FoldedKeywords(rules_of, re2_after=0)
    searches = FoldedKeywords(rules_of, re2_after=None)
    assert not searches.multi_pattern
    assert with_re2.multi_pattern or any("\ud800" in keyword for keyword in keywords)  # re2 takes no surrogate
    for text in texts:
        expected = {order for keyword, orders in rules_of.items() if keyword in text for order in orders}
        for keywords_test in (with_re2, searches):
            chosen = {99}  # what was chosen already stays chosen
            keywords_test.choose(text, chosen)
            assert chosen == expected | {99}


def test_re2_is_built_after_enough_text_or_at_once_and_never_when_not_wanted() -> None:
    import re2  # noqa: F401  # the redactor's prefilter imports it in a gate: a rule set then builds its set at once

    rules_of = {"yourself": frozenset({0})}
    at_once = FoldedKeywords(rules_of)
    assert not at_once.multi_pattern
    at_once.choose("x", set())
    assert at_once.multi_pattern
    never = FoldedKeywords(rules_of, re2_after=None)
    never.choose("x" * 100_000, set())
    assert not never.multi_pattern


@functools.cache
def _structural() -> RuleSet:
    return RuleSet.compile(["structural"], kinds={"phrase": PhraseKind()})


def _phrases() -> list[str]:
    pieces = {"please run the tests and paste the output", "run it yourself", "I can't run commands here, so please",
              "ログを送ってください", "ご自身で実行して結果を教えてください", "実行できないため、", "verigate: allow"}
    for item in _structural().compiled:
        pieces.update(item.matcher.keywords)  # type: ignore[attr-defined]  # every rule is a phrase rule
        pieces.update(example.text for example in item.rule.match_examples + item.rule.no_match_examples)
    return sorted(pieces)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.deferred(lambda: st.sampled_from(_phrases())), st.text(max_size=12)), max_size=20),
       st.integers(min_value=0, max_value=60))
def test_a_scan_finds_what_every_phrase_rule_finds_on_its_own(pieces: list[str], padding: int) -> None:
    text = " ".join(pieces) + " filler words" * padding
    ruleset = _structural()
    view = TextView(text)
    expected = sorted((start, end, item.rule.id) for item in ruleset.compiled for start, end in item.matcher.find(view))
    assert sorted((m.start, m.end, m.rule_id) for m in ruleset.scan(text)) == expected
