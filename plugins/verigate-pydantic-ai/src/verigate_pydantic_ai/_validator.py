"""The gate as a Pydantic AI output validator: ``agent.output_validator(output_validator(gate))``.

Each final output of a run is one attempt: the validator builds a Candidate from the run's own records, calls
``Gate.finalize`` and acts on the outcome (the mapping of :mod:`verigate.runtimes`):

* ``completed`` returns the output unchanged;
* ``revise`` raises ``ModelRetry(follow_up)``: Pydantic AI sends the follow-up to the model as its next
  instruction. The gate's store counts the revises per session, so the framework's output-retry counter can end
  the loop only by being *lower* than the budget — and then the validator files the review itself at the
  framework's last retry instead of letting ``UnexpectedModelBehavior`` end the run without one (a streamed run,
  ``run_stream(...).get_output()``, allows no retry at all: there a revise is a pending review at once);
* ``pending_review`` / ``unverified`` raise :class:`verigate.runtimes.ReviewPendingError` /
  :class:`~verigate.runtimes.UnverifiedError` (Pydantic AI lets an exception that is not ``ModelRetry`` out of
  ``agent.run`` as it is; the tests hold it to that).

Anything failing inside the adapter (reading the records, the gate itself) files a pending review and raises
ReviewPendingError — or UnverifiedError when not even the review can be stored; it never returns the output.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, Generic, Literal, TypeVar

import attrs
from pydantic_ai import AgentRetries, ModelRetry, RunContext
from pydantic_ai.messages import ModelResponse

from verigate import Candidate, FinalizeResult, Gate, Termination, TerminationReason
from verigate.runtimes import GateHeldError, UnverifiedError, held_error, held_result, hold

from ._records import final_text, request_text, run_messages, tool_observations, usage_counters, usage_since

__all__ = ["GateOutputValidator", "output_validator"]

OutputT = TypeVar("OutputT")
SessionId = str | Callable[[RunContext[Any]], str] | None
#: the outcomes and policy actions of a run the adapter holds itself (a subset of the gate's)
_HeldAction = Literal["unverified", "escalate_budget_exhausted", "escalate_hook_error"]

# the runs whose attempts are in flight; a run that ends outside the validator (a model error) leaves its entry,
# so the table is bounded (the oldest goes first; a run that old starts again at attempt 0, and the gate's store
# still counts its revises)
_MAX_RUNS = 1024


@attrs.define
class _RunState:
    """One run's attempts so far: the next attempt number, where its messages end, what usage it reported."""

    next_attempt: int = 0
    seen_messages: int = 0
    usage: dict[str, int] = attrs.field(factory=dict)


