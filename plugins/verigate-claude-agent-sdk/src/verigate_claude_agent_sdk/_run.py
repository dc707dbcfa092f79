"""One gated query: the SDK's own ``query`` with verigate's hooks added, and the gate's decision as its result.

The CLI streams the agent's text before its Stop hook runs, so a message stream can never be "the verified
answer". :func:`run_gated` returns the answer the gate completed (``FinalizeResult.answer``) and nothing else:
a pending review raises ``ReviewPendingError`` (with ``review_id``), anything else ``UnverifiedError``.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import attrs
from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, query

from verigate.runtimes import ReviewPendingError, UnverifiedError, held_error

from ._hooks import GateHooks, _Held, held_from, merge

if TYPE_CHECKING:
    from claude_agent_sdk import Transport

    from verigate import FinalizeResult, Gate

__all__ = ["GatedAnswer", "run_gated"]


@attrs.frozen
class GatedAnswer:
    """A completed run: the verified answer, the SDK's session id (the gate's session) and the gate's result."""

    text: str
    session_id: str
    result: FinalizeResult
    #: the SDK's own result message (usage, cost, turns)
    message: ResultMessage | None = None


async def run_gated(prompt: str, *, options: ClaudeAgentOptions | None = None, gate: Gate | None = None,
                    hooks: GateHooks | None = None, transport: Transport | None = None) -> GatedAnswer:
    """Run ``query(prompt, options)`` with verigate's hooks added after the caller's own; ``gate`` None: the
    project's gate (``cwd``'s verigate.yaml), as ``verigate hook claude-code stop`` opens it. A revise is the CLI
    continuing with the gate's follow-up (the Stop hook's ``block``); the gate's revise budget ends it, whatever
    the options' ``max_turns`` allow. ``transport`` is passed to ``query`` (None: the SDK starts the CLI)."""
    hooks = hooks or GateHooks(gate)
    options = options or ClaudeAgentOptions()
    gated = dataclasses.replace(options, hooks=merge(options.hooks, hooks.matchers()))
    final: ResultMessage | None = None
    async for message in query(prompt=prompt, options=gated, transport=transport):
        if isinstance(message, ResultMessage):
            final = message
    if final is None:
        raise UnverifiedError(_Held("unverified", "no_result", None), "the run ended without a result message")
    outcome = hooks.last_stop(final.session_id)
    if outcome is None:
        raise UnverifiedError(_Held("unverified", "no_stop_hook", None),
                              f"the run ended without the Stop gate ({final.subtype}); nothing was verified")
    result = outcome.result
    if result is None:
        held: Any = held_from(outcome)
        if held.pending_id:
            raise ReviewPendingError(held, f"the gate holds the answer: pending review {held.pending_id}")
        raise UnverifiedError(held, f"the answer was not verified ({held.policy_action})")
    if result.outcome == "completed":
        return GatedAnswer(result.answer, final.session_id, result, final)
    if result.outcome == "revise":  # the run ended (max_turns, an error) while a revision was asked for
        raise UnverifiedError(result, f"the run ended before the asked revision ({final.subtype})")
    raise held_error(result)
