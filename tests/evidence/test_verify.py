"""The verifier: exit codes 0/1/2/10/11, every tamper class, schema-derived key sets, the privacy backstop."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from evidence_helpers import (
    HARNESS,
    PHASE_ONE_PARTIAL,
    arbiter_task,
    assert_fullest,
    notice,
    produce_kwargs,
    run_cli,
    secret_shaped,
    shipped_schema,
    state,
    write_task,
)

import verigate.evidence._verify as verify_module
from verigate._errors import EvidenceError, EvidenceLegacyError, EvidencePartialError, SchemaError
from verigate.evidence import produce, unavailable_paths, verify


def _write(record: Any, tmp_path: Path, name: str = "ev.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
    return path


def _cli(record: Any, task_dir: Path, tmp_path: Path, *extra: str) -> tuple[int, str]:
    result = run_cli("evidence", "verify", str(_write(record, tmp_path)), str(task_dir), *extra)
    return result.returncode, result.stderr


def _rejected(record: Any, task_dir: Path) -> str:
    with pytest.raises(EvidenceError) as caught:
        verify(record, task_dir)
    assert type(caught.value) is EvidenceError, caught.value
    return "\n".join(caught.value.reasons)


def test_the_fullest_phase_one_ev_exits_11_for_the_two_sourceless_fields_alone(
        fullest_ev: dict[str, Any], merge_task: Path, tmp_path: Path) -> None:
    # the best verdict a Phase 1 EV can get: exit 0 is unreachable, replan_count and cost_metrics have no source
    code, stderr = _cli(fullest_ev, merge_task, tmp_path)
    assert code == 11
    assert stderr.splitlines()[1:] == [f"run-evidence: {reason}" for reason in PHASE_ONE_PARTIAL]


def test_phase_one_output_is_partial_with_every_reason(merge_task: Path, tmp_path: Path) -> None:
    path = tmp_path / "ev.json"
    path.write_text(produce(merge_task, **produce_kwargs()), encoding="utf-8")
    result = run_cli("evidence", "verify", str(path), str(merge_task))
    assert result.returncode == 11
    lines = result.stderr.splitlines()
    reasons = ["unavailable:cost_metrics", "unavailable:replan_count", "unavailable:routing_decisions",
               "unverified:harness_drift_unchecked"]
    assert lines[1:] == [f"run-evidence: {reason}" for reason in reasons]


def test_blocked_output_lists_eight_fields(tmp_path: Path) -> None:
    task = write_task(tmp_path, "TASK-0004", decision="BLOCKED", entries=None)
    with pytest.raises(EvidencePartialError) as caught:
        verify(json.loads(produce(task, **produce_kwargs(harness_version_end=dict(HARNESS)))), task)
    assert caught.value.exit_code == 11 and len(caught.value.reasons) == 8


def test_unchecked_drift_alone_is_partial_and_other_escalations_are_not(fullest_ev: dict[str, Any],
                                                                        merge_task: Path) -> None:
    def with_escalation(item: dict[str, str]) -> dict[str, Any]:
        items = sorted([*fullest_ev["escalation"], item], key=lambda e: (e["kind"], e["detail"]))
        return {**fullest_ev, "escalation": items}

    with pytest.raises(EvidencePartialError) as caught:
        verify(with_escalation({"kind": "harness_drift_unchecked", "detail": "x"}), merge_task)
    assert caught.value.reasons == (*PHASE_ONE_PARTIAL, "unverified:harness_drift_unchecked")
    assert_fullest(with_escalation({"kind": "unknown_record_kind", "detail": "notice"}), merge_task)


def test_nested_unavailable_is_listed_at_any_depth(fullest_ev: dict[str, Any], merge_task: Path) -> None:
    assert unavailable_paths({"top": "unavailable", "obj": {"a": "unavailable", "b": {"c": "unavailable"}},
                              "arr": ["unavailable", {"d": "unavailable"}]}) == \
        ["arr[0]", "arr[1].d", "obj.a", "obj.b.c", "top"]
    with pytest.raises(EvidencePartialError) as caught:
        verify({**fullest_ev, "routing_decisions": [{"step": 1, "target": "unavailable"}]}, merge_task)
    assert caught.value.reasons == (*PHASE_ONE_PARTIAL, "unavailable:routing_decisions[0].target")


# --- every tamper class is rejected (exit 1) naming the field ---

def _flip(text: str) -> str:
    return text[:-1] + ("0" if text[-1] != "0" else "1")


#: made when the tests run: nothing secret-shaped is committed
SHAPED = secret_shaped(11)


def _drop_injection_record(field: str) -> Any:
    return lambda ev: ev.update(escalation=[e for e in ev["escalation"]
                                            if (e["kind"], e["detail"]) != ("injected_value", field)])


def _add_escalation(kind: str, detail: str) -> Any:
    return lambda ev: ev.update(escalation=sorted([*ev["escalation"], {"kind": kind, "detail": detail}],
                                                  key=lambda e: (e["kind"], e["detail"])))


TAMPERS: dict[str, tuple[str, Any]] = {
    "plan_hash": ("plan_hash", lambda ev: ev.update(plan_hash=_flip(ev["plan_hash"]))),
    "source_sha": ("source_sha", lambda ev: ev.update(source_sha="fff9999")),
    "final_head_sha": ("final_head_sha", lambda ev: ev.update(final_head_sha="f" * 40)),
    "repair_rounds": ("repair_rounds", lambda ev: ev.update(repair_rounds=99)),
    "repair_rounds_float": ("repair_rounds", lambda ev: ev.update(repair_rounds=1.0)),
    "task_id": ("task_id", lambda ev: ev.update(task_id="TASK-0002")),
    "ci_conclusion": ("ci_outcomes", lambda ev: ev["ci_outcomes"][0].update(conclusion="failure")),
    "ci_dropped": ("ci_outcomes", lambda ev: ev["ci_outcomes"].pop()),
    "ci_invented": ("ci_outcomes", lambda ev: ev["ci_outcomes"].append({"name": "zz", "conclusion": "success"})),
    "disposition": ("review_findings", lambda ev: ev["review_findings"][0].update(disposition="dismissed")),
    "quality_flipped": ("quality_metrics", lambda ev: ev.update(quality_metrics={"first_pass": True, "rounds": 1})),
    "quality_unavailable": ("quality_metrics", lambda ev: ev.update(quality_metrics="unavailable")),
    "terminal_banana": ("terminal_state", lambda ev: ev.update(terminal_state="banana")),
    "terminal_candidate": ("terminal_state", lambda ev: ev.update(terminal_state="MERGE_READY_CANDIDATE")),
    "terminal_escalated": ("terminal_state", lambda ev: ev.update(terminal_state="HUMAN_ESCALATED")),
    "owner": ("repository", lambda ev: ev.update(repository="s977043/plangate")),
    "absolute_ref": ("evidence_refs", lambda ev: ev["evidence_refs"].append("/Users/alice/TASK-0001/plan.md")),
    "dropped_source_ref": ("evidence_refs", lambda ev: ev.update(evidence_refs=ev["evidence_refs"][:1])),
    "deep_absolute_ref": ("evidence_refs", lambda ev: ev["evidence_refs"].append("x/Users/alice/plan.md")),
    "url": ("observation", lambda ev: ev.update(observation="see https://github.com/s977043/PlanGate/pull/940")),
    "handle": ("observation", lambda ev: ev.update(observation="asked @someone")),
    "absolute_detail": ("escalation", lambda ev: ev.update(escalation=[{"kind": "x", "detail": "/var/folders/a"}])),
    "absolute_hypothesis": ("cause_hypothesis", lambda ev: ev.update(cause_hypothesis="/Users/alice/notes")),
    "account_key": ("human_interventions", lambda ev: ev.update(human_interventions=[{"login": "alice"}])),
    "forbidden_key": ("cost_metrics", lambda ev: ev.update(cost_metrics={"stdout": "log"})),
    "decision_ref": ("c3_prime_decision_ref", lambda ev: ev["c3_prime_decision_ref"].update(
        plan_package_hash=_flip(ev["c3_prime_decision_ref"]["plan_package_hash"]))),
    "decision_ref_path": ("c3_prime_decision_ref", lambda ev: ev["c3_prime_decision_ref"].update(
        path="TASK-0002/approvals/c3.json")),
    "unknown_key": ("foo", lambda ev: ev.update(foo=1)),
    "note_dict": ("_note", lambda ev: ev.update(_note={"a": 1})),
    "run_id_empty": ("run_id", lambda ev: ev.update(run_id="")),
    "started_at_date": ("started_at", lambda ev: ev.update(started_at="2026-08-05")),
    "schema_version": ("schema_version", lambda ev: ev.update(schema_version="banana")),
    "schema_version_unknown": ("schema_version", lambda ev: ev.update(schema_version="2.0")),
    "escalation_extra": ("escalation", lambda ev: ev.update(escalation=[{"kind": "x", "detail": "", "y": 1}])),
    "corpus_hash": ("harness_version", lambda ev: ev["harness_version"].update(corpus_hash="sha256:0")),
    # secrets and personal data (rule packs secrets, pii) anywhere in the EV
    "secret_observation": ("observation", lambda ev: ev.update(observation=f"with {SHAPED['github_token']}")),
    "secret_hypothesis": ("cause_hypothesis", lambda ev: ev.update(cause_hypothesis=SHAPED["password"])),
    "pii_escalation": ("escalation", _add_escalation("note", f"mail {SHAPED['email']}")),
    "doc_domain_email": ("observation", lambda ev: ev.update(observation="mail alice.smith@example.org")),
    "secret_run_id": ("run_id", lambda ev: ev.update(run_id=SHAPED["github_token"])),
    "secret_key": ("cost_metrics", lambda ev: ev.update(cost_metrics={SHAPED["github_token"]: 1})),
    "fullwidth_url": ("observation", lambda ev: ev.update(observation="\uff47\uff49\uff54\uff48\uff55\uff42"
                                                                          "\uff0e\uff43\uff4f\uff4d/alice")),
    # forged completeness: replan_count and cost_metrics are always "unavailable" (no source, no flag), routing
    # needs its injection record, time runs forward, refs stay inside
    "replan_count_forged": ("replan_count", lambda ev: ev.update(replan_count=0)),
    "cost_metrics_forged": ("cost_metrics", lambda ev: ev.update(cost_metrics={})),
    "replan_count_injected": ("replan_count", lambda ev: (ev.update(replan_count=0),
                                                          _add_escalation("injected_value", "replan_count")(ev))),
    "cost_metrics_injected": ("cost_metrics", lambda ev: (ev.update(cost_metrics={"usd": 0}),
                                                          _add_escalation("injected_value", "cost_metrics")(ev))),
    "injection_record_alone": ("escalation", _add_escalation("injected_value", "replan_count")),
    "routing_forged": ("routing_decisions", _drop_injection_record("routing_decisions")),
    "injection_of_unavailable": ("escalation", lambda ev: ev.update(routing_decisions="unavailable")),
    "injection_of_other_field": ("escalation", _add_escalation("injected_value", "repair_rounds")),
    "started_after_completed": ("started_at", lambda ev: ev.update(started_at="2100-01-02T00:00:00Z")),
    "dotdot_ref": ("evidence_refs", lambda ev: ev["evidence_refs"].append("docs/../../etc/passwd")),
    "url_ref": ("evidence_refs", lambda ev: ev["evidence_refs"].append("https:x")),
    "intervention_invented": ("human_interventions", lambda ev: ev["human_interventions"].append(
        {"kind": "delivery_state", "detail": "HUMAN_ESCALATED"})),
    "intervention_unavailable": ("human_interventions", lambda ev: ev.update(human_interventions="unavailable")),
    "escalation_unsorted": ("escalation", lambda ev: ev["escalation"].append({"kind": "a_note", "detail": "x"})),
}


@pytest.mark.parametrize("name", sorted(TAMPERS))
def test_every_tamper_class_is_rejected_naming_the_field(name: str, fullest_ev: dict[str, Any],
                                                         merge_task: Path) -> None:
    field, tamper = TAMPERS[name]
    record = copy.deepcopy(fullest_ev)
    tamper(record)
    assert field in _rejected(record, merge_task)


@pytest.mark.parametrize("name", ["plan_hash", "owner", "ci_conclusion", "terminal_escalated", "account_key"])
def test_tampers_through_the_cli_exit_1_with_the_reason_on_stderr(name: str, fullest_ev: dict[str, Any],
                                                                  merge_task: Path, tmp_path: Path) -> None:
    field, tamper = TAMPERS[name]
    record = copy.deepcopy(fullest_ev)
    tamper(record)
    code, stderr = _cli(record, merge_task, tmp_path)
    assert code == 1 and field in stderr and all(line.startswith("run-evidence: ") for line in stderr.splitlines())


def test_a_zeroed_entry_id_in_the_record_is_rejected(fullest_ev: dict[str, Any], merge_task: Path) -> None:
    path = merge_task / "delivery" / "record.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    entry = json.loads(lines[0])
    entry["entry_id"] = "sha256:" + "0" * 64
    path.write_text("\n".join([json.dumps(entry), *lines[1:]]) + "\n", encoding="utf-8")
    assert "entry_id" in _rejected(fullest_ev, merge_task)


def test_a_forged_merge_ready_on_an_escalated_run_is_rejected(tmp_path: Path) -> None:
    task = write_task(tmp_path, "TASK-0002", entries=[state("HUMAN_ESCALATED", ["stuck"])])
    record = json.loads(produce(task, **produce_kwargs()))
    assert "terminal_state" in _rejected({**record, "terminal_state": "MERGE_READY"}, task)


def test_with_no_record_any_real_delivery_value_is_rejected(tmp_path: Path) -> None:
    task = write_task(tmp_path, "TASK-0004", decision="BLOCKED", entries=None)
    record = json.loads(produce(task, **produce_kwargs()))
    for key, dummy in (("final_head_sha", "0" * 40), ("repair_rounds", 0), ("ci_outcomes", []),
                       ("review_findings", [])):
        assert key in _rejected({**record, key: dummy}, task)
    assert "terminal_state" in _rejected({**record, "terminal_state": "MERGE_READY"}, task)


def test_blocked_terminal_state_on_an_auto_approved_task_is_rejected(fullest_ev: dict[str, Any],
                                                                    merge_task: Path) -> None:
    assert "terminal_state" in _rejected({**fullest_ev, "terminal_state": "BLOCKED"}, merge_task)


def test_a_changed_artifact_breaks_the_decision_ref(fullest_ev: dict[str, Any], merge_task: Path) -> None:
    (merge_task / "todo.md").write_text("# TODO\n- [x] T-1\n", encoding="utf-8")
    assert "c3_prime_decision_ref" in _rejected(fullest_ev, merge_task)


@pytest.mark.parametrize("key", sorted(shipped_schema()["required"]))
def test_removing_any_required_key_is_rejected_naming_it(key: str, fullest_ev: dict[str, Any],
                                                        merge_task: Path) -> None:
    record = {k: v for k, v in fullest_ev.items() if k != key}
    assert f"必須キー欠落: {key}" in _rejected(record, merge_task)


def test_a_string_note_is_neutral(fullest_ev: dict[str, Any], merge_task: Path) -> None:
    assert_fullest({**fullest_ev, "_note": "reviewed by the release captain"}, merge_task)


def test_a_secret_in_an_ev_exits_1_through_the_cli_naming_the_field_path(fullest_ev: dict[str, Any],
                                                                          merge_task: Path, tmp_path: Path) -> None:
    record = copy.deepcopy(fullest_ev)
    record["routing_decisions"] = [{"step": 1, "note": f"key {SHAPED['github_token']}"}]
    code, stderr = _cli(record, merge_task, tmp_path)
    assert code == 1 and "routing_decisions[0].note" in stderr and "github-classic-token" in stderr
    assert SHAPED["github_token"] not in stderr


def test_reasons_that_quote_a_value_never_repeat_a_secret(fullest_ev: dict[str, Any], merge_task: Path,
                                                         tmp_path: Path) -> None:
    record = copy.deepcopy(fullest_ev)
    record["cost_metrics"] = {"note": SHAPED["github_token"]}
    _drop_injection_record("cost_metrics")(record)
    code, stderr = _cli(record, merge_task, tmp_path)
    assert code == 1 and "cost_metrics: EV=" in stderr and "[REDACTED:github-classic-token#1]" in stderr
    assert SHAPED["github_token"] not in stderr


def test_a_forged_complete_ev_is_rejected_naming_every_field(tmp_path: Path) -> None:
    # the review's reproducer: partial producer output dressed up as complete
    task = write_task(tmp_path, "TASK-0006", entries=[
        notice("https://github.com/o/r/pull/940#issuecomment-5140067809"), state("HUMAN_ESCALATED", ["stuck"]),
    ])
    record = json.loads(produce(task, **produce_kwargs(harness_version_end=dict(HARNESS))))
    with pytest.raises(EvidencePartialError):
        verify(record, task)
    record.update(replan_count=0, cost_metrics={"usd": 0}, routing_decisions=[], human_interventions=[],
                  escalation=[], started_at="2101-01-01T00:00:00Z")
    reasons = _rejected(record, task)
    for field in ("replan_count", "cost_metrics", "routing_decisions", "human_interventions", "escalation",
                  "started_at", "unknown_record_kind"):
        assert field in reasons, field


def test_dropping_a_derived_escalation_is_rejected(tmp_path: Path) -> None:
    task = write_task(tmp_path, "TASK-0006", entries=[
        notice("https://github.com/o/r/pull/940#issuecomment-1", login="x"), state("HUMAN_ESCALATED", ["stuck"]),
    ])
    record = json.loads(produce(task, **produce_kwargs()))
    assert {e["kind"] for e in record["escalation"]} >= {"unknown_record_kind", "privacy_url_reduced",
                                                          "privacy_account_key"}
    for item in record["escalation"]:
        if item["kind"] == "harness_drift_unchecked":
            continue  # injected-dependent: the verifier cannot derive it, it only makes the EV partial
        reduced = {**record, "escalation": [e for e in record["escalation"] if e != item]}
        assert "escalation" in _rejected(reduced, task), item


def test_arbiter_interventions_are_re_derived_from_the_runs_folder(tmp_path: Path) -> None:
    task, runs, record = arbiter_task(tmp_path)
    arbiter_item = {"kind": "arbiter_decision", "detail": "HUMAN_ESCALATED"}
    assert record["human_interventions"][-1] == arbiter_item
    with pytest.raises(EvidencePartialError) as caught:
        verify(record, task, runs_dir=runs)
    assert "unverified:arbiter_records" not in caught.value.reasons
    dropped = {**record, "human_interventions": record["human_interventions"][:-1]}
    assert "human_interventions" in "\n".join(_rejected_with(dropped, task, runs))
    doubled = {**record, "human_interventions": [*record["human_interventions"], arbiter_item]}
    assert "human_interventions" in "\n".join(_rejected_with(doubled, task, runs))


def test_without_the_runs_folder_arbiter_interventions_cannot_be_confirmed(tmp_path: Path) -> None:
    task, _, record = arbiter_task(tmp_path)
    with pytest.raises(EvidencePartialError) as caught:
        verify(record, task)
    assert "unverified:arbiter_records" in caught.value.reasons
    # they may only follow the derived items, and only in the producer's shape
    moved = {**record, "human_interventions": record["human_interventions"][::-1]}
    assert "human_interventions" in _rejected(moved, task)


def _rejected_with(record: dict[str, Any], task: Path, runs: Path) -> tuple[str, ...]:
    with pytest.raises(EvidenceError) as caught:
        verify(record, task, runs_dir=runs)
    assert type(caught.value) is EvidenceError, caught.value
    return caught.value.reasons


# --- legacy, schema, usage ---

ARBITER_9 = {"boundary_check": "clean", "class_check": "no-merge", "decision": "AUTO_APPROVED",
             "issued_by": "arbiter-v0.1", "lite_check": True, "policy_ref": "p@v4", "target_sha": "abc1234",
             "timestamp": "2099-12-31T00:00:00Z", "w_check": {"model_a": "approve"}}
ARBITER_14 = {**ARBITER_9, "gates": {"c1": "PASS"}, "ho_paths_source": "/abs/ho-paths.md", "ho_pattern_count": 3,
              "run": {"round_index": 0, "run_id": "r", "task_id": "TASK-0001"}, "scope_check": "in_scope"}


@pytest.mark.parametrize("record", [ARBITER_9, ARBITER_14])
def test_an_arbiter_record_is_legacy_exit_10(record: dict[str, Any], merge_task: Path, tmp_path: Path) -> None:
    assert _cli(record, merge_task, tmp_path)[0] == 10
    with pytest.raises(EvidenceLegacyError):
        verify(record, merge_task)


def test_a_missing_schema_cannot_run_exit_2(fullest_ev: dict[str, Any], merge_task: Path, tmp_path: Path) -> None:
    code, stderr = _cli(fullest_ev, merge_task, tmp_path, "--schema", str(tmp_path / "absent.schema.json"))
    assert code == 2 and "検査を実行していない" in stderr
    (tmp_path / "broken.json").write_text("{", encoding="utf-8")
    assert _cli(fullest_ev, merge_task, tmp_path, "--schema", str(tmp_path / "broken.json"))[0] == 2


def test_a_schema_keyword_the_validator_does_not_enforce_cannot_run(fullest_ev: dict[str, Any], merge_task: Path,
                                                                    tmp_path: Path) -> None:
    schema = shipped_schema()
    schema["properties"]["repair_rounds"]["anyOf"][0]["multipleOf"] = 2
    path = _write(schema, tmp_path, "custom.schema.json")
    with pytest.raises(SchemaError, match="multipleOf"):
        verify(fullest_ev, merge_task, schema_path=path)


def test_key_sets_are_read_from_the_schema(fullest_ev: dict[str, Any], merge_task: Path, tmp_path: Path) -> None:
    schema = shipped_schema()
    schema["properties"]["reviewer_notes"] = {"type": "string"}
    schema["required"].append("reviewer_notes")
    path = _write(schema, tmp_path, "more.schema.json")
    with pytest.raises(EvidenceError, match="必須キー欠落: reviewer_notes"):
        verify(fullest_ev, merge_task, schema_path=path)
    assert_fullest({**fullest_ev, "reviewer_notes": "ok"}, merge_task, schema_path=path)
    del schema["properties"]["cost_metrics"]
    schema["required"].remove("cost_metrics")
    path = _write(schema, tmp_path, "fewer.schema.json")
    with pytest.raises(EvidenceError, match="cost_metrics"):
        verify({**fullest_ev, "reviewer_notes": "ok"}, merge_task, schema_path=path)


def test_the_verifier_holds_no_literal_key_list() -> None:
    # the key sets come from the schema: no list/tuple/set literal in the verifier names 5 or more required keys
    import ast

    required = set(shipped_schema()["required"])
    for path in (Path(verify_module.__file__), Path(verify_module.__file__).with_name("_schema.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.List | ast.Tuple | ast.Set):
                names = {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
                assert len(names & required) < 5, (path.name, sorted(names))


def test_the_verifier_reuses_the_producers_functions() -> None:
    from verigate.evidence import _c3, _delivery, _folder, _privacy, _producer

    # the task-folder derivations live in _folder (remembered per folder content), the EV checks in _verify
    assert _folder.derive_delivery_fields is _delivery.derive_delivery_fields
    assert _folder.derive_terminal_state is _delivery.derive_terminal_state
    assert _folder.derive_human_interventions is _producer.derive_human_interventions
    assert _folder.derive_source_escalations is _producer.derive_source_escalations
    assert verify_module.derive_quality_metrics is _delivery.derive_quality_metrics
    assert verify_module.check_output_privacy is _privacy.check_output_privacy
    assert _folder.check_c3 is _c3.check_c3


@pytest.mark.parametrize("argv", [[], ["only-one"], ["a", "b", "c"]])
def test_usage_errors_are_rejections_not_cannot_run(argv: list[str]) -> None:
    assert run_cli("evidence", "verify", *argv).returncode == 1


def test_an_unreadable_ev_is_rejected(merge_task: Path, tmp_path: Path) -> None:
    assert run_cli("evidence", "verify", str(tmp_path / "none.json"), str(merge_task)).returncode == 1
    (tmp_path / "nan.json").write_text('{"run_id": NaN}', encoding="utf-8")
    assert run_cli("evidence", "verify", str(tmp_path / "nan.json"), str(merge_task)).returncode == 1
    assert _cli([1, 2], merge_task, tmp_path)[0] == 1


def test_a_folder_changed_after_a_verification_is_seen_at_once(fullest_ev: dict[str, Any],
                                                               merge_task: Path) -> None:
    # the verifier remembers derivations per folder content: every file is read again, every change is a new key
    assert_fullest(fullest_ev, merge_task)
    todo = merge_task / "todo.md"
    original = todo.read_bytes()
    todo.write_text("# TODO\n- [x] T-1\n", encoding="utf-8")
    assert "c3_prime_decision_ref" in _rejected(fullest_ev, merge_task)
    todo.write_bytes(original)
    assert_fullest(fullest_ev, merge_task)
    record = merge_task / "delivery" / "record.jsonl"
    lines = record.read_text(encoding="utf-8").splitlines()
    entry = json.loads(lines[0])
    entry["entry_id"] = "sha256:" + "0" * 64
    record.write_text("\n".join([json.dumps(entry), *lines[1:]]) + "\n", encoding="utf-8")
    assert "entry_id" in _rejected(fullest_ev, merge_task)
    record.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert_fullest(fullest_ev, merge_task)
    record.unlink()
    assert "final_head_sha" in _rejected(fullest_ev, merge_task)


def test_a_remembered_folder_gives_the_same_verdicts_again(fullest_ev: dict[str, Any], merge_task: Path) -> None:
    tampered = {**fullest_ev, "terminal_state": "BLOCKED", "repair_rounds": 7, "escalation": []}
    first = _rejected(tampered, merge_task)
    assert _rejected(copy.deepcopy(tampered), merge_task) == first
    assert_fullest(fullest_ev, merge_task)  # the rejections above changed nothing the folder's memo holds
    assert _rejected(tampered, merge_task) == first
