"""``gate_node(gate, agent=...)``: a StateGraph node that verifies the agent's final message.

The node runs in two passes so that the finalize never runs twice, although LangGraph re-runs an interrupted
node from the top:

1. the *finalize pass* (the last message is the agent's answer): builds the candidate from the messages and
   finalizes it — ``completed`` goes on to ``then``; ``revise`` goes back to ``agent`` with the follow-up as the
   next user message; ``pending_review`` removes the held answer from the messages, records the review in the
   ``verigate`` channel and goes to this node again; ``unverified`` removes the answer and ends. Before it
   finalizes it looks the thread's reviews up in the store: a review already filed for this very answer (a re-run
   from an earlier checkpoint, or after a crash between the finalize and the checkpoint) is reused, pending or
   resolved, never filed twice.
2. the *review pass* (the ``verigate`` channel says pending): ``interrupt({"review_id": ...})``. Only this pass
   is interrupted, so only this pass is re-run on ``Command(resume={"decision": "approve"|"reject", "by": ...})``;
   it resolves the review in the store (both resolutions are idempotent in the store; a resume value that is not
   a decision naming who decided is refused and asked again) and, on approval, releases
   the held answer (the store's text) as an AI message and goes on to ``then``; a rejection ends the run. A
   review resolved out of band (``verigate review approve``) is taken as it is, without an interrupt.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any, Literal, NotRequired, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, RemoveMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langgraph.graph import END, MessagesState
from langgraph.types import Command, interrupt

from verigate import Candidate, FinalizeResult, Gate, ReviewError, VerigateError
from verigate.runtimes import held_error, held_result

from ._records import NATURAL, build_candidate, filed_result, follow_up_message, re_raised, run_sync, thread_id

__all__ = ["GateRecord", "GateState", "gate_node"]


class GateRecord(TypedDict, total=False):
    """What the node wrote last: ``outcome`` is ``completed``, ``revise``, ``pending_review``, ``unverified``,
    ``approved`` or ``rejected``; ``answer`` is set only when an answer is handed out."""

    outcome: str
    answer: str
    review_id: str
    policy_action: str
    attempt: int
    by: str
    #: (pending only) the id of the last message once the held answer is removed: where the review pass runs
    after: str


class GateState(MessagesState):
    """A ``MessagesState`` with the ``verigate`` channel the node records its outcome in."""

    verigate: NotRequired[GateRecord]


Decision = Literal["approve", "reject"]


def _decision(value: Any) -> tuple[Decision, str, str]:
    """The resume value, checked: anything but an explicit approve/reject naming who decided is refused (the
    review stays pending and the node asks again)."""
    if not isinstance(value, Mapping):
        raise ReviewError(f"resume with {{'decision': 'approve'|'reject', 'by': ...}}, not {type(value).__name__}",
                          field="resume")
    decision, by, note = value.get("decision"), value.get("by"), value.get("note", "")
    if decision not in ("approve", "reject"):
        raise ReviewError(f"the decision must be 'approve' or 'reject', not {decision!r}", field="decision")
    if not isinstance(by, str) or not by.strip():
        raise ReviewError("a resolution must name who decided (by)", field="by")
    return decision, by, note if isinstance(note, str) else str(note)


def _last_id(messages: Sequence[BaseMessage]) -> str:
    return str(messages[-1].id or "") if messages else ""


class _Node:
    def __init__(self, gate: Gate, agent: str, then: str, requirements: tuple[str, ...]) -> None:
        self.gate, self.agent, self.then, self.requirements = gate, agent, then, requirements

    # ------------------------------------------------------------------------------------------- entry points

    def sync(self, state: Mapping[str, Any], config: RunnableConfig) -> Command[Any]:
        return run_sync(lambda: self.run(state, config, in_thread=False))

    async def run(self, state: Mapping[str, Any], config: RunnableConfig, *, in_thread: bool = True) -> Command[Any]:
        session = thread_id(config)
        messages: list[AnyMessage] = list(state.get("messages") or [])
        record: Mapping[str, Any] = state.get("verigate") or {}
        if record.get("outcome") == "pending_review" and record.get("after") == _last_id(messages):
            return await self._review(record, config, in_thread)
        return await self._finalize(messages, session, config, in_thread)

    # ------------------------------------------------------------------------------------------- passes

    async def _finalize(self, messages: list[AnyMessage], session: str, config: RunnableConfig,
                        in_thread: bool) -> Command[Any]:
        candidate, final = build_candidate(messages, session, requirements=self.requirements)
        result = await self._result(candidate, in_thread)
        if result.outcome == "completed":
            return Command(goto=self.then, update={"verigate": GateRecord(
                outcome="completed", answer=result.answer, attempt=result.attempt, policy_action=result.policy_action)})
        if result.outcome == "revise":
            return Command(goto=self.agent, update={
                "messages": [follow_up_message(result.follow_up)],
                "verigate": GateRecord(outcome="revise", attempt=result.attempt, policy_action=result.policy_action)})
        if result.outcome == "pending_review" and result.pending_id is None:
            raise held_error(result)  # the review could not be stored: nothing to pause on, nothing handed out
        withheld = [RemoveMessage(id=str(final.id))] if final.id else []
        after = _last_id(messages[:-1]) if final.id else _last_id(messages)
        if result.outcome == "pending_review":
            node = str((config.get("metadata") or {}).get("langgraph_node") or "")
            if not node:
                raise VerigateError("gate_node must run as a node of a LangGraph graph", field="langgraph_node")
            return Command(goto=node, update={"messages": withheld, "verigate": GateRecord(
                outcome="pending_review", review_id=str(result.pending_id), policy_action=result.policy_action,
                attempt=result.attempt, after=after)})
        return Command(goto=END, update={"messages": withheld, "verigate": GateRecord(
            outcome="unverified", policy_action=result.policy_action, attempt=result.attempt)})

    async def _result(self, candidate: Candidate, in_thread: bool) -> FinalizeResult:
        """The gate's result for this answer: a review already filed for it, else a fresh finalize; an error of
        the adapter or the gate files a review (never a pass, never a retry)."""
        try:
            filed: FinalizeResult | None = await self._store(in_thread, self._filed_review, candidate)
            if filed is not None:
                return filed
            return await self.gate.finalize(candidate, NATURAL)
        except BaseException as exc:
            if re_raised(exc):
                raise
            result: FinalizeResult = await self._store(in_thread, filed_result, self.gate, candidate, exc)
            return result

    def _filed_review(self, candidate: Candidate) -> FinalizeResult | None:
        """The review of this thread for this very answer (keyed on thread id + the answer's message id, which
        differs per attempt), if the finalize already ran for it; resolved or not, the review pass takes it."""
        if not candidate.turn_id:
            return None
        for review in self.gate.store.list_reviews():
            if review.session_id == candidate.session_id and review.candidate.get("turn_id") == candidate.turn_id:
                return held_result(candidate, policy_action=review.policy_action,  # type: ignore[arg-type]
                                   review_id=review.review_id, attempt=int(review.candidate.get("attempt", 0)))
        return None

    async def _review(self, record: Mapping[str, Any], config: RunnableConfig, in_thread: bool) -> Command[Any]:
        review_id = str(record.get("review_id"))
        store = self.gate.store
        review = await self._store(in_thread, store.get_review, review_id)
        by = review.resolved_by or ""
        if review.status == "pending":
            ask: dict[str, Any] = {"review_id": review_id, "policy_action": review.policy_action,
                                   "reason": review.reason}
            while True:  # a resume value that is not a decision asks again (each ask waits for a new resume)
                try:
                    decision, by, note = _decision(interrupt(ask))
                    break
                except ReviewError as refused:
                    ask = {**ask, "error": refused.message}
            resolve = store.approve_review if decision == "approve" else store.reject_review
            review = await self._store(in_thread, resolve, review_id, by=by, note=note)
        attempt = int(record.get("attempt", 0))
        if review.status == "approved":
            return Command(goto=self.then, update={
                "messages": [AIMessage(content=review.pending_text)],
                "verigate": GateRecord(outcome="approved", answer=review.pending_text, review_id=review_id,
                                       policy_action=review.policy_action, by=by, attempt=attempt)})
        # rejected, or expired (which counts as rejected)
        return Command(goto=END, update={"verigate": GateRecord(
            outcome="rejected", review_id=review_id, policy_action=review.policy_action, by=by, attempt=attempt)})

    @staticmethod
    async def _store(in_thread: bool, function: Any, *args: Any, **kwargs: Any) -> Any:
        # the async node keeps store I/O off the event loop; the sync node already runs on its own loop
        if in_thread:
            return await asyncio.to_thread(function, *args, **kwargs)
        return function(*args, **kwargs)


def gate_node(gate: Gate, *, agent: str, then: str = END,
              requirements: tuple[str, ...] = ()) -> RunnableLambda[Any, Command[Any]]:
    """A node for ``StateGraph(GateState)`` placed after the agent node (``add_edge("agent", "gate")``); it routes
    by ``Command``: back to ``agent`` on revise, to ``then`` on completion or approval, to itself to pause for a
    review, to ``END`` on rejection or unverified. Run it with a checkpointer and a ``thread_id`` (the session id).
    """
    node = _Node(gate, agent, then, tuple(requirements))
    return RunnableLambda(node.sync, afunc=node.run, name="verigate_gate")
