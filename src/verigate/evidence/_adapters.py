"""Downstream adapters (seed §8): provenance bridges from EVs to shadow candidates and promotion (pure)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .._errors import InputError
from ._canonical import COMMIT_SHA, canonical_hash

__all__ = [
    "BYPASS_FLAGS",
    "IMPROVEMENT_TASK_KEYS",
    "MIN_EVIDENCE",
    "apply_canary_rollback",
    "to_improvement_task_descriptor",
    "to_paired_replay",
    "to_promotion_provenance",
    "to_shadow_candidate_input",
]

MIN_EVIDENCE = 3
UNAVAILABLE = "unavailable"
IMPROVEMENT_TASK_KEYS = frozenset({
    "task_kind", "candidate_id", "source_run_ids", "plan_package_required", "c3_prime_required", "merge_by_ai",
})
#: flags that would route an improvement task around the normal gates; never emitted
BYPASS_FLAGS = frozenset({"skip_c3", "auto_merge", "skip_plan", "force_merge", "bypass_gate"})
_DIGITS = re.compile(r"^[0-9]+$")


def to_shadow_candidate_input(evidences: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A shadow-mode candidate input from ≥ 3 EVs sharing one harness baseline (spelling: baseline_version)."""
    count = len(evidences)
    if count < MIN_EVIDENCE:
        return {"status": "insufficient_evidence", "evidence_count": count, "required_evidence_count": MIN_EVIDENCE}
    if len({canonical_hash(ev.get("harness_version")) for ev in evidences}) != 1:
        return {"status": "mixed_baseline", "evidence_count": count}
    run_ids = [ev.get("run_id") for ev in evidences]
    baseline = evidences[0].get("harness_version")
    return {
        "status": "ok",
        "candidate_id": canonical_hash({"source_run_ids": sorted(map(str, run_ids)), "baseline_version": baseline}),
        "source_run_ids": run_ids,
        "baseline_version": baseline,
        "observed_pattern": sorted({str(ev.get("observation") or "") for ev in evidences}),
        "cause_hypothesis": sorted({str(ev["cause_hypothesis"]) for ev in evidences if ev.get("cause_hypothesis")}),
    }


def _improvement_ref(ref: Any) -> dict[str, str]:
    text = str(ref)
    if _DIGITS.match(text):
        return {"kind": "pr", "ref": text}
    if COMMIT_SHA.match(text):
        return {"kind": "commit", "ref": text}
    raise InputError(f"improvement ref {text!r} is neither a PR number nor a commit sha (no URLs or paths)",
                     field="improvement_refs")


def to_promotion_provenance(
    candidate: Mapping[str, Any],
    decision: str | None = None,
    *,
    improvement_refs: Sequence[Any] = (),
    promoted_to: str | None = None,
    canary_scope: str | None = None,
) -> dict[str, Any]:
    """Trust-ledger provenance; BLOCKED unless ``blocked_by`` is a list and empty (missing/null/"" → BLOCKED)."""
    blocked_by = candidate.get("blocked_by")
    # one predicate for the verdict and for the echoed value: only an explicit [] means "nothing blocks"
    blocked = not isinstance(blocked_by, list) or bool(blocked_by)
    final = "BLOCKED" if blocked else (decision or "BLOCKED")
    run_ids = candidate.get("source_run_ids")
    run_ids = list(run_ids) if isinstance(run_ids, list) else []
    return {
        "candidate_id": candidate.get("candidate_id"),
        "decision": final,
        "promoted_to": None if final == "BLOCKED" else promoted_to,
        "evidence_count": len(run_ids),
        "canary_scope": canary_scope or UNAVAILABLE,
        "rollback_count": candidate.get("rollback_count", 0),
        "improvement_refs": [_improvement_ref(ref) for ref in improvement_refs],
        "source_run_ids": run_ids,
        "blocked_by": list(blocked_by) if isinstance(blocked_by, list) else UNAVAILABLE,
    }


def to_improvement_task_descriptor(candidate: Mapping[str, Any]) -> dict[str, Any]:
    """An improvement task that goes through the normal gates: Plan Package and C-3' required, no AI merge."""
    run_ids = candidate.get("source_run_ids")
    return {
        "task_kind": "improvement",
        "candidate_id": candidate.get("candidate_id"),
        "source_run_ids": list(run_ids) if isinstance(run_ids, list) else [],
        "plan_package_required": True,
        "c3_prime_required": True,
        "merge_by_ai": False,
    }


def to_paired_replay(
    candidate: Mapping[str, Any],
    baseline_evs: Sequence[Mapping[str, Any]],
    candidate_evs: Sequence[Mapping[str, Any]],
    grader_ref: str | None = None,
    activation_check: str | None = None,
) -> dict[str, Any]:
    """A paired replay whose baseline and candidate run sets are disjoint."""
    baseline_ids = [ev.get("run_id") for ev in baseline_evs]
    candidate_ids = [ev.get("run_id") for ev in candidate_evs]
    overlap = sorted(set(map(str, baseline_ids)) & set(map(str, candidate_ids)))
    if overlap:
        return {"status": "overlapping_runs", "overlap": overlap, "candidate_id": candidate.get("candidate_id")}
    return {
        "status": "ok",
        "candidate_id": candidate.get("candidate_id"),
        "baseline_run_ids": baseline_ids,
        "candidate_run_ids": candidate_ids,
        "grader_ref": grader_ref or UNAVAILABLE,
        "activation_check": activation_check or UNAVAILABLE,
    }


def apply_canary_rollback(candidate: Mapping[str, Any], result: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of the candidate, rolled back when the canary failed; the input is never changed."""
    updated = dict(candidate)
    if result.get("result") != "failed":
        return updated
    count = candidate.get("rollback_count", 0)
    if type(count) is not int:
        raise InputError(f"rollback_count {count!r} is not an integer", field="rollback_count")
    updated.update(rollback_count=count + 1, status="rolled_back",
                   canary_scope=result.get("canary_scope") or UNAVAILABLE)
    return updated
