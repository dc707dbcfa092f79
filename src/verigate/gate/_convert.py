"""Strict (de)serialisation of candidates, terminations and verdicts: one cattrs converter per direction (built
in verigate._converters, which the configuration shares)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import cattrs

from .. import _data
from .._converters import structure_converter, unstructure_converter
from .._errors import CandidateError
from .._models import Candidate, Termination
from .._schema_errors import schema_failure

__all__ = [
    "parse_candidate",
    "parse_termination",
    "structure_converter",
    "unstructure",
    "unstructure_converter",
]

_T = TypeVar("_T")
SCHEMA = "candidate.schema.json"


def unstructure(value: Any) -> Any:
    return unstructure_converter().unstructure(value)


@functools.cache
def _validator(which: str) -> Callable[[Any], Any]:
    """The candidate schema, or its ``$defs/termination`` compiled on its own."""
    if which == "candidate":
        return _data.compiled_schema(SCHEMA)
    return _data.compile_schema({"$defs": _data.schema(SCHEMA)["$defs"], "$ref": f"#/$defs/{which}"})


def _first_path(exc: BaseException) -> tuple[str | None, str]:
    """The field path (``tool_calls[0].ok``) and message of the first error cattrs reports."""
    for message in cattrs.transform_error(exc):
        text, _, path = message.rpartition(" @ ")
        field = path.removeprefix("$").lstrip(".") or None
        return field, text or message
    return None, str(exc)


def _schema_field(exc: Any) -> tuple[str | None, str]:
    """The failing field of a schema error; a missing or extra key is named itself, not its parent object."""
    failure = schema_failure(exc)
    # both keywords apply to objects only, so the failing value is always the object holding the key
    if failure.rule == "required":
        return failure.target, "is required"
    if failure.rule == "additionalProperties":
        return failure.target, "is not an allowed field"
    return failure.field, failure.detail or failure.message


def _parse(which: str, cls: type[_T], data: Any, source: str | None) -> _T:
    if not isinstance(data, Mapping):
        raise CandidateError(f"a {which} must be a JSON object, got {type(data).__name__}", source=source)
    try:
        import fastjsonschema

        _validator(which)(dict(data))
    except fastjsonschema.JsonSchemaValueException as exc:
        field, message = _schema_field(exc)
        raise CandidateError(message, source=source, field=field) from exc
    try:
        return structure_converter().structure(dict(data), cls)
    except (cattrs.BaseValidationError, TypeError, ValueError) as exc:
        field, message = _first_path(exc) if isinstance(exc, cattrs.BaseValidationError) else (None, str(exc))
        raise CandidateError(message, source=source, field=field) from exc


def parse_candidate(data: Any, *, source: str | None = None) -> Candidate:
    """A Candidate from JSON data (schema-checked, strict types, no extra keys) or CandidateError naming the
    field."""
    return _parse("candidate", Candidate, data, source)


def parse_termination(data: Any, *, source: str | None = None) -> Termination:
    """A Termination from ``{"reason": ..., "detail": ...}``; an unknown reason is a CandidateError."""
    return _parse("termination", Termination, data, source)

