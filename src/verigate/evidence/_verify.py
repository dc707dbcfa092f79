"""The RunEvidence verifier: trusts nothing in the EV, re-derives it from the task folder with the producer's code."""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import fastjsonschema

from .. import _json as strict_json
from .._errors import EvidenceError, EvidenceLegacyError, EvidencePartialError
from .._schema_errors import schema_failure
from ._arbiter import is_arbiter_record, records_for_run
from ._canonical import is_utc_timestamp, same_json
from ._delivery import UNAVAILABLE, derive_quality_metrics
from ._files import MAX_JSON_BYTES, read_input
from ._folder import C3Facts, c3_facts, record_facts
from ._privacy import Escalation, check_output_privacy, evidence_ref_error, scrub_reasons, texts_of
from ._producer import (
    ALWAYS_UNAVAILABLE,
    INJECTABLE,
    INJECTED_VALUE,
    SCHEMA_VERSION,
    derive_human_interventions,
    derive_observation,
    derive_source_escalations,
    timestamp_order_error,
)
from ._schema import EvidenceSchema, load_evidence_schema, shipped_floor
from ._scrub import secret_scanner
from ._sources import read_arbiter_records

if TYPE_CHECKING:
    from ..redact import Redactor

__all__ = ["PARTIAL_ESCALATIONS", "UNVERIFIED_ARBITER", "unavailable_paths", "verify", "verify_record"]

#: escalation kinds that record a check that did not run: they make the EV partial (seed §4-1)
PARTIAL_ESCALATIONS = frozenset({"harness_drift_unchecked"})
#: the partial reason for arbiter interventions the verifier could not confirm (it was given no runs folder)
UNVERIFIED_ARBITER = "unverified:arbiter_records"
_ARBITER_ITEM = {"kind": "arbiter_decision", "detail": "HUMAN_ESCALATED"}


def unavailable_paths(value: Any, path: str = "") -> list[str]:
    """Dotted paths (``a.b``, ``a[0].b``) of every ``"unavailable"`` at any depth, sorted and distinct."""
    if UNAVAILABLE not in texts_of(value)[1]:
        return []  # a complete EV: no path to build for any node (texts_of's strings are the values, keys apart)
    return _unavailable_paths(value, path)


def _unavailable_paths(value: Any, path: str) -> list[str]:
    # one walk and one sort: a path is built only for a container or an "unavailable" (the partial verdict of
    # every Phase 1 EV comes through here)
    if isinstance(value, str):
        return [path or "<root>"] if value == UNAVAILABLE else []
    found: set[str] = set()
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        node, where = stack.pop()
        children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, child in children:
            if isinstance(child, str):
                if child != UNAVAILABLE:
                    continue
            elif not isinstance(child, (dict, list)):
                continue
            child_path = f"{where}[{key}]" if isinstance(node, list) else f"{where}.{key}" if where else str(key)
            if isinstance(child, str):
                found.add(child_path)
            else:
                stack.append((child, child_path))
    return sorted(found)


def _schema_errors(record: Mapping[str, Any], schema: EvidenceSchema) -> list[str]:
    unknown = sorted(k for k in record if k not in schema.properties and not k.startswith("_"))
    if unknown:
        return [f"未知のトップレベルキー: {unknown}"]
    bad_notes = sorted(k for k in record if k.startswith("_") and not isinstance(record[k], str))
    if bad_notes:
        return [f"{key}: a `_` note must be a string" for key in bad_notes]
    missing = sorted(schema.required - set(record))
    if missing:
        return [f"必須キー欠落: {key}" for key in missing]
    try:
        schema.validate(record)
    except fastjsonschema.JsonSchemaValueException as exc:
        failure = schema_failure(exc)
        return [f"schema 不適合: {failure.field or '<root>'}: {failure.detail}"]
    floor = shipped_floor() if schema is not load_evidence_schema() else None
    if floor is not None:
        try:
            floor(record)
        except fastjsonschema.JsonSchemaValueException as exc:
            failure = schema_failure(exc)
            return [f"schema 不適合（同梱 schema の契約: --schema は緩められない）: {failure.field or '<root>'}: "
                    f"{failure.detail}"]
    return []


