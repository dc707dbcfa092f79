"""Password values the attack found unredacted: inside JSON-escaped quotes, after ``token=`` in a query string,
letter-only passwords; and the code and configuration that must stay as it is."""

from __future__ import annotations

import secrets
import string

import pytest

from verigate.redact import RulePackRedactor, redact

SECRETS = RulePackRedactor.from_packs(["secrets"])


def _letters(length: int = 18) -> str:
    return "".join(secrets.choice(string.ascii_lowercase) for _ in range(length))


def _mixed() -> str:
    while True:
        value = secrets.token_urlsafe(15)
        if sum(char.isdigit() for char in value) >= 2 and value[0].isalnum():
            return value


#: name -> (template with {} for the value, value generator)
CASES = {
    "json-escaped-quotes": ('{"body": "{\\"password\\": \\"{}\\"}"}', _mixed),
    "json-escaped-assignment": ('"cmd": "password = \\"{}\\""', _mixed),
    "double-json-escaped": ('"{\\\\\\"db_password\\\\\\": \\\\\\"{}\\\\\\"}"', _mixed),
    "letters-in-json-escaped-quotes": ('"password = \\"{}\\""', _letters),
    "query-token-then-more": ("https://api.internal.io/cb?user=a&token={}&x=1", _mixed),
    "query-token-then-allow-word": ("https://api.internal.io/cb?user=a&token={}&env=sample&x=1", _mixed),
    "query-password-letters": ("/login?user=a&password={}&next=home", _letters),
    "yaml-letters": ("password: {}", _letters),
    "env-letters": ("DB_PASSWORD={}", _letters),
    "quoted-letters": ('db_password = "{}"', _letters),
    "json-letters": ('{"admin_password": "{}"}', _letters),
    "option-letters": ("mysql --password={} -h db", _letters),
    "passphrase-yaml": ("passphrase: {}", _letters),
    "short-quoted": ('password = "{}"', lambda: _letters(6)),
    "bracket-after-value": ("client_secret: {}(", _mixed),
    "bracket-after-value-in-json": ('{"api_key": "{}["}', _mixed),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_password_value_never_survives(case: str) -> None:
    template, generate = CASES[case]
    value = generate()
    text = template.replace("{}", value)
    result = SECRETS.redact(text)
    assert value not in result.text, (case, result.text)
    assert result.findings


def test_the_rest_of_a_query_string_stays() -> None:
    value = _mixed()
    result = redact(f"GET /cb?user=a&token={value}&env=sample&page=2")
    assert result.text == "GET /cb?user=a&token=[REDACTED:generic-secret-assignment#1]&env=sample&page=2"


def test_an_ampersand_inside_a_quoted_password_is_part_of_it() -> None:
    value = _mixed()[:6] + "&" + _mixed()[:6]
    assert value not in redact(f'secret="{value}"').text


@pytest.mark.parametrize("text", [
    "password = getpass.getpass()",
    "password = user_password",
    "def login(user: str, password: SecretStr) -> None: ...",
    "password: Optional[str] = None",
    "password: required",
    "password: ${DB_PASSWORD}",
    'password: "********"',
    "password_file: /run/secrets/db",
    "--password=$PASS",
    "password_hash = bcrypt.hashpw(password, salt)",
    "the password expires after 90 days",
    "?user=a&token=&x=1",
    "api_token = fetchUserToken2(request)",
    "secretKey = loadKey3[env]",
])
def test_code_and_references_are_not_passwords(text: str) -> None:
    assert SECRETS.redact(text).findings == (), text
