"""What ``verigate_openai_agents.run_gated`` adds to an Agents SDK run: µs per gated run vs the same run ungated.

Both run the same agent (one tool call, then an answer) on the SDK's own ``ScriptedModel`` with tracing off; the
gated run adds the gate with an instant in-process judge (``client: callable``) and a SQLite store in a temporary
folder. Run: ``.venv/bin/python benchmarks/bench_runtime_openai_agents.py [--iterations N]``. Nothing is asserted;
it prints µs per run (the fastest of five alternating rounds) and the ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call
from verigate_openai_agents import run_gated
from verigate_openai_agents._records import final_text, tool_calls, usage_of

from verigate import Candidate, Gate, Termination
from verigate.judge import ChatRequest

REPLY = json.dumps({"passed": True, "score": 1.0, "rubric_misses": [],
                    "reflection": {"observation": "", "lesson": "", "next_check": ""}})


async def judge_function(request: ChatRequest) -> str:
    """The runtime's own (in-process, instant) model call."""
    return REPLY


@function_tool
def weather(city: str) -> str:
    """The current weather in a city."""
    return f"{city}: 21C, sunny"


def agent(index: int) -> Agent[Any]:
    model = ScriptedModel([
        [function_call("weather", {"city": f"City{index}"}, call_id=f"call-{index}")],
        [assistant_message(f"City{index}: 21C and sunny (weather tool), run {index}.")],
    ])
    return Agent(name="forecaster", instructions="Answer with the tool's reading.", model=model, tools=[weather])


async def per_run_us(run: Callable[[int], Awaitable[object]], iterations: int, offset: int) -> float:
    start = time.perf_counter()
    for index in range(offset, offset + iterations):
        await run(index)
    return (time.perf_counter() - start) / iterations * 1e6


async def main(iterations: int) -> None:
    set_tracing_disabled(True)
    with tempfile.TemporaryDirectory() as folder:
        gate = Gate.from_config({"judge": {"client": "callable", "trust": "primary"}},
                                judge_function=judge_function, store=str(Path(folder) / "verigate.db"))
        try:
            async def ungated(index: int) -> object:
                return await Runner.run(agent(index), f"Weather in City{index}?")

            async def gated(index: int) -> object:
                result = await run_gated(gate, agent(index), f"Weather in City{index}?", session_id=f"s-{index}")
                assert result.status == "completed", result
                return result

            await per_run_us(ungated, 20, 0)  # warm-up
            await per_run_us(gated, 20, 0)
            # alternating rounds, the fastest of each: the machine is shared, the noise is one-sided
            rounds = 5
            bare = with_gate = adapter = float("inf")
            sample = await Runner.run(agent(0), "Weather in City0?")

            async def adapter_only(index: int) -> object:
                # what run_gated adds to the SDK's run: the candidate from the run's records and one finalize
                candidate = Candidate(f"Weather in City{index}?", final_text(sample.final_output),
                                      tool_calls=tool_calls(sample.new_items), session_id=f"a-{index}",
                                      usage=usage_of(sample.context_wrapper.usage))
                return await gate.finalize(candidate, Termination("natural"))

            for number in range(rounds):
                offset = (number + 1) * iterations
                bare = min(bare, await per_run_us(ungated, iterations // rounds, offset))
                with_gate = min(with_gate, await per_run_us(gated, iterations // rounds, offset))
                adapter = min(adapter, await per_run_us(adapter_only, iterations // rounds, offset))
        finally:
            gate.close()
    print(f"ungated Runner.run: {bare:9.0f} µs per run")
    print(f"run_gated:          {with_gate:9.0f} µs per run  (+{with_gate - bare:.0f} µs, x{with_gate / bare:.2f})")
    print(f"of which the adapter (candidate + finalize): {adapter:.0f} µs per run "
          f"(x{(bare + adapter) / bare:.2f} of the ungated run)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="a smoke run: 10 iterations")
    args = parser.parse_args()
    asyncio.run(main(10 if args.quick else args.iterations))
