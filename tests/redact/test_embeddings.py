"""Tokens in the embeddings real output uses (ANSI colours, JSON escapes, double encoding, query strings, shell,
YAML, XML): none survives redaction, the context around them does, and the redacted span is the token's own."""

from __future__ import annotations

import json
import string
import urllib.parse
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from redact.embeddings import AFTER, BEFORE, EMBEDDINGS, SPLIT, TOKENS, embedded, pieces
from verigate.redact import DEFAULT_PACKS, RulePackRedactor, redact
from verigate.redact._views import views

REDACTOR = RulePackRedactor.from_packs(DEFAULT_PACKS)


def test_the_table_covers_at_least_23_embeddings() -> None:
    assert len(EMBEDDINGS) >= 23
    assert set(SPLIT) <= set(EMBEDDINGS)


@pytest.mark.parametrize("rule_id", sorted(TOKENS))
@pytest.mark.parametrize("embedding", sorted(EMBEDDINGS))
def test_no_generated_token_survives_an_embedding(embedding: str, rule_id: str) -> None:
    token = TOKENS[rule_id]()
    text = embedded(embedding, token)
    result = redact(text)
    for piece in pieces(embedding, token):
        assert piece not in result.text, (embedding, result.text)
    assert result.text.startswith(BEFORE + "\n") and result.text.endswith("\n" + AFTER)
    assert rule_id in {finding.rule_id for finding in result.findings}


def _found_without_views(text: str, token: str) -> bool:
    """Whether a scan of the original text alone (what redaction did before views) covers the token."""
    start = text.find(token)
    return start >= 0 and any(match.start <= start and start + len(token) <= match.end
                              for match in REDACTOR.ruleset.scan(text) if not match.suppressed)


def test_most_embeddings_are_only_seen_through_a_normalised_view() -> None:
    """The baseline the views fix: the same table scanned without them (a GitHub token, whole-token embeddings)."""
    token = TOKENS["github-classic-token"]()
    missed = sorted(name for name in EMBEDDINGS if name not in SPLIT
                    and not _found_without_views(embedded(name, token), token))
    assert len(missed) >= 15, missed
    assert "url-query-string" not in missed and "shell-export" not in missed


def test_the_original_span_is_redacted_escapes_inside_the_token_included() -> None:
    token = TOKENS["github-classic-token"]()
    result = redact(embedded("token-split-by-ansi", token))
    assert result.text == f"{BEFORE}\n[REDACTED:github-classic-token#1]\n{AFTER}"
    finding = next(f for f in result.findings if f.rule_id == "github-classic-token")
    assert finding.length == len(token) + len("\x1b[0m")


def test_findings_in_a_view_are_spans_of_the_original() -> None:
    token = TOKENS["npm-token"]()
    text = '{"log": "a\\u001b[32m' + token + '\\u001b[0m b"}'
    finding = next(f for f in redact(text).findings if f.rule_id == "npm-token")
    assert text[finding.start:finding.end] == token
    assert redact(text).text == '{"log": "a\\u001b[32m[REDACTED:npm-token#1]\\u001b[0m b"}'


def test_views_map_every_character_back_to_where_it_came_from() -> None:
    text = "a\\u0041\\\\n%42\x1b[1mC"
    derived = {view.text: view for view in views(text)}
    decoded = derived["aA\nBC"]
    assert [text[slice(*decoded.original_span(index, index + 1))] for index in range(5)] == [
        "a", "\\u0041", "\\\\n", "%42", "C"]  # a removed escape belongs to no character, only to spans across it
    assert text[slice(*decoded.original_span(0, 5))] == text


