"""verigate in LangGraph / LangChain, offline: LangChain's fake chat model plays the agent, a toy function the judge.

Run it: ``python examples/langgraph_gate.py`` (not ``langgraph.py``: run as a script, that name would shadow the
``langgraph`` package; needs ``langgraph``, ``langchain`` and ``plugins/verigate-langgraph``).

1. ``create_agent`` with :class:`verigate_langgraph.GateMiddleware`: the model first claims a fix without running
   the tests; the gate revises, the model gets the follow-up as its next user message, runs the tests, and the
   second answer completes.
2. a ``StateGraph`` with :func:`verigate_langgraph.gate_node` and no revise budget: the failing answer pauses the
   graph with ``interrupt({"review_id": ...})``; a person approves it with ``Command(resume=...)``.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.types import Command
from verigate_langgraph import GateMiddleware, GateState, gate_node

from verigate import Gate
from verigate.judge import ChatRequest


class ToyModel(GenericFakeChatModel):
    """The fake chat model, able to stand behind an agent with tools (it plays its script, tools or not)."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ToyModel:
        return self


@tool
def run_tests(path: str) -> str:
    """Run the test suite under ``path``."""
    return f"{path}: 12 passed in 0.21s"


def toy_judge_model(request: ChatRequest) -> str:
    """Stands in for the runtime's own judge model call: it passes an answer backed by a test run."""
    ran_tests = "12 passed" in request.user
    return json.dumps({
        "passed": ran_tests, "score": 1.0 if ran_tests else 0.3,
        "rubric_misses": [] if ran_tests else ["tests_not_run"],
        "reflection": {"observation": "" if ran_tests else "no test run is shown",
                       "lesson": "" if ran_tests else "run the tests before claiming a fix",
                       "next_check": "" if ran_tests else "pytest output"},
    })


def middleware_run(gate: Gate) -> None:
    model = ToyModel(messages=iter([
        AIMessage("I fixed the off-by-one bug."),
        AIMessage("", tool_calls=[{"name": "run_tests", "args": {"path": "tests"}, "id": "call-1"}]),
        AIMessage("Ran pytest -q: 12 passed."),
    ]))
    agent = create_agent(model, tools=[run_tests], middleware=[GateMiddleware(gate)], checkpointer=InMemorySaver())
    result = agent.invoke({"messages": [HumanMessage("Fix calc.add() and run the tests.")]},
                          {"configurable": {"thread_id": "example-agent"}})
    print(f"middleware: completed: {result['messages'][-1].content}")


def node_run(gate: Gate) -> None:
    model = ToyModel(messages=iter([AIMessage("Not yet.")]))

    def agent(state: GateState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(GateState)
    builder.add_node("agent", agent)
    builder.add_node("gate", gate_node(gate, agent="agent"))
    builder.add_edge(START, "agent")
    builder.add_edge("agent", "gate")
    graph = builder.compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "example-graph"}}
    paused = graph.invoke({"messages": [HumanMessage("Fix calc.add() and run the tests.")]}, config)
    print(f"node: paused for review {paused['__interrupt__'][0].value['review_id']}")
    done = graph.invoke(Command(resume={"decision": "approve", "by": "ana"}), config)
    print(f"node: approved by {done['verigate']['by']}: {done['messages'][-1].content}")


def main() -> int:
    with tempfile.TemporaryDirectory() as folder:
        store = str(Path(folder) / "verigate.db")
        judge = {"client": "callable", "trust": "primary"}
        with Gate.from_config({"judge": judge}, judge_function=toy_judge_model, store=store) as gate:
            middleware_run(gate)
        with Gate.from_config({"judge": judge, "budget": {"revise": 0}}, judge_function=toy_judge_model,
                              store=store) as gate:
            node_run(gate)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
