"""delivery/record.jsonl: entry_id re-computation and the derivations the producer and verifier share (pure)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from .. import _json as strict_json
from .._errors import EvidenceError
from ._canonical import COMMIT_SHA, canonical_hash
from ._privacy import Escalation, redact

if TYPE_CHECKING:
    from ..redact import Redactor

__all__ = [
    "KNOWN_KINDS",
    "NON_TERMINAL_STATES",
    "REPAIR_KINDS",
    "UNAVAILABLE",
    "DeliveryFields",
    "completed_rounds",
    "derive_delivery_fields",
    "derive_quality_metrics",
    "derive_terminal_state",
    "entry_id",
    "load_entries",
    "unknown_kinds",
]

UNAVAILABLE = "unavailable"
#: the kinds delivery.assess / receipt write; anything else is escalated, never dropped
KNOWN_KINDS = frozenset({"intent", "merge_ready", "receipt", "state"})
REPAIR_KINDS = frozenset({"repair_ci", "repair_review", "resolve_conflict"})
NON_TERMINAL_STATES = (
    "CHECKS_FAILED", "CONFLICT", "EXEC_RETURN", "MERGE_READY_CANDIDATE", "REVIEW_REPAIR",
    "WAITING_FOR_CHECKS", "WAITING_FOR_REVIEW",
)

Entry = Mapping[str, Any]


def entry_id(entry: Entry) -> str:
    """canonical_hash of the entry without its ``at`` and ``entry_id`` keys."""
    return canonical_hash({k: v for k, v in entry.items() if k not in ("at", "entry_id")})


def load_entries(text: str, source: str) -> tuple[dict[str, Any], ...]:
    """Parse record.jsonl; every stored entry_id is recomputed and a mismatch fails closed."""
    entries: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = strict_json.loads(line, max_chars=strict_json.MAX_RECORD_CHARS)
        except strict_json.StrictJSONError as exc:
            raise EvidenceError([f"{source}:{number}: line is not strict JSON: {exc.message}"]) from None
        if not isinstance(entry, dict):
            raise EvidenceError([f"{source}:{number}: an entry must be a JSON object"])
        malformed = _malformed_field(entry)
        if malformed is not None:
            raise EvidenceError([f"{source}:{number}: {malformed} must be a string, not "
                                 f"{_JSON_TYPES.get(type(entry[malformed]), 'a number')} (a malformed entry)"])
        if "entry_id" in entry and entry["entry_id"] != entry_id(entry):
            raise EvidenceError([f"{source}:{number}: entry_id mismatch (tamper sign): stored "
                                 f"{entry['entry_id']!r}, recomputed {entry_id(entry)}"])
        entries.append(entry)
    return tuple(entries)


#: the JSON type names of what a non-string field holds, for the refusal (int and float: "a number")
_JSON_TYPES: dict[type, str] = {list: "an array", dict: "an object", bool: "a boolean", type(None): "null"}


def _malformed_field(entry: Entry) -> str | None:
    """The field that makes ``entry`` malformed, if any: ``kind`` (any entry) and a receipt's or intent's
    ``action_kind`` are strings wherever they are present. The derivations look both up in sets of names, where
    an array or an object would raise TypeError (exit 2, "the check never ran") instead of a rejection. A
    missing kind stays valid: the format reads it as the unknown kind "None"."""
    if "kind" in entry and type(entry["kind"]) is not str:
        return "kind"
    if entry.get("kind") in ("receipt", "intent") and "action_kind" in entry and type(entry["action_kind"]) is not str:
        return "action_kind"
    return None


def unknown_kinds(entries: Sequence[Entry]) -> list[str]:
    """The sorted distinct kinds delivery does not write (a missing kind reads as ``None``)."""
    return sorted({str(e.get("kind")) for e in entries if e.get("kind") not in KNOWN_KINDS})


def completed_rounds(entries: Sequence[Entry], pr: int) -> int:
    """The highest round among this PR's repair receipts (0 when none); ``pr`` must be resolved, never None."""
    rounds = [e["round"] for e in entries
              if e.get("kind") == "receipt" and e.get("pr_number") == pr and e.get("action_kind") in REPAIR_KINDS
              and type(e.get("round")) is int and e["round"] >= 0]
    return max(rounds, default=0)


@attrs.frozen
class DeliveryFields:
    """The four record-derived EV fields, each a value or ``"unavailable"``."""

    final_head_sha: str = UNAVAILABLE
    ci_outcomes: list[dict[str, str]] | str = UNAVAILABLE
    review_findings: list[dict[str, str]] | str = UNAVAILABLE
    repair_rounds: int | str = UNAVAILABLE


