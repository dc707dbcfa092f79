"""verigate's built-in trace plug-in: registered through the entry-point group like any third-party plug-in.

The rules (and the trace models they import) are built when the registry is first asked for them or
``BUILTIN_RULES`` is first read, not when the plug-in is loaded: a Stop hook loads every plug-in and never grades a
trace."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..hookspecs import hookimpl

if TYPE_CHECKING:
    from ._rules import TraceRule

    #: the shipped rules, one immutable instance each (built at the first read)
    BUILTIN_RULES: tuple[TraceRule, ...]

__all__ = ["BUILTIN_RULES", "verigate_trace_rules"]  # BUILTIN_RULES: from __getattr__


@functools.cache
def _builtin_rules() -> tuple[TraceRule, ...]:
    from ._grounding import EditedWithoutRead
    from ._rules import ExcessiveSteps, ForbiddenToolRule, OutOfOrder, RetryStorm

    return (ForbiddenToolRule(), OutOfOrder(), RetryStorm(), ExcessiveSteps(), EditedWithoutRead())


def __getattr__(name: str) -> Any:
    if name == "BUILTIN_RULES":
        return _builtin_rules()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@hookimpl
def verigate_trace_rules() -> Mapping[str, Any]:
    """forbidden_tool, out_of_order, retry_storm, excessive_steps, edited_without_read."""
    return {rule.id: rule for rule in _builtin_rules()}
