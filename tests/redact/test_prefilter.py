"""The combined keyword prefilter changes no redaction: for every text the prefiltered pass returns exactly what
the whole rule set returns (``RulePackRedactor._redact_unfiltered``, today's path, is the oracle), with either
backend (one re2 pass when ``google-re2`` is installed, the per-keyword searches otherwise)."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from redact.embeddings import EMBEDDINGS, TOKENS
from redact.secret_corpus import SECRET_RULES, near_misses, planted
from verigate.redact import DEFAULT_PACKS, RulePackRedactor
from verigate.redact._guards import GUARD_FLAGS, GUARDS
from verigate.redact._prefilter import RE2_AFTER_CHARS, RulePrefilter
from verigate.redact._views import views
from verigate.rules import Prefiltered, RuleSet, TextView, load_pack
from verigate.rules._keywords import PatternSet

REDACTOR = RulePackRedactor.from_packs(list(DEFAULT_PACKS))
REDACTOR.redact("x" * RE2_AFTER_CHARS)  # past the warm-up: re2 decides from here on where it is installed
RULESET = REDACTOR.ruleset
SEARCHES = RulePrefilter(RULESET, use_re2=False)
DEFAULT = RulePrefilter(RULESET)
KEYWORDS = sorted({keyword for item in RULESET.compiled if isinstance(item.matcher, Prefiltered)
                   for keyword in item.matcher.prefilter})
EXAMPLES = sorted({example.text for pack in DEFAULT_PACKS for rule in load_pack(pack).rules
                   for example in (*rule.match_examples, *rule.no_match_examples)})
# what hides a token from a pattern, or changes what lower() makes of a text (Kelvin sign, dotted I, sharp s)
ODD = ["\u200b", "\u00ad", "\u2060", "\ufeff", "\x1b[32m", "\x1b[0m", "\\n", '\\"', "\\\\", "%22", "%5C", "\\u0022",
       "\u212a", "\u0130", "\u00df", "\u017f", "\uff47\uff48\uff50\uff3f",
       "\uff21\uff2b\uff29\uff21", "\ufffd", "\x00", "\n", "\r\n", " ", "=", ":",
       "verigate: allow", "verigate: allow[email-address]", "[REDACTED:email-address#1]"]


def _oracle_needed(text: str) -> int:
    """The definition: a rule runs when it has no prefilter or one of its keywords occurs in ``text.lower()``."""
    lowered = text.lower()
    chosen = 0
    for order, item in enumerate(RULESET.compiled):
        keywords = item.matcher.prefilter if isinstance(item.matcher, Prefiltered) else ()
        if not keywords or any(keyword in lowered for keyword in keywords):
            chosen |= 1 << order
    return chosen


def _orders(bits: int) -> list[int]:
    return [order for order in range(bits.bit_length()) if bits >> order & 1]


@st.composite
def _token(draw: st.DrawFn) -> str:
    rule_id = draw(st.sampled_from(SECRET_RULES))
    text = planted(rule_id, random.Random(draw(st.integers(0, 2**32)))).text
    embedding = draw(st.none() | st.sampled_from(sorted(EMBEDDINGS)))
    return text if embedding is None else EMBEDDINGS[embedding](text)


PIECES = st.one_of(st.sampled_from(KEYWORDS), st.sampled_from(EXAMPLES), st.sampled_from(ODD),
                   st.sampled_from(near_misses()), _token(), st.text(max_size=12))
TEXTS = st.lists(PIECES, max_size=8).map("".join)


def _assert_same(text: str) -> None:
    assert REDACTOR.redact(text) == REDACTOR._redact_unfiltered(text), text
    for scanned in (text, *(view.text for view in views(text))):
        expected = _oracle_needed(scanned)
        assert SEARCHES.needed(scanned) == expected
        assert DEFAULT.keyword_needed(scanned) == expected
        # a guard only ever removes a rule that finds nothing in the text
        assert DEFAULT.needed(scanned) & expected == DEFAULT.needed(scanned)
        for order in _orders(expected & ~DEFAULT.needed(scanned)):
            item = RULESET.compiled[order]
            assert not list(item.matcher.find(TextView(scanned))), (item.rule.id, scanned)
            assert item.matcher.pattern.search(scanned) is None, (item.rule.id, scanned)
        subset = SEARCHES.ruleset_for(expected)
        assert (() if subset is None else subset.scan(scanned)) == RULESET.scan(scanned)
        assert DEFAULT.scan(scanned) == RULESET.scan(scanned)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXTS)
@example("")
@example("".join(KEYWORDS))  # every keyword at once: overlapping and nested keywords (sk, sk-, sk-ant-)
@example("sk-ant-sk_live_xoxapp-://:/:\\\\@+/")
def test_the_prefiltered_redaction_is_the_unfiltered_one(text: str) -> None:
    _assert_same(text)


@pytest.mark.parametrize("embedding", sorted(EMBEDDINGS))
@pytest.mark.parametrize("kind", sorted(TOKENS))
def test_embedded_tokens_are_redacted_alike(embedding: str, kind: str) -> None:
    """Tokens split by invisible characters, full-width, escaped, coloured: each alone, at both text ends and
    in context (the redactor scans the views, whose keywords the prefilter decides afresh)."""
    embedded = EMBEDDINGS[embedding](TOKENS[kind]())
    for text in (embedded, f"{embedded}\n", f"x {embedded}", f"password={embedded}"):
        _assert_same(text)


@pytest.mark.parametrize("rule_id", SECRET_RULES)
def test_every_secret_rule_at_the_text_ends_and_overlapping(rule_id: str) -> None:
    rng = random.Random(rule_id)
    for _ in range(3):
        token = planted(rule_id, rng)
        for text in (token.secret, token.text, f"{token.secret} {token.secret}", f"token={token.secret}",
                     f"https://u:{token.secret}@host/", f"{token.secret}@example.com"):
            _assert_same(text)


def test_examples_of_every_shipped_rule_are_redacted_alike() -> None:
    for text in EXAMPLES:
        _assert_same(text)


def test_a_text_re2_cannot_encode_is_decided_by_the_searches() -> None:
    text = "\ud800 ghp_" + "a" * 36
    assert DEFAULT.needed(text) == DEFAULT.keyword_needed(text) == SEARCHES.needed(text) == _oracle_needed(text)
    assert DEFAULT.scan(text) == RULESET.scan(text)


def test_a_rule_set_without_prefilters_runs_whole() -> None:
    """A matcher that declares no keywords always runs: the prefilter hands the text to the whole set."""
    pii = RulePackRedactor.from_packs(["pii"]).ruleset
    keywordless = RuleSet(tuple(item for item in pii.compiled
                                if not (isinstance(item.matcher, Prefiltered) and item.matcher.prefilter)))
    prefilter = RulePrefilter(keywordless)
    assert prefilter.ruleset_for(prefilter.needed("plain text")) is keywordless


def test_sub_sets_are_cached_and_bounded() -> None:
    prefilter = RulePrefilter(RULESET)
    first = prefilter.ruleset_for(prefilter.needed("mail a@b.example"))
    assert first is not None and first is prefilter.ruleset_for(prefilter.needed("mail c@d.example"))
    assert [item.rule.id for item in first.compiled] == [item.rule.id for item in RULESET.compiled
                                                         if item.rule.id in {r.id for r in first.rules}]
    for bits in range(1, 600):
        prefilter.ruleset_for(bits)
    assert len(prefilter._subsets) <= 256


class _GivingUp:
    """What re2's set search returns when it gives up (out of memory): no match at all."""

    def Match(self, text: str) -> None:
        return None


