"""verigate for LangGraph / LangChain: the gate's rules inside a graph or a ``create_agent`` agent.

* :func:`gate_node` — a ``StateGraph`` node after the agent node: revise goes back to the agent with the
  follow-up, a pending review pauses the graph with ``interrupt({"review_id": ...})`` and is resolved by
  ``Command(resume={"decision": "approve"|"reject", "by": ...})``.
* :class:`GateMiddleware` — a ``create_agent`` middleware: the after-model hook gates a final message (no tool
  calls), jumps back to the model with the follow-up on revise, and raises
  :class:`verigate.ReviewPendingError` / :class:`verigate.UnverifiedError` on a held answer.

The session id is the LangGraph ``thread_id``; the candidate is built from the messages LangChain recorded.
"""

from __future__ import annotations

from ._middleware import GateMiddleware
from ._node import GateRecord, GateState, gate_node
from ._records import build_candidate

__all__ = ["GateMiddleware", "GateRecord", "GateState", "build_candidate", "gate_node"]
