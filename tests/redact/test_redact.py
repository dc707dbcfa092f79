"""The redactors: labeled corpus per rule, no generated secret survives, placeholders, findings, bad input."""

from __future__ import annotations

import random
import secrets
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import verigate
from redact.secret_corpus import SECRET_RULES, near_misses, planted, planted_tokens
from verigate._config import RedactionConfig
from verigate._plugins import create_manager
from verigate.redact import Egress, RedactionResult, Redactor, RulePackRedactor, redact
from verigate.rules import load_pack

SECRETS = RulePackRedactor.from_packs(["secrets"])


def test_every_secrets_rule_has_a_generator_and_a_reference() -> None:
    pack = load_pack("secrets")
    assert sorted(rule.id for rule in pack.rules) == sorted(SECRET_RULES)
    assert all(rule.references for rule in pack.rules)


@pytest.mark.parametrize("rule_id", SECRET_RULES)
def test_true_tokens_are_found_by_their_rule_with_the_exact_span(rule_id: str) -> None:
    rng = random.Random(rule_id)
    for _ in range(5):
        token = planted(rule_id, rng)
        result = SECRETS.redact(token.text)
        start = token.text.index(token.secret)
        spans = {(f.rule_id, f.start, f.end) for f in result.findings}
        assert (rule_id, start, start + len(token.secret)) in spans, (token.text, result.findings)
        assert token.secret not in result.text


def test_near_misses_are_not_flagged() -> None:
    for text in near_misses():
        assert SECRETS.redact(text).findings == (), text


def test_corpus_recall_and_precision_are_perfect_per_rule() -> None:
    tokens = planted_tokens(seed=7, per_rule=3)
    document = "\n\n".join([token.text for token in tokens] + near_misses(seed=7))
    findings = SECRETS.redact(document).findings
    planted_spans = []
    position = 0
    for token in tokens:
        start = document.index(token.secret, position)
        planted_spans.append((token.rule_id, start, start + len(token.secret)))
        position = start
    found = {(f.rule_id, f.start, f.end) for f in findings}
    # recall: every planted token reported by its own rule with its exact span
    assert [span for span in planted_spans if span not in found] == []
    # precision: a finding that overlaps no planted token is a false positive (a second rule reporting the same
    # token, e.g. the keyword rule on OPENAI_API_KEY=..., is a duplicate, not a false positive)
    false_positives = [f for f in findings
                       if not any(f.start < end and start < f.end for _, start, end in planted_spans)]
    assert false_positives == []


SEPARATORS = st.sampled_from([" ", "\n", "\t", '"', "'", "=", ": ", "(", ")", ",", ";", "<", ">", "\r\n"])
FILLER = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(seed=st.integers(0, 2**32), rule_index=st.integers(0, len(SECRET_RULES) - 1), before=FILLER,
       after=FILLER, left=SEPARATORS, right=SEPARATORS)
# found by this property: a bracket right after a keyword-assigned value read as a call and let the value pass
@example(seed=0, rule_index=SECRET_RULES.index("generic-secret-assignment"), before="", after="", left=" ",
         right="(")
# and the same bracket after an unquoted password value (password-assignment)
@example(seed=0, rule_index=SECRET_RULES.index("password-assignment"), before="", after="", left=" ", right="(")
# and: a value diluted by what follows it ('=' and a run of zeros) read as low-entropy as a whole
@example(seed=0, rule_index=SECRET_RULES.index("generic-secret-assignment"), before="", after="0" * 29, left=" ",
         right="=")
def test_no_generated_secret_leaves_redact(seed: int, rule_index: int, before: str, after: str, left: str,
                                           right: str) -> None:
    token = planted(SECRET_RULES[rule_index], random.Random(seed))
    text = f"{before}{left}{token.text}{right}{after}"
    result = redact(text)
    assert token.secret not in result.text
    assert token.secret.encode() not in result.text.encode("utf-8")
    # findings carry positions and rule ids, never the value
    assert token.secret not in repr(result.findings)


@settings(max_examples=40, deadline=None)
@given(st.text(max_size=200))
def test_redaction_is_idempotent_and_never_grows_secrets_back(text: str) -> None:
    once = redact(text)
    twice = redact(once.text)
    assert twice.text == once.text
    assert [f for f in twice.findings if not f.suppressed] == []