def test_a_search_re2_gives_up_on_is_decided_by_the_searches() -> None:
    text = "mail a@b.example, key ghp_" + "a" * 36
    prefilter = RulePrefilter(RULESET)
    prefilter._guard_set = PatternSet(_GivingUp())
    assert prefilter.needed(text) == prefilter.keyword_needed(text)  # no guard narrows
    prefilter._re2_set = PatternSet(_GivingUp())
    assert prefilter.needed(text) == _oracle_needed(text)
    assert prefilter.scan(text) == RULESET.scan(text)


def test_every_guard_is_for_a_shipped_pattern() -> None:
    """A guard is for one exact pattern: when a shipped pattern changes, its guard must be written again."""
    shipped = {item.matcher.pattern.pattern for item in RULESET.compiled if hasattr(item.matcher, "pattern")}
    assert set(GUARDS) <= shipped


def test_a_guarded_pattern_sets_no_flag_inline() -> None:
    """Guards are chosen by a rule's pattern text and its declared flags (no ``flags:``), before the pattern is
    compiled: that stands for the compiled flags only while no guarded pattern sets a global flag inline."""
    assert GUARD_FLAGS == 0
    assert all(re.compile(pattern).flags == re.UNICODE for pattern in GUARDS)


#: the characters the guarded patterns are made of, and look-alikes that lower() or NFKC might confuse
GUARD_ALPHABET = "0123456789 -.,+()/\\:@#?_~$'\"<>[]|*\nAGBZKazk\u212a\u0130\u00a0\u3000\x0b\u200b\uff12"


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet=GUARD_ALPHABET, max_size=40) | st.lists(
    st.sampled_from(["+81 90-1234-5678", "4111 1111 1111 1111", "GB82 WEST 1234 5698 7654 32", "/home/a/b",
                     "C:\\Users\\x", "\\\\host\\share", "https://u:p@h.io", "090-1234-5678", "1234 5678 9018",
                     *GUARD_ALPHABET]), max_size=12).map("".join))
