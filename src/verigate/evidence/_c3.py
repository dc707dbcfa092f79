"""approvals/c3.json: c3-prime vs legacy detection and every structural and binding rule (pure)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .. import _json as strict_json
from .._errors import EvidenceError
from ._canonical import COMMIT_SHA, ISO_UTC, TASK_ID, canonical_hash, sha256_of_bytes

__all__ = [
    "ARTIFACTS",
    "C3_REQUIRED",
    "DECISIONS",
    "SNAPSHOT_KEYS",
    "binding_errors",
    "check_c3",
    "check_snapshot_trio",
    "marker_errors",
    "parse_c3",
    "structure_errors",
]

#: the six Plan Package artifacts, in canonical order
ARTIFACTS = ("pbi-input.md", "plan.md", "todo.md", "test-cases.md", "review-self.md", "review-external.md")
C3_REQUIRED = (
    "task_id", "approval_kind", "phase", "decision", "source_sha", "plan_hash", "plan_package_hash",
    "artifact_hashes", "c1_evidence_ref", "c2_evidence_ref", "reviewers", "policy_ref", "issued_at", "issued_by",
)
_OPTIONAL = ("derived_loopspec_hash",)
DECISIONS = ("AUTO_APPROVED", "HUMAN_ESCALATED", "BLOCKED")
SNAPSHOT_KEYS = frozenset({"verdict", "plan_hash", "source_sha", "plan_package_hash", "evidence_ref"})
_TRIO = ("plan_hash", "source_sha", "plan_package_hash")
_MODELS = ("model_a", "model_b")
_NON_EMPTY = ("c1_evidence_ref", "c2_evidence_ref", "policy_ref", "issued_by")
#: (artifact, marker prefix, verdict an approval needs)
_MARKERS = (("review-self.md", "C1-VERDICT", "PASS"), ("review-external.md", "C2-VERDICT", "approve"))


def parse_c3(text: str, source: str) -> dict[str, Any]:
    """Parse c3.json strictly; a legacy record (no ``approval_kind`` key) or any other kind is refused."""
    try:
        record = strict_json.loads(text, max_chars=strict_json.MAX_RECORD_CHARS)
    except strict_json.StrictJSONError as exc:
        raise EvidenceError([f"{source}: not strict JSON: {exc.message}"]) from None
    if not isinstance(record, dict):
        raise EvidenceError([f"{source}: the root must be an object"])
    if "approval_kind" not in record:
        raise EvidenceError([f"{source}: legacy c3.json (no approval_kind key): EV を発行しない"])
    if record["approval_kind"] != "c3-prime":
        raise EvidenceError([f"{source}: approval_kind must be exactly 'c3-prime', got {record['approval_kind']!r}"])
    return record


def structure_errors(record: Mapping[str, Any], task_name: str) -> list[str]:
    """Key set, formats and the task_id ↔ task folder binding."""
    errors: list[str] = []
    if "c3_status" in record:
        errors.append("c3_status is forbidden in a c3-prime record")
    unknown = sorted(k for k in record if k not in C3_REQUIRED and k not in _OPTIONAL and not k.startswith("_"))
    if unknown:
        errors.append(f"unknown keys: {unknown}")
    missing = [k for k in C3_REQUIRED if k not in record]
    if missing:
        errors.append(f"missing keys: {missing}")
    task_id = record.get("task_id")
    if not isinstance(task_id, str) or not TASK_ID.match(task_id):
        errors.append(f"task_id {task_id!r} does not match TASK-NNNN")
    elif task_id != task_name:
        errors.append(f"task_id {task_id!r} is not the task folder name {task_name!r}")
    if "phase" in record and record["phase"] != "C-3'":
        errors.append(f"phase must be \"C-3'\", got {record['phase']!r}")
    errors += [f"{k} must be a non-empty string" for k in _NON_EMPTY
               if k in record and not (isinstance(record[k], str) and record[k])]
    issued_at = record.get("issued_at")
    if "issued_at" in record and not (isinstance(issued_at, str) and ISO_UTC.match(issued_at)):
        errors.append(f"issued_at {issued_at!r} is not YYYY-MM-DDTHH:MM:SSZ")
    errors += [f"{k} must be a string" for k in sorted(record) if k.startswith("_") and not isinstance(record[k], str)]
    if "decision" in record and record["decision"] not in DECISIONS:
        errors.append(f"decision {record['decision']!r} is not one of {list(DECISIONS)}")
    return errors


def marker_errors(record: Mapping[str, Any], artifacts: Mapping[str, bytes | None]) -> list[str]:
    """C-1/C-2 evidence markers: exactly one well-formed line each, bound to the current plan.md.

    The marker's verdict must be the approving one only for an AUTO_APPROVED decision: for BLOCKED or
    HUMAN_ESCALATED a failing review is the reason for the decision, which is data, not a broken binding.
    """
    errors: list[str] = []
    plan = artifacts.get("plan.md")
    current = sha256_of_bytes(plan) if plan is not None else None
    for name, prefix, approving in _MARKERS:
        content = artifacts.get(name)
        if content is None:
            errors.append(f"evidence 再検証 NG: {name} is missing")
            continue
        text = content.decode("utf-8", errors="replace")
        lines = [line for line in text.splitlines() if line.startswith(f"{prefix}:")]
        well_formed = re.findall(rf"^{prefix}: (\S+) plan=(sha256:[0-9a-f]{{64}})$", text, flags=re.MULTILINE)
        if len(lines) != 1 or len(well_formed) != 1:
            errors.append(f"evidence 再検証 NG: {name} needs exactly one well-formed {prefix} line")
            continue
        verdict, bound_plan = well_formed[0]
        if bound_plan != current:
            errors.append(f"evidence 再検証 NG: {name} {prefix} is stale (plan={bound_plan}, plan.md={current})")
        if record.get("decision") == "AUTO_APPROVED" and verdict != approving:
            errors.append(f"evidence 再検証 NG: {name} verdict {verdict!r} is not {approving!r}")
    return errors


def check_snapshot_trio(container: Mapping[str, Any], reviewers: Any, *, strict: bool) -> list[str]:
    """Each reviewer snapshot exists, is complete and carries the record's hash trio; first failure per model."""
    reasons: list[str] = []
    for model in _MODELS:
        snapshot = reviewers.get(model) if isinstance(reviewers, dict) else None
        if not isinstance(snapshot, dict):
            reasons.append(f"reviewers.{model}: snapshot missing")
            continue
        if strict and set(snapshot) != SNAPSHOT_KEYS:
            reasons.append(f"reviewers.{model}: keys {sorted(snapshot)} are not exactly {sorted(SNAPSHOT_KEYS)}")
            continue
        empty = sorted(k for k in SNAPSHOT_KEYS if not snapshot.get(k))
        if empty:
            reasons.append(f"reviewers.{model}: empty values {empty}")
            continue
        reasons += [f"reviewers.{model}.{key} differs from the record's {key}"
                    for key in _TRIO if snapshot[key] != container.get(key)]
    return reasons