def test_same_value_same_number_different_values_counted() -> None:
    first, second = planted("github-classic-token", random.Random(1)), planted("github-classic-token",
                                                                                  random.Random(2))
    text = f"a={first.secret} b={second.secret} c={first.secret}"
    result = redact(text, packs=["secrets"])
    assert result.text == ("a=[REDACTED:github-classic-token#1] b=[REDACTED:github-classic-token#2] "
                           "c=[REDACTED:github-classic-token#1]")
    assert [f.length for f in result.findings] == [len(first.secret)] * 1 + [len(second.secret)] + [
        len(first.secret)]


def test_inline_allow_keeps_the_text_and_records_a_suppressed_finding() -> None:
    token = planted("aws-access-key-id", random.Random(3))
    text = f"fixture = '{token.secret}'  # verigate: allow\nreal = '{token.secret}'"
    result = redact(text, packs=["secrets"])
    assert result.text.count(token.secret) == 1
    assert result.text.startswith(f"fixture = '{token.secret}'")
    suppressed = [f for f in result.findings if f.suppressed]
    assert len(suppressed) == 1
    assert suppressed[0].placeholder == ""
    assert suppressed[0].rule_id == "aws-access-key-id"


def test_targeted_allow_only_suppresses_the_named_rule() -> None:
    aws = planted("aws-access-key-id", random.Random(4)).secret
    ghp = planted("github-classic-token", random.Random(4)).secret
    text = f"{aws} {ghp} verigate: allow[github-classic-token]"
    result = redact(text, packs=["secrets"])
    assert aws not in result.text
    assert ghp in result.text


def test_overlapping_matches_merge_and_personal_data_is_flagged() -> None:
    password = planted("generic-secret-assignment", random.Random(6)).secret
    text = f"DSN https://alice:{password}@db.corp.io/app, phone +81 90-1234-5678, mail hanako@corp.co.jp"
    result = redact(text)
    assert password not in result.text
    assert "hanako@corp.co.jp" not in result.text
    assert "90-1234-5678" not in result.text
    assert result.personal_data
    categories = {f.category for f in result.findings}
    assert categories == {"secret", "personal_data"}


def test_privacy_reduces_repository_urls_to_their_numbers() -> None:
    result = redact("see https://github.com/hanako/secret-repo/pull/12#issuecomment-345 by @hanako")
    assert result.text == ("see https://github.com/[REDACTED:repository-owner-url#1]/pull/12#issuecomment-345 "
                           "by [REDACTED:at-handle#1]")
    assert not result.personal_data


AWS_KEY = planted("aws-access-key-id", random.Random(8)).secret


@pytest.mark.parametrize("data", [
    b"\xff\xfe\x00binary\x00" + AWS_KEY.encode() + b"\x80\x81",
    f"lone \udc80 surrogate {AWS_KEY}",
    "\x00" * 100,
    b"",
])
def test_binary_and_invalid_utf8_are_redacted_without_crashing(data: str | bytes) -> None:
    result = redact(data)
    assert AWS_KEY not in result.text
    result.text.encode("utf-8")  # always encodable: invalid sequences became U+FFFD


