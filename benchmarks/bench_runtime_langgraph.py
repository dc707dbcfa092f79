"""verigate_langgraph overhead: µs per gated run against the same run ungated, with an instant judge.

Run: ``python benchmarks/bench_runtime_langgraph.py [--runs N] [--quick]``. For the ``create_agent`` middleware
and the ``StateGraph`` gate node it measures the run without the gate, the run with a no-op hook / node in the
gate's place (the framework's cost of one more graph node), the run with the gate, and a bare ``Gate.finalize`` of
the same candidate (the gate's own cost: judge call, redaction, SQLite writes); gated − no-op − finalize is what
the adapter's own code adds. Prints the figures and the ratio; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from verigate_langgraph import GateMiddleware, GateState, build_candidate, gate_node

from verigate import Gate, Termination, Verdict
from verigate.testing import ScriptedJudge


class Instant(FakeMessagesListChatModel):
    """One fixed answer, a fresh message per call."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Instant:
        return self

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self.responses[0].model_copy())])


class NoOp(AgentMiddleware[AgentState[Any], Any, Any]):
    """An after-model hook that does nothing: what the extra graph node alone costs."""

    def after_model(self, state: AgentState[Any], runtime: Any) -> dict[str, Any] | None:
        return None


def per_run_us(label: str, count: int, run: Callable[[int], object]) -> float:
    """The best mean over chunks of a tenth of the runs: the machine may be shared, the least disturbed chunk is
    the closest to the code's own cost."""
    run(-1)  # warm up (graph compile caches, the store's schema)
    chunk, done, best = max(1, count // 10), 0, float("inf")
    while done < count:
        size = min(chunk, count - done)
        started = time.perf_counter()
        for index in range(done, done + size):
            run(index)
        best = min(best, (time.perf_counter() - started) / size * 1e6)
        done += size
    print(f"{label:<44} {count:>5} runs  {best:>9.0f} µs/run")
    return best


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="µs per gated LangGraph run against the same run ungated")
    parser.add_argument("--runs", type=int, default=300, help="runs per row (default 300)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 5 runs per row")
    options = parser.parse_args(argv)
    count = 5 if options.quick else options.runs
    print(f"{'run':<44} {'count':>5}       µs/run (best chunk mean)")
    model = Instant(responses=[AIMessage("Fixed it; pytest: 12 passed.")])
    request = {"messages": [HumanMessage("Fix calc.add() and run the tests.")]}
    with tempfile.TemporaryDirectory() as folder:
        judge = ScriptedJudge([Verdict(passed=True)], repeat_last=True)
        gate = Gate.from_config({"judge": {"engine": "scripted"}}, plugins=[judge],
                                store=str(Path(folder) / "verigate.db"), entry_points=False)

        def config(prefix: str, index: int) -> Any:
            return {"configurable": {"thread_id": f"{prefix}-{index}"}}

        plain = create_agent(model, checkpointer=InMemorySaver())
        hooked = create_agent(model, middleware=[NoOp()], checkpointer=InMemorySaver())
        gated = create_agent(model, middleware=[GateMiddleware(gate)], checkpointer=InMemorySaver())
        ungated_agent = per_run_us("create_agent, ungated", count, lambda i: plain.invoke(request, config("p", i)))
        noop_agent = per_run_us("create_agent + a no-op after_model", count,
                                lambda i: hooked.invoke(request, config("h", i)))
        gated_agent = per_run_us("create_agent + GateMiddleware", count,
                                 lambda i: gated.invoke(request, config("m", i)))

        def graph(with_gate: bool | None) -> Any:
            builder = StateGraph(GateState)
            builder.add_node("agent", lambda state: {"messages": [model.invoke(state["messages"])]})
            builder.add_edge(START, "agent")
            if with_gate is not False:  # None: a no-op node where the gate would be
                builder.add_node("gate", gate_node(gate, agent="agent") if with_gate else (lambda state: {}))
                builder.add_edge("agent", "gate")
            else:
                builder.add_edge("agent", END)
            return builder.compile(checkpointer=InMemorySaver())

        plain_graph, noop_graph, gated_graph = graph(False), graph(None), graph(True)
        ungated_node = per_run_us("StateGraph, ungated", count, lambda i: plain_graph.invoke(request, config("g", i)))
        noop_node = per_run_us("StateGraph + a no-op node", count, lambda i: noop_graph.invoke(request, config("o", i)))
        gated_node = per_run_us("StateGraph + gate_node", count, lambda i: gated_graph.invoke(request, config("n", i)))

        answered = [HumanMessage("Fix calc.add() and run the tests."), AIMessage("Fixed it; pytest: 12 passed.",
                                                                                   id="a")]

        def finalize(index: int) -> object:
            candidate, _ = build_candidate(answered, f"f-{index}")
            return asyncio.run(gate.finalize(candidate, Termination("natural")))

        bare = per_run_us("Gate.finalize alone (the gate's own cost)", count, finalize)
        gate.close()
    for face, ungated, noop, gated_us in (("middleware", ungated_agent, noop_agent, gated_agent),
                                          ("node", ungated_node, noop_node, gated_node)):
        print(f"{face:<10} gated/ungated = {gated_us / ungated:5.2f}x; beyond the gate's finalize and the "
              f"framework's extra node: {gated_us - noop - bare:+.0f} µs/run")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
