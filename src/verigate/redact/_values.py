"""Structured values as JSON-native data whose every scalar was scanned as text.

Tool inputs arrive from hosts and plug-ins as anything: bytes, sets, tuples, integers, arbitrary objects. What
is not a JSON-native ``str``, ``bool`` or ``None`` is turned into text before the redactors see it, so nothing
reaches a judge or a store through a later ``str()``: an integer card number is a card number, a ``Path`` or an
exception object is the text it would print as. The result holds only dict (str keys), list, str, int, float,
bool and None.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from ._base import Finding, RedactionResult
from ._redactor import as_text

__all__ = ["MAX_DEPTH", "OBJECT_TEXT_LIMIT", "Scanner", "redact_value", "text_of"]

#: containers nested deeper are withheld (a walk this deep is an attack or a bug, never a tool input)
MAX_DEPTH = 100
#: an object whose text is longer is withheld whole: cutting it could cut a secret in two and let its tail pass
OBJECT_TEXT_LIMIT = 65_536

_DEEP = f"[value withheld: nested deeper than {MAX_DEPTH} levels]"
_CYCLE = "[value withheld: it contains itself]"

#: redacts one text, in the context of a key (``key=text``) when one is given
Scanner = Callable[[str, str | None], RedactionResult]


def _object_text(value: object) -> str:
    """``str(value)``, else ``repr(value)``; a marker when both fail or the text is too long to scan whole."""
    kind = type(value).__name__
    for render in (str, repr):
        try:
            text = render(value)
        except Exception:  # user code: any failure means there is no text to show, never a crash of egress
            continue
        if len(text) > OBJECT_TEXT_LIMIT:
            return f"[{kind} withheld: its text has {len(text)} characters]"
        return as_text(str.__str__(text))
    return f"[{kind} withheld: it could not be turned into text]"


def text_of(value: object) -> str:
    """The text a scalar is scanned as: a ``str`` as itself (a subclass as its plain value), bytes decoded as UTF-8
    (invalid sequences replaced), numbers as their decimal text, JSON's spellings for None and booleans, any
    other object as its ``str()``."""
    if isinstance(value, str):
        return str.__str__(value)
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return as_text(bytes(value))
    if isinstance(value, int):
        try:
            return int.__repr__(value)  # the value itself, whatever a subclass prints
        except ValueError:  # more digits than the interpreter converts
            return f"[integer withheld: {value.bit_length()} bits]"
    if isinstance(value, float):
        return float.__repr__(value)
    return _object_text(value)


def _number(node: int | float, key: str | None, scan: Scanner, findings: list[Finding]) -> Any:
    """The number as a plain int or float while its text matches nothing; else (or when it has no JSON form:
    NaN, infinities, integers too long to print) the redacted text."""
    text = text_of(node)
    # the sign is no part of any number format a rule knows (and the card rule refuses digits after a hyphen,
    # so that ranges such as 1-4111... stay): scan the digits of a negative number as they are
    sign = "-" if text.startswith("-") else ""
    result = scan(text[len(sign):], key)
    findings.extend(attrs.evolve(finding, start=finding.start + len(sign), end=finding.end + len(sign))
                    for finding in result.findings)
    shown = sign + result.text
    if shown != text:
        return shown
    if isinstance(node, int):
        return int.__int__(node) if text.lstrip("-").isdigit() else text
    plain = float.__float__(node)
    return plain if math.isfinite(plain) else text


def redact_value(value: Any, scan: Scanner) -> tuple[Any, tuple[Finding, ...]]:
    """``value`` as JSON-native data with every key and scalar redacted by ``scan`` (a string or number under a
    key, and the items of a list under it, in the context of that key). Mappings become dicts with str keys
    (a key that becomes equal to an earlier one gets `` (2)``), lists and tuples lists, sets lists in a stable
    order; containers that contain themselves or nest past :data:`MAX_DEPTH` are withheld."""
    findings: list[Finding] = []
    active: set[int] = set()  # ids of the containers being walked: seeing one again is a cycle

    def text(node: object, key: str | None) -> str:
        result = scan(text_of(node), key)
        findings.extend(result.findings)
        return result.text

    def mapping(node: Mapping[Any, Any], depth: int) -> dict[str, Any]:
        redacted: dict[str, Any] = {}
        for name, item in node.items():
            plain_name = text_of(name)
            unique = first = text(plain_name, None)
            count = 1
            while unique in redacted:
                count += 1
                unique = f"{first} ({count})"
            redacted[unique] = walk(item, plain_name, depth + 1)
        return redacted

    def walk(node: Any, key: str | None, depth: int) -> Any:
        if node is None or isinstance(node, bool):
            return node
        if isinstance(node, (int, float)):
            return _number(node, key, scan, findings)
        if not isinstance(node, (Mapping, list, tuple, set, frozenset)):
            return text(node, key)
        if depth >= MAX_DEPTH:
            return _DEEP
        if id(node) in active:
            return _CYCLE
        active.add(id(node))
        try:
            if isinstance(node, Mapping):
                return mapping(node, depth)
            items = [walk(item, key, depth + 1) for item in node]
            if isinstance(node, (set, frozenset)):
                # a set has no order of its own: sort by the JSON text of the redacted items, never the originals
                items.sort(key=lambda item: json.dumps(item, sort_keys=True))
            return items
        finally:
            active.discard(id(node))

    return walk(value, None, 0), tuple(findings)
