"""The pure RunEvidence producer: a function of the read sources and the injected values, byte-deterministic."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from .. import _json as strict_json
from .._errors import EvidenceError
from ..redact._base import Redactor
from ._arbiter import records_for_run
from ._c3 import check_c3
from ._canonical import SHA256_HASH, is_utc_timestamp
from ._delivery import (
    UNAVAILABLE,
    derive_delivery_fields,
    derive_quality_metrics,
    derive_terminal_state,
    unknown_kinds,
)
from ._privacy import (
    Escalation,
    check_output_privacy,
    evidence_ref_error,
    redact,
    scan_input_keys,
    scrub_reasons,
)

__all__ = [
    "ALWAYS_UNAVAILABLE",
    "HARNESS_KEYS",
    "INJECTABLE",
    "INJECTED_VALUE",
    "PHASE_ONE_FIXED",
    "SCHEMA_VERSION",
    "Injected",
    "TaskSources",
    "build_evidence",
    "check_harness_version",
    "derive_human_interventions",
    "derive_observation",
    "derive_source_escalations",
    "timestamp_order_error",
]

SCHEMA_VERSION = "1.0"
HARNESS_KEYS = ("cli_version", "corpus_hash", "plugin_version")
DRIFT_UNCHECKED: Escalation = (
    "harness_drift_unchecked", "--harness-version-end 未注入のため AC-12 の drift 検査を実行していない",
)
#: fields with no source in Phase 1: "unavailable" unless a caller injected them (seed §5-1 (a))
PHASE_ONE_FIXED = ("cost_metrics", "replan_count", "routing_decisions")
#: the only Phase-1-fixed field the producer can inject (--routing-decisions)
INJECTABLE = ("routing_decisions",)
#: the Phase-1-fixed fields the producer always writes as "unavailable" (format §4.2 #15, #19): no flag sets them,
#: so an EV with a value there was not written by this producer, and a Phase 1 EV is never complete
ALWAYS_UNAVAILABLE = tuple(field for field in PHASE_ONE_FIXED if field not in INJECTABLE)
#: the escalation kind that records an injected Phase-1-fixed field (detail: the field name), so a verifier can
#: tell an injected value from a forged one that replaced "unavailable"
INJECTED_VALUE = "injected_value"


@attrs.frozen
class TaskSources:
    """Everything the source readers read for one task folder (the producer opens nothing itself)."""

    task_name: str
    c3_ref: str
    record_ref: str | None
    c3: Mapping[str, Any]
    artifacts: Mapping[str, bytes | None]
    entries: tuple[Mapping[str, Any], ...]
    arbiter_records: tuple[Any, ...] = ()
    #: the shipped secrets/pii rule packs, read by the source reader; every free-text string passes them
    secrets: Redactor = attrs.field(kw_only=True)


@attrs.frozen
class Injected:
    """The caller's run context; JSON-valued flags may be given as text (as on the command line) or parsed."""

    now: str | None
    started_at: str | None
    repository: str | None
    run_id: str | None
    harness_version: Any
    harness_version_end: Any = None
    pr_number: str | int | None = None
    routing_decisions: Any = None
    observation: str | None = None
    cause_hypothesis: str | None = None
    evidence_refs: tuple[str, ...] = ()


def _json_flag(value: Any, flag: str, errors: list[str]) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return strict_json.loads(value, max_chars=strict_json.MAX_RECORD_CHARS)
    except strict_json.StrictJSONError as exc:
        errors.append(f"{flag} is not strict JSON: {exc.message}")
        return None


def _harness_object(value: Any, flag: str) -> list[str]:
    if not (isinstance(value, dict) and sorted(value) == list(HARNESS_KEYS)):
        return [f"{flag} must be an object with exactly {list(HARNESS_KEYS)}"]
    errors = [f"{flag} {key} must be a non-empty string" for key in ("cli_version", "plugin_version")
              if not (isinstance(value[key], str) and value[key])]
    if not (isinstance(value["corpus_hash"], str) and SHA256_HASH.match(value["corpus_hash"])):
        errors.append(f"{flag} corpus_hash {value['corpus_hash']!r} is not sha256:<64 hex>")
    return errors


