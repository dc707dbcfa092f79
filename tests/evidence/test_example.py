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
    for runs in ((), ("--runs-dir", "docs/working/ai-loop-runs")):
        verified = run_cli("evidence", "verify", str(out), TASK, *runs, cwd=EXAMPLE)
        assert verified.returncode == 11
        assert verified.stderr.splitlines()[1:] == ["run-evidence: unavailable:cost_metrics",
                                                    "run-evidence: unavailable:replan_count"]
    forged = json.loads(out.read_text(encoding="utf-8"))
    forged["human_interventions"] = [*forged["human_interventions"], {"kind": "invented", "detail": "x"}]
    (tmp_path / "forged.json").write_text(json.dumps(forged), encoding="utf-8")
    rejected = run_cli("evidence", "verify", str(tmp_path / "forged.json"), TASK, "--runs-dir",
                       "docs/working/ai-loop-runs", cwd=EXAMPLE)
    assert rejected.returncode == 1, rejected.stderr
    assert "human_interventions" in rejected.stderr


def test_the_public_face_is_sorted_and_complete() -> None:
    import verigate.evidence as evidence

    assert evidence.__all__ == sorted(evidence.__all__)
    assert {name for name in vars(evidence) if not name.startswith("_")} - {"annotations"} == set(evidence.__all__)


def test_concurrent_producers_write_identical_bytes(tmp_path: Path) -> None:
    import subprocess
    import sys

    args = ["evidence", "produce", TASK, "--now", "2100-01-01T00:00:00Z", "--started-at", "2099-12-31T00:00:00Z",
            "--repository", "plangate", "--run-id", "r-1", "--harness-version",
            json.dumps({"plugin_version": "1", "cli_version": "1", "corpus_hash": "sha256:" + "0" * 64})]
    children = [subprocess.Popen([sys.executable, "-m", "verigate", *args, "--out", str(tmp_path / f"{i}.json")],
                                 cwd=EXAMPLE) for i in range(4)]
    assert [child.wait(timeout=120) for child in children] == [0, 0, 0, 0]
    outputs = {(tmp_path / f"{i}.json").read_bytes() for i in range(4)}
    assert len(outputs) == 1