def _last(entries: Sequence[Entry], kind: str) -> Entry | None:
    return next((e for e in reversed(entries) if e.get("kind") == kind), None)


def derive_delivery_fields(
    entries: Sequence[Entry], record_exists: bool, injected_pr: int | None = None, *, secrets: Redactor,
) -> tuple[DeliveryFields, list[str], list[Escalation]]:
    """final_head_sha, ci_outcomes, review_findings, repair_rounds; plus errors and reduction escalations
    (``secrets`` scans the free-text dispositions).

    The PR number comes only from the last merge_ready entry: without it, rounds would be counted for
    ``pr=None`` — silently 0 — so every PR-bound field stays "unavailable" instead.
    """
    if not record_exists:
        return DeliveryFields(), [], []
    errors: list[str] = []
    escalations: list[Escalation] = []
    merge_ready = _last(entries, "merge_ready")
    mr = merge_ready.get("record") if merge_ready is not None else None
    mr = mr if isinstance(mr, dict) else {}
    last_state = _last(entries, "state")
    head = mr.get("head_sha")
    if head is None and last_state is not None:
        head = last_state.get("head_sha")
    final_head_sha = UNAVAILABLE
    if isinstance(head, str) and COMMIT_SHA.match(head):
        final_head_sha = head
    elif head is not None:
        errors.append(f"record.jsonl: head_sha {head!r} is not 7-40 lowercase hex")
    pr = mr.get("pr_number")
    if pr is not None and (type(pr) is not int or pr < 0):
        errors.append(f"record.jsonl: merge_ready pr_number {pr!r} is not a PR number")
        pr = None
    if injected_pr is not None and pr is not None and injected_pr != pr:
        errors.append(f"--pr-number {injected_pr} differs from the merge_ready entry's pr_number {pr}")
    if pr is None:
        return DeliveryFields(final_head_sha=final_head_sha), errors, escalations
    ci_outcomes: list[dict[str, str]] | str = UNAVAILABLE
    if isinstance(mr.get("check_summary"), dict):
        ci_outcomes = [{"name": name, "conclusion": str(value)} for name, value in sorted(mr["check_summary"].items())]
    review_findings: list[dict[str, str]] | str = UNAVAILABLE
    if isinstance(mr.get("review_disposition"), dict):
        findings: list[dict[str, str]] = []
        for finding, disposition in sorted(mr["review_disposition"].items()):
            text, reduced = redact(str(disposition), secrets)
            findings.append({"id": finding, "disposition": text})
            escalations += reduced
        present = {f["id"] for f in findings}
        repaired = sorted({str(e["finding_type"]) for e in entries if e.get("kind") == "receipt"
                           and e.get("action_kind") == "repair_review" and e.get("finding_type")})
        findings += [{"id": ft, "disposition": "repaired"} for ft in repaired if ft not in present]
        review_findings = findings
    fields = DeliveryFields(final_head_sha, ci_outcomes, review_findings, completed_rounds(entries, pr))
    return fields, errors, escalations


def derive_terminal_state(decision: Any, entries: Sequence[Entry], record_exists: bool) -> str:
    """The 3-value terminal state (seed §4); a non-terminal run raises EvidenceError (no EV is issued)."""
    if decision == "BLOCKED":
        return "BLOCKED"
    last_state = _last(entries, "state")
    state = last_state.get("state") if last_state is not None else None
    if decision == "HUMAN_ESCALATED" or state == "HUMAN_ESCALATED":
        return "HUMAN_ESCALATED"
    # only a physical merge_ready entry proves MERGE_READY: MERGE_READY_CANDIDATE is never rounded up
    if _last(entries, "merge_ready") is not None:
        return "MERGE_READY"
    raise EvidenceError([
        f"non-terminal run: EV を発行しない (last state={state if state is not None else 'なし'}, "
        f"kind=merge_ready entry なし, record.jsonl {'exists' if record_exists else 'missing'}, "
        f"non-terminal states: {list(NON_TERMINAL_STATES)})"
    ])


def derive_quality_metrics(terminal_state: str, repair_rounds: int | str) -> dict[str, Any] | str:
    """{first_pass, rounds} from this run's round count alone; "unavailable" when the rounds are."""
    if not isinstance(repair_rounds, int):
        return UNAVAILABLE
    return {"first_pass": terminal_state == "MERGE_READY" and repair_rounds == 0, "rounds": repair_rounds + 1}
