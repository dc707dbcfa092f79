"""Quick start: put verigate's gate between a (toy) agent and its user, with the runtime's own judge model call.

Run it: ``python examples/quickstart.py`` (it writes its store to ``.verigate/verigate.db`` in the current folder).

The toy agent first claims success without running the tests; the judge (here a toy function standing in for the
runtime's model call) fails it with a reflection; the gate turns that into a revise, the agent receives only that
feedback, runs the tests, and the second attempt completes.
"""

from __future__ import annotations

import json

from verigate import AgentTurn, Gate, StepResult, ToolObservation, run_gated
from verigate.judge import ChatRequest


def toy_agent(turn: AgentTurn) -> StepResult:
    """An agent step: the request, plus (on a revise) the gate's follow-up from the latest failure only."""
    if not turn.follow_up:
        edit = ToolObservation("Edit", {"path": "calc.py"}, "replaced `a + b + 1` with `a + b`", ok=True)
        return StepResult("I fixed the off-by-one bug in calc.add().", tool_calls=(edit,))
    print(f"-- attempt {turn.attempt} receives the follow-up:\n{turn.follow_up}\n")
    tests = ToolObservation("Bash", {"command": "pytest -q"}, "12 passed in 0.21s", ok=True)
    return StepResult("Fixed calc.add(); I ran the test suite: 12 passed.", tool_calls=(tests,))


def toy_judge_model(request: ChatRequest) -> str:
    """Stands in for the runtime's own model call (``fn(ChatRequest) -> str``): it must reply with verdict JSON."""
    ran_tests = "12 passed" in request.user
    return json.dumps({
        "passed": ran_tests,
        "score": 1.0 if ran_tests else 0.3,
        "rubric_misses": [] if ran_tests else ["tests_not_run"],
        "reflection": {
            "observation": "" if ran_tests else "the answer claims a fix but no test run is shown",
            "lesson": "" if ran_tests else "run the test suite before claiming the bug is fixed",
            "next_check": "" if ran_tests else "pytest output in the tool observations",
        },
    })


def main() -> int:
    # the embedded defaults plus a judge: llm_judge over the runtime's own model call (client: callable)
    with Gate.from_config({"judge": {"client": "callable", "trust": "primary"}},
                          judge_function=toy_judge_model) as gate:
        result = run_gated(gate, toy_agent, "Fix the failing test in calc.py and run the test suite.",
                           session_id="quickstart")
    for number, step in enumerate(result.results):
        print(f"attempt {number}: {step.outcome} ({step.policy_action})")
    print(f"final outcome: {result.outcome}; answer: {result.answer!r}")
    return 0 if result.outcome == "completed" else 1


if __name__ == "__main__":
    raise SystemExit(main())
