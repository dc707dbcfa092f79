"""The rule engine: shipped examples, malformed packs (file:line rule id), kinds, order, suppression."""

from __future__ import annotations

import functools
import random
import re
import textwrap
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import verigate
from redact.secret_corpus import SECRET_RULES, near_misses, planted
from verigate._plugins import create_manager
from verigate.rules import (
    Match,
    Pack,
    Rule,
    RuleSet,
    TextView,
    fold,
    is_pack,
    load_pack,
    load_pack_text,
    rule_kinds,
    run_examples,
    shipped_packs,
)


def _pack(rules: str, header: str = "pack: t\nversion: 1\n") -> str:
    return header + "rules:\n" + textwrap.indent(textwrap.dedent(rules), "  ")


def _write(tmp_path: Path, text: str, name: str = "pack.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


GOOD_RULE = """\
- id: ok-rule
  kind: regex
  severity: low
  message: ok
  pattern: 'ok-[0-9]+'
  examples: {match: ['ok-1'], no_match: ['ok-']}
"""

PHRASE_RULE = """\
- id: one-phrase
  kind: phrase
  severity: low
  message: ok
  phrases: ['wait for me']
  examples: {match: ['wait for me'], no_match: ['go on']}
"""

# ------------------------------------------------------------------------------------ shipped packs


def test_the_redaction_packs_are_shipped_and_configs_are_not_packs() -> None:
    names = shipped_packs()
    assert {"secrets", "pii", "privacy"} <= set(names)
    assert "trace-grader.config" not in names
    assert is_pack({"pack": "x", "version": 1, "rules": []})
    assert not is_pack({"verified": False, "forbidden_tools": []})
    assert not is_pack(["pack"])


@pytest.mark.parametrize("name", shipped_packs())
def test_every_shipped_rule_passes_its_examples(name: str) -> None:
    pack = load_pack(name)
    RuleSet.compile([pack])
    assert [str(failure) for failure in run_examples([pack])] == []
    assert all(rule.match_examples and rule.no_match_examples for rule in pack.rules)


@pytest.mark.parametrize("name", ["secrets", "pii", "privacy"])
def test_redaction_rules_cite_their_format_source(name: str) -> None:
    assert all(rule.references for rule in load_pack(name).rules)


# ------------------------------------------------------------------------------------ malformed packs


@pytest.mark.parametrize(("text", "pattern"), [
    ("pack: t\nversion: 1\nrules:\n  - id: a\n    kind: [regex\n", r"pack\.yaml:\d+: invalid YAML"),
    (_pack(GOOD_RULE.replace("kind: regex", "kind: nosuch")),
     r"pack\.yaml:5 kind: rule 'ok-rule': unknown kind 'nosuch' \(registered kinds: .*regex"),
    (_pack(GOOD_RULE.replace("'ok-[0-9]+'", "'ok-[0-9+'")),
     r"pack\.yaml:8 pattern: rule 'ok-rule': invalid regular expression"),
    (_pack(GOOD_RULE + GOOD_RULE.replace("'ok-[0-9]+'", "'x'")),
     r"pack\.yaml:10 id: rule 'ok-rule': duplicate id \(first defined at line 4\)"),
    (_pack(GOOD_RULE.replace("  examples: {match: ['ok-1'], no_match: ['ok-']}\n", "")),
     r"pack\.yaml:4 rules\.0: rule 'ok-rule': must contain \['examples'\] properties"),
    (_pack(GOOD_RULE.replace("no_match: ['ok-']", "no_match: []")),
     r"pack\.yaml:9 rules\.0\.examples\.no_match: rule 'ok-rule': must contain at least 1 items"),
    (_pack(GOOD_RULE.replace("severity: low", "severity: urgent")),
     r"pack\.yaml:6 rules\.0\.severity: rule 'ok-rule': must be one of"),
    (_pack(GOOD_RULE.replace("  message: ok\n", "  message: ok\n  patern: typo\n")),
     r"pack\.yaml:8 patern: rule 'ok-rule': regex: must not contain \{'patern'\} properties"),
    (_pack(GOOD_RULE.replace("'ok-[0-9]+'", "'(?P<secret>ok)?'")),
     r"pack\.yaml:8 pattern: rule 'ok-rule': the pattern matches the empty string"),
    (_pack(GOOD_RULE.replace("  message: ok\n", "  message: ok\n  group: token\n")),
     r"pack\.yaml:8 group: rule 'ok-rule': the pattern has no named group 'token'"),
    ("verified: false\nforbidden_tools: []\n", r"pack\.yaml:1: not a rule pack"),
    (_pack(PHRASE_RULE.replace("'wait for me'", '"\\u0307"')),
     r"pack\.yaml:\d+ phrases: rule 'one-phrase': the phrase '\u0307' is nothing once folded"),
])
def test_a_malformed_pack_is_one_clear_error_with_file_line_and_rule_id(tmp_path: Path, text: str,
                                                                         pattern: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(verigate.RuleError) as caught:
        RuleSet.compile([load_pack(path)])
    assert re.search(pattern, str(caught.value)), str(caught.value)
    assert caught.value.exit_code == 2


def test_a_phrase_with_a_word_left_once_folded_compiles_and_matches() -> None:
    rules = RuleSet.compile([load_pack_text(_pack(PHRASE_RULE.replace("'wait for me'", '"wait \\u02d9 me"')),
                                            "<test>")])
    assert [match.rule_id for match in rules.scan("please wait  me")] == ["one-phrase"]


def test_an_undecodable_pack_file_is_a_rule_error(tmp_path: Path) -> None:
    path = tmp_path / "bin.yaml"
    path.write_bytes(b"pack: \xff\xfe\n")
    with pytest.raises(verigate.RuleError, match=r"bin\.yaml: cannot read rule pack"):
        load_pack(path)


def test_unknown_shipped_name_lists_the_shipped_packs() -> None:
    with pytest.raises(verigate.RuleError, match=r"no shipped rule pack named 'nope' \(shipped: .*secrets"):
        load_pack("nope")


def test_duplicate_ids_across_packs_and_disables(tmp_path: Path) -> None:
    first = load_pack(_write(tmp_path, _pack(GOOD_RULE), "a.yaml"))
    second = load_pack(_write(tmp_path, _pack(GOOD_RULE, "pack: b\nversion: 1\n"), "b.yaml"))
    duplicate = r"b\.yaml:4 id: rule 'ok-rule': duplicate id \(also defined in .*a\.yaml:4\)"
    with pytest.raises(verigate.RuleError, match=duplicate):
        RuleSet.compile([first, second])
    disabling = load_pack(_write(tmp_path, "pack: c\nversion: 1\ndisables: [ok-rule]\nrules: []\n", "c.yaml"))
    with pytest.raises(verigate.RuleError, match="active rule set is empty"):
        RuleSet.compile([first, disabling])
    replacing = load_pack(_write(tmp_path, _pack(GOOD_RULE.replace("ok-rule", "new-rule"),
                                                 "pack: d\nversion: 1\ndisables: [ok-rule]\n"), "d.yaml"))
    assert [rule.id for rule in RuleSet.compile([first, replacing]).rules] == ["new-rule"]
    typo = load_pack(_write(tmp_path, "pack: e\nversion: 1\ndisables: [ok-rul]\nrules: []\n", "e.yaml"))
    with pytest.raises(verigate.RuleError, match=r"e\.yaml disables: disables 'ok-rul'"):
        RuleSet.compile([first, typo])


def test_an_empty_rule_set_is_an_error() -> None:
    with pytest.raises(verigate.RuleError, match="active rule set is empty"):
        RuleSet.compile([])


# ------------------------------------------------------------------------------------ scanning


def test_scan_order_is_deterministic_start_end_rule_order() -> None:
    pack = load_pack_text(_pack("""\
        - id: long
          kind: regex
          severity: low
          message: l
          pattern: 'abc[0-9]'
          examples: {match: ['abc1'], no_match: ['abc']}
        - id: short
          kind: regex
          severity: low
          message: s
          pattern: 'abc'
          examples: {match: ['abc'], no_match: ['ab']}
        - id: same
          kind: regex
          severity: low
          message: s
          pattern: 'abc'
          examples: {match: ['abc'], no_match: ['ab']}
        """), "<test>")
    ruleset = RuleSet.compile([pack])
    found = ruleset.scan("zz abc1 abc")
    assert [(m.rule_id, m.start, m.end) for m in found] == [
        ("short", 3, 6), ("same", 3, 6), ("long", 3, 7), ("short", 8, 11), ("same", 8, 11)]


@settings(max_examples=40, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab1 \n@.-_:/AKIQX4Z")), max_size=120))
def test_scan_is_sorted_and_repeatable(text: str) -> None:
    ruleset = _shipped_ruleset()
    first = ruleset.scan(text)
    assert first == ruleset.scan(text)
    assert [(m.start, m.end) for m in first] == sorted((m.start, m.end) for m in first)
    assert all(0 <= m.start < m.end <= len(text) for m in first)


@functools.cache
def _shipped_ruleset() -> RuleSet:
    return RuleSet.compile(["secrets", "pii", "privacy"])


def _keywords() -> list[str]:
    compiled = _shipped_ruleset().compiled
    return sorted({keyword for item in compiled for keyword in getattr(item.matcher, "keywords", ())})


# pieces that make rules fire: every keyword of the shipped packs, a true token of every secret rule, personal
# data and paths, near misses, a `verigate: allow` marker; padding takes long texts through the long-text path
_PIECES = st.one_of(
    st.deferred(lambda: st.sampled_from(_keywords())),
    st.builds(lambda rule_id, seed: planted(rule_id, random.Random(seed)).text, st.sampled_from(SECRET_RULES),
              st.integers(0, 2**32)),
    st.sampled_from(near_misses()),
    st.text(alphabet="abcdefXYZ0123456789_-", min_size=8, max_size=40),
    st.sampled_from([" ", "\n", "=", ": ", "'", "\"", "+81 90-1234-5678", "090-1234-5678", "4111 1111 1111 1111",
                     "GB82 WEST 1234 5698 7654 32", "hanako@corp.co.jp", "/home/hanako/src", "C:\\Users\\hanako",
                     "https://github.com/hanako/app/pull/7", "@hanako", "verigate: allow", "Straße ", "İ"]),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_PIECES, max_size=60), st.integers(min_value=0, max_value=80))
def test_the_keyword_prefilter_never_changes_what_a_scan_finds(pieces: list[str], padding: int) -> None:
    """The whole-set prefilter is only a shortcut: a scan finds exactly what every rule's own find() finds."""
    text = " ".join(pieces) + " filler words" * padding * 3
    ruleset = _shipped_ruleset()
    view = TextView(text)
    expected = sorted((start, end, item.rule.id) for item in ruleset.compiled for start, end in item.matcher.find(view))
    assert sorted((m.start, m.end, m.rule_id) for m in ruleset.scan(text)) == expected


def test_match_reports_severity_message_metadata_and_suppression() -> None:
    pack = load_pack_text(_pack("""\
        - id: ticket
          kind: regex
          severity: medium
          message: a ticket
          metadata: {team: infra}
          pattern: 'T-[0-9]{3}'
          keywords: [t-]
          examples: {match: ['T-123'], no_match: ['T-12']}
        """), "<test>")
    found = RuleSet.compile([pack]).scan("T-123\nT-456 verigate: allow\nT-789 verigate: allow[other]")
    assert found == (
        Match("ticket", 0, 5, "medium", "a ticket", {"team": "infra"}, False),
        Match("ticket", 6, 11, "medium", "a ticket", {"team": "infra"}, True),
        Match("ticket", 28, 33, "medium", "a ticket", {"team": "infra"}, False),
    )


# ------------------------------------------------------------------------------------ regex kind


def _one(rule: str) -> RuleSet:
    return RuleSet.compile([load_pack_text(_pack(rule), "<test>")])


def test_regex_group_flags_validators_and_allow() -> None:
    ruleset = _one("""\
        - id: card
          kind: regex
          severity: high
          message: card
          pattern: 'card=(?P<number>[0-9]{13,19})'
          flags: [ignorecase]
          group: number
          validators: [luhn]
          allow:
            - {regex: '^4000', reason: test range}
            - {regex: 'TEST', target: line}
          examples: {match: ['card=4242424242424242'], no_match: ['card=4242424242424241']}
        """)
    text = "CARD=4242424242424242 card=4242424242424241 card=4000056655665556\ncard=5555555555554444 TEST"
    assert [(m.start, m.end) for m in ruleset.scan(text)] == [(5, 21)]
    assert ruleset.scan("card=5555555555554444") != ()


def test_templated_and_placeholder_presets() -> None:
    ruleset = _one("""\
        - id: pw
          kind: regex
          severity: high
          message: pw
          pattern: 'pw=(?P<secret>\\S+)'
          allow: [{preset: templated}, {preset: placeholder}]
          examples: {match: ['pw=Zq8vL2pW'], no_match: ['pw=${PW}']}
        """)
    for value in ["${PW}", "$PW", "{{pw}}", "<password>", "%(pw)s", "xxxxxxxx", "changeme", "your_password"]:
        assert ruleset.scan(f"pw={value}") == (), value
    assert ruleset.scan("pw=Zq8vL2pW") != ()


@pytest.mark.parametrize(("validator", "good", "bad"), [
    ("iban", "GB82WEST12345698765432", "GB82WEST12345698765433"),
    ("mynumber", "123456789018", "123456789011"),
    ("jwt", ".".join(["eyJhbGciOiJIUzI1NiJ9", "eyJzdWIiOiIxMjM0In0", "c2ln"]),
     ".".join(["eyJub3Rqc29u", "eyJzdWIiOiIxMjM0In0", "c2ln"])),
    ("{entropy: {min: 3.0}}", "aZ3kQ9xL", "aaaaaaaa"),
    ("{digits: {min: 3, max: 4}}", "a1b2c3", "a1b2"),
])
def test_validators(validator: str, good: str, bad: str) -> None:
    ruleset = _one(f"""\
        - id: v
          kind: regex
          severity: low
          message: v
          pattern: '\\S+'
          validators: [{validator}]
          examples: {{match: ['{good}'], no_match: ['{bad}']}}
        """)
    assert ruleset.scan(good) != ()
    assert ruleset.scan(bad) == ()


# ------------------------------------------------------------------------------------ phrase kind

PHRASES = """\
- id: gate
  kind: phrase
  severity: medium
  message: self-set gate
  phrases: ["I'll wait for your approval before step 3", "Step 3 は成果物提示後に再承認"]
  patterns: ['approve gate [a-z0-9-]+']
  examples:
    match: ["I'll wait for your approval before step 3."]
    no_match: ["I'll wait for your approval before step 30"]
"""


@pytest.mark.parametrize("text", [
    "OK — I’ll wait for your approval before Step 3.",
    "I'll   wait for your\napproval before step 3",
    "ＩＬＬ？ no: Ｉ'll wait for your approval before ｓｔｅｐ ３",
    "Step3は成果物提示後に再承認",
    "了解。Ｓｔｅｐ　３　は成果物提示後に再承認とします",
    "Please APPROVE GATE g-42 now",
])
def test_phrases_match_after_nfkc_case_folding_and_flexible_spaces(text: str) -> None:
    found = _one(PHRASES).scan(text)
    assert len(found) == 1
    original = text[found[0].start:found[0].end]
    assert fold(original).replace(" ", "").replace("\n", "").replace("\u3000", "") in {
        fold(p).replace(" ", "") for p in [
            "I'll wait for your approval before step 3", "Step 3 は成果物提示後に再承認",
        ]} or fold(original).startswith("approve gate")


@pytest.mark.parametrize("text", [
    "I'll wait for your approval before step 30",
    "xI'll wait for your approval before step 3",
    "Step 3 は成果物提示前に再承認",
    "I will wait for your approval before step 3",
])
def test_phrases_respect_latin_word_boundaries(text: str) -> None:
    assert _one(PHRASES).scan(text) == ()


@settings(max_examples=60, deadline=None)
@given(prefix=st.text(max_size=30), suffix=st.text(max_size=30))
def test_phrase_spans_point_into_the_original_text(prefix: str, suffix: str) -> None:
    text = f"{prefix} Step 3 は成果物提示後に再承認 {suffix}"
    for match in _one(PHRASES).scan(text):
        assert 0 <= match.start < match.end <= len(text)
        assert "再承認" in text[match.start:match.end] or "approve" in fold(text[match.start:match.end])


def test_folded_view_maps_decomposed_and_half_width_text_back() -> None:
    text = "ｶﾞｲﾄﾞ cafe\u0301 Ｓｔｅｐ"
    view = TextView(text)
    assert view.folded == "ガイド café step"
    start = view.folded.index("café")
    assert view.original_span(start, start + 4) == (text.index("cafe"), text.index("cafe") + 5)


# ------------------------------------------------------------------------------------ plug-in kinds


class _UpperWordKind:
    """A plug-in kind: words in capitals of at least ``min`` letters."""

    fields_schema: Mapping[str, Any] = {
        "type": "object", "required": ["min"], "additionalProperties": False,
        "properties": {"min": {"type": "integer", "minimum": 1}},
    }

    def compile(self, rule: Rule) -> _UpperWordMatcher:
        return _UpperWordMatcher(re.compile(rf"\b[A-Z]{{{int(rule.fields['min'])},}}\b"))


class _UpperWordMatcher:
    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern

    def find(self, view: TextView) -> Iterable[tuple[int, int]]:
        return (found.span() for found in self.pattern.finditer(view.text))


class _Plugin:
    __name__ = "upper-plugin"

    @verigate.hookimpl
    def verigate_rule_kinds(self) -> Mapping[str, Any]:
        return {"upper": _UpperWordKind()}


UPPER = """\
- id: shout
  kind: upper
  severity: info
  message: shouting
  min: 4
  examples: {match: ['STOP now'], no_match: ['Stop NOW']}
"""


def test_a_plugin_kind_compiles_validates_and_runs_examples() -> None:
    manager = create_manager([_Plugin()])
    pack = load_pack_text(_pack(UPPER), "<test>")
    assert [(m.start, m.end) for m in RuleSet.compile([pack], manager=manager).scan("HALT and STOP")] == [
        (0, 4), (9, 13)]
    assert run_examples([pack], manager=manager) == ()
    bad = load_pack_text(_pack(UPPER.replace("min: 4", "min: zero")), "<test>")
    with pytest.raises(verigate.RuleError, match=r"<test>:8 min: rule 'shout': upper: .*must be integer"):
        RuleSet.compile([bad], manager=manager)
    with pytest.raises(verigate.RuleError, match="unknown kind 'upper'"):
        RuleSet.compile([pack])


def test_a_kind_registered_twice_is_a_plugin_error() -> None:
    class Clash:
        __name__ = "clash-plugin"

        @verigate.hookimpl
        def verigate_rule_kinds(self) -> Mapping[str, Any]:
            return {"regex": _UpperWordKind()}

    with pytest.raises(verigate.PluginError, match="'regex' is registered by both"):
        rule_kinds(create_manager([Clash()]))


def test_run_examples_reports_each_failing_example_with_its_line() -> None:
    pack = load_pack_text(_pack(GOOD_RULE.replace("no_match: ['ok-']", "no_match: ['ok-2']")), "<t>")
    failures = run_examples([pack])
    assert [(f.rule_id, f.line, f.expected) for f in failures] == [("ok-rule", 9, "no_match")]
    assert str(failures[0]).startswith("<t>:9: rule 'ok-rule': expected no match")


def test_join_examples_are_assembled() -> None:
    joined = "match: [{join: ['o', 'k-', {repeat: '7', times: 3}]}]"
    pack = load_pack_text(_pack(GOOD_RULE.replace("match: ['ok-1']", joined)), "<t>")
    assert isinstance(pack, Pack)
    assert pack.rules[0].match_examples[0].text == "ok-777"


def test_the_manual_example_pack_is_valid_and_its_examples_pass() -> None:
    readme = (Path(__file__).resolve().parents[2] / "docs" / "rules.md").read_text(encoding="utf-8")
    section = readme[readme.index("<!-- section:rules -->"):readme.index("<!-- /section:rules -->")]
    found = re.search(r"```yaml\n(.*?)```", section, re.DOTALL)
    assert found is not None
    pack = load_pack_text(found.group(1), "docs/rules.md")
    assert len(RuleSet.compile([pack]).rules) == 2
    assert run_examples([pack]) == ()


def test_line_scope_needs_keywords_and_falls_back_when_lowering_moves_offsets() -> None:
    rule = GOOD_RULE.replace("  message: ok\n", "  message: ok\n  scope: line\n")
    with pytest.raises(verigate.RuleError, match=r"scope: rule 'ok-rule': `scope: line` needs keywords"):
        _one(rule)
    ruleset = _one(rule.replace("  scope: line\n", "  scope: line\n  keywords: [ok-]\n"))
    assert [(m.start, m.end) for m in ruleset.scan("a\nb ok-1 c\nok-22\nd")] == [(4, 8), (11, 16)]
    # 'İ'.lower() is two characters: keyword offsets in the lowered text no longer match the original
    text = "İİ ok-7\nİ ok-88"
    assert [text[m.start:m.end] for m in ruleset.scan(text)] == ["ok-7", "ok-88"]


def test_a_kind_reporting_a_span_outside_the_text_fails_closed() -> None:
    class Wild:
        fields_schema: Mapping[str, Any] = {"type": "object"}

        def compile(self, rule: Rule) -> Any:
            return self

        def find(self, view: TextView) -> Iterable[tuple[int, int]]:
            return [(0, len(view.text) + 5)]

    pack = load_pack_text(_pack(UPPER.replace("kind: upper", "kind: wild").replace("  min: 4\n", "")), "<w>")
    ruleset = RuleSet.compile([pack], kinds={"wild": Wild()})
    with pytest.raises(verigate.RuleError, match=r"<w>:4: rule 'shout': kind 'wild' reported the invalid span 0\.\.9"):
        ruleset.scan("abcd")


@settings(max_examples=80, deadline=None)
@given(st.text(max_size=60), st.data())
def test_folded_spans_map_back_monotonically_inside_the_text(text: str, data: st.DataObject) -> None:
    view = TextView(text)
    folded = view.folded
    if not folded:
        return
    start = data.draw(st.integers(0, len(folded) - 1))
    end = data.draw(st.integers(start + 1, len(folded)))
    original_start, original_end = view.original_span(start, end)
    assert 0 <= original_start < original_end <= len(text)
    # the original span folds to text that holds the folded span (clusters never split)
    assert folded[start:end] in fold(text[original_start:original_end])
    if text.isascii():
        assert folded == text.lower()
