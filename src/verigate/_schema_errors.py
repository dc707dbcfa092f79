"""One translator for fastjsonschema's value errors, read from the exception's structured fields.

fastjsonschema raises ``JsonSchemaValueException`` with ``message`` (``"data.rules[3].severity must be ..."``),
``name`` (``"data.rules[3].severity"``), ``path`` (``["data", "rules", "3", "severity"]``), ``rule``
(``"enum"``, ``"required"``, ``"additionalProperties"`` …), ``rule_definition``, ``definition`` (the failing
sub-schema) and ``value`` (the failing value). Every caller formats its own message from a SchemaFailure; none
reads the message wording.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

__all__ = ["MAX_FAILURE_CHARS", "SchemaFailure", "schema_failure"]

#: the longest message, detail or key a SchemaFailure carries: fastjsonschema's message echoes what failed (an
#: unknown key whole), and the data may be anyone's — a key of a million characters would fill every answer
MAX_FAILURE_CHARS = 300


def _cut(text: str) -> str:
    return text if len(text) <= MAX_FAILURE_CHARS else f"{text[:MAX_FAILURE_CHARS]}… ({len(text):,} characters)"


@attrs.frozen
class SchemaFailure:
    """What failed, where, and the bare complaint."""

    #: fastjsonschema's whole message, the failing value's name included
    message: str
    #: the message without the leading name (``"must be one of ..."``), or the whole message if there is no name
    detail: str
    #: the dotted name below the root (``"rules[3].severity"``), None at the root
    field: str | None
    #: the path below the root as strings (``("rules", "3", "severity")``)
    path: tuple[str, ...]
    #: the schema keyword that failed
    rule: str | None
    #: for ``required``: the first missing key; for ``additionalProperties``: the first unknown key
    key: str | None

    @property
    def target_path(self) -> tuple[str, ...]:
        """The path of what is wrong: a missing or unknown key itself, not the object holding it."""
        return (*self.path, self.key) if self.key is not None else self.path

    @property
    def target(self) -> str | None:
        """:attr:`field` with the missing or unknown key appended (``"judge.caps.bogus"``), None at the root."""
        if self.key is None:
            return self.field
        return f"{self.field}.{self.key}" if self.field else self.key


def schema_failure(exc: Any) -> SchemaFailure:
    """A SchemaFailure from a ``fastjsonschema.JsonSchemaValueException``."""
    name = exc.name or ""
    field = name.removeprefix("data").lstrip(".") or None
    detail = exc.message.removeprefix(name).strip() if name else exc.message
    path = tuple(str(part) for part in (exc.path or [])[1:])
    key = None
    value = exc.value
    if exc.rule == "additionalProperties" and isinstance(value, Mapping):
        definition = exc.definition if isinstance(exc.definition, Mapping) else {}
        known = definition.get("properties", {})
        key = next((str(name) for name in value if name not in known), None)
    elif exc.rule == "required" and isinstance(value, Mapping):
        key = next((str(name) for name in exc.rule_definition or () if name not in value), None)
    return SchemaFailure(message=_cut(exc.message), detail=_cut(detail), field=field, path=path, rule=exc.rule,
                         key=None if key is None else _cut(key))
