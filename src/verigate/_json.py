"""The one strict JSON reader for everything that comes from outside the process.

Python's ``json`` accepts what JSON does not promise to mean one thing: a repeated key (last one wins, while another
reader — SQLite's ``json_extract``, a first-wins parser — sees the first), ``NaN`` / ``Infinity``, integers past
±(2**53 − 1) (other readers hold them as a nearby float), lone surrogates
(``"\\ud800"``, which no UTF-8 writer can store), and nesting deep enough to raise ``RecursionError``. An attacker
who writes a judge reply, a hook's stdin, an evidence file or a ledger row uses exactly these to show two readers
two different values. :func:`loads` (public as ``verigate.strict_loads``) refuses each with
:class:`~verigate.StrictJSONError` (an :class:`InputError`, exit 2;
callers that judge integrity, such as the ledger verifier, turn it into their own failure).

Bounds: the text's size (``max_chars``) before decoding, and the nesting depth (``max_depth``) of the decoded value
by an iterative walk (the C decoder itself stops at the interpreter's recursion limit, which is caught), so no
consumer ever recurses through a hostile document.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ._errors import StrictJSONError

__all__ = ["DEFAULT_MAX_CHARS", "DEFAULT_MAX_DEPTH", "MAX_RECORD_CHARS", "MAX_SAFE_INTEGER", "StrictJSONError", "dumps",
           "loads"]

#: nesting deeper than this is refused before decoding (real verigate data nests < 20 levels)
DEFAULT_MAX_DEPTH = 64
#: 64 MiB of text; callers with smaller inputs pass their own, smaller bound
DEFAULT_MAX_CHARS = 64 * 1024 * 1024
#: one record file (RunEvidence, c3.json, an arbiter record, one record.jsonl line): far past any real one
MAX_RECORD_CHARS = 16 * 1024 * 1024

# a \uD8xx–\uDFxx escape: only then can a decoded string hold a lone surrogate (pairs decode to one char)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _reject_constant(name: str) -> Any:
    raise StrictJSONError("constant", f"{name} is not a JSON value")


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise StrictJSONError("duplicate_key", f"the key {key[:80]!r} appears twice in one object")
            seen.add(key)
    return result


#: the integers every JSON reader reads alike (IEEE doubles hold them exactly: SQLite's json_extract and JavaScript
#: turn a larger one into a nearby float, so two readers would see two values)
MAX_SAFE_INTEGER = 2**53 - 1
#: longer digit strings are refused before conversion (Python refuses > 4300 digits with a plain ValueError)
_MAX_INT_DIGITS = len(str(MAX_SAFE_INTEGER))


def _safe_int(text: str) -> int:
    if len(text.lstrip("-")) > _MAX_INT_DIGITS or abs(number := int(text)) > MAX_SAFE_INTEGER:
        shown = text if len(text) <= 40 else f"{text[:40]}… ({len(text)} characters)"
        raise StrictJSONError("number", f"the integer {shown} is past ±(2**53 - 1): readers would see different values")
    return number


def _finite_float(text: str) -> float:
    number = float(text)
    if number in (float("inf"), float("-inf")):  # 1e999 overflows to Infinity, which JSON cannot mean
        raise StrictJSONError("constant", f"{text[:40]} is out of range for a number")
    return number


_DECODER = json.JSONDecoder(
    parse_constant=_reject_constant, parse_float=_finite_float, parse_int=_safe_int, object_pairs_hook=_unique_pairs
)


def _deeper_than(value: Any, limit: int) -> bool:
    """True when containers in the decoded ``value`` nest more than ``limit`` levels (an iterative walk)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


_SURROGATES = re.compile("[\ud800-\udfff]")


def _has_lone_surrogate(value: Any) -> bool:
    """True when any string (key or value) in the decoded ``value`` holds a surrogate code point."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _SURROGATES.search(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def loads(
    data: str | bytes,
    *,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_chars: int = DEFAULT_MAX_CHARS,
    source: str | None = None,
) -> Any:
    """Decode ``data`` as exactly one strict JSON value (see the module docstring), or raise StrictJSONError."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise StrictJSONError("syntax", f"not UTF-8 at byte {exc.start}", source=source) from None
    elif isinstance(data, str):
        text = data
    else:
        raise StrictJSONError("type", f"expected JSON text, got {type(data).__name__}", source=source)
    if len(text) > max_chars:
        raise StrictJSONError("size", f"{len(text)} characters (limit {max_chars})", source=source)
    if _SURROGATES.search(text):
        raise StrictJSONError("surrogate", "the text holds a lone surrogate", source=source)
    try:
        value = _DECODER.decode(text)
    except StrictJSONError as exc:
        if source is not None and exc.source is None:
            raise StrictJSONError(exc.kind, exc.message, source=source) from None
        raise
    except json.JSONDecodeError as exc:
        raise StrictJSONError("syntax", f"{exc.msg} (line {exc.lineno} column {exc.colno})", source=source,
                              line=exc.lineno) from None
    except RecursionError:  # deeper than the interpreter's own limit
        raise StrictJSONError("depth", f"nested deeper than {max_depth} levels", source=source) from None
    # fewer brackets than the bound cannot nest past it: the walk runs only for larger documents
    if isinstance(value, (dict, list)) and text.count("[") + text.count("{") > max_depth \
            and _deeper_than(value, max_depth):
        raise StrictJSONError("depth", f"nested deeper than {max_depth} levels", source=source)
    if "\\" in text and _SURROGATE_ESCAPE.search(text) and _has_lone_surrogate(value):
        raise StrictJSONError("surrogate", "an escaped lone surrogate (\\uD800–\\uDFFF)", source=source)
    return value


def dumps(value: Any) -> str:
    """Canonical compact JSON (sorted keys, no NaN): what verigate writes and hashes."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)
