"""verigate's built-in rules plug-in: registered through the entry-point group like any third-party plug-in."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from ..hookspecs import hookimpl


@functools.cache
def _kinds() -> Mapping[str, Any]:
    from ._kinds import builtin_kinds

    return builtin_kinds()


@hookimpl
def verigate_rule_kinds() -> Mapping[str, Any]:
    """The built-in kinds: ``regex`` and ``phrase`` (the same immutable objects on every call, so what is
    compiled with them can be shared between managers)."""
    return dict(_kinds())
