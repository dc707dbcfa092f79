"""The strict cattrs converters every typed model is built with, and where a structuring error points.

They live here, not in the gate, so that the configuration (which the gate itself imports) can use them
without an import cycle. cattrs (~40 ms of imports) loads when a converter is first built or an error first
read, not when this module is imported: the gate imports it, and many processes never structure anything.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ._models import TerminationReason

if TYPE_CHECKING:
    import cattrs

__all__ = ["first_error", "structure_converter", "unstructure_converter"]


def _strict(kind: type, *, also: tuple[type, ...] = ()) -> Callable[[Any, Any], Any]:
    """A primitive hook that refuses everything but ``kind`` (cattrs would turn "false" into True)."""
    accepted = (kind, *also)

    def hook(raw: Any, _type: Any) -> Any:
        value: object = raw
        # bool is an int in Python; it is never a number in the data we accept
        if isinstance(value, bool) and kind is not bool:
            raise TypeError(f"expected {kind.__name__}, got bool")
        if not isinstance(value, accepted):
            raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
        return float(raw) if kind is float else raw

    return hook


def _reason(value: Any, _type: Any) -> TerminationReason:
    if not isinstance(value, str):
        raise TypeError(f"expected a termination reason string, got {type(value).__name__}")
    try:
        return TerminationReason(value)
    except ValueError:
        raise ValueError(f"unknown termination reason {value!r}") from None


@functools.cache
def structure_converter() -> cattrs.Converter:
    """Data → models: strict primitives, extra keys refused."""
    import cattrs

    converter = cattrs.Converter(forbid_extra_keys=True)
    converter.register_structure_hook(str, _strict(str))
    converter.register_structure_hook(int, _strict(int))
    converter.register_structure_hook(float, _strict(float, also=(int,)))
    converter.register_structure_hook(bool, _strict(bool))
    converter.register_structure_hook(TerminationReason, _reason)
    return converter


@functools.cache
def unstructure_converter() -> cattrs.Converter:
    """Models → plain JSON data (tuples become lists, enums their values) for storage and export."""
    import cattrs

    converter = cattrs.Converter()
    converter.register_unstructure_hook(TerminationReason, lambda reason: reason.value)
    return converter


def first_error(exc: BaseException) -> tuple[tuple[str | int, ...], str]:
    """The path (``("judge", "caps", "observations")``) and description of the first error a structuring failure
    holds, read from cattrs' validation notes; the error :func:`cattrs.transform_error` would list first. An
    unknown key is named itself, not the object holding it."""
    from cattrs.errors import (
        AttributeValidationNote,
        ClassValidationError,
        ForbiddenExtraKeysError,
        IterableValidationError,
        IterableValidationNote,
    )
    from cattrs.v import format_exception

    path: list[str | int] = []
    node: BaseException = exc
    kind: Any = None
    while isinstance(node, ClassValidationError | IterableValidationError):
        noted, plain = node.group_exceptions()
        if noted:
            node, note = noted[0]
            if isinstance(note, AttributeValidationNote):
                path.append(note.name)
            elif isinstance(note, IterableValidationNote):
                path.append(note.index)
            kind = note.type
        elif plain:
            node, kind = plain[0], None
        else:
            break
    if isinstance(node, ForbiddenExtraKeysError) and node.extra_fields:
        path.append(sorted(node.extra_fields)[0])
    return tuple(path), format_exception(node, kind)