def test_views_hold_only_the_lines_a_view_can_change() -> None:
    """Lines without a backslash, percent-escape or ESC read the same in every view: they are left out, and
    findings on the lines kept still map to their place in the original."""
    first, second = TOKENS["npm-token"](), TOKENS["github-classic-token"]()
    text = "\n".join(["plain one", f"a\\n{first}", "plain two", "plain three", f"\x1b[1m{second}", "end"])
    derived = views(text)
    assert derived and all("plain" not in view.text and "end" not in view.text for view in derived)
    result = redact(text)
    assert result.text == "\n".join(["plain one", "a\\n[REDACTED:npm-token#1]", "plain two", "plain three",
                                     "\x1b[1m[REDACTED:github-classic-token#1]", "end"])
    tokens = {"npm-token": first, "github-classic-token": second}
    spans = {(f.rule_id, text[f.start:f.end]) for f in result.findings if f.rule_id in tokens}
    assert spans == set(tokens.items())
    # a random token can hold a digit run another rule reads (a Luhn-valid card number): such a finding must
    # still map into the token it came from
    places = [range(text.index(token), text.index(token) + len(token) + 1) for token in tokens.values()]
    for finding in result.findings:
        assert any(finding.start in place and finding.end in place for place in places), finding


def test_text_without_escapes_has_no_views() -> None:
    assert views("plain text, 100% ordinary: no escapes here") == []


def test_quadratic_inputs_stay_fast() -> None:
    """Runs of backslashes or ESC introducers and dense escapes cost one pass, not their square (each case takes
    well under a second alone; the bound leaves room for a loaded shared machine)."""
    import time

    for text in ["\\" * 200_000, "\\e]" * 100_000, "\x1b[" * 100_000, "%5C" * 100_000, "\\u00" * 100_000,
                 "abcdefgh\\n" * 100_000]:
        started = time.perf_counter()
        redact(text)
        assert time.perf_counter() - started < 5.0, text[:8]


# ------------------------------------------------------------------------------------------- property, oracle

_HEX = "0123456789abcdef"
_B32 = string.ascii_uppercase + "234567"
_TOKEN = st.one_of(
    st.text(_HEX, min_size=36, max_size=36).map(lambda body: "gh" + "p_" + body),
    st.text(_B32, min_size=16, max_size=16).map(lambda body: "AK" + "IA" + body),
    st.text(string.ascii_letters + string.digits, min_size=24, max_size=40).map(lambda body: "sk" + "_live_" + body),
    st.text(_HEX, min_size=36, max_size=36).map(lambda body: "npm" + "_" + body),
).filter(lambda token: sum(char.isdigit() for char in token) >= 2)

_WRAPPERS: list[Callable[[str], str]] = [
    lambda text: f"\x1b[32m{text}\x1b[0m",
    lambda text: f"\x1b[1;4;38;5;{len(text) % 256}m{text}",
    json.dumps,
    lambda text: json.dumps({"output": text, "lines": ["x\ny"]}),
    lambda text: json.dumps(text)[1:-1],
    lambda text: urllib.parse.quote(text, safe=""),
    lambda text: f'export DEPLOY_TOKEN="{text}"',
    lambda text: f"<auth value='{text}'/>",
    lambda text: f"config:\n  key: {text}\n",
    lambda text: f'echo -e "\\e[31m{text}\\e[0m"',
    lambda text: f"?user=a&token={text}&page=2",
    lambda text: "\n" + text + "\t",
]
_FILLER = st.text(string.ascii_letters + string.digits + " .,:;-_/()[]{}<>!?=+*&#'\"\n", max_size=30)
_SEPARATOR = st.sampled_from([" ", "\n", "\t", '"', "'", "=", ": ", "(", ",", ";", "<", ">"])


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(token=_TOKEN, wrappers=st.lists(st.sampled_from(range(len(_WRAPPERS))), min_size=1, max_size=3),
       before=_FILLER, after=_FILLER, left=_SEPARATOR, right=_SEPARATOR)
def test_no_token_survives_nested_embeddings(token: str, wrappers: list[int], before: str, after: str, left: str,
                                             right: str) -> None:
    # the oracle knows nothing of the redactor: the token is no substring of the output, the context still is
    inner = f"{left}{token}{right}"
    for index in wrappers:
        inner = _WRAPPERS[index](inner)
    text = f"{BEFORE} {before}\n{inner}\n{after} {AFTER}"
    output = redact(text).text
    assert token not in output
    assert output.startswith(BEFORE) and output.endswith(AFTER)