def _c3_errors(record: Mapping[str, Any], task_dir: Path, task_name: str) -> tuple[list[str], C3Facts | None]:
    try:
        facts = c3_facts(task_dir, task_name)
    except EvidenceError as exc:
        return list(exc.reasons), None
    c3 = facts.c3
    errors = [f"{key}: EV={record[key]!r} と c3.json={c3.get(key)!r} が不一致（改竄兆候）"
              for key in ("plan_hash", "source_sha") if record[key] != c3.get(key)]
    ref = record["c3_prime_decision_ref"]
    path = ref["path"]
    if not path.endswith(f"{task_name}/approvals/c3.json") or ".." in path.split("/"):
        errors.append(f"c3_prime_decision_ref.path {path!r} does not resolve to this task's approvals/c3.json")
    if ref["plan_package_hash"] != c3.get("plan_package_hash"):
        errors.append("c3_prime_decision_ref.plan_package_hash differs from c3.json (改竄兆候)")
    # the ref claims c3.json passed every rule: check that it still does, with the producer's own check
    errors += [f"c3_prime_decision_ref: {reason}" for reason in facts.reasons]
    return errors, facts


def _escalations(record: Mapping[str, Any]) -> list[Escalation]:
    return [(item["kind"], item["detail"]) for item in record.get("escalation", [])]


def _injection_errors(record: Mapping[str, Any]) -> list[str]:
    """What the producer can write in the Phase-1-fixed fields: replan_count and cost_metrics only "unavailable"
    (no flag sets them), routing_decisions a value only with its injection record and vice versa, and an injection
    record for no other field. Without this an EV edited alone could fill them in and verify as complete."""
    injected = {detail for kind, detail in _escalations(record) if kind == INJECTED_VALUE}
    errors = [f"{field}: EV={record[field]!r}, but Phase 1 has no source for it and the producer cannot inject it: "
              f"it is always 'unavailable'" for field in ALWAYS_UNAVAILABLE if record[field] != UNAVAILABLE]
    errors += [f"{field}: EV={record[field]!r} だが Phase 1 に供給元がなく注入の記録（{INJECTED_VALUE}）もない"
               for field in INJECTABLE if record[field] != UNAVAILABLE and field not in injected]
    errors += [f"escalation: {INJECTED_VALUE} {field!r}: the producer injects only {list(INJECTABLE)}, and only "
               "a value, never 'unavailable'" for field in sorted(injected)
               if field not in INJECTABLE or record[field] == UNAVAILABLE]
    return errors


def _injected_field_errors(record: Mapping[str, Any]) -> list[str]:
    """The checks an injected value can still be held to: real times in order, repo-relative refs, injection
    records."""
    errors = [f"{key}: {record[key]!r} is not a real UTC time YYYY-MM-DDTHH:MM:SSZ"
              for key in ("started_at", "completed_at") if not is_utc_timestamp(record[key])]
    errors += [f"started_at: {order}" for order in [timestamp_order_error(record["started_at"],
                                                                           record["completed_at"])] if order]
    errors += [f"evidence_refs[{index}]: {reason}" for index, ref in enumerate(record["evidence_refs"])
               for reason in [evidence_ref_error(ref)] if reason]
    escalations = _escalations(record)
    if escalations != sorted(set(escalations)):
        errors.append("escalation: items must be distinct and sorted by (kind, detail) as the producer writes them")
    return errors + _injection_errors(record)


def _intervention_errors(
    record: Mapping[str, Any], derived: Sequence[Mapping[str, str]], escalations: Sequence[Escalation],
    arbiter: Sequence[Mapping[str, Any]] | None,
) -> tuple[list[str], Sequence[Escalation], bool]:
    """human_interventions against the re-derivation (``derived``, which implies ``escalations``); whether arbiter
    items remain unconfirmed (no runs folder: they may only follow the derived items and make the EV partial)."""
    claimed = record["human_interventions"]
    tail = claimed[len(derived):] if isinstance(claimed, list) else []
    unconfirmed = arbiter is None and bool(tail) and all(same_json(item, _ARBITER_ITEM) for item in tail)
    if not same_json(claimed, derived) and not (unconfirmed and same_json(claimed[:len(derived)], derived)):
        return ([f"human_interventions: EV={claimed!r} は c3.json / record.jsonl"
                 f"{' / arbiter records' if arbiter is not None else ''} からの再導出値 {derived!r} と不一致"],
                escalations, False)
    return [], escalations, unconfirmed


