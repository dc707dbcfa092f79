"""What both faces share: the candidate built from LangChain's own message records, the session id from the
LangGraph config, the follow-up message the gate's revise feeds back, and the framework boundary."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import uuid
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any, TypeVar

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.errors import GraphBubbleUp

from verigate import Candidate, FinalizeResult, Gate, Termination, ToolObservation, VerigateError
from verigate.runtimes import held_result

__all__ = [
    "FOLLOW_UP_ID_PREFIX",
    "build_candidate",
    "filed_result",
    "follow_up_message",
    "is_follow_up",
    "re_raised",
    "run_sync",
    "thread_id",
]

T = TypeVar("T")

#: the id prefix of a follow-up message the adapter adds on revise: it marks where an attempt ends, so it never
#: counts as the request and the attempt number is the count of these since the request
FOLLOW_UP_ID_PREFIX = "verigate-follow-up-"


def follow_up_message(text: str) -> HumanMessage:
    """The gate's follow-up as the model's next instruction (a user turn; the latest follow-up only)."""
    return HumanMessage(content=text, id=f"{FOLLOW_UP_ID_PREFIX}{uuid.uuid4().hex}")


def is_follow_up(message: BaseMessage) -> bool:
    return isinstance(message, HumanMessage) and str(message.id or "").startswith(FOLLOW_UP_ID_PREFIX)


def thread_id(config: RunnableConfig | Mapping[str, Any] | None) -> str:
    """The LangGraph thread id of the run: the gate's session id. No thread id → no session to count revises
    in, so the run stops rather than sharing a default session with every other run."""
    configurable = (config or {}).get("configurable") or {}
    value = configurable.get("thread_id") if isinstance(configurable, Mapping) else None
    if value is None or str(value) == "":
        raise VerigateError("the gate needs a LangGraph thread id: run with a checkpointer and "
                            "config={'configurable': {'thread_id': ...}}", field="thread_id")
    return str(value)


def _text(content: Any) -> str:
    """A message's text: the string, or the text blocks of a content list joined."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content or ():
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, Mapping) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return "".join(parts)


def _turn(messages: Sequence[BaseMessage]) -> tuple[str, list[BaseMessage], int]:
    """(request, the messages after it, attempt): the request is the latest user message the adapter did not
    add; the attempt is the number of follow-ups since then (one per revise, so it grows strictly)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, HumanMessage) and not is_follow_up(message):
            after = list(messages[index + 1:])
            return _text(message.content), after, sum(1 for item in after if is_follow_up(item))
    raise VerigateError("the conversation has no user request to verify an answer against", field="messages")


def _observations(turn: Sequence[BaseMessage]) -> tuple[ToolObservation, ...]:
    """Every tool call of the turn, paired with its ToolMessage; a call without a result is ok=None."""
    results = {message.tool_call_id: message for message in turn if isinstance(message, ToolMessage)}
    observed: list[ToolObservation] = []
    for message in turn:
        if not isinstance(message, AIMessage):
            continue
        for call in message.tool_calls:
            result = results.get(call["id"] or "")
            if result is None:
                observed.append(ToolObservation(call["name"], dict(call.get("args") or {}), "", None))
            else:
                observed.append(ToolObservation(call["name"], dict(call.get("args") or {}), _text(result.content),
                                                result.status != "error"))
    return tuple(observed)


def _usage(turn: Sequence[BaseMessage]) -> dict[str, int]:
    totals: dict[str, int] = {}
    for message in turn:
        metadata: dict[str, Any] = dict(message.usage_metadata or {}) if isinstance(message, AIMessage) else {}
        for key in ("input_tokens", "output_tokens", "total_tokens"):
            value = metadata.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                totals[key] = totals.get(key, 0) + value
    return totals


def build_candidate(messages: Sequence[BaseMessage], session_id: str, *,
                    requirements: tuple[str, ...] = ()) -> tuple[Candidate, AIMessage]:
    """The candidate of the latest attempt, from the messages as LangGraph recorded them: the request, the tool
    calls of the whole turn with their results and ok, the final AI message's text, the usage summed over the
    turn's model calls. ``turn_id`` is the final message's id, so a node that re-runs finds its own review."""
    if not messages or not isinstance(messages[-1], AIMessage):
        raise VerigateError("the gate runs on a final AI message; the last message is "
                            f"{type(messages[-1]).__name__ if messages else 'missing'}", field="messages")
    final = messages[-1]
    request, turn, attempt = _turn(messages)
    candidate = Candidate(
        request=request,
        final_text=_text(final.content),
        tool_calls=_observations(turn),
        session_id=session_id,
        turn_id=str(final.id or ""),
        attempt=attempt,
        usage=_usage(turn),
        requirements=requirements,
        rounds=max(1, sum(1 for message in turn if isinstance(message, AIMessage))),
    )
    return candidate, final


NATURAL = Termination("natural")


def re_raised(exc: BaseException) -> bool:
    """True for what must cross the boundary as it is: the caller's own cancellation, and LangGraph's control
    flow (an interrupt, a parent command) that the framework itself catches."""
    return isinstance(exc, (asyncio.CancelledError, KeyboardInterrupt, SystemExit, GraphBubbleUp))


def run_sync(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run the gate's coroutine from a synchronous hook; inside a running loop (a sync node called from async
    code) it runs on a worker thread's own loop, since the caller's loop cannot be re-entered. The context goes
    along: LangGraph keeps the run's config (which ``interrupt`` needs) in a context variable."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    context = contextvars.copy_context()
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="verigate-langgraph") as pool:
        return pool.submit(context.run, asyncio.run, make()).result()


def filed_result(gate: Gate, candidate: Candidate, exc: BaseException) -> FinalizeResult:
    """The adapter's own error path: file a pending review for a person (never a pass, never a retry). If
    even that fails, the error is raised — the run still hands out nothing."""
    reason = f"the LangGraph adapter failed: {type(exc).__name__}: {exc}"
    try:
        review_id = gate.file_review(candidate, policy_action="escalate", reason=reason)
    except BaseException as filing:
        if re_raised(filing):
            raise
        raise VerigateError(f"{reason}; filing a review failed too: {type(filing).__name__}: {filing}") from exc
    return held_result(candidate, policy_action="escalate", review_id=review_id)
