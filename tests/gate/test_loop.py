"""The revise loop helper, the quick-start example and ``verigate demo`` (run as subprocesses)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from verigate import AgentTurn, Reflection, StepResult, ToolObservation, Verdict, VerigateError, run_gated
from verigate.gate import run_gated_async
from verigate.store import open_store

ROOT = Path(__file__).resolve().parents[2]
RETRY = Verdict(passed=False, rubric_misses=("tests_pass",), retryable=True,
                reflection=Reflection("no test output", "run pytest", "pytest -q"))


def test_the_loop_feeds_only_the_latest_feedback_until_completed(make_gate: Any) -> None:
    gate, _ = make_gate([RETRY, Verdict(passed=False, rubric_misses=("cites_source",), retryable=True),
                         Verdict(passed=True)])
    turns: list[AgentTurn] = []

    def step(turn: AgentTurn) -> StepResult:
        turns.append(turn)
        return StepResult(f"answer {turn.attempt}", tool_calls=(ToolObservation("Bash", {}, "ok", True),),
                          usage={"output_tokens": 10})

    result = run_gated(gate, step, "do the task", session_id="loop")
    assert result.outcome == "completed" and result.answer == "answer 2"
    assert [t.attempt for t in turns] == [0, 1, 2]
    assert turns[0].follow_up == ""
    assert "tests_pass" in turns[1].follow_up
    assert "cites_source" in turns[2].follow_up and "tests_pass" not in turns[2].follow_up  # bounded context
    assert result.final.merged_usage == {"output_tokens": 30} and len(result.final.merged_tool_calls) == 3


def test_the_loop_stops_at_the_budget_and_on_unverified(make_gate: Any) -> None:
    gate, judge = make_gate([RETRY], repeat_last=True, budget={"revise": 1})
    pending = run_gated(gate, lambda turn: StepResult("not yet"), "task", session_id="budget")
    assert [r.outcome for r in pending.results] == ["revise", "pending_review"] and judge.calls == 2
    unverified = run_gated(gate, lambda turn: StepResult("", termination="max_rounds"), "task", session_id="u")
    assert unverified.outcome == "unverified" and unverified.final.status == "max_rounds"


def test_async_steps_and_bad_steps(make_gate: Any) -> None:
    gate, _ = make_gate([Verdict(passed=True)])

    async def step(turn: AgentTurn) -> StepResult:
        await asyncio.sleep(0)
        return StepResult("done")

    assert asyncio.run(run_gated_async(gate, step, "task")).outcome == "completed"
    with pytest.raises(VerigateError, match="StepResult"):
        run_gated(gate, lambda turn: "done", "task")


def test_quickstart_runs(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "quickstart.py")], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "attempt 0: revise" in done.stdout and "final outcome: completed" in done.stdout
    store = open_store(str(tmp_path / ".verigate" / "verigate.db"))
    try:
        assert store.get_session("quickstart").state == "completed" and store.verify_ledger() == 2
    finally:
        store.close()


def test_demo_fails_closed_into_a_pending_review_that_review_resolves(tmp_path: Path) -> None:
    def verigate(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "verigate", *args], cwd=tmp_path, capture_output=True,
                              text=True, timeout=120)

    shown = verigate("demo")
    assert shown.returncode == 0, shown.stderr
    assert "judge_unavailable" in shown.stdout and "EXTERNAL_VERIFICATION_REQUIRED" in shown.stdout
    quiet = verigate("demo", "--print-review-id")
    assert quiet.returncode == 0, quiet.stderr
    review_id = quiet.stdout.strip()
    assert review_id.startswith("rv_") and "\n" not in review_id and "failed closed" in quiet.stderr
    assert (tmp_path / ".verigate" / "verigate.db").is_file()
    listed = verigate("review", "list")
    assert review_id in listed.stdout
    approved = verigate("review", "approve", review_id, "--by", "tester", "--yes")
    assert approved.returncode == 0, approved.stderr


def test_demo_uses_the_configured_store(tmp_path: Path) -> None:
    (tmp_path / "verigate.yaml").write_text("store:\n  url: elsewhere/gate.db\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "verigate", "demo", "--print-review-id"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "elsewhere" / "gate.db").is_file() and not (tmp_path / ".verigate").exists()
