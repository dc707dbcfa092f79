"""The EV schema as read at run time: key sets, a keyword allow-list, and the compiled validator."""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from .._errors import SchemaError
from ._files import MAX_JSON_BYTES, RefusedFile, read_regular

__all__ = ["ENFORCED_KEYWORDS", "SCHEMA_NAME", "EvidenceSchema", "load_evidence_schema", "shipped_floor"]

SCHEMA_NAME = "run-evidence.schema.json"
#: the keywords the compiled validator is confirmed to enforce (tests/evidence compare it with jsonschema)
#: plus annotations; any other keyword would be silently ignored by one of them, so the check cannot run
ENFORCED_KEYWORDS = frozenset({
    "$schema", "$id", "$defs", "$ref", "title", "description", "type", "enum", "const", "pattern", "minLength",
    "minimum", "required", "properties", "additionalProperties", "patternProperties", "items", "anyOf",
})
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs")


def _unsupported(node: Any, path: str) -> list[str]:
    if isinstance(node, list):
        return [found for index, item in enumerate(node) for found in _unsupported(item, f"{path}[{index}]")]
    if not isinstance(node, dict):
        return []
    found = [f"{path}/{key}" for key in node if key not in ENFORCED_KEYWORDS]
    reference = node.get("$ref")
    if reference is not None and not (isinstance(reference, str) and reference.startswith("#/$defs/")):
        # the format's own rule (local #/$defs/ only); a file:// reference would be read past the bounded reader
        found.append(f"{path}/$ref (only #/$defs/… within the schema)")
    for key, value in node.items():
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            found += [hit for name, sub in value.items() for hit in _unsupported(sub, f"{path}/{key}/{name}")]
        elif key in ("items", "anyOf", "additionalProperties"):
            found += _unsupported(value, f"{path}/{key}")
    return found


@attrs.frozen
class EvidenceSchema:
    """The parsed schema with the key sets the verifier derives from it (never hard-coded)."""

    definition: dict[str, Any]
    properties: frozenset[str]
    required: frozenset[str]
    validate: Callable[[Any], Any]


def load_evidence_schema(schema_path: Path | None = None) -> EvidenceSchema:
    """Read and compile the EV schema (the shipped one unless ``schema_path``); SchemaError if it cannot be used."""
    return _shipped_schema() if schema_path is None else _load(schema_path)


@functools.cache
def _shipped_schema() -> EvidenceSchema:
    return _load(None)


@functools.cache
def shipped_floor() -> Callable[[Any], Any]:
    """The shipped schema without its root ``additionalProperties``: what an EV checked against another schema
    must hold as well. The verifier's code is written for the shipped contract of its ``SCHEMA_VERSION`` (it reads
    the fields in the shapes that contract gives them), so a ``--schema`` may add keys and tighten definitions,
    never loosen one: a key the shipped schema requires stays required, and a known key keeps its definition
    (before, a ``--schema`` that dropped one let a malformed EV crash the verifier)."""
    from .. import _data

    floor = {key: value for key, value in _shipped_schema().definition.items() if key != "additionalProperties"}
    return _data.compile_schema(floor)


def _load(schema_path: Path | None) -> EvidenceSchema:
    from .. import _data

    if schema_path is None:
        try:
            definition: Any = _data.schema(SCHEMA_NAME)
        except (OSError, UnicodeDecodeError, ValueError, SchemaError) as exc:
            raise SchemaError(f"schema を読めないため検査を実行していない（{SCHEMA_NAME}）: {exc}") from exc
        return _checked(definition)
    try:  # the bounded reader: a FIFO or /dev/zero given as --schema must not hang or exhaust the verifier
        text = read_regular(os.fspath(schema_path), MAX_JSON_BYTES).decode("utf-8")
    except RefusedFile as exc:
        raise SchemaError(f"schema を読めないため検査を実行していない（{SCHEMA_NAME}）: {exc.reason}") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise SchemaError(f"schema を読めないため検査を実行していない（{SCHEMA_NAME}）: {exc}") from exc
    # the file is read on every call (it may change); the same text is parsed, checked and compiled once
    return _from_text(text)


@functools.lru_cache(maxsize=8)
def _from_text(text: str) -> EvidenceSchema:
    try:
        definition = json.loads(text)
    except ValueError as exc:
        raise SchemaError(f"schema を読めないため検査を実行していない（{SCHEMA_NAME}）: {exc}") from exc
    return _checked(definition)


def _checked(definition: Any) -> EvidenceSchema:
    from .. import _data

    if not isinstance(definition, dict):
        raise SchemaError(f"schema を読めないため検査を実行していない（{SCHEMA_NAME}）: the root is not an object")
    properties, required = definition.get("properties"), definition.get("required")
    if not isinstance(properties, dict) or not isinstance(required, list) or not properties:
        raise SchemaError(f"schema を読めないため検査を実行していない（{SCHEMA_NAME}）: no properties/required")
    unsupported = _unsupported(definition, "#")
    if unsupported:
        raise SchemaError(f"schema を検査に使えないため検査を実行していない: keywords not enforced: {unsupported}")
    try:
        validate = _data.compile_schema(definition)
    except SchemaError:
        raise
    except Exception as exc:  # a keyword of the wrong type (pattern: 5, an invalid regex): fastjsonschema's own
        raise SchemaError(f"schema を検査に使えないため検査を実行していない: {type(exc).__name__}: {exc}") from None
    return EvidenceSchema(definition, frozenset(properties), frozenset(map(str, required)), validate)
