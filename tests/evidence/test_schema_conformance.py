"""The EV schema: its shape, and fastjsonschema (what the verifier runs) agreeing with jsonschema on every keyword."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import fastjsonschema
import golden_cases
import jsonschema
import pytest

from verigate.evidence._privacy import FORBIDDEN_KEYS
from verigate.evidence._schema import ENFORCED_KEYWORDS, SCHEMA_NAME, load_evidence_schema

SCHEMA: dict[str, Any] = json.loads((Path(__file__).parents[2] / "schemas" / SCHEMA_NAME).read_text("utf-8"))


def test_schema_shape() -> None:
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert SCHEMA["$id"] == "https://github.com/s977043/plangate/schemas/run-evidence.schema.json"
    assert len(SCHEMA["properties"]) == 24 and len(SCHEMA["required"]) == 21
    assert set(SCHEMA["properties"]) - set(SCHEMA["required"]) == {"observation", "cause_hypothesis", "escalation"}
    assert SCHEMA["additionalProperties"] is False and SCHEMA["patternProperties"] == {"^_": {"type": "string"}}
    assert "evidence_status" not in SCHEMA["properties"] and "evidence_status" not in SCHEMA["required"]
    assert not FORBIDDEN_KEYS & set(SCHEMA["properties"])
    assert SCHEMA["$defs"]["unavailable"] == {"const": "unavailable"}
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_the_schema_uses_only_enforced_keywords() -> None:
    used: set[str] = set()

    def walk(node: Any, in_map: bool = False) -> None:
        if isinstance(node, dict):
            if not in_map:
                used.update(node)
            for key, value in node.items():
                walk(value, key in ("properties", "patternProperties", "$defs") and not in_map)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(SCHEMA)
    assert used - {"$schema", "$id", "title", "description", "$defs"} <= ENFORCED_KEYWORDS
    assert {"enum", "pattern", "minimum", "anyOf", "$ref", "items", "const", "minLength"} <= used


def _valid_evs() -> list[dict[str, Any]]:
    evs = [json.loads((golden_cases.GOLDEN / case / "expected.json").read_text("utf-8")) for case in golden_cases.CASES]
    complete = copy.deepcopy(evs[0])
    complete.update(routing_decisions=[], replan_count=0, cost_metrics={}, escalation=[], _note="n")
    return [*evs, complete]


def _set(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda ev: ev.__setitem__(key, value)


#: one or more mutations per keyword: type, enum, const, pattern, minLength, minimum, required, additionalProperties,
#: patternProperties, items, anyOf and $ref (through the $defs the properties point at)
MUTATIONS: dict[str, Callable[[dict[str, Any]], None]] = {
    "type_run_id_int": _set("run_id", 1),
    "minLength_run_id": _set("run_id", ""),
    "pattern_task_id": _set("task_id", "TASK-99"),
    "ref_timestamp": _set("started_at", "2026-08-05"),
    "ref_timestamp_type": _set("completed_at", None),
    "pattern_repository_owner": _set("repository", "s977043/plangate"),
    "minLength_repository": _set("repository", ""),
    "ref_commit_sha": _set("source_sha", "XYZ"),
    "anyOf_final_head_sha": _set("final_head_sha", "Unavailable"),
    "ref_sha256": _set("plan_hash", "sha256:abc"),
    "additional_decision_ref": lambda ev: ev["c3_prime_decision_ref"].update(extra=1),
    "required_decision_ref": lambda ev: ev["c3_prime_decision_ref"].pop("plan_package_hash"),
    "repo_relative_absolute": lambda ev: ev["c3_prime_decision_ref"].update(path="/abs/c3.json"),
    "harness_minLength": lambda ev: ev["harness_version"].update(cli_version=""),
    "harness_type": _set("harness_version", "8.18.0"),
    "anyOf_routing_object": _set("routing_decisions", {}),
    "minimum_repair_rounds": _set("repair_rounds", -1),
    "type_repair_rounds_string": _set("repair_rounds", "1"),
    "type_repair_rounds_bool": _set("repair_rounds", True),
    "minimum_replan": _set("replan_count", -3),
    "enum_terminal_state": _set("terminal_state", "MERGE_READY_CANDIDATE"),
    "enum_terminal_state_empty": _set("terminal_state", ""),
    "quality_extra": _set("quality_metrics", {"first_pass": True, "rounds": 1, "rate": 1}),
    "quality_missing": _set("quality_metrics", {"first_pass": True}),
    "quality_type": _set("quality_metrics", {"first_pass": "yes", "rounds": 1}),
    "cost_type": _set("cost_metrics", []),
    "items_evidence_refs": _set("evidence_refs", [1]),
    "items_evidence_refs_empty": _set("evidence_refs", [""]),
    "pattern_schema_version": _set("schema_version", "banana"),
    "type_observation": _set("observation", None),
    "type_cause_hypothesis": _set("cause_hypothesis", 1),
    "escalation_missing_kind": _set("escalation", [{"detail": "x"}]),
    "escalation_extra": _set("escalation", [{"kind": "x", "detail": "", "y": 1}]),
    "escalation_kind_empty": _set("escalation", [{"kind": "", "detail": ""}]),
    "additional_top": _set("foo", 1),
    "pattern_properties_note": _set("_note", {"a": 1}),
    "required_run_id": lambda ev: ev.pop("run_id"),
    "required_schema_version": lambda ev: ev.pop("schema_version"),
    "root_type": lambda ev: ev.clear(),
}
NEUTRAL: dict[str, Callable[[dict[str, Any]], None]] = {
    "note_string": _set("_note", "a string note"),
    "optional_absent": lambda ev: [ev.pop(k, None) for k in ("observation", "cause_hypothesis", "escalation")],
    "repair_rounds_unavailable": _set("repair_rounds", "unavailable"),
    "quality_inner_unavailable": _set("quality_metrics", {"first_pass": "unavailable", "rounds": "unavailable"}),
}


def _verdicts(document: Any) -> tuple[bool, bool]:
    fast = load_evidence_schema().validate
    try:
        fast(document)
        fast_ok = True
    except fastjsonschema.JsonSchemaValueException:
        fast_ok = False
    return fast_ok, jsonschema.Draft202012Validator(SCHEMA).is_valid(document)


@pytest.mark.parametrize("index", range(len(golden_cases.CASES) + 1))
def test_both_validators_accept_the_valid_evs(index: int) -> None:
    assert _verdicts(_valid_evs()[index]) == (True, True)


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_both_validators_reject_each_mutation(name: str) -> None:
    document = copy.deepcopy(_valid_evs()[-1])
    MUTATIONS[name](document)
    assert _verdicts(document) == (False, False)


@pytest.mark.parametrize("name", sorted(NEUTRAL))
def test_both_validators_accept_each_neutral_change(name: str) -> None:
    document = copy.deepcopy(_valid_evs()[-1])
    NEUTRAL[name](document)
    assert _verdicts(document) == (True, True)


def test_a_float_integer_is_schema_valid_in_both() -> None:
    # JSON Schema counts 1.0 as an integer, so the verifier compares re-derived values as JSON text instead
    # (test_verify's repair_rounds_float tamper)
    document = copy.deepcopy(_valid_evs()[-1])
    document["repair_rounds"] = float(document["repair_rounds"])
    assert _verdicts(document) == (True, True)
