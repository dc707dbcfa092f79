"""A rule's keywords must occur wherever its case-insensitive pattern matches: re's IGNORECASE matches "i" with the
dotless i (U+0131) and the dotted capital I (U+0130), "s" with the long s (U+017F) and "k" with the Kelvin sign,
which ``str.lower`` and ``str.casefold`` leave apart. A text spelled with them must not skip the keyword test of a
rule whose own pattern matches it (a keyword-assignment secret written ``ap\u0131_key=...`` went unredacted; a
phrase rule missed ``wa\u0131t``)."""

from __future__ import annotations

import functools
from typing import Any

import attrs
from hypothesis import example, given, settings
from hypothesis import strategies as st

from verigate.rules import RuleSet, TextView, shipped_packs
from verigate.rules._kinds import PhraseMatcher, RegexMatcher

# each ASCII letter and the letters IGNORECASE also matches it with
_LOOKALIKES = {"i": "\u0131\u0130", "I": "\u0131\u0130", "s": "\u017f", "S": "\u017f", "k": "\u212a", "K": "\u212a"}


@functools.cache
def _shipped() -> RuleSet:
    packs = [name for name in shipped_packs() if name != "trace-grader"]
    return RuleSet.compile(packs)


@functools.cache
def _cases() -> list[tuple[int, str]]:
    """(rule order, one of its match examples) for every rule with keywords."""
    return [(order, example_.text) for order, item in enumerate(_shipped().compiled)
            if type(item.matcher) in (RegexMatcher, PhraseMatcher) and item.matcher.keywords
            for example_ in item.rule.match_examples]


def _without_keywords(matcher: Any) -> Any:
    """The oracle: the same rule with no keyword test (its pattern runs on every text)."""
    if type(matcher) is RegexMatcher:
        return attrs.evolve(matcher, keywords=(), line_scoped=False)
    return attrs.evolve(matcher, keywords=())


def _respelled(text: str, picks: list[bool]) -> str:
    out, pick = [], iter(picks)
    for char in text:
        choices = _LOOKALIKES.get(char)
        out.append(choices[0 if next(pick, True) else -1] if choices and next(pick, True) else char)
    return "".join(out)


@settings(max_examples=300, deadline=None)
@given(st.data(), st.lists(st.booleans(), max_size=200))
@example(data=None, picks=[])
def test_a_rule_finds_its_match_examples_respelled_with_letters_ignorecase_equates(data: Any,
                                                                                     picks: list[bool]) -> None:
    cases = _cases()
    index = 0 if data is None else data.draw(st.integers(0, len(cases) - 1), label="case")
    order, text = cases[index]
    text = _respelled(text, picks)
    item = _shipped().compiled[order]
    expected = sorted(_without_keywords(item.matcher).find(TextView(text)))
    found = sorted((match.start, match.end) for match in _shipped().scan(text) if match.rule_id == item.rule.id)
    assert found == expected, (item.rule.id, text)


def test_the_examples_the_gap_was_found_with() -> None:
    ruleset = _shipped()
    for respelled in ("I'll wa\u0131t for your approval before step 3.", "I'll wa\u0130t for your approval."):
        assert "self-gate.open.en-wait-for-approval" in {m.rule_id for m in ruleset.scan(respelled)}, respelled
    assert TextView("AP\u0130_KEY \u017fecret wa\u0131t").lowered == "api_key secret wait"


def test_the_self_gate_fast_keyword_test_reads_texts_as_the_engine_does() -> None:
    """The fast path skips the engine when no keyword occurs: it must find every keyword the engine's views do."""
    from verigate.selfgate._keywords import contains_keyword

    for text, keyword in (("I'll wa\u0131t", "wait"), ("I\u2019ll wait", "i'll"), ("AP\u0130_KEY", "api_key"),
                          ("pa\u017f\u017fword", "password")):
        view = TextView(text)
        assert keyword in view.folded or keyword in view.lowered
        assert contains_keyword(text, [keyword]), (text, keyword)


_KEYWORDS = ["closed", "approved", "lifted", "released", "re-approval", "wait", "you", "api_key"]


@st.composite
def _keyword_then_marks(draw: st.DrawFn) -> tuple[str, str]:
    """A keyword, some of its letters full-width, then combining marks of any script (NFKC reorders a cluster's
    marks by their combining class and may compose the keyword's last letter with one of them)."""
    keyword = draw(st.sampled_from(_KEYWORDS))
    letters = [chr(ord(char) + 0xFEE0) if char.isalpha() and draw(st.booleans()) else char for char in keyword]
    marks = draw(st.lists(st.characters(categories=["Mn", "Mc", "Me"]), max_size=3))
    return "x " + "".join(letters) + "".join(marks) + " y", keyword


@settings(max_examples=500, deadline=None)
@given(_keyword_then_marks())
@example(("user appr\uff4fved\u05b0\u0323", "approved"))  # the review's case: U+0323 composes d into U+1E0D
@example(("<\uff32e-approval\u05b0\u0323 Gate before step 2>", "re-approval"))
def test_the_keyword_test_finds_every_keyword_the_engines_view_holds(case: tuple[str, str]) -> None:
    """The self-gate's screen and fast path skip the engine when contains_keyword finds none: whatever keyword the
    engine's folded view holds, the keyword test must find too (the view once kept an ASCII letter apart from
    marks it did not list, so the view read "approved" where fold() of the whole text read "approveḍ")."""
    from verigate.selfgate._keywords import contains_keyword

    text, keyword = case
    view = TextView(text)
    if keyword in view.folded or keyword in view.lowered:
        assert contains_keyword(text, [keyword]), ascii(text)


@functools.cache
def _pattern_cases() -> list[tuple[int, str]]:
    """(rule order, one of its patterns) for every shipped phrase or regex rule with written keywords."""
    return [(order, pattern) for order, item in enumerate(_shipped().compiled)
            if type(item.matcher) in (RegexMatcher, PhraseMatcher) and item.matcher.keywords
            and "keywords" in item.rule.fields for pattern in item.rule.fields.get("patterns", ())]


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_written_keywords_occur_in_every_text_their_rules_patterns_match(data: Any) -> None:
    """A pack's written keywords (``keywords: [...]``) claim that every match of the rule holds one of them: texts
    drawn from each pattern itself (``st.from_regex``) are the oracle. A keyword that is not necessary would let the
    keyword test skip a text the pattern matches: a gate declaration or a secret missed."""
    import re

    cases = _pattern_cases()
    order, pattern = cases[data.draw(st.integers(0, len(cases) - 1), label="case")]
    item = _shipped().compiled[order]
    text = data.draw(st.from_regex(re.compile(pattern, re.IGNORECASE)), label="text")
    expected = sorted(_without_keywords(item.matcher).find(TextView(text)))
    found = sorted((match.start, match.end) for match in _shipped().scan(text) if match.rule_id == item.rule.id)
    assert found == expected, (item.rule.id, pattern, text)
