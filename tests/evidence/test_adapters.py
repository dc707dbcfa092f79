"""Downstream adapters: shadow candidate input, promotion provenance (blocked_by fail-closed), replay, rollback."""

from __future__ import annotations

import ast
import copy
import re
from pathlib import Path
from typing import Any

import pytest
from evidence_helpers import HARNESS

import verigate.evidence
from verigate._errors import InputError
from verigate.evidence import (
    apply_canary_rollback,
    canonical_hash,
    to_improvement_task_descriptor,
    to_paired_replay,
    to_promotion_provenance,
    to_shadow_candidate_input,
)

SOURCE = Path(verigate.evidence.__file__).parent / "_adapters.py"


def _ev(run_id: str, **extra: Any) -> dict[str, Any]:
    return {"run_id": run_id, "harness_version": dict(HARNESS), "observation": f"obs {run_id}",
            "cause_hypothesis": None, **extra}


def test_three_runs_make_a_candidate_with_the_measured_spelling() -> None:
    evs = [_ev("run-02"), _ev("run-01", cause_hypothesis="flaky"), _ev("run-03")]
    candidate = to_shadow_candidate_input(evs)
    assert candidate["status"] == "ok" and candidate["source_run_ids"] == ["run-02", "run-01", "run-03"]
    assert candidate["baseline_version"] == HARNESS and "baseline_harness_version" not in candidate
    assert candidate["candidate_id"] == canonical_hash({"source_run_ids": ["run-01", "run-02", "run-03"],
                                                        "baseline_version": HARNESS})
    assert candidate["cause_hypothesis"] == ["flaky"] and "blocked_by" not in candidate
    assert to_shadow_candidate_input(list(reversed(evs)))["candidate_id"] == candidate["candidate_id"]


@pytest.mark.parametrize("count", [0, 1, 2])
def test_fewer_than_three_runs_are_insufficient(count: int) -> None:
    assert to_shadow_candidate_input([_ev(f"r{i}") for i in range(count)]) == {
        "status": "insufficient_evidence", "evidence_count": count, "required_evidence_count": 3}


def test_mixed_baselines_are_rejected_but_key_order_is_not_a_difference() -> None:
    reordered = dict(reversed(list(HARNESS.items())))
    assert to_shadow_candidate_input([_ev("a"), _ev("b"), _ev("c", harness_version=reordered)])["status"] == "ok"
    drifted = {**HARNESS, "cli_version": "0.3.0"}
    assert to_shadow_candidate_input([_ev("a"), _ev("b"), _ev("c", harness_version=drifted)]) == {
        "status": "mixed_baseline", "evidence_count": 3}


def _candidate(**extra: Any) -> dict[str, Any]:
    return {"candidate_id": "sha256:" + "a" * 64, "source_run_ids": ["r1", "r2", "r3"], **extra}


def test_provenance_keys_and_improvement_refs() -> None:
    result = to_promotion_provenance(_candidate(blocked_by=[]), "PROMOTED", improvement_refs=["940", "7b229223b21a407"],
                                     promoted_to="stable", canary_scope="canary:scope-a")
    assert result == {"candidate_id": "sha256:" + "a" * 64, "decision": "PROMOTED", "promoted_to": "stable",
                      "evidence_count": 3, "canary_scope": "canary:scope-a", "rollback_count": 0,
                      "improvement_refs": [{"kind": "pr", "ref": "940"}, {"kind": "commit", "ref": "7b229223b21a407"}],
                      "source_run_ids": ["r1", "r2", "r3"], "blocked_by": []}


@pytest.mark.parametrize("ref", ["https://github.com/o/r/pull/940", "/Users/alice/x", "#940", ""])
def test_improvement_refs_reject_urls_and_paths(ref: str) -> None:
    with pytest.raises(InputError):
        to_promotion_provenance(_candidate(blocked_by=[]), "PROMOTED", improvement_refs=[ref])


@pytest.mark.parametrize("blocked_by", [None, "", 0, {}, "unavailable", False, ["#12"], ("x",)])
def test_blocked_by_fails_closed_unless_an_explicit_empty_list(blocked_by: Any) -> None:
    result = to_promotion_provenance(_candidate(blocked_by=blocked_by), "PROMOTED", promoted_to="stable")
    assert result["decision"] == "BLOCKED" and result["promoted_to"] is None
    if not isinstance(blocked_by, list):
        assert result["blocked_by"] == "unavailable"


def test_a_missing_blocked_by_key_is_blocked_and_an_empty_list_proceeds() -> None:
    assert to_promotion_provenance(_candidate(), "PROMOTED")["decision"] == "BLOCKED"
    assert to_promotion_provenance(_candidate(blocked_by=[]), "PROMOTED")["decision"] == "PROMOTED"
    assert to_promotion_provenance(_candidate(blocked_by=[]), None)["decision"] == "BLOCKED"


def test_improvement_tasks_go_through_the_normal_gates() -> None:
    descriptor = to_improvement_task_descriptor(_candidate(skip_c3=True, auto_merge=True))
    assert descriptor == {"task_kind": "improvement", "candidate_id": "sha256:" + "a" * 64,
                          "source_run_ids": ["r1", "r2", "r3"], "plan_package_required": True,
                          "c3_prime_required": True, "merge_by_ai": False}
    assert not set(descriptor) & verigate.evidence._adapters.BYPASS_FLAGS


def test_paired_replay_keeps_the_two_sides_disjoint() -> None:
    candidate = _candidate()
    ok = to_paired_replay(candidate, [_ev("base-1")], [_ev("cand-run-01"), _ev("cand-run-02")],
                          grader_ref="grader:independent-v1")
    assert ok["status"] == "ok" and ok["activation_check"] == "unavailable"
    assert ok["candidate_run_ids"] == ["cand-run-01", "cand-run-02"]
    assert to_paired_replay(candidate, [_ev("x"), _ev("y")], [_ev("y")]) == {
        "status": "overlapping_runs", "overlap": ["y"], "candidate_id": candidate["candidate_id"]}


def test_a_failed_canary_rolls_back_a_copy() -> None:
    candidate = _candidate(rollback_count=1, status="canary")
    before = copy.deepcopy(candidate)
    rolled = apply_canary_rollback(candidate, {"result": "failed", "canary_scope": "canary:scope-a"})
    assert rolled["status"] == "rolled_back" and rolled["rollback_count"] == 2 and candidate == before
    assert apply_canary_rollback(candidate, {"result": "passed"}) == before
    with pytest.raises(InputError):
        apply_canary_rollback(_candidate(rollback_count="1"), {"result": "failed"})


def test_adapters_have_no_io_and_no_hard_coded_issue_numbers() -> None:
    text = SOURCE.read_text(encoding="utf-8")
    assert not re.search(r"#86[0-9]", text)
    names = {n.id for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Name)}
    assert not names & {"open", "Path", "print"}
