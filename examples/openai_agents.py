"""verigate in the OpenAI Agents SDK, offline: the agent's model is the SDK's own ``agents.testing.ScriptedModel``.

Run it: ``python examples/openai_agents.py`` (needs ``pip install -e plugins/verigate-openai-agents``; its store is
a temporary folder). Two conversations:

1. The agent calls its weather tool, then answers without citing the reading; the judge (a toy function standing
   in for the runtime's own model call) fails it; ``run_gated`` feeds the gate's follow-up back as the next user
   message (the SDK has no retry of its own) and the second answer completes.
2. The agent never cites a reading; after the gate's revise budget (1 here) the answer is held for a person: the
   run ends ``pending`` with the review id, and no answer is handed out.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from agents import Agent, function_tool, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call
from verigate_openai_agents import run_gated_sync

from verigate import Gate
from verigate.judge import ChatRequest


@function_tool
def weather(city: str) -> str:
    """The current weather in a city."""
    return f"{city}: 21C, sunny"


def toy_judge_model(request: ChatRequest) -> str:
    """The judge's model call (``fn(ChatRequest) -> str``): passes an answer that cites the tool's reading."""
    answer = request.user.split("<<<BEGIN final_answer", 1)[-1].split("<<<BEGIN tool_observations", 1)[0]
    cited = "21C" in answer
    return json.dumps({
        "passed": cited,
        "score": 1.0 if cited else 0.2,
        "rubric_misses": [] if cited else ["reading_not_cited"],
        "reflection": {
            "observation": "" if cited else "the answer does not state the weather tool's reading",
            "lesson": "" if cited else "quote the reading the weather tool returned",
            "next_check": "" if cited else "the temperature in the final answer",
        },
    })


def main() -> int:
    set_tracing_disabled(True)  # the SDK would otherwise export traces to the network
    store = Path(tempfile.mkdtemp(prefix="verigate-example-")) / "verigate.db"
    config = {"judge": {"client": "callable", "trust": "primary"}, "budget": {"revise": 1}}
    with Gate.from_config(config, judge_function=toy_judge_model, store=str(store)) as gate:
        model = ScriptedModel([
            [function_call("weather", {"city": "Oslo"}, call_id="call-1")],
            [assistant_message("It is lovely in Oslo today.")],
            [assistant_message("Oslo: 21C and sunny, says the weather tool.")],
        ])
        agent = Agent(name="forecaster", instructions="Answer with the weather tool's reading.", model=model,
                      tools=[weather])
        done = run_gated_sync(gate, agent, "What is the weather in Oslo?", session_id="thread-oslo")
        print(f"completed after {done.attempts} attempts: {done.answer}")

        vague = ScriptedModel([[assistant_message("Probably fine.")], [assistant_message("Still fine, I think.")]])
        agent = Agent(name="forecaster", instructions="Answer with the weather tool's reading.", model=vague)
        held = run_gated_sync(gate, agent, "What is the weather in Bergen?", session_id="thread-bergen")
        print(f"{held.status}: review {held.review_id} ({held.result.policy_action}); answer handed out: "
              f"{held.answer!r}")
    return 0 if (done.status, held.status) == ("completed", "pending") else 1


if __name__ == "__main__":
    raise SystemExit(main())