def check_harness_version(start: Any, end: Any) -> tuple[Any, list[str], list[Escalation]]:
    """The start harness_version (or "unavailable"), errors, and the unchecked-drift escalation (AC-12)."""
    errors: list[str] = []
    if start is None:
        return UNAVAILABLE, ["--harness-version is required (fail-closed)"], []
    start = _json_flag(start, "--harness-version", errors)
    errors += _harness_object(start, "--harness-version") if not errors else []
    if end is None:
        return (UNAVAILABLE if errors else start), errors, [DRIFT_UNCHECKED]
    end_errors: list[str] = []
    end = _json_flag(end, "--harness-version-end", end_errors)
    end_errors += _harness_object(end, "--harness-version-end") if not end_errors else []
    if not errors and not end_errors:
        end_errors = [f"harness_version drift in {key}: {start[key]!r} at start, {end[key]!r} at end (AC-12)"
                      for key in HARNESS_KEYS if start[key] != end[key]]
    return (UNAVAILABLE if errors else start), errors + end_errors, []


def timestamp_order_error(started_at: Any, completed_at: Any) -> str | None:
    """Why a run cannot have started at ``started_at`` and completed at ``completed_at`` (None when it can)."""
    # both are fixed-width YYYY-MM-DDTHH:MM:SSZ, so text order is time order
    if is_utc_timestamp(started_at) and is_utc_timestamp(completed_at) and started_at > completed_at:
        return f"started_at {started_at} is after completed_at {completed_at}"
    return None


def _injected_errors(injected: Injected) -> list[str]:
    errors = [f"{flag} is required and must be a real UTC time YYYY-MM-DDTHH:MM:SSZ (fail-closed), got {value!r}"
              for flag, value in (("--now", injected.now), ("--started-at", injected.started_at))
              if not is_utc_timestamp(value)]
    order = timestamp_order_error(injected.started_at, injected.now)
    if order is not None:
        errors.append(f"--started-at / --now: {order}")
    if not injected.repository or "/" in injected.repository:
        errors.append(f"--repository is required and must be the repo name without its owner, "
                      f"got {injected.repository!r}")
    if not injected.run_id:
        errors.append("--run-id is required and must be non-empty (fail-closed)")
    errors += [f"--evidence-ref {reason}" for reason in map(evidence_ref_error, injected.evidence_refs) if reason]
    return errors


def _pr_number(value: str | int | None, errors: list[str]) -> int | None:
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str) and value.isascii() and value.isdigit():
        return int(value)
    errors.append(f"--pr-number {value!r} must be all digits")
    return None


def _reduce_strings(value: Any, secrets: Redactor) -> tuple[Any, list[Escalation]]:
    """Every string value at any depth reduced (keys are left to the output check)."""
    if isinstance(value, str):
        return redact(value, secrets)
    escalations: list[Escalation] = []
    if isinstance(value, list):
        items = []
        for item in value:
            reduced, logged = _reduce_strings(item, secrets)
            items.append(reduced)
            escalations += logged
        return items, escalations
    if isinstance(value, dict):
        mapping = {}
        for key, item in value.items():
            mapping[key], logged = _reduce_strings(item, secrets)
            escalations += logged
        return mapping, escalations
    return value, escalations


def _routing(value: Any, errors: list[str], secrets: Redactor) -> tuple[Any, list[Escalation]]:
    if value is None:
        return UNAVAILABLE, []
    routing = _json_flag(value, "--routing-decisions", errors)
    if not isinstance(routing, list):
        errors.append("--routing-decisions must be a JSON array")
        return UNAVAILABLE, []
    reduced, escalations = _reduce_strings(routing, secrets)
    return reduced, [*escalations, (INJECTED_VALUE, "routing_decisions")]


def derive_source_escalations(
    c3: Mapping[str, Any], entries: Sequence[Mapping[str, Any]], arbiter: Sequence[Mapping[str, Any]],
) -> list[Escalation]:
    """Unknown record kinds and the input key scans: what the sources themselves make the EV escalate."""
    escalations: list[Escalation] = [("unknown_record_kind", kind) for kind in unknown_kinds(entries)]
    escalations += scan_input_keys(list(entries), "record.jsonl") + scan_input_keys(c3, "c3.json")
    return escalations + scan_input_keys(list(arbiter), "arbiter-record")


def derive_human_interventions(
    decision: Any, entries: Sequence[Mapping[str, Any]], arbiter: Sequence[Mapping[str, Any]], secrets: Redactor,
) -> tuple[list[dict[str, str]], list[Escalation]]:
    """c3 escalations, then record escalations and notices in file order, then this run's arbiter escalations."""
    items: list[dict[str, str]] = []
    escalations: list[Escalation] = []
    if decision in ("HUMAN_ESCALATED", "BLOCKED"):
        items.append({"kind": "c3_prime_decision", "detail": decision})
    for entry in entries:
        kind = entry.get("kind")
        if kind == "state" and entry.get("state") == "HUMAN_ESCALATED":
            items.append({"kind": "delivery_state", "detail": "HUMAN_ESCALATED"})
        elif kind not in ("intent", "merge_ready", "receipt", "state"):
            detail, reduced = redact(str(entry.get("comment_url") or ""), secrets)
            items.append({"kind": "record_notice", "detail": detail})
            escalations += reduced
    items += [{"kind": "arbiter_decision", "detail": "HUMAN_ESCALATED"}
              for record in arbiter if record.get("decision") == "HUMAN_ESCALATED"]
    return items, escalations