def _record_errors(
    record: Mapping[str, Any], task_dir: Path, facts: C3Facts, runs_dir: Path | None, secrets: Redactor,
) -> tuple[list[str], bool]:
    try:
        folder = record_facts(task_dir)
    except EvidenceError as exc:
        return [f"delivery/record.jsonl の再計算照合に失敗（fail-closed）: {r}" for r in exc.reasons], False
    try:
        arbiter = None if runs_dir is None else records_for_run(read_arbiter_records(runs_dir), record["run_id"])
    except EvidenceError as exc:
        return [f"human_interventions: {reason}" for reason in exc.reasons], False
    c3, entries, record_exists = facts.c3, folder.entries, folder.exists
    known = folder.derivations(facts, secrets)  # the arbiter-free part: derived once per folder content
    derived = known.delivery
    errors = list(known.delivery_errors)
    required = list(known.delivery_required)
    if arbiter is None:
        required += known.source_escalations
        interventions: Sequence[Mapping[str, str]] = known.interventions
        implied: Sequence[Escalation] = known.intervention_escalations
    else:
        required += derive_source_escalations(c3, entries, arbiter)
        interventions, implied = derive_human_interventions(c3.get("decision"), entries, arbiter, secrets)
    intervention_errors, reduced, unconfirmed = _intervention_errors(record, interventions, implied, arbiter)
    errors += intervention_errors
    required += reduced
    # the producer always lists the sources it read; injected refs may come on top
    task_prefix = record["c3_prime_decision_ref"]["path"].removesuffix("approvals/c3.json")
    sources = [f"{task_prefix}approvals/c3.json"] + ([f"{task_prefix}delivery/record.jsonl"] if record_exists else [])
    errors += [f"evidence_refs: the source {ref!r} is missing" for ref in sources if ref not in record["evidence_refs"]]
    for key in ("final_head_sha", "ci_outcomes", "review_findings", "repair_rounds"):
        expected = getattr(derived, key)
        if not same_json(record[key], expected):
            errors.append(f"{key}: EV={record[key]!r} は record.jsonl からの再導出値 {expected!r} と不一致")
    terminal_state = known.terminal_state
    if terminal_state is None:
        errors += [f"terminal_state: {reason}" for reason in known.terminal_errors]
    else:
        if record["terminal_state"] != terminal_state:
            errors.append(f"terminal_state: EV={record['terminal_state']!r} は再導出値 {terminal_state!r} と不一致")
    quality = derive_quality_metrics(record["terminal_state"], derived.repair_rounds)
    if not same_json(record["quality_metrics"], quality):
        errors.append(f"quality_metrics: EV={record['quality_metrics']!r} は再導出値 {quality!r} と不一致")
    # an observation the producer derived brings the reductions of the record's reasons with it
    observation, reduced = derive_observation(record["terminal_state"], derived.repair_rounds, entries, secrets)
    if record.get("observation") == observation:
        required += reduced
    missing = sorted(set(required) - set(_escalations(record)))
    errors += [f"escalation: task folder から導出される {{kind: {kind!r}, detail: {detail!r}}} が欠落"
               for kind, detail in missing]
    return errors, unconfirmed


def verify_record(record: Any, task_dir: Path, schema: EvidenceSchema, runs_dir: Path | None = None) -> None:
    """Run every check on a parsed EV; raise the error whose exit code is the verdict, return when complete."""
    secrets = secret_scanner()
    try:
        _check_record(record, task_dir, schema, runs_dir, secrets)
    except EvidenceError as exc:
        if type(exc) is not EvidenceError:
            raise
        # the reasons quote EV values, and a rejected EV may hold the very secret it is rejected for
        raise EvidenceError(scrub_reasons(exc.reasons, secrets)) from None


