"""The README's example folder works as documented: produce, then verify (partial in Phase 1)."""

from __future__ import annotations

import json
from pathlib import Path

from evidence_helpers import run_cli

EXAMPLE = Path(__file__).parents[2] / "examples" / "evidence"
TASK = "docs/working/TASK-0874"


def test_the_readme_walkthrough(tmp_path: Path) -> None:
    harness = run_cli("evidence", "harness-version").stdout.strip()
    out = tmp_path / "ev.json"
    produced = run_cli("evidence", "produce", TASK, "--runs-dir", "docs/working/ai-loop-runs",
                       "--now", "2100-01-01T00:00:00Z", "--started-at", "2099-12-31T00:00:00Z",
                       "--repository", "plangate", "--run-id", "20260804T000000Z-abcdef1",
                       "--harness-version", harness, "--harness-version-end", harness,
                       "--routing-decisions", "[]", "--out", str(out), cwd=EXAMPLE)
    assert produced.returncode == 0, produced.stderr
    record = json.loads(out.read_text(encoding="utf-8"))
    assert record["terminal_state"] == "MERGE_READY" and record["repair_rounds"] == 1
    assert record["c3_prime_decision_ref"]["path"].endswith("docs/working/TASK-0874/approvals/c3.json")
    verified = run_cli("evidence", "verify", str(out), TASK, cwd=EXAMPLE)
    assert verified.returncode == 11
    assert verified.stderr.splitlines()[1:] == ["run-evidence: unavailable:cost_metrics",
                                                "run-evidence: unavailable:replan_count"]