def derive_observation(
    terminal_state: str, repair_rounds: Any, entries: Sequence[Mapping[str, Any]], secrets: Redactor,
) -> tuple[str, list[Escalation]]:
    """The observation the producer writes when none is injected: terminal state, rounds, reasons, unknown kinds."""
    escalations: list[Escalation] = []
    parts = [f"terminal_state={terminal_state}", f"repair_rounds={repair_rounds}"]
    reasons: set[str] = set()
    for entry in entries:
        if entry.get("kind") == "state" and isinstance(entry.get("reasons"), list):
            for reason in entry["reasons"]:
                text, reduced = redact(str(reason), secrets)
                reasons.add(text)
                escalations += reduced
    if reasons:
        parts.append("reasons=" + ",".join(sorted(reasons)))
    kinds = unknown_kinds(entries)
    if kinds:
        parts.append("unknown_record_kinds=" + ",".join(kinds))
    return "; ".join(parts), escalations


def build_evidence(sources: TaskSources, injected: Injected) -> dict[str, Any]:
    """The 24-key EV for one terminal run; every reason it cannot be issued is raised together."""
    errors = _injected_errors(injected)
    harness, harness_errors, escalations = check_harness_version(injected.harness_version,
                                                                 injected.harness_version_end)
    errors += harness_errors
    secrets = sources.secrets
    routing, reduced = _routing(injected.routing_decisions, errors, secrets)
    escalations += reduced
    pr_number = _pr_number(injected.pr_number, errors)
    c3 = sources.c3
    errors += check_c3(c3, sources.task_name, sources.artifacts)
    entries = sources.entries
    record_exists = sources.record_ref is not None
    arbiter = records_for_run(sources.arbiter_records, injected.run_id or "")
    escalations += derive_source_escalations(c3, entries, arbiter)
    delivery, delivery_errors, reduced = derive_delivery_fields(entries, record_exists, pr_number, secrets=secrets)
    errors += delivery_errors
    escalations += reduced
    try:
        terminal_state = derive_terminal_state(c3.get("decision"), entries, record_exists)
    except EvidenceError as exc:
        errors += exc.reasons
        terminal_state = ""
    if errors:
        raise EvidenceError(scrub_reasons(errors, secrets))
    interventions, reduced = derive_human_interventions(c3.get("decision"), entries, arbiter, secrets)
    escalations += reduced
    if injected.observation:
        observation, reduced = redact(injected.observation, secrets)
    else:
        observation, reduced = derive_observation(terminal_state, delivery.repair_rounds, entries, secrets)
    escalations += reduced
    cause_hypothesis = None
    if injected.cause_hypothesis is not None:
        cause_hypothesis, reduced = redact(injected.cause_hypothesis, secrets)
        escalations += reduced
    refs = {sources.c3_ref, *injected.evidence_refs} | ({sources.record_ref} if sources.record_ref else set())
    record: dict[str, Any] = {
        "run_id": injected.run_id,
        "task_id": c3["task_id"],
        "started_at": injected.started_at,
        "completed_at": injected.now,
        "repository": injected.repository,
        "source_sha": c3["source_sha"],
        "final_head_sha": delivery.final_head_sha,
        "plan_hash": c3["plan_hash"],
        "c3_prime_decision_ref": {"path": sources.c3_ref, "plan_package_hash": c3["plan_package_hash"]},
        "harness_version": harness,
        "routing_decisions": routing,
        "ci_outcomes": delivery.ci_outcomes,
        "review_findings": delivery.review_findings,
        "repair_rounds": delivery.repair_rounds,
        "replan_count": UNAVAILABLE,
        "human_interventions": interventions,
        "terminal_state": terminal_state,
        "quality_metrics": derive_quality_metrics(terminal_state, delivery.repair_rounds),
        "cost_metrics": UNAVAILABLE,
        "evidence_refs": sorted(refs),
        "schema_version": SCHEMA_VERSION,
        "observation": observation,
        "cause_hypothesis": cause_hypothesis,
        "escalation": [{"kind": kind, "detail": detail} for kind, detail in sorted(set(escalations))],
    }
    privacy = check_output_privacy(record, secrets)
    if privacy:
        raise EvidenceError([f"privacy 違反（出力検査）: {reason}" for reason in sorted(privacy)])
    return record
