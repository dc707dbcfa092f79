"""``gate_guardrail``: the gate as an Agents SDK output guardrail, for code that calls ``Runner.run`` itself.

The SDK runs an output guardrail on the final output before it hands the output out; a tripped guardrail makes
``Runner.run`` raise ``OutputGuardrailTripwireTriggered`` and the run has no result. The guardrail trips on every
outcome but ``completed``, and its ``output_info`` is a :class:`GateCheck` (outcome, review id, follow-up).

The SDK has no retry for a tripped guardrail, so on ``revise`` the caller decides what to do with the follow-up
(:func:`verigate_openai_agents.run_gated` does the loop). A guardrail sees only the run input, the final output and
the usage — not the run's tool calls — so the candidate it builds has no tool calls; ``run_gated`` builds the
candidate from the run's items instead. Attempts are counted by the gate's store per session (a caller's loop
that re-runs with the guardrail cannot extend the revise budget).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import attrs
from agents import Agent, GuardrailFunctionOutput, OutputGuardrail, RunContextWrapper

from verigate import Candidate, FinalizeResult, Gate, Termination, TerminationReason
from verigate.runtimes import caller_stops, describe_error, finalize_or_hold, hold

from ._records import final_text, request_text, usage_of

__all__ = ["GUARDRAIL_NAME", "GateCheck", "gate_guardrail"]

#: the name every gate guardrail carries (``run_gated`` refuses an agent that already has one: it would gate twice)
GUARDRAIL_NAME = "verigate_gate"

Outcome = Literal["completed", "revise", "pending_review", "unverified"]


@attrs.frozen
class GateCheck:
    """What a gate guardrail decided: the ``output_info`` of its ``GuardrailFunctionOutput``."""

    outcome: Outcome
    #: the pending review's id (``pending_review``; None otherwise, or when it could not be stored)
    review_id: str | None
    #: the gate's instruction for the next attempt (``revise``; "" otherwise)
    follow_up: str
    policy_action: str
    result: FinalizeResult

    @classmethod
    def of(cls, result: FinalizeResult) -> GateCheck:
        return cls(result.outcome, result.pending_id, result.follow_up, result.policy_action, result)


def gate_guardrail(gate: Gate, *, session_id: str = "default",
                   requirements: Sequence[str] = ()) -> OutputGuardrail[Any]:
    """An output guardrail that finalizes the agent's final output with ``gate``.

    ``session_id`` is the conversation the gate counts attempts in (use the id of your chat thread, the same one
    you give ``RunConfig.group_id``). Tripwire on anything but ``completed``; an exception inside the guardrail
    files a review and trips (it never lets the output through)."""
    wanted = tuple(requirements)

    async def verigate_gate(context: RunContextWrapper[Any], agent: Agent[Any],
                            output: Any) -> GuardrailFunctionOutput:
        candidate = Candidate("", "", session_id=session_id)
        try:
            candidate = Candidate(
                request=request_text(context.turn_input),
                final_text=final_text(output),
                session_id=session_id,
                usage=usage_of(context.usage),
                requirements=wanted,
            )
            result = await finalize_or_hold(gate, candidate, Termination(TerminationReason.NATURAL))
        except BaseException as exc:
            if caller_stops(exc):
                raise
            result = hold(gate, candidate, reason=f"the guardrail raised: {describe_error(exc)}")
        return GuardrailFunctionOutput(output_info=GateCheck.of(result),
                                       tripwire_triggered=result.outcome != "completed")

    return OutputGuardrail(guardrail_function=verigate_gate, name=GUARDRAIL_NAME)
