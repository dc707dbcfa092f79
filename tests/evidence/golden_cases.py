"""The golden task folders: how each is built, and a regenerator (``python tests/evidence/golden_cases.py``)."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evidence_helpers import (
    HARNESS,
    HEAD,
    RUN_ID,
    merge_ready,
    notice,
    produce_kwargs,
    receipt,
    state,
    write_task,
)

from verigate.evidence import produce

GOLDEN = Path(__file__).parent / "golden"
COMMENT_URL = "https://github.com/s977043/PlanGate/pull/940#issuecomment-5140067809"


def _arbiter(run_id: str, decision: str) -> dict[str, Any]:
    return {"boundary_check": "clean", "class_check": "no-merge", "decision": decision, "issued_by": "arbiter-v0.1",
            "lite_check": True, "policy_ref": "auto-approve-lite-clean@v4", "target_sha": "abc1234",
            "timestamp": "2099-12-31T00:00:00Z", "w_check": {"model_a": "approve", "model_b": "approve"},
            "gates": {"breakdown": "ok", "c1": "PASS"}, "ho_paths_source": "docs/ai/ho-paths.md",
            "ho_pattern_count": 3, "run": {"round_index": 0, "run_id": run_id, "task_id": "TASK-0002"},
            "scope_check": "in_scope"}


def merge_ready_case(root: Path) -> dict[str, Any]:
    """MERGE_READY after a CI repair and a review repair, with findings and an adopted disposition."""
    task = write_task(root, "TASK-0001", entries=[
        {"kind": "intent", "action_id": "sha256:" + "2" * 64, "action_kind": "repair_ci",
         "payload": {"pr_number": 940, "head_sha": HEAD, "round": 1, "taxonomy": "lint", "failed_checks": ["lint"]}},
        receipt("repair_ci", 1),
        receipt("repair_review", 2, "F-2"),
        state("WAITING_FOR_REVIEW"),
        state("MERGE_READY"),
        merge_ready({"CI": "success", "Markdown lint": "success"},
                    {"F-1": "resolved", "F-3": {"kind": "adopted", "repair_commit": "7b229223b21a407"}}, 2),
    ])
    return {"task_dir": task, **produce_kwargs(pr_number="940", harness_version_end=dict(HARNESS),
                                               evidence_refs=["docs/working/TASK-0001/plan.md"])}


def human_escalated_state_case(root: Path) -> dict[str, Any]:
    """The delivery layer escalated; arbiter records of this run and of another one sit in the runs folder."""
    task = write_task(root, "TASK-0002", entries=[
        state("WAITING_FOR_CHECKS"), state("CHECKS_FAILED", ["CI: failure"]),
        state("HUMAN_ESCALATED", ["reviewer が判断を要求", "round limit 3"]),
    ])
    runs = root / "ai-loop-runs"
    runs.mkdir()
    (runs / "2099-12-31-a.json").write_text(json.dumps(_arbiter(RUN_ID, "HUMAN_ESCALATED"), indent=2) + "\n")
    (runs / "2099-12-31-b.json").write_text(json.dumps(_arbiter("other-run", "HUMAN_ESCALATED"), indent=2) + "\n")
    return {"task_dir": task, "runs_dir": runs, **produce_kwargs()}


def human_escalated_c3_case(root: Path) -> dict[str, Any]:
    """The C-3' arbiter escalated (one reviewer rejected); exec never ran, so there is no record."""
    task = write_task(root, "TASK-0003", decision="HUMAN_ESCALATED", verdicts=("approve", "reject"), entries=None)
    return {"task_dir": task, **produce_kwargs(cause_hypothesis="reviewers disagree on the migration step")}


def blocked_case(root: Path) -> dict[str, Any]:
    """C-3' BLOCKED: no record, eight "unavailable" fields."""
    task = write_task(root, "TASK-0004", decision="BLOCKED", entries=None)
    return {"task_dir": task, **produce_kwargs()}


def notice_case(root: Path) -> dict[str, Any]:
    """A notice entry (an unknown kind to delivery) before the escalation: escalated, reduced to numbers."""
    entries = [notice(COMMENT_URL), state("HUMAN_ESCALATED", ["routing escalation"])]
    task = write_task(root, "TASK-0006", entries=entries)
    return {"task_dir": task, **produce_kwargs()}


def privacy_case(root: Path) -> dict[str, Any]:
    """Inputs laden with forbidden keys, account keys, absolute paths, URLs and handles; the output has none."""
    task = write_task(root, "TASK-0007", entries=[
        notice(COMMENT_URL, stdout="secret build log", file_path="/Users/alice/work/x.py", login="alice"),
        state("WAITING_FOR_CHECKS", ["see /var/folders/xx/tmpABC/foo.json", "asked by @alice-dev",
                                      "log at https://ci.example.org/run/1"]),
        state("MERGE_READY"),
        merge_ready({"CI": "success"}, {"F-1": {"kind": "rejected", "evidence_ref": COMMENT_URL}}),
    ])
    return {"task_dir": task, **produce_kwargs()}


CASES: dict[str, Callable[[Path], dict[str, Any]]] = {
    "merge_ready": merge_ready_case,
    "human_escalated_state": human_escalated_state_case,
    "human_escalated_c3": human_escalated_c3_case,
    "blocked": blocked_case,
    "notice": notice_case,
    "privacy": privacy_case,
}


def build(name: str, root: Path) -> Path:
    """Write one case's inputs under ``root/name`` and its EV beside them as ``expected.json``."""
    case_root = root / name
    case_root.mkdir(parents=True)
    kwargs = CASES[name](case_root)
    (case_root / "expected.json").write_text(produce(kwargs.pop("task_dir"), **kwargs), encoding="utf-8")
    return case_root


def build_all(root: Path) -> None:
    for name in CASES:
        build(name, root)


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as scratch:
        build_all(Path(scratch))
        shutil.rmtree(GOLDEN, ignore_errors=True)
        shutil.copytree(scratch, GOLDEN)
    sys.stdout.write(f"regenerated {len(CASES)} golden cases under {GOLDEN.name}/\n")
