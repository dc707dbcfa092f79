"""The revise loop: drive an agent step function through the gate until it completes, pends or ends unverified."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import attrs

from .._errors import VerigateError
from .._models import Candidate, FinalizeResult, Outcome, Termination, TerminationReason, ToolObservation
from ._engine import Gate

__all__ = ["AgentStep", "AgentTurn", "LoopResult", "StepResult", "run_gated", "run_gated_async"]


@attrs.frozen
class AgentTurn:
    """What the step function is asked to do: the request, and on a revise the latest failure's feedback only."""

    request: str
    session_id: str
    #: 0 for the first attempt, +1 per revise
    attempt: int
    #: "" on the first attempt; otherwise the gate's follow-up of the previous attempt (never older feedback)
    follow_up: str = ""


def _termination(value: Termination | TerminationReason | str) -> Termination:
    return value if isinstance(value, Termination) else Termination(TerminationReason(value))


@attrs.frozen
class StepResult:
    """What one agent attempt produced: its final text, how the turn ended, and the context a judge needs."""

    final_text: str
    termination: Termination = attrs.field(default=Termination(TerminationReason.NATURAL), converter=_termination)
    tool_calls: tuple[ToolObservation, ...] = attrs.field(default=(), converter=tuple)
    usage: Mapping[str, int] = attrs.field(factory=dict)
    rounds: int = 1
    contains_personal_data: bool | None = None
    turn_id: str = ""


@attrs.frozen
class LoopResult:
    """The final FinalizeResult and every result on the way (one per attempt)."""

    final: FinalizeResult
    results: tuple[FinalizeResult, ...]

    @property
    def outcome(self) -> Outcome:
        return self.final.outcome

    @property
    def answer(self) -> str:
        return self.final.answer


AgentStep = Callable[[AgentTurn], "StepResult | Awaitable[StepResult]"]


async def _step(step: AgentStep, turn: AgentTurn) -> StepResult:
    if inspect.iscoroutinefunction(step):
        produced: Any = await step(turn)
    else:
        produced = await asyncio.to_thread(step, turn)
        if inspect.isawaitable(produced):
            produced = await produced
    if not isinstance(produced, StepResult):
        raise VerigateError(f"the agent step must return a StepResult, got {type(produced).__name__}")
    return produced


async def run_gated_async(
    gate: Gate,
    step: AgentStep,
    request: str,
    *,
    session_id: str = "default",
    requirements: tuple[str, ...] = (),
    deadline: float | None = None,
    skip_public_verification: bool = False,
) -> LoopResult:
    """Call ``step`` (sync or async) and finalize its result until the outcome is not ``revise``.

    Each revise feeds the gate's follow-up to the next attempt — only the latest one, so the context stays
    bounded. The attempt number grows by one per revise; the gate's revise budget ends the loop."""
    results: list[FinalizeResult] = []
    turn = AgentTurn(request=request, session_id=session_id, attempt=0)
    while True:
        produced = await _step(step, turn)
        candidate = Candidate(
            request=request,
            final_text=produced.final_text,
            tool_calls=produced.tool_calls,
            session_id=session_id,
            turn_id=produced.turn_id,
            attempt=turn.attempt,
            usage=produced.usage,
            requirements=requirements,
            contains_personal_data=produced.contains_personal_data,
            rounds=produced.rounds,
        )
        result = await gate.finalize(candidate, produced.termination, deadline=deadline,
                                     skip_public_verification=skip_public_verification)
        results.append(result)
        if result.outcome != "revise":
            return LoopResult(result, tuple(results))
        # the gate's attempt (which may come from the store) plus one; always strictly growing
        turn = AgentTurn(request=request, session_id=session_id, attempt=max(result.attempt, turn.attempt) + 1,
                         follow_up=result.follow_up)


def run_gated(gate: Gate, step: AgentStep, request: str, **kwargs: Any) -> LoopResult:
    """The synchronous form of :func:`run_gated_async` (not inside a running event loop)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(run_gated_async(gate, step, request, **kwargs))
    raise VerigateError("run_gated cannot run inside a running event loop; use `await run_gated_async(...)`")
