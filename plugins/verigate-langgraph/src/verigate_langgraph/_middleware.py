"""``GateMiddleware(gate)``: a ``create_agent`` middleware whose after-model hook gates the agent's final message.

A model message with tool calls is not final: the agent goes on to its tools. A message without tool calls is
the candidate: ``completed`` lets the agent end with it; ``revise`` adds the gate's follow-up as the next user
message and jumps back to the model. The attempt number is the count of the adapter's follow-ups since the
request, and the gate's store counts revises per thread, so neither the agent's recursion limit nor a retry
middleware can buy more attempts than the gate's ``budget.revise``.

A held answer (``pending_review``, ``unverified``) raises :class:`verigate.ReviewPendingError` /
:class:`verigate.UnverifiedError` out of ``invoke``. It raises rather than ends with an ``interrupt``: an
interrupted ``create_agent`` run still returns its messages, whose last one is the held answer, to a caller who
does not look for ``__interrupt__`` — an exception cannot be mistaken for an answer. (For a pause resumed by a
person, use :func:`verigate_langgraph.gate_node` in a StateGraph.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState, hook_config
from langchain_core.messages import AIMessage, AnyMessage
from langgraph.config import get_config
from langgraph.runtime import Runtime

from verigate import Candidate, FinalizeResult, Gate
from verigate.runtimes import follow_up_or_answer

from ._records import NATURAL, build_candidate, filed_result, follow_up_message, re_raised, run_sync, thread_id

__all__ = ["GateMiddleware"]


def _is_final(messages: Sequence[AnyMessage]) -> bool:
    return bool(messages) and isinstance(messages[-1], AIMessage) and not messages[-1].tool_calls


class GateMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """Gate every final answer of a ``create_agent`` agent; run the agent with a checkpointer and a
    ``thread_id`` (the gate's session id)."""

    def __init__(self, gate: Gate, *, requirements: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.gate = gate
        self.requirements = tuple(requirements)

    @property
    def name(self) -> str:
        return "verigate"

    @hook_config(can_jump_to=["model"])
    def after_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        messages = list(state["messages"])
        if not _is_final(messages):
            return None
        candidate, _ = build_candidate(messages, thread_id(get_config()), requirements=self.requirements)
        return self._act(run_sync(lambda: self._finalize(candidate, in_thread=False)))

    @hook_config(can_jump_to=["model"])
    async def aafter_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        messages = list(state["messages"])
        if not _is_final(messages):
            return None
        candidate, _ = build_candidate(messages, thread_id(get_config()), requirements=self.requirements)
        return self._act(await self._finalize(candidate, in_thread=True))

    async def _finalize(self, candidate: Candidate, *, in_thread: bool) -> FinalizeResult:
        """The gate's result; an error of the adapter or the gate files a review instead (never a pass)."""
        try:
            return await self.gate.finalize(candidate, NATURAL)
        except BaseException as exc:
            if re_raised(exc):
                raise
            if in_thread:
                return await asyncio.to_thread(filed_result, self.gate, candidate, exc)
            return filed_result(self.gate, candidate, exc)

    @staticmethod
    def _act(result: FinalizeResult) -> dict[str, Any] | None:
        kind, text = follow_up_or_answer(result)  # a held result raises ReviewPendingError / UnverifiedError
        if kind == "follow_up":
            return {"messages": [follow_up_message(text)], "jump_to": "model"}
        return None  # completed: the model's message stands as the answer