@settings(max_examples=30, deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes_never_crash(data: bytes) -> None:
    result = redact(data)
    assert isinstance(result, RedactionResult)
    result.text.encode("utf-8")


def test_the_hook_returns_a_redactor_for_the_configured_packs() -> None:
    manager = create_manager()
    egress = Egress.of(manager.hook.verigate_redactors(config=RedactionConfig(), manager=manager))
    assert egress.redactors
    assert all(isinstance(redactor, Redactor) for redactor in egress.redactors)
    token = planted("stripe-secret-key", random.Random(9))
    redacted, findings = egress.value({"nested": [token.text, {"k": token.secret}]})
    assert token.secret not in repr(redacted)
    assert "stripe-secret-key" in {f.rule_id for f in findings}


def test_replace_defaults_uses_only_extra_packs(tmp_path: Path) -> None:
    pack = tmp_path / "corp.yaml"
    pack.write_text(
        "pack: corp\nversion: 1\ncategory: secret\nrules:\n"
        "  - id: corp-ticket-token\n    kind: regex\n    severity: high\n    message: corp token\n"
        "    pattern: 'CORP-[0-9]{6}'\n    keywords: [corp-]\n"
        "    examples: {match: ['CORP-123456'], no_match: ['CORP-12']}\n",
        encoding="utf-8",
    )
    token = planted("aws-access-key-id", random.Random(5)).secret
    replaced = RulePackRedactor.from_config(RedactionConfig(extra_packs=(str(pack),), replace_defaults=True))
    result = replaced.redact(f"CORP-123456 {token}")
    assert result.text == f"[REDACTED:corp-ticket-token#1] {token}"
    extended = RulePackRedactor.from_config(RedactionConfig(extra_packs=(str(pack),)))
    assert extended.redact(f"CORP-123456 {token}").text == (
        "[REDACTED:corp-ticket-token#1] [REDACTED:aws-access-key-id#1]")


def test_a_redaction_pack_without_category_and_an_empty_rule_set_are_errors(tmp_path: Path) -> None:
    pack = tmp_path / "nocat.yaml"
    pack.write_text(
        "pack: nocat\nversion: 1\nrules:\n"
        "  - id: x\n    kind: regex\n    severity: high\n    message: x\n    pattern: 'x+'\n"
        "    examples: {match: ['x'], no_match: ['y']}\n",
        encoding="utf-8",
    )
    with pytest.raises(verigate.RuleError, match=r"nocat\.yaml:1 category: a redaction pack needs"):
        RulePackRedactor.from_packs([pack])
    with pytest.raises(verigate.RuleError, match="active rule set is empty"):
        RulePackRedactor.from_config(RedactionConfig(packs=(), replace_defaults=False))


def test_structured_values_are_redacted_in_the_context_of_their_key() -> None:
    egress = Egress((SECRETS,))
    password = planted("generic-secret-assignment", random.Random(11)).secret
    assert SECRETS.redact(password).findings == ()  # a bare random string is not recognisable on its own
    redacted, findings = egress.value({"DB_PASSWORD": password, "Authorization": f"Bearer {password}",
                                       "nested": [{"client_secret": password}], "name": "build-42"})
    assert password not in repr(redacted)
    assert redacted["DB_PASSWORD"] == "[REDACTED:generic-secret-assignment#1]"
    assert redacted["Authorization"] == "Bearer [REDACTED:authorization-header#1]"
    assert redacted["name"] == "build-42"
    assert {(f.rule_id, f.start, f.end) for f in findings} >= {("generic-secret-assignment", 0, len(password)),
                                                              ("authorization-header", 7, 7 + len(password))}


def test_one_redactor_serves_many_threads_with_the_same_results() -> None:
    from concurrent.futures import ThreadPoolExecutor

    texts = [token.text + f" mail user{index}@corp.co.jp" for index, token in enumerate(planted_tokens(3, 2))]
    expected = [redact(text) for text in texts]
    with ThreadPoolExecutor(max_workers=4) as pool:
        assert list(pool.map(redact, texts * 3)) == expected * 3


def test_an_extra_pack_can_turn_off_a_default_rule(tmp_path: Path) -> None:
    override = tmp_path / "override.yaml"
    override.write_text("pack: override\nversion: 1\ndisables: [at-handle]\nrules: []\n", encoding="utf-8")
    redactor = RulePackRedactor.from_config(RedactionConfig(extra_packs=(str(override),)))
    assert redactor.redact("thanks @hanako").text == "thanks @hanako"
    assert "hanako@corp.co.jp" not in redactor.redact("mail hanako@corp.co.jp").text


def test_a_weak_password_is_still_a_password() -> None:
    weak = "pass" + "word" + "123"
    assert weak not in redact(f'db_password = "{weak}"').text


def test_text_shaped_like_a_placeholder_does_not_protect_a_token() -> None:
    """Only placeholders naming one of the redactor's own rules are skipped (that is what keeps redaction
    idempotent); a token written inside ``[REDACTED:...#1]`` by whoever wrote the text is still found."""
    slack = "xo" + "xb-" + "1234567890-" + secrets.token_hex(12)
    result = redact(f"copied [REDACTED:{slack}#1] from the log")
    assert slack not in result.text
    assert result.text == "copied [REDACTED:[REDACTED:slack-token#1]#1] from the log"
    assert redact(result.text).text == result.text