def binding_errors(record: Mapping[str, Any], artifacts: Mapping[str, bytes | None]) -> list[str]:
    """The hash bindings: source_sha, plan_hash, artifact_hashes, plan_package_hash and the reviewer snapshots."""
    errors: list[str] = []
    # each artifact hashed once, plan.md included (its digest is compared and quoted)
    digests = {name: None if content is None else sha256_of_bytes(content)
               for name in ARTIFACTS for content in [artifacts.get(name)]}
    source_sha = record.get("source_sha")
    if not (isinstance(source_sha, str) and COMMIT_SHA.match(source_sha)):
        errors.append(f"source_sha {source_sha!r} is not 7-40 lowercase hex")
    plan = digests["plan.md"]
    if plan is None:
        errors.append("plan.md is missing")
    elif record.get("plan_hash") != plan:
        errors.append(f"plan_hash {record.get('plan_hash')!r} is not the hash of plan.md ({plan})")
    hashes = record.get("artifact_hashes")
    if not (isinstance(hashes, dict) and set(hashes) == set(ARTIFACTS)):
        errors.append(f"artifact_hashes must be an object with exactly the keys {list(ARTIFACTS)}")
    else:
        for name in ARTIFACTS:
            digest = digests[name]
            if digest is None:
                errors.append(f"artifact {name} is missing")
            elif hashes[name] != digest:
                errors.append(f"artifact_hashes[{name!r}] does not match {name}")
        if record.get("plan_package_hash") != canonical_hash(hashes):
            errors.append("plan_package_hash is not the canonical hash of artifact_hashes")
    reviewers = record.get("reviewers")
    if not (isinstance(reviewers, dict) and set(reviewers) == set(_MODELS)):
        errors.append("reviewers must be an object with exactly the keys model_a, model_b")
        return errors
    trio = check_snapshot_trio(record, reviewers, strict=True)
    if trio:
        return errors + trio
    verdicts = [reviewers[m]["verdict"] for m in _MODELS]
    errors += [f"reviewers.{m}.verdict {v!r} is not approve/reject"
               for m, v in zip(_MODELS, verdicts, strict=True) if v not in ("approve", "reject")]
    if reviewers["model_a"]["evidence_ref"] == reviewers["model_b"]["evidence_ref"]:
        errors.append("reviewers share one evidence_ref: the two reviews are not independent")
    if record.get("decision") == "AUTO_APPROVED" and any(v != "approve" for v in verdicts):
        errors.append("decision AUTO_APPROVED with a non-approve reviewer verdict (tamper sign)")
    return errors


def check_c3(record: Mapping[str, Any], task_name: str, artifacts: Mapping[str, bytes | None]) -> list[str]:
    """Every c3-prime rule; the decision is data (the terminal_state source), never a reason to skip a check."""
    errors = structure_errors(record, task_name) + marker_errors(record, artifacts)
    # the bindings are re-verified for every decision: PlanGate's c3prime_verify returns at decision !=
    # AUTO_APPROVED before them, so a BLOCKED record could otherwise carry a tampered plan_hash (seed §6-5)
    errors += binding_errors(record, artifacts)
    return [f"c3.json: {error}" for error in errors]
