"""Builders for PlanGate-style task folders (c3.json, record.jsonl, Plan Package) and CLI runners for the tests."""

from __future__ import annotations

import copy
import json
import random
import string
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from verigate.evidence import canonical_hash, dump_record, entry_id, sha256_of_bytes
from verigate.evidence._schema import SCHEMA_NAME

HEAD = "abcdef1234567890abcdef1234567890abcdef12"
SOURCE = "abc1234"
PR = 940
RUN_ID = "20260804T000000Z-abcdef1"
NOW = "2100-01-01T00:00:00Z"
STARTED = "2099-12-31T00:00:00Z"
HARNESS = {"plugin_version": "8.18.0", "cli_version": "0.2.0", "corpus_hash": "sha256:" + "0" * 64}
PLAN = "# PLAN — {task}\n\n## Goal\n計画の本文。Plan body for the sandbox task.\n\n## Steps\n1. read\n2. write\n"


def plan_package(task: str) -> dict[str, str]:
    """The six Plan Package artifacts with C-1/C-2 markers bound to plan.md."""
    plan = PLAN.format(task=task)
    plan_hash = sha256_of_bytes(plan.encode())
    return {
        "pbi-input.md": f"# PBI INPUT — {task}\n",
        "plan.md": plan,
        "todo.md": "# TODO\n- [ ] T-1\n",
        "test-cases.md": "# TEST CASES\n| AC-1 | TC-01 |\n",
        "review-self.md": f"# C-1\n> 判定: **PASS**\n\nC1-VERDICT: PASS plan={plan_hash}\n",
        "review-external.md": f"# C-2\n\nC2-VERDICT: approve plan={plan_hash}\n",
    }


def c3_record(task: str, artifacts: Mapping[str, str], decision: str = "AUTO_APPROVED",
              verdicts: tuple[str, str] = ("approve", "approve")) -> dict[str, Any]:
    """A c3-prime record that binds the given artifacts."""
    hashes = {name: sha256_of_bytes(content.encode()) for name, content in artifacts.items()}
    trio = {"plan_hash": hashes["plan.md"], "source_sha": SOURCE, "plan_package_hash": canonical_hash(hashes)}
    return {
        "task_id": task, "approval_kind": "c3-prime", "phase": "C-3'", "decision": decision, **trio,
        "artifact_hashes": hashes, "c1_evidence_ref": "review-self.md#PASS",
        "c2_evidence_ref": "review-external.md#approve",
        "reviewers": {"model_a": {"verdict": verdicts[0], "evidence_ref": "r#a", **trio},
                      "model_b": {"verdict": verdicts[1], "evidence_ref": "r#b", **trio}},
        "policy_ref": "auto-approve-lite-clean@v4", "issued_at": "2099-12-30T00:00:00Z", "issued_by": "arbiter-v0.1",
    }


def record_line(entry: Mapping[str, Any], at: str = "2099-12-31T12:00:00Z") -> str:
    """One stored record.jsonl line: the entry plus ``at`` and its recomputed ``entry_id``."""
    stored = {**entry, "at": at, "entry_id": entry_id(entry)}
    return json.dumps(stored, sort_keys=True, ensure_ascii=False) + "\n"


def write_task(root: Path, task: str, *, decision: str = "AUTO_APPROVED", entries: Sequence[Mapping[str, Any]] | None,
               verdicts: tuple[str, str] = ("approve", "approve"), c3_overrides: Mapping[str, Any] = ()) -> Path:
    """A task folder: the Plan Package, approvals/c3.json and (unless ``entries`` is None) delivery/record.jsonl."""
    task_dir = root / task
    (task_dir / "approvals").mkdir(parents=True, exist_ok=True)
    artifacts = plan_package(task)
    for name, content in artifacts.items():
        (task_dir / name).write_text(content, encoding="utf-8")
    record = {**c3_record(task, artifacts, decision, verdicts), **dict(c3_overrides)}
    (task_dir / "approvals" / "c3.json").write_text(dump_record(record), encoding="utf-8")
    if entries is not None:
        (task_dir / "delivery").mkdir(exist_ok=True)
        lines = [record_line(e, f"2099-12-31T12:00:{i:02d}Z") for i, e in enumerate(entries)]
        (task_dir / "delivery" / "record.jsonl").write_text("".join(lines), encoding="utf-8")
    return task_dir


def state(name: str, reasons: Sequence[str] = (), head: str = HEAD) -> dict[str, Any]:
    return {"kind": "state", "state": name, "head_sha": head, "pr_number": PR, "reasons": sorted(reasons)}


def merge_ready(checks: Mapping[str, str], disposition: Mapping[str, Any], rounds: int = 0) -> dict[str, Any]:
    return {"kind": "merge_ready", "record": {"pr_number": PR, "head_sha": HEAD, "check_summary": dict(checks),
                                              "review_disposition": dict(disposition), "round": rounds,
                                              "plan_hash": "sha256:" + "1" * 64}}


def receipt(action_kind: str, round_: int, finding_type: str | None = None, pr: int | None = PR) -> dict[str, Any]:
    payload: dict[str, Any] = {"pr_number": pr, "head_sha": HEAD, "round": round_}
    entry: dict[str, Any] = {"kind": "receipt", "action_id": canonical_hash({**payload, "action_kind": action_kind}),
                             "action_kind": action_kind, "pr_number": pr, "head_sha": HEAD, "round": round_,
                             "result_ref": "adopted:" + HEAD[:12]}
    if finding_type:
        entry["finding_type"] = finding_type
    return entry


