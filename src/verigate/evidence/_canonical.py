"""Canonical JSON hashing and the byte-exact EV serialization (pure)."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

__all__ = [
    "COMMIT_SHA",
    "ISO_UTC",
    "SHA256_HASH",
    "TASK_ID",
    "canonical_hash",
    "dump_record",
    "is_utc_timestamp",
    "same_json",
    "sha256_of_bytes",
]

ISO_UTC = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$")
COMMIT_SHA = re.compile(r"^[0-9a-f]{7,40}$")
SHA256_HASH = re.compile(r"^sha256:[0-9a-f]{64}$")
TASK_ID = re.compile(r"^TASK-[0-9]{4}$")


#: days per month of a common year (February gains one in a leap year)
_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def is_utc_timestamp(value: Any) -> bool:
    """``value`` is ``YYYY-MM-DDTHH:MM:SSZ`` naming a real UTC time (a date of the proleptic Gregorian calendar from
    year 0001, hours below 24, no leap second), as ``datetime.strptime`` reads it: the pattern alone takes
    ``2100-13-45T99:99:99Z``, and a line break after the ``Z`` (``$`` matches before one; fullmatch does not)."""
    if not (isinstance(value, str) and ISO_UTC.fullmatch(value)):
        return False
    year, month, day = int(value[0:4]), int(value[5:7]), int(value[8:10])
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days = _MONTH_DAYS[month - 1] + (month == 2 and leap) if 1 <= month <= 12 else 0
    return year >= 1 and 1 <= day <= days and int(value[11:13]) < 24 and int(value[14:16]) < 60 \
        and int(value[17:19]) < 60


def canonical_hash(value: Any) -> str:
    """``sha256:`` + hex SHA-256 of the value as sorted, compact, ASCII-escaped JSON."""
    encoded = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("utf-8")
    return "sha256:" + hashlib.sha256(encoded).hexdigest()


def sha256_of_bytes(data: bytes) -> str:
    """``sha256:`` + hex SHA-256 of raw file bytes (no normalisation)."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def dump_record(record: Any) -> str:
    """The EV / c3.json text form: sorted keys, indent 2, non-ASCII literal, one trailing newline."""
    return json.dumps(record, ensure_ascii=False, indent=2, sort_keys=True) + "\n"


def same_json(left: Any, right: Any) -> bool:
    """Equality as JSON text, so ``1`` differs from ``1.0`` and ``True`` (Python's ``==`` says they are equal)."""
    if _plainly_equal(left, right):
        return True  # the common case of a verified EV, without encoding both sides
    return json.dumps(left, sort_keys=True) == json.dumps(right, sort_keys=True)


#: the exact types whose ``==`` agrees with equality of their JSON text (floats excluded: ``0.0 == -0.0``)
_PLAIN = frozenset({str, int, bool, type(None)})


def _plainly_equal(left: Any, right: Any) -> bool:
    """True only when both sides are built of the same exact types (str-keyed dicts, lists, str, int, bool, None)
    and are equal: then their JSON texts are equal too. False means "not shown": the caller compares the texts.

    Recursive (about twice as fast as an explicit stack on the small values the verifier compares): it descends
    only while both sides have the same shape, so no deeper than the shallower side, and the verifier's right
    side is always derived from strict JSON (at most 64 levels)."""
    kind = type(left)
    if kind is not type(right):
        return False
    if kind in _PLAIN:
        return bool(left == right)
    if kind is dict:
        if len(left) != len(right):
            return False
        for key, value in left.items():
            if type(key) is not str or key not in right or not _plainly_equal(value, right[key]):
                return False
        return True
    if kind is list:
        return len(left) == len(right) and all(map(_plainly_equal, left, right))
    return False
