"""verigate in a Pydantic AI agent, offline: Pydantic AI's FunctionModel plays the model, verigate's scripted judge
plays the judge (the file name has a hyphen: ``pydantic_ai.py`` would shadow the framework when run as a
script). Prints the outcome of two runs:

1. the judge asks for the release notes to be cited; the follow-up reaches the model, the second answer passes;
2. the judge never passes: after the gate's revise budget the answer is held for review (no answer handed out).

Run: ``python examples/pydantic-ai.py`` (needs the verigate-agents-pydantic-ai plug-in and pydantic-ai-slim).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from verigate_pydantic_ai import ReviewPendingError, output_validator

from verigate import Gate, Reflection, Verdict
from verigate.testing import ScriptedJudge

NEEDS_SOURCE = Verdict(passed=False, rubric_misses=("cites_the_notes",), retryable=True,
                       reflection=Reflection("no source named", "quote the release notes", ""))


def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Answers vaguely first; once verigate's follow-up arrives, names its source."""
    latest = " ".join(str(getattr(part, "content", "")) for part in messages[-1].parts)
    followed_up = "cites_the_notes" in latest  # the gate's follow-up names the rubric item that failed
    text = "1.2 fixed the login bug (release notes)." if followed_up else "It fixed a bug."
    return ModelResponse(parts=[TextPart(text)])


def run(judge: ScriptedJudge, store: Path, conversation: str) -> str:
    gate = Gate.from_config({"judge": {"engine": "scripted"}, "budget": {"revise": 2}}, plugins=[judge],
                            store=str(store), entry_points=False)
    with gate:
        gated = output_validator(gate)
        agent = Agent(FunctionModel(model), retries=gated.retries)  # output retries = the gate's budget
        agent.output_validator(gated)
        try:
            result = agent.run_sync("What did release 1.2 fix?", conversation_id=conversation)
        except ReviewPendingError as held:  # no answer: a person decides (verigate review ...)
            return f"pending review {held.review_id} ({held.policy_action})"
        return f"completed: {result.output}"


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = Path(folder) / "verigate.db"
        print(run(ScriptedJudge([NEEDS_SOURCE, Verdict(passed=True)]), store, "conversation-1"))
        print(run(ScriptedJudge([NEEDS_SOURCE], repeat_last=True), store, "conversation-2"))


if __name__ == "__main__":
    main()