def test_a_guard_matches_wherever_its_pattern_does(text: str) -> None:
    re2 = pytest.importorskip("re2")
    for pattern, guard in GUARDS.items():
        if re.search(pattern, text) is not None:
            assert re2.search(guard, text) is not None, (pattern, text)


#: the pieces of a keyword assignment, with what Python's IGNORECASE and ``\s`` admit beyond ASCII
_ASSIGNMENT_PIECES = ["password", "PASSWD", "pwd", "Secret", "token", "TOKEN", "api_key", "api-key", "apikey",
                      "Access_Key", "auth", "authkey", "private-key", "credentials", "credential", "\u0130",
                      "\u0131", "\u212a", "\u017f", "to\u212aen", "ap\u0131_key", "_", ".", "-", "\\", '"', "'",
                      "`", "=", ":", ":=", "=>", ",", " ", "\t", "\n", "\x0b", "\x1c", "\x85", "\xa0", "\u2003",
                      "\u3000", "b", "r", "u", "A1b2C3d4E5", "x9/+Q~!", "&", "&k=", "(", "[", "==", "0"]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(_ASSIGNMENT_PIECES), max_size=14).map("".join))
@example('"api\u0131_key"\u3000, "Zq9/xW2!pL7e"')
@example("TO\u212aEN\x85=\xa0A1b2C3d4E5==AAAA")
def test_the_assignment_guards_match_wherever_their_patterns_do(text: str) -> None:
    re2 = pytest.importorskip("re2")
    for pattern, guard in GUARDS.items():
        if "password" in pattern and re.search(pattern, text) is not None:
            assert re2.search(guard, text) is not None, (pattern, text)


def test_the_guards_classes_hold_what_python_matches() -> None:
    r"""``\s`` and IGNORECASE "i" of Python, brute force over every code point, inside the re2 classes."""
    re2 = pytest.importorskip("re2")
    from verigate.redact._guards import _PY_I, _PY_SPACE

    everything = "".join(chr(code) for code in range(0x110000) if not 0xD800 <= code < 0xE000)
    spaces = re.findall(r"\s", everything)
    assert "".join(re2.findall(_PY_SPACE, everything)) == "".join(spaces)
    assert set(re2.findall(f"(?i:{_PY_I})", everything)) == set(re.findall("(?i)i", everything))


def test_a_redactor_imports_re2_only_once_it_has_scanned_enough() -> None:
    try:
        import re2  # noqa: F401
    except ImportError:
        installed = False
    else:
        installed = True
    fresh = RulePackRedactor.from_packs(["pii"])
    text = "mail a@b.example"
    assert not fresh._prefilter.multi_pattern
    assert fresh.redact(text) == fresh._redact_unfiltered(text)
    fresh.redact("y" * RE2_AFTER_CHARS)
    assert fresh._prefilter.multi_pattern is installed
    assert REDACTOR._prefilter.multi_pattern is installed
    assert fresh.redact(text) == fresh._redact_unfiltered(text)
