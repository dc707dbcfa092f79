"""The Stop hook's time budget: the deadlines it gives ``Gate.finalize`` and itself, and the bounded waits."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from .._errors import ConfigError
from ._protocol import DEADLINE_ENV, STOP_BUDGET_DEFAULT_S

if TYPE_CHECKING:
    from .._models import Candidate, FinalizeResult, StageContext
    from ..gate import Gate

__all__ = ["ANSWER_MARGIN_S", "RESULT_POLL_S", "RESULT_WAIT_S", "finalize_until", "hook_deadlines",
           "result_wait_until"]

#: kept back from the budget for filing a review and writing the answer (at most a tenth of the budget)
ANSWER_MARGIN_S = 10.0
#: how long the hook waits for tool results the host has not written yet (Claude Code writes its transcript
#: asynchronously: at Stop the last tool_result line may land tens of ms after the hook started); at most a tenth
#: of the budget, and the re-reads poll at this interval
RESULT_WAIT_S = 1.0
RESULT_POLL_S = 0.05


def hook_deadlines(started: float, environ: Mapping[str, str] | None = None) -> tuple[float, float]:
    """(the deadline given to ``Gate.finalize``, the moment the hook stops waiting for it), as absolute
    :func:`time.monotonic` values: ``started`` plus ``VERIGATE_HOOK_DEADLINE_S`` (default 150 s) minus a margin
    kept for answering — the whole margin for the judge, half of it for the rest of finalize."""
    environ = os.environ if environ is None else environ
    text = environ.get(DEADLINE_ENV, "").strip()
    budget = STOP_BUDGET_DEFAULT_S
    if text:
        try:
            budget = float(text)
        except ValueError:
            budget = math.nan
        if not math.isfinite(budget) or budget <= 0:
            raise ConfigError(f"{DEADLINE_ENV} must be a positive number of seconds, not {text!r}",
                              source="environment", field=DEADLINE_ENV)
    margin = min(ANSWER_MARGIN_S, budget / 10)
    return started + budget - margin, started + budget - margin / 2


def result_wait_until(started: float, deadline: float) -> float:
    """Until when the hook waits for missing tool results: ``RESULT_WAIT_S``, at most a tenth of the budget."""
    return min(started + RESULT_WAIT_S, started + (deadline - started) / 10)


async def finalize_until(gate: Gate, candidate: Candidate, deadline: float, give_up: float,
                         context: StageContext | None = None) -> FinalizeResult | None:
    """``Gate.finalize`` with the hook's deadline (it bounds the judge); None when the rest of finalize (hook
    stages, store) runs past ``give_up`` too — the answer must reach the host before its own timeout."""
    import asyncio

    from .._models import Termination, TerminationReason

    finalize = gate.finalize(candidate, Termination(TerminationReason.NATURAL), deadline=deadline, context=context)
    try:
        return await asyncio.wait_for(finalize, timeout=max(0.0, give_up - time.monotonic()))
    except TimeoutError:
        return None
