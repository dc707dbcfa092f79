"""What the Pydantic AI adapter adds to an agent run: µs per gated run vs the same run ungated, instant judge.

The agent's model is Pydantic AI's ``FunctionModel`` (one tool call, then the answer), the judge ``llm_judge`` over
an in-process callable that answers at once, the store ``:memory:``. ``finalize`` alone (the same candidate) is
measured too; the rest is the adapter's own part (reading the run's records, building the candidate) together with
finalize's worker-thread hops under the agent's event loop — a profile puts the adapter's own code at ~0.1 ms.

Run: ``.venv/bin/python benchmarks/bench_runtime_pydantic_ai.py [--iterations N] [--rounds N] [--quick]``
(needs the verigate-agents-pydantic-ai plug-in). Nothing is asserted; it prints the ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from bench_finalize import per_call_us  # the one alternating timer of the benchmarks
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from verigate_pydantic_ai import output_validator

from verigate import Candidate, Gate, Termination, ToolObservation
from verigate.judge import ChatRequest

REPLY = json.dumps({"passed": True, "score": 1.0, "rubric_misses": [],
                    "reflection": {"observation": "", "lesson": "", "next_check": ""}})


async def judge_function(request: ChatRequest) -> str:
    """The runtime's own (in-process, instant) model call."""
    return REPLY


def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """A tool call first, then an answer that differs per run (as real answers do: no redaction memo hits)."""
    if len(messages) == 1:
        return ModelResponse(parts=[ToolCallPart("run_tests", {"path": "tests"}, tool_call_id="call_1")])
    first = messages[0]
    prompt = first.parts[0].content if isinstance(first, ModelRequest) else ""
    return ModelResponse(parts=[TextPart(f"Fixed it; the suite passes: 12 passed ({prompt!s:.40}).")])


def make_agent() -> Agent[None, str]:
    agent: Agent[None, str] = Agent(FunctionModel(model))

    @agent.tool_plain
    def run_tests(path: str) -> str:
        return f"12 passed in 0.31s ({path})"

    return agent


async def bench(iterations: int, rounds: int) -> None:
    gate = Gate.from_config({"judge": {"client": "callable"}}, judge_function=judge_function, store=":memory:",
                            entry_points=False)
    ungated = make_agent()
    noop = make_agent()

    @noop.output_validator
    async def passes(output: str) -> str:  # Pydantic AI's own cost of running an output validator
        return output

    gated = make_agent()
    validator = output_validator(gate)
    gated.output_validator(validator)
    natural = Termination("natural")

    async def run_ungated(index: int) -> Any:
        return (await ungated.run(f"Fix test {index} and run the suite.")).output

    async def run_noop(index: int) -> Any:
        return (await noop.run(f"Fix test {index} and run the suite.", retries=validator.retries)).output

    async def run_gated(index: int) -> Any:
        return (await gated.run(f"Fix test {index} and run the suite.", retries=validator.retries)).output

    async def finalize_only(index: int) -> Any:
        candidate = Candidate(
            request=f"Fix test {index} and run the suite.",
            final_text=f"Fixed it; the suite passes: 12 passed (Fix test {index} and run the suite.).",
            tool_calls=(ToolObservation("run_tests", {"path": "tests"}, "12 passed in 0.31s (tests)", True),),
            session_id=f"finalize-{index}",
            usage={"input_tokens": 104, "output_tokens": 12, "requests": 2, "tool_calls": 1},
        )
        result = await gate.finalize(candidate, natural)
        assert result.outcome == "completed", result
        return result

    measured = await per_call_us({"ungated": (run_ungated, iterations), "noop": (run_noop, iterations),
                                  "gated": (run_gated, iterations), "finalize": (finalize_only, iterations)}, rounds)
    gate.close()
    ungated_us, noop_us = measured["ungated"], measured["noop"]
    gated_us, finalize_us = measured["gated"], measured["finalize"]
    rows = [
        ("agent run, ungated (FunctionModel, one tool call)", ungated_us),
        ("agent run with a no-op output validator", noop_us),
        ("agent run, gated (output_validator, :memory: store)", gated_us),
        ("finalize of the same candidate alone", finalize_us),
    ]
    for label, micros in rows:
        print(f"{label:55s} {micros:10.1f} µs")
    added = gated_us - ungated_us
    print(f"ratio gated / ungated: {gated_us / ungated_us:.2f}x; the gate adds {added:.1f} µs per run = "
          f"{noop_us - ungated_us:.1f} Pydantic AI's validator call + {finalize_us:.1f} finalize + "
          f"{gated_us - noop_us - finalize_us:.1f} the rest (the adapter's records and candidate, and finalize's "
          "thread hops under the agent's busier event loop; not separable here)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="a smoke run: 3 iterations, 1 round")
    args = parser.parse_args()
    iterations, rounds = (3, 1) if args.quick else (args.iterations, args.rounds)
    asyncio.run(bench(iterations, rounds))


if __name__ == "__main__":
    main()
