"""The pii and privacy packs on generated values: checksums computed here, near-misses that must stay."""

from __future__ import annotations

import random
import string

import pytest

from verigate.redact import RulePackRedactor
from verigate.rules._validators import iban_ok, luhn_ok, mynumber_ok

PII = RulePackRedactor.from_packs(["pii"])
PRIVACY = RulePackRedactor.from_packs(["privacy"])


def _digits(rng: random.Random, count: int) -> str:
    return "".join(rng.choice(string.digits) for _ in range(count))


def _card(rng: random.Random) -> str:
    prefix, length = rng.choice([("4", 16), ("51", 16), ("2221", 16), ("37", 15), ("6011", 16), ("4", 19)])
    body = prefix + _digits(rng, length - len(prefix) - 1)
    number = next(body + check for check in string.digits if luhn_ok(body + check))
    return " ".join(number[index:index + 4] for index in range(0, len(number), 4)) if rng.random() < 0.5 else number


def _iban(rng: random.Random) -> str:
    country, length = rng.choice([("DE", 22), ("GB", 22), ("FR", 27), ("NL", 18)])
    bban = _digits(rng, length - 4) if country != "NL" else "ABNA" + _digits(rng, length - 8)
    value = next(f"{country}{check:02d}{bban}" for check in range(2, 99) if iban_ok(f"{country}{check:02d}{bban}"))
    return " ".join(value[index:index + 4] for index in range(0, len(value), 4)) if rng.random() < 0.5 else value


def _my_number(rng: random.Random) -> str:
    body = _digits(rng, 11)
    number = next(body + check for check in string.digits if mynumber_ok(body + check))
    return f"{number[:4]} {number[4:8]} {number[8:]}" if rng.random() < 0.5 else number


def _email(rng: random.Random) -> str:
    user = rng.choice(["hanako.yamada", "j.doe+ci", "bob_smith", "x"]) + _digits(rng, 2)
    return f"{user}@{rng.choice(['corp.co.jp', 'mail.acme.io', 'university.edu'])}"


GENERATORS = {
    "email-address": (_email, "contact: {} (owner)"),
    "phone-number-international": (
        lambda r: f"+{r.choice(['81', '44', '1', '49'])} {_digits(r, 2)} {_digits(r, 4)} {_digits(r, 4)}",
        "call {} tomorrow"),
    "phone-number-japan": (lambda r: f"0{r.choice(['90', '80', '70'])}-{_digits(r, 4)}-{_digits(r, 4)}",
                           "携帯は {} です"),
    "payment-card-number": (_card, "card: {}\n"),
    "iban": (_iban, "IBAN {} for the refund"),
    "japan-my-number": (_my_number, "個人番号 {} を確認"),
}
NEAR_MISSES = [
    "reply to someone@example.com or git@github.com:owner/repo.git",
    "version 1.2.3 built 2026-11-29, offset +09:00, port 8080",
    "order 1234567890123 shipped; pi is 3.14159265358979",
    "IBAN: GB82 WEST 1234 5698 7654 33 (checksum wrong)",
    "timestamp 1717171717171 and id 0123456789",
    "x = a +1; y = b - 2",
]


@pytest.mark.parametrize("rule_id", sorted(GENERATORS))
def test_every_generated_value_is_found_by_its_rule(rule_id: str) -> None:
    generate, context = GENERATORS[rule_id]
    rng = random.Random(rule_id)
    for _ in range(8):
        value = generate(rng)
        text = context.format(value)
        result = PII.redact(text)
        start = text.index(value)
        assert (rule_id, start, start + len(value)) in {(f.rule_id, f.start, f.end) for f in result.findings}, text
        assert value not in result.text
        assert result.personal_data


def test_near_misses_are_not_personal_data() -> None:
    for text in NEAR_MISSES:
        assert PII.redact(text).findings == (), text


@pytest.mark.parametrize(("text", "expected"), [
    ('File "/home/hanako/work/app.py", line 3', 'File "[REDACTED:posix-absolute-path#1]", line 3'),
    ("open C:\\Users\\taro\\plan.docx now", "open [REDACTED:windows-absolute-path#1] now"),
    ("https://github.com/acme/infra/pull/7#issuecomment-12",
     "https://github.com/[REDACTED:repository-owner-url#1]/pull/7#issuecomment-12"),
    ("thanks @octo-hanako!", "thanks [REDACTED:at-handle#1]!"),
    ("#!/usr/bin/env python3", "#!/usr/bin/env python3"),
    ("see https://example.com/a/b and ./src/app.py", "see https://example.com/a/b and ./src/app.py"),
    ("    @property\n    def name(self): ...", "    @property\n    def name(self): ..."),
])
def test_privacy_reductions(text: str, expected: str) -> None:
    result = PRIVACY.redact(text)
    assert result.text == expected
    assert not result.personal_data
