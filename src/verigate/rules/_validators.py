"""Checks a regex rule applies to the reported part: checksums, JWT structure, entropy, digit counts."""

from __future__ import annotations

import base64
import binascii
import json
import math
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["Validator", "build_validator", "entropy", "iban_ok", "jwt_ok", "luhn_ok", "mynumber_ok"]

Validator = Callable[[str], bool]


def _digits(value: str) -> str:
    return "".join(char for char in value if "0" <= char <= "9")


def luhn_ok(value: str) -> bool:
    """The Luhn (mod 10) check of payment card numbers; separators are ignored."""
    digits = _digits(value)
    if not digits:
        return False
    total = 0
    for position, char in enumerate(reversed(digits)):
        digit = int(char)
        if position % 2 == 1:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return total % 10 == 0


def iban_ok(value: str) -> bool:
    """ISO 13616 IBAN: country letters, check digits, mod-97 of the rearranged number equals 1."""
    compact = "".join(value.split()).upper()
    if not 15 <= len(compact) <= 34 or not compact[:2].isalpha() or not compact[2:4].isdigit():
        return False
    if not compact.isascii() or not compact.isalnum():
        return False
    rearranged = compact[4:] + compact[:4]
    number = "".join(str(int(char, 36)) for char in rearranged)
    return int(number) % 97 == 1


def mynumber_ok(value: str) -> bool:
    """Japan's individual number (My Number): 12 digits, the last a check digit over the first 11."""
    digits = _digits(value)
    if len(digits) != 12:
        return False
    body = [int(char) for char in digits[:11]]
    # P_n is the n-th digit from the right of the 11-digit body; Q_n = n+1 for n <= 6, n-5 above
    total = sum(digit * (n + 1 if n <= 6 else n - 5) for n, digit in enumerate(reversed(body), start=1))
    remainder = total % 11
    check = 0 if remainder <= 1 else 11 - remainder
    return check == int(digits[11])


def _b64url_json(part: str) -> Any:
    padded = part + "=" * (-len(part) % 4)
    return json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))


def jwt_ok(value: str) -> bool:
    """A JWT (RFC 7519): three dot-separated base64url parts whose first two decode to JSON objects."""
    parts = value.split(".")
    if len(parts) != 3:
        return False
    try:
        header, payload = _b64url_json(parts[0]), _b64url_json(parts[1])
    except (ValueError, binascii.Error, UnicodeDecodeError):
        return False
    return isinstance(header, dict) and isinstance(payload, dict)


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    if not value:
        return 0.0
    length = len(value)
    return -sum(count / length * math.log2(count / length) for count in Counter(value).values())


_NAMED: dict[str, Validator] = {"luhn": luhn_ok, "iban": iban_ok, "mynumber": mynumber_ok, "jwt": jwt_ok}


def build_validator(spec: str | Mapping[str, Any]) -> Validator:
    """One validator from its pack form (already schema-checked): a name or a one-key mapping."""
    if isinstance(spec, str):
        return _NAMED[spec]
    if "entropy" in spec:
        minimum = float(spec["entropy"]["min"])
        return lambda value: entropy(value) >= minimum
    bounds = spec["digits"]
    low, high = int(bounds.get("min", 0)), bounds.get("max")
    return lambda value: low <= len(_digits(value)) and (high is None or len(_digits(value)) <= int(high))
