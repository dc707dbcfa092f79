"""``run_gated``: ``Runner.run`` under the gate, with the revise loop the SDK does not have.

Each attempt is one ``Runner.run``; its candidate is built from the run's own records (the request, the tool
calls paired with their results from ``result.new_items``, the final output, ``context_wrapper.usage``) and
finalized. On ``revise`` the next attempt's input is the original input, the previous attempt's items (so the
model sees what it did) and the gate's follow-up as a user message — only the latest follow-up, never older ones,
so the input stays bounded. The attempt number grows strictly per session, and the gate's store counts the
revises, so nothing the SDK counts (``max_turns``, model retries) can extend the gate's revise budget.

A run that ends without a final output (``MaxTurnsExceeded``, an input guardrail, a model or tool error) is
finalized with its termination reason, which the gate never passes. Any exception in the SDK or the adapter ends
in a pending review (``verigate.runtimes.hold``); only the caller's own cancellation propagates.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Sequence
from typing import Any, Literal

import attrs
from agents import Agent, InputGuardrailTripwireTriggered, MaxTurnsExceeded, RunConfig, RunHooks, Runner
from agents.exceptions import AgentsException
from agents.items import TResponseInputItem
from agents.result import RunResult

from verigate import Candidate, FinalizeResult, Gate, Termination, TerminationReason, VerigateError
from verigate.runtimes import answer_or_raise, caller_stops, describe_error, finalize_or_hold, hold

from ._guardrail import GUARDRAIL_NAME
from ._records import final_text, input_list, request_text, tool_calls, usage_of

__all__ = ["GatedRun", "run_gated", "run_gated_sync"]

Status = Literal["completed", "pending", "unverified"]
_STATUS: dict[str, Status] = {"completed": "completed", "pending_review": "pending", "unverified": "unverified"}


@attrs.frozen
class GatedRun:
    """How a gated run ended. ``answer`` and ``run`` are set only when ``status`` is ``completed``: a held answer is
    never handed out (a person reads it in the review)."""

    status: Status
    #: the verified final text ("" unless completed)
    answer: str
    #: the pending review's id when ``status`` is ``pending`` (None when it could not be stored)
    review_id: str | None
    #: the gate's last decision, and every decision on the way (one per attempt)
    result: FinalizeResult
    results: tuple[FinalizeResult, ...]
    #: the SDK's RunResult of the attempt that passed (None unless completed)
    run: RunResult | None = None

    @property
    def attempts(self) -> int:
        return len(self.results)

    def answer_or_raise(self) -> str:
        """The answer, or :class:`verigate.ReviewPendingError` / :class:`verigate.UnverifiedError` (exit code 3)."""
        return answer_or_raise(self.result)


def _termination(exc: BaseException) -> Termination:
    if isinstance(exc, MaxTurnsExceeded):
        return Termination(TerminationReason.MAX_ROUNDS, describe_error(exc))
    if isinstance(exc, InputGuardrailTripwireTriggered):
        return Termination(TerminationReason.INPUT_BLOCKED, describe_error(exc))
    return Termination(TerminationReason.LLM_ERROR, describe_error(exc))


def _session(run_config: RunConfig | None, session_id: str | None) -> tuple[RunConfig, str]:
    """The run config and the session id: the SDK's conversation grouping id (``RunConfig.group_id``, "a chat
    thread ID" in the SDK's words) when no session id is given; else the session id, set as the group id when
    the run config has none."""
    config = run_config if run_config is not None else RunConfig()
    if session_id is None:
        if not config.group_id:
            raise VerigateError("run_gated needs the conversation's id: session_id=..., or a RunConfig with "
                                "group_id (the gate counts the attempts per session)")
        return config, config.group_id
    return (config if config.group_id else dataclasses.replace(config, group_id=session_id)), session_id


async def run_gated(
    gate: Gate,
    agent: Agent[Any],
    input: str | Sequence[TResponseInputItem],
    *,
    session_id: str | None = None,
    context: Any = None,
    max_turns: int = 10,
    hooks: RunHooks[Any] | None = None,
    run_config: RunConfig | None = None,
    requirements: Sequence[str] = (),
    time_budget_s: float | None = None,
) -> GatedRun:
    """Run ``agent`` on ``input`` until the gate completes, pends or ends the answer unverified.

    ``session_id`` is the conversation's id; without it, the run config's ``group_id`` (the SDK's thread id) is
    the session, and one of the two is required. The gate counts attempts per session. ``time_budget_s`` bounds
    the whole run: the judge never runs past it. Refuses an agent that already carries :func:`gate_guardrail`
    (it would gate each attempt twice)."""
    if any(getattr(guardrail, "name", None) == GUARDRAIL_NAME for guardrail in agent.output_guardrails):
        raise VerigateError("the agent already carries gate_guardrail; run it with Runner.run, or drop the "
                            "guardrail for run_gated (which gates each attempt itself)")
    deadline = None if time_budget_s is None else time.monotonic() + time_budget_s
    config, session_id = _session(run_config, session_id)
    original = input_list(input)
    request = request_text(input)
    wanted = tuple(requirements)
    # a guard should the gate keep asking for revisions past its own budget (a broken store): fail closed
    limit = max(0, gate.config.budget.revise) + 1
    results: list[FinalizeResult] = []
    attempt, turn_input = 0, list(original)
    while True:
        candidate = Candidate(request, "", session_id=session_id, attempt=attempt, requirements=wanted)
        run: RunResult | None = None
        try:
            try:
                run = await Runner.run(agent, turn_input, context=context, max_turns=max_turns, hooks=hooks,
                                       run_config=config)
            except BaseException as exc:
                if caller_stops(exc):
                    raise
                data = exc.run_data if isinstance(exc, AgentsException) else None
                if data is not None:
                    candidate = attrs.evolve(candidate, tool_calls=tool_calls(data.new_items),
                                             usage=usage_of(data.context_wrapper.usage))
                result = await finalize_or_hold(gate, candidate, _termination(exc), deadline=deadline)
            else:
                candidate = attrs.evolve(candidate, final_text=final_text(run.final_output),
                                         tool_calls=tool_calls(run.new_items),
                                         usage=usage_of(run.context_wrapper.usage),
                                         rounds=max(1, len(run.raw_responses)))
                result = await finalize_or_hold(gate, candidate, Termination(TerminationReason.NATURAL),
                                                deadline=deadline)
        except BaseException as exc:  # the adapter's own code: never a pass
            if caller_stops(exc):
                raise
            result = hold(gate, candidate, reason=f"the adapter raised: {describe_error(exc)}")
        results.append(result)
        if result.outcome == "revise" and len(results) >= limit:
            result = hold(gate, candidate, reason="the gate asked for a revision past its revise budget")
            results[-1] = result
        if result.outcome != "revise":
            completed = result.outcome == "completed"
            return GatedRun(_STATUS.get(result.outcome, "unverified"), result.answer if completed else "",
                            result.pending_id, result, tuple(results), run if completed else None)
        # run is set: only a finalized run can be asked to revise (a run without output is never passed on)
        previous = [item.to_input_item() for item in run.new_items] if run is not None else []
        turn_input = [*original, *previous, {"role": "user", "content": result.follow_up}]
        attempt = max(result.attempt, attempt) + 1


def run_gated_sync(gate: Gate, agent: Agent[Any], input: str | Sequence[TResponseInputItem], *,
                   session_id: str | None = None, **kwargs: Any) -> GatedRun:
    """The synchronous form of :func:`run_gated` (like ``Runner.run_sync``: not inside a running event loop)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(run_gated(gate, agent, input, session_id=session_id, **kwargs))
    raise VerigateError("run_gated_sync cannot run inside a running event loop; use `await run_gated(...)`")