def _folder_name(task_dir: Path) -> str:
    """``task_dir.resolve().name``: on POSIX the resolved path of an existing entry that is not a symbolic link ends
    in the path's own last name (realpath resolves only the folders above it), so one lstat replaces one per
    component; anything else (a link, ``..``, no such entry, a loop, which resolve refuses) asks pathlib."""
    name = task_dir.name
    if os.name == "posix" and name and name != "..":
        try:
            if not stat.S_ISLNK(os.lstat(task_dir).st_mode):
                return name
        except (OSError, ValueError):
            pass
    return task_dir.resolve().name


def _check_record(record: Any, task_dir: Path, schema: EvidenceSchema, runs_dir: Path | None,
                  secrets: Redactor) -> None:
    if not isinstance(record, dict):
        raise EvidenceError(["the EV must be a JSON object"])
    # an EV that holds a shipped key is no arbiter record, whichever schema it is checked against (a --schema
    # that knew none of them made a tampered EV with the marker keys "legacy", exit 10, instead of rejected)
    if is_arbiter_record(record, schema.properties | load_evidence_schema().properties):
        raise EvidenceLegacyError(["legacy: an arbiter run record was given, not run evidence"])
    errors = _schema_errors(record, schema)
    if errors:
        raise EvidenceError(errors)
    task_name = _folder_name(task_dir)  # resolved once: every check below names the same folder
    if record["task_id"] != task_name:
        raise EvidenceError([f"task_id: EV={record['task_id']!r} is not the task folder name {task_name!r}"])
    if record["schema_version"] != SCHEMA_VERSION:
        # a version this code does not know may mean fields this code does not check: refuse, never guess
        raise EvidenceError([f"schema_version {record['schema_version']!r} is not {SCHEMA_VERSION!r}, "
                             "the contract version this verifier re-derives"])
    errors, c3 = _c3_errors(record, task_dir, task_name)
    errors += _injected_field_errors(record)
    unconfirmed = False
    if c3 is not None:
        record_errors, unconfirmed = _record_errors(record, task_dir, c3, runs_dir, secrets)
        errors += record_errors
    texts = texts_of(record)  # one walk for the privacy check and the search for "unavailable" below
    errors += [f"privacy 違反（受理側 backstop）: {reason}"
               for reason in sorted(check_output_privacy(record, secrets, texts=texts))]
    if errors:
        raise EvidenceError(errors)
    unavailable = _unavailable_paths(record, "") if UNAVAILABLE in texts[1] else []
    partial = [f"unavailable:{path}" for path in unavailable]
    partial += sorted({f"unverified:{kind}" for kind, _ in _escalations(record) if kind in PARTIAL_ESCALATIONS}
                      | ({UNVERIFIED_ARBITER} if unconfirmed else set()))
    if partial:
        raise EvidencePartialError(partial, "partial（unavailable / 未検証を含むため ready 扱いしない）")


def verify(ev: str | Path | Mapping[str, Any], task_dir: str | Path, *, schema_path: str | Path | None = None,
           runs_dir: str | Path | None = None) -> None:
    """Verify one EV against its task folder: returns when complete, else raises with the exit-code class.

    ``runs_dir`` (the arbiter records the producer read) lets arbiter interventions be re-derived too; without
    it they cannot be confirmed, so an EV that claims any is partial (``unverified:arbiter_records``).

    EvidenceError (1) rejected, EvidenceLegacyError (10), EvidencePartialError (11) with every reason,
    SchemaError (2) when the schema cannot be read — the check never ran, which is not tampering.
    """
    if isinstance(ev, Mapping):
        record: Any = dict(ev)
    else:
        data = read_input(os.fspath(ev), "the EV file", MAX_JSON_BYTES)
        try:
            record = strict_json.loads(data, max_chars=strict_json.MAX_RECORD_CHARS)
        except strict_json.StrictJSONError as exc:  # a repeated key would let two readers see two records
            raise EvidenceError([f"the EV is not strict JSON: {exc.message}"]) from None
    schema = load_evidence_schema(Path(schema_path) if schema_path is not None else None)
    verify_record(record, Path(task_dir), schema, Path(runs_dir) if runs_dir is not None else None)

