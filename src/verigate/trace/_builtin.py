"""verigate's built-in trace plug-in: registered through the entry-point group like any third-party plug-in."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..hookspecs import hookimpl
from ._grounding import EditedWithoutRead
from ._rules import ExcessiveSteps, ForbiddenToolRule, OutOfOrder, RetryStorm, TraceRule

__all__ = ["BUILTIN_RULES", "verigate_trace_rules"]

BUILTIN_RULES: tuple[TraceRule, ...] = (ForbiddenToolRule(), OutOfOrder(), RetryStorm(), ExcessiveSteps(),
                                        EditedWithoutRead())


@hookimpl
def verigate_trace_rules() -> Mapping[str, Any]:
    """forbidden_tool, out_of_order, retry_storm, excessive_steps, edited_without_read."""
    return {rule.id: rule for rule in BUILTIN_RULES}