class GateOutputValidator(Generic[OutputT]):
    """A Pydantic AI output validator that runs every final output of a run through the gate.

    Register it with ``agent.output_validator(validator)`` and give the agent the gate's revise budget as its
    output retries (``Agent(..., retries=validator.retries)`` or ``agent.run(..., retries=validator.retries)``).
    """

    def __init__(self, gate: Gate, *, session_id: SessionId = None, requirements: tuple[str, ...] = (),
                 time_budget_s: float | None = None) -> None:
        self.gate = gate
        self._session_id = session_id
        self.requirements = tuple(requirements)
        self.time_budget_s = time_budget_s
        self._runs: dict[str, _RunState] = {}

    @property
    def budget(self) -> int:
        """The gate's revise budget: at most this many ``ModelRetry`` per request."""
        return self.gate.config.budget.revise

    @property
    def retries(self) -> AgentRetries:
        """Pydantic AI ``AgentRetries`` with the output budget set to the gate's revise budget (the tool budget
        is left as the agent has it)."""
        return AgentRetries(output=self.budget)

    def session_of(self, ctx: RunContext[Any]) -> str:
        """The session the gate counts in: the caller's id, else the run's conversation id, else its run id."""
        chosen = self._session_id
        if callable(chosen):
            chosen = chosen(ctx)
        return chosen or ctx.conversation_id or ctx.run_id or "default"

    # ------------------------------------------------------------------------------------------- the validator

    async def __call__(self, ctx: RunContext[Any], output: OutputT) -> OutputT:
        if ctx.partial_output:
            # a streamed partial output would be handed out before any verification: fail closed
            raise UnverifiedError(held_result(Candidate(request="", final_text=""), policy_action="unverified"),
                                  "a streamed partial output cannot be verified; the gate checks the final output "
                                  "(use agent.run / agent.iter, not stream_text/stream_output)")
        run_key = ctx.run_id or f"run-{id(ctx.messages)}"
        state = self._runs.pop(run_key, None) or _RunState()
        candidate: Candidate | None = None
        try:
            candidate, termination = self._candidate(ctx, output, state)
            deadline = None if self.time_budget_s is None else time.monotonic() + self.time_budget_s
            result = await self.gate.finalize(candidate, termination, deadline=deadline)
        except asyncio.CancelledError:
            raise  # the caller's own cancellation
        except (KeyboardInterrupt, SystemExit, GeneratorExit):
            raise
        except BaseException as exc:  # anything else inside the adapter is held, never a pass
            raise self._adapter_error(ctx, output, candidate, state, exc) from exc
        return self._act(ctx, output, result, candidate, state, run_key)

    def _candidate(self, ctx: RunContext[Any], output: OutputT,
                   state: _RunState) -> tuple[Candidate, Termination]:
        messages = run_messages(ctx)
        attempt_messages = messages[state.seen_messages:]
        responses = [message for message in attempt_messages if isinstance(message, ModelResponse)]
        last = responses[-1] if responses else None
        # a refusal is never handed off as an answer: the gate persists it unverified
        reason = (TerminationReason.MODEL_REFUSAL if last is not None and last.finish_reason == "content_filter"
                  else TerminationReason.NATURAL)
        candidate = Candidate(
            request=request_text(ctx, messages),
            final_text=final_text(output),
            tool_calls=tool_observations(attempt_messages, skip_call_id=ctx.tool_call_id),
            session_id=self.session_of(ctx),
            turn_id=ctx.run_id or "",
            attempt=state.next_attempt,
            usage=usage_since(ctx.usage, state.usage),
            requirements=self.requirements,
            rounds=max(1, len(responses)),
        )
        state.seen_messages = len(messages)
        state.usage = usage_counters(ctx.usage)
        return candidate, Termination(reason)

    def _act(self, ctx: RunContext[Any], output: OutputT, result: FinalizeResult, candidate: Candidate,
             state: _RunState, run_key: str) -> OutputT:
        if result.outcome == "completed":
            return output
        if result.outcome != "revise":
            raise held_error(result)
        if ctx.retry >= ctx.max_retries:
            # one more ModelRetry would end the run in UnexpectedModelBehavior, with no review: hold it here
            raise self._framework_limit(ctx, candidate, result)
        # strictly growing per run: the gate's number (it may come from the store) or ours, plus one
        state.next_attempt = max(result.attempt, candidate.attempt) + 1
        self._runs[run_key] = state
        while len(self._runs) > _MAX_RUNS:
            self._runs.pop(next(iter(self._runs)))
        raise ModelRetry(result.follow_up)

    # ------------------------------------------------------------------------------------------- held by us

    def _framework_limit(self, ctx: RunContext[Any], candidate: Candidate, result: FinalizeResult) -> GateHeldError:
        reason = (f"Pydantic AI allows no further output retry ({ctx.retry} of {ctx.max_retries} spent: the agent's "
                  f"output retries are below the gate's revise budget of {self.budget} — give it "
                  "retries=validator.retries — or the run streams, which cannot retry)")
        return self._file(candidate, "escalate_budget_exhausted", reason, result.attempt)

    def _adapter_error(self, ctx: RunContext[Any], output: OutputT, candidate: Candidate | None,
                       state: _RunState, exc: BaseException) -> GateHeldError:
        reason = f"the Pydantic AI adapter failed: {type(exc).__name__}: {exc}"
        if candidate is None:  # the records could not be read: the review holds at least the output
            try:
                text = final_text(output)
            except Exception:  # an output that cannot even be printed
                text = "<the output could not be read>"
            candidate = Candidate(request="", final_text=text, session_id=self._safe_session(ctx),
                                  attempt=state.next_attempt)
        return self._file(candidate, "escalate_hook_error", reason, candidate.attempt)

    def _safe_session(self, ctx: RunContext[Any]) -> str:
        try:
            return self.session_of(ctx)
        except Exception:  # the caller's session function failed: the run's own id
            return ctx.conversation_id or ctx.run_id or "default"

    def _file(self, candidate: Candidate, policy_action: _HeldAction, reason: str, attempt: int) -> GateHeldError:
        held = hold(self.gate, attrs.evolve(candidate, attempt=attempt), reason=reason, policy_action=policy_action)
        return held_error(held)


def output_validator(gate: Gate, *, session_id: SessionId = None, requirements: tuple[str, ...] = (),
                     time_budget_s: float | None = None) -> GateOutputValidator[Any]:
    """The gate as a Pydantic AI output validator.

    ``session_id``: a fixed id, or ``fn(ctx) -> str``; by default the run's conversation id (pass
    ``conversation_id=`` to ``agent.run`` to keep one session across runs). ``requirements`` go to the judge
    with every candidate; ``time_budget_s`` bounds each verification (the judge never runs past it).
    """
    return GateOutputValidator(gate, session_id=session_id, requirements=requirements, time_budget_s=time_budget_s)

