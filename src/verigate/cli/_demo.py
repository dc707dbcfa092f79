"""``verigate demo``: finalize a sample candidate on the embedded defaults and explain what the gate decided."""

from __future__ import annotations

import argparse
import sys
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from .._models import FinalizeResult

SAMPLE_REQUEST = "Fix the failing test in calc.py and run the test suite."
SAMPLE_ANSWER = "Fixed the off-by-one error in calc.add(); the test suite passes (12 passed)."


def _explain(result: FinalizeResult, out: TextIO) -> None:
    from ..gate import PENDING_STATUS

    def say(line: str = "") -> None:
        print(line, file=out)

    error = result.verdict.error if result.verdict is not None else None
    say(f"outcome        {result.outcome}")
    say(f"policy action  {result.policy_action}")
    say(f"status         {result.status}")
    say(f"answer         {result.answer!r}")
    if error:
        say(f"verdict        verification_error: {error}")
    elif result.verdict is not None:
        say(f"verdict        passed={result.verdict.passed} misses={list(result.verdict.rubric_misses)}")
    say()
    if result.outcome == "pending_review":
        if error == "judge_unavailable":
            say("No judge is configured, so nothing could verify the agent's claim. The gate failed closed: the")
            say(f"answer is withheld (empty answer, status {PENDING_STATUS}) and kept as a pending review.")
        else:
            say("The gate escalated: the answer is withheld and kept as a pending review.")
        if result.pending_id:
            say(f"Nobody was contacted. A person decides: `verigate review show {result.pending_id}`, then")
            say(f"`verigate review approve {result.pending_id} --by NAME` releases it (or `reject`).")
        else:
            say(f"The store could not keep the review ({result.store_error}); the held answer stays with the")
            say(f"caller: {result.pending_text!r}")
    elif result.outcome == "completed":
        say("The configured judge passed the candidate: the answer is handed out.")
    elif result.outcome == "revise":
        say("The judge asked for a revision; the next attempt would receive:")
        say(result.follow_up)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="verigate demo",
        description="Finalize a sample agent answer through the gate on the embedded defaults (or ./verigate.yaml). "
        "With no judge configured it fails closed into a pending review.",
    )
    parser.add_argument("--config", metavar="FILE", help="verigate.yaml to use (default: ./verigate.yaml if present)")
    parser.add_argument("--print-review-id", action="store_true",
                        help="print only the pending review id on stdout (explanations go to stderr)")
    args = parser.parse_args(argv)

    from .._models import Candidate, Termination, TerminationReason, ToolObservation
    from ..gate import Gate, finalize_and_return
    from ..store._open import shown_url

    candidate = Candidate(
        request=SAMPLE_REQUEST,
        final_text=SAMPLE_ANSWER,
        tool_calls=(
            ToolObservation("Edit", {"path": "calc.py"}, "replaced `a + b + 1` with `a + b`", ok=True),
            ToolObservation("Bash", {"command": "pytest -q"}, "12 passed in 0.21s", ok=True),
        ),
        session_id=f"demo-{uuid.uuid4().hex[:12]}",
        turn_id="demo-turn-1",
    )
    explain_to = sys.stderr if args.print_review_id else sys.stdout
    print(f"An agent proposes to stop. Request: {SAMPLE_REQUEST!r}", file=explain_to)
    print(f"Its answer: {SAMPLE_ANSWER!r}", file=explain_to)
    print(file=explain_to)
    with Gate.from_config(args.config) as gate:
        if gate.config.judge is None:
            print("judge: none configured (embedded defaults)", file=explain_to)
        # a database URL may carry a password: shown without it (a SQLite store shows its file)
        print(f"store: {getattr(gate.store, 'path', None) or shown_url(gate.config.store.url)}", file=explain_to)
        print(file=explain_to)
        result = finalize_and_return(gate, candidate, Termination(TerminationReason.NATURAL))
    _explain(result, explain_to)
    if args.print_review_id:
        if result.pending_id is None:
            print("verigate demo: no pending review was stored, so there is no id to print", file=sys.stderr)
            return 1
        print(result.pending_id)
    return 0
