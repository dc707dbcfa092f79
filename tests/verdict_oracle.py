"""An independent statement of when a judge reply is a pass, for the attack suites to check verigate against.

It shares no code with ``verigate.judge._verdict``: JSON is decoded by the standard library with its own strictness
hooks, the schema is checked by ``jsonschema`` (not fastjsonschema), and the fence rule is stated on lines.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema

from verigate._data import schema

__all__ = ["oracle_passes", "strict_json"]


def strict_json(text: str) -> Any:
    """JSON as the RFC has it: no NaN/Infinity (also by overflow), no repeated keys, no lone surrogates."""

    def no_constants(name: str) -> Any:
        raise ValueError(name)

    def finite(number: str) -> float:
        value = float(number)
        if value in (float("inf"), float("-inf")):
            raise ValueError(number)
        return value

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        if len({key for key, _ in pairs}) != len(pairs):
            raise ValueError("repeated key")
        return dict(pairs)

    value = json.loads(text, parse_constant=no_constants, parse_float=finite, object_pairs_hook=unique)
    json.dumps(value, ensure_ascii=False).encode("utf-8")  # a lone surrogate cannot be encoded
    return value


def _unfenced(text: str) -> str:
    body = text.strip()
    lines = body.splitlines()
    if len(lines) >= 2 and lines[0].startswith("```") and lines[-1].rstrip() == "```":
        tag = lines[0][3:].strip()
        if tag == "" or tag.replace("_", "").replace("-", "").isalnum():
            return "\n".join(lines[1:-1]).strip()
    return body


def oracle_passes(reply: Any) -> bool:
    """True exactly when ``reply`` is a passing verdict: a mapping, or text that (stripped, at most one enclosing
    code fence removed) is one strict JSON object; the object valid under the draft-7 verdict schema, ``passed``
    true and no rubric misses."""
    if isinstance(reply, str):
        if len(reply) > 64_000:
            return False
        body = _unfenced(reply)
        if not body.startswith("{"):
            return False
        try:
            value = strict_json(body)
        except (ValueError, RecursionError, UnicodeEncodeError):
            return False
    elif isinstance(reply, dict):
        value = reply
    else:
        return False
    try:
        jsonschema.validate(value, schema("judge-verdict.schema.json"))
    except jsonschema.ValidationError:
        return False
    return isinstance(value, dict) and value["passed"] is True and not value["rubric_misses"]