def notice(comment_url: str, **extra: Any) -> dict[str, Any]:
    return {"kind": "notice", "action_id": canonical_hash({"n": comment_url}), "action_kind": "repair_ci",
            "pr_number": PR, "head_sha": HEAD, "comment_url": comment_url, "repair_commit_sha": HEAD[:12], **extra}


def shipped_schema() -> dict[str, Any]:
    """A fresh copy of the shipped EV schema, as the repository holds it (a test edits it into a --schema file)."""
    schema: dict[str, Any] = json.loads((Path(__file__).parents[2] / "schemas" / SCHEMA_NAME).read_text("utf-8"))
    return schema


def produce_args(task_dir: Path, **overrides: Any) -> list[str]:
    """The CLI flags of a standard produce run; an override of None drops that flag."""
    flags: dict[str, Any] = {"--now": NOW, "--started-at": STARTED, "--repository": "plangate", "--run-id": RUN_ID,
                             "--harness-version": json.dumps(HARNESS)}
    flags.update({f"--{k.replace('_', '-')}": v for k, v in overrides.items()})
    args = ["evidence", "produce", str(task_dir)]
    for flag, value in flags.items():
        if value is not None:
            args += [flag, value if isinstance(value, str) else json.dumps(value)]
    return args


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m verigate …`` as a user runs it."""
    return subprocess.run([sys.executable, "-m", "verigate", *args], capture_output=True, text=True, check=False,
                          cwd=cwd, timeout=120)


def produce_kwargs(**overrides: Any) -> dict[str, Any]:
    """Keyword arguments of a standard library produce() call."""
    kwargs: dict[str, Any] = {"now": NOW, "started_at": STARTED, "repository": "plangate", "run_id": RUN_ID,
                              "harness_version": copy.deepcopy(HARNESS)}
    kwargs.update(overrides)
    return kwargs


#: the partial reasons of the fullest EV Phase 1 can produce: replan_count and cost_metrics have no source and no
#: flag, so they are always "unavailable" and no Phase 1 EV is ever complete (exit 0)
PHASE_ONE_PARTIAL = ("unavailable:cost_metrics", "unavailable:replan_count")


def assert_fullest(record: Mapping[str, Any], task_dir: Path, **kwargs: Any) -> None:
    """``record`` passes every check and is partial for the Phase-1 reasons alone (the best verdict there is)."""
    from verigate._errors import EvidencePartialError
    from verigate.evidence import verify

    with pytest.raises(EvidencePartialError) as caught:
        verify(dict(record), task_dir, **kwargs)
    assert caught.value.reasons == PHASE_ONE_PARTIAL


def secret_shaped(seed: int) -> dict[str, str]:
    """Secret- and personal-data-shaped values made at test time (no real-looking token is committed)."""
    rng = random.Random(seed)
    alnum = string.ascii_letters + string.digits
    name = "".join(rng.choices(string.ascii_lowercase, k=6))
    return {
        "github_token": "gh" + "p_" + "".join(rng.choices(alnum, k=36)),
        "password": "pass" + "word=" + "".join(rng.choices(alnum, k=14)) + "9",
        "email": f"{name}.{name[::-1]}@{name}-mail.de",
    }


def write_merge_task(root: Path) -> Path:
    """TASK-0001 that reached MERGE_READY after one review repair round."""
    return write_task(root, "TASK-0001", entries=[
        receipt("repair_review", 1, "F-2"), state("MERGE_READY"),
        merge_ready({"CI": "success", "lint": "success"}, {"F-1": "resolved"}, 1),
    ])


def fullest_ev_for(task_dir: Path) -> dict[str, Any]:
    """The fullest EV Phase 1 produces for ``task_dir``: routing_decisions and harness_version_end injected, so only
    replan_count and cost_metrics stay "unavailable" (``PHASE_ONE_PARTIAL``)."""
    from verigate.evidence import produce

    text = produce(task_dir, **produce_kwargs(routing_decisions="[]", harness_version_end=dict(HARNESS)))
    record: dict[str, Any] = json.loads(text)
    return record


def arbiter_task(root: Path) -> tuple[Path, Path, dict[str, Any]]:
    """TASK-0002 escalated by the arbiter: the task folder, its runs folder (one arbiter record) and the EV."""
    from verigate.evidence import produce

    task = write_task(root, "TASK-0002", entries=[state("HUMAN_ESCALATED", ["stuck"])])
    runs = root / "ai-loop-runs"
    runs.mkdir()
    (runs / "a.json").write_text(json.dumps({"decision": "HUMAN_ESCALATED", "run": {"run_id": RUN_ID}}),
                                 encoding="utf-8")
    record = json.loads(produce(task, runs_dir=runs, **produce_kwargs(harness_version_end=dict(HARNESS))))
    return task, runs, record


@pytest.fixture
def merge_task(tmp_path: Path) -> Path:
    """TASK-0001 that reached MERGE_READY after one review repair round (a fixture: conftests import it)."""
    return write_merge_task(tmp_path)


@pytest.fixture
def fullest_ev(merge_task: Path) -> dict[str, Any]:
    """The fullest EV of ``merge_task`` (every check runs on it; its verdict is partial for ``PHASE_ONE_PARTIAL``)."""
    return fullest_ev_for(merge_task)

