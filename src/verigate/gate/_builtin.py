"""verigate's built-in gate plug-in: registered through the entry-point group like any third-party plug-in.

Loading it costs next to nothing: every process loads every plug-in, and the checks' machinery is imported at the
first call (``async`` handlers run on the event loop, so the import there happens once, before any await)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._plugins import priority
from ..hookspecs import hookimpl

if TYPE_CHECKING:
    from .._models import Candidate, StructuralFinding, Termination


@hookimpl
@priority(0)
async def verigate_structural_check(candidate: Candidate, termination: Termination) -> list[StructuralFinding]:
    """``empty_turn`` (fixable) and ``model_action_required`` (unfixable), before any other structural check.

    ``async`` although it never awaits: the gate runs sync handlers in a thread (they may block); these bounded
    regular-expression checks run on the event loop instead, which keeps the gate's own overhead small."""
    from ._structural import check_candidate

    return check_candidate(candidate, termination)
