"""The producer: goldens, field mapping, terminal states, unavailable matrix, injected values, privacy, purity."""

from __future__ import annotations

import ast
import filecmp
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import golden_cases
import pytest
from evidence_helpers import (
    HARNESS,
    HEAD,
    PR,
    merge_ready,
    notice,
    produce_args,
    produce_kwargs,
    receipt,
    run_cli,
    secret_shaped,
    state,
    write_task,
)

import verigate.evidence
from verigate._errors import EvidenceError, EvidencePartialError
from verigate.evidence import completed_rounds, load_entries, produce, secret_scanner, verify

EVIDENCE_SRC = Path(verigate.evidence.__file__).parent
PURE_MODULES = ("_producer", "_canonical", "_c3", "_delivery", "_privacy", "_arbiter", "_adapters")


def _produce(task_dir: Path, **overrides: Any) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(produce(task_dir, **produce_kwargs(**overrides)))
    return result


def _refusal(task_dir: Path, **overrides: Any) -> str:
    with pytest.raises(EvidenceError) as caught:
        produce(task_dir, **produce_kwargs(**overrides))
    assert type(caught.value) is EvidenceError and caught.value.exit_code == 1
    return "\n".join(caught.value.reasons)


# --- goldens -------------------------------------------------------------------------------------------------------

def _tree(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def test_goldens_are_byte_identical_after_regeneration(tmp_path: Path) -> None:
    golden_cases.build_all(tmp_path)
    assert _tree(tmp_path) == _tree(golden_cases.GOLDEN)
    files = _tree(tmp_path)
    _, mismatch, errors = filecmp.cmpfiles(tmp_path, golden_cases.GOLDEN, files, shallow=False)
    assert (mismatch, errors) == ([], [])


@pytest.mark.parametrize("case", sorted(golden_cases.CASES))
def test_committed_golden_task_folders_reproduce_their_evidence(case: str, tmp_path: Path) -> None:
    # the committed folders are what a PlanGate user has on disk: produce from a copy, through the CLI
    import shutil

    shutil.copytree(golden_cases.GOLDEN / case, tmp_path / case)
    kwargs = golden_cases.CASES[case](tmp_path / "scratch")
    task_dir = tmp_path / case / kwargs["task_dir"].name
    args = produce_args(task_dir, pr_number=kwargs.get("pr_number"), cause_hypothesis=kwargs.get("cause_hypothesis"),
                        harness_version_end=kwargs.get("harness_version_end"))
    args += [a for ref in kwargs.get("evidence_refs", []) for a in ("--evidence-ref", ref)]
    if "runs_dir" in kwargs:
        args += ["--runs-dir", str(tmp_path / case / "ai-loop-runs")]
    result = run_cli(*args)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (golden_cases.GOLDEN / case / "expected.json").read_text(encoding="utf-8")


def test_golden_terminal_states_and_unavailable_counts() -> None:
    expected = {"merge_ready": ("MERGE_READY", 3), "human_escalated_state": ("HUMAN_ESCALATED", 7),
                "human_escalated_c3": ("HUMAN_ESCALATED", 8), "blocked": ("BLOCKED", 8),
                "notice": ("HUMAN_ESCALATED", 7), "privacy": ("MERGE_READY", 3)}
    for case, (terminal, count) in expected.items():
        record = json.loads((golden_cases.GOLDEN / case / "expected.json").read_text(encoding="utf-8"))
        assert record["terminal_state"] == terminal, case
        assert sum(value == "unavailable" for value in record.values()) == count, case


def test_output_is_sorted_indented_utf8_with_a_trailing_newline(merge_task: Path) -> None:
    text = produce(merge_task, **produce_kwargs(observation="レビュー完了"))
    assert text == json.dumps(json.loads(text), ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    assert "レビュー完了" in text and produce(merge_task, **produce_kwargs(observation="レビュー完了")) == text


def test_input_key_order_does_not_change_the_output(merge_task: Path) -> None:
    before = produce(merge_task, **produce_kwargs())
    c3_path = merge_task / "approvals" / "c3.json"
    c3 = json.loads(c3_path.read_text(encoding="utf-8"))
    c3_path.write_text(json.dumps(dict(reversed(list(c3.items())))), encoding="utf-8")
    record = merge_task / "delivery" / "record.jsonl"
    lines = [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]
    record.write_text("".join(json.dumps(dict(reversed(list(e.items())))) + "\n" for e in lines), encoding="utf-8")
    assert produce(merge_task, **produce_kwargs()) == before


# --- field mapping ---------------------------------------------------------------------------------------------------

def test_c3_fields_are_carried_and_the_ref_is_repo_relative(merge_task: Path) -> None:
    record = _produce(merge_task)
    c3 = json.loads((merge_task / "approvals" / "c3.json").read_text(encoding="utf-8"))
    assert (record["plan_hash"], record["source_sha"]) == (c3["plan_hash"], c3["source_sha"])
    assert record["c3_prime_decision_ref"] == {"path": "TASK-0001/approvals/c3.json",
                                               "plan_package_hash": c3["plan_package_hash"]}
    assert record["evidence_refs"] == ["TASK-0001/approvals/c3.json", "TASK-0001/delivery/record.jsonl"]


def test_paths_are_relative_to_the_enclosing_repository(tmp_path: Path) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    task = write_task(tmp_path / "repo" / "docs" / "working", "TASK-0874", entries=[merge_ready({}, {})])
    assert _produce(task)["c3_prime_decision_ref"]["path"] == "docs/working/TASK-0874/approvals/c3.json"


def test_delivery_fields_come_from_the_last_merge_ready_entry(merge_task: Path) -> None:
    record = _produce(merge_task)
    assert record["final_head_sha"] == HEAD
    assert record["ci_outcomes"] == [{"name": "CI", "conclusion": "success"}, {"name": "lint", "conclusion": "success"}]
    assert record["review_findings"] == [{"id": "F-1", "disposition": "resolved"},
                                         {"id": "F-2", "disposition": "repaired"}]
    entries = load_entries((merge_task / "delivery" / "record.jsonl").read_text(encoding="utf-8"), "r")
    assert record["repair_rounds"] == completed_rounds(entries, PR) == 1
    assert record["quality_metrics"] == {"first_pass": False, "rounds": 2}


def test_unresolvable_pr_number_is_unavailable_never_zero(tmp_path: Path) -> None:
    task = write_task(tmp_path, "TASK-0001", entries=[receipt("repair_ci", 1, pr=None),
                                                       state("HUMAN_ESCALATED", ["stuck"])])
    for overrides in ({}, {"pr_number": "940"}):
        record = _produce(task, **overrides)
        for key in ("repair_rounds", "ci_outcomes", "review_findings", "quality_metrics"):
            assert record[key] == "unavailable", (key, overrides)
        assert record["final_head_sha"] == HEAD


def test_pr_number_is_a_cross_check_only(merge_task: Path) -> None:
    assert _produce(merge_task, pr_number="940")["repair_rounds"] == 1
    assert "--pr-number 1 differs" in _refusal(merge_task, pr_number="1")
    assert "--pr-number" in _refusal(merge_task, pr_number="94O")


def test_routing_is_unavailable_unless_injected_and_an_explicit_empty_stays_empty(merge_task: Path) -> None:
    assert _produce(merge_task)["routing_decisions"] == "unavailable"
    assert _produce(merge_task, routing_decisions="[]")["routing_decisions"] == []
    assert "--routing-decisions" in _refusal(merge_task, routing_decisions='{"a": 1}')


def test_cause_hypothesis_is_stored_only_when_injected(merge_task: Path) -> None:
    record = _produce(merge_task)
    assert record["cause_hypothesis"] is None and record["observation"].startswith("terminal_state=MERGE_READY")
    assert _produce(merge_task, cause_hypothesis="flaky lint")["cause_hypothesis"] == "flaky lint"


def test_unrelated_arbiter_records_do_not_change_a_byte(merge_task: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    before = produce(merge_task, **produce_kwargs(runs_dir=runs))
    (runs / "other.json").write_text(json.dumps({"decision": "HUMAN_ESCALATED", "run": {"run_id": "other"},
                                                 "login": "x"}), encoding="utf-8")
    (runs / "broken.json").write_text("{", encoding="utf-8")
    assert produce(merge_task, **produce_kwargs(runs_dir=runs)) == before
    (runs / "mine.json").write_text(json.dumps({"decision": "HUMAN_ESCALATED", "login": "x",
                                                "run": {"run_id": produce_kwargs()["run_id"]}}), encoding="utf-8")
    record = _produce(merge_task, runs_dir=runs)
    assert {"kind": "arbiter_decision", "detail": "HUMAN_ESCALATED"} in record["human_interventions"]
    assert {"kind": "privacy_account_key", "detail": "arbiter-record: login"} in record["escalation"]


# --- terminal state mapping ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["WAITING_FOR_CHECKS", "WAITING_FOR_REVIEW", "CHECKS_FAILED", "CONFLICT",
                                  "REVIEW_REPAIR", "MERGE_READY_CANDIDATE", "EXEC_RETURN"])
def test_non_terminal_runs_get_no_evidence(name: str, tmp_path: Path) -> None:
    task = write_task(tmp_path, "TASK-0005", entries=[state(name)])
    result = run_cli(*produce_args(task, out=str(tmp_path / "ev.json")))
    assert result.returncode == 1 and f"last state={name}" in result.stderr
    assert "kind=merge_ready entry なし" in result.stderr and not (tmp_path / "ev.json").exists()


def test_merge_ready_needs_a_physical_merge_ready_entry(tmp_path: Path) -> None:
    task = write_task(tmp_path, "TASK-0001", entries=[state("MERGE_READY")])
    assert "non-terminal run" in _refusal(task)
    assert "non-terminal run" in _refusal(write_task(tmp_path / "b", "TASK-0001", entries=None))


def test_decision_is_data_for_the_terminal_state(tmp_path: Path) -> None:
    task = write_task(tmp_path, "TASK-0001", decision="HUMAN_ESCALATED", entries=[state("WAITING_FOR_CHECKS")])
    record = _produce(task)
    assert record["terminal_state"] == "HUMAN_ESCALATED"
    assert record["human_interventions"] == [{"kind": "c3_prime_decision", "detail": "HUMAN_ESCALATED"}]


def test_blocked_has_eight_unavailable_fields_never_zero(tmp_path: Path) -> None:
    record = _produce(write_task(tmp_path, "TASK-0004", decision="BLOCKED", entries=None))
    unavailable = sorted(k for k, v in record.items() if v == "unavailable")
    assert unavailable == ["ci_outcomes", "cost_metrics", "final_head_sha", "quality_metrics", "repair_rounds",
                           "replan_count", "review_findings", "routing_decisions"]


# --- injected values and harness -------------------------------------------------------------------------------------

@pytest.mark.parametrize("flag", ["now", "started_at", "repository", "run_id", "harness_version"])
def test_missing_injected_values_fail_closed_naming_the_flag(flag: str, merge_task: Path) -> None:
    result = run_cli(*produce_args(merge_task, **{flag: None}))
    assert result.returncode == 1 and f"--{flag.replace('_', '-')}" in result.stderr and result.stdout == ""


def test_every_reason_is_reported_together(merge_task: Path) -> None:
    reasons = _refusal(merge_task, now="yesterday", repository="s977043/plangate", run_id="", harness_version="{")
    for flag in ("--now", "--repository", "--run-id", "--harness-version"):
        assert flag in reasons


@pytest.mark.parametrize("key", ["plugin_version", "cli_version", "corpus_hash"])
def test_harness_drift_is_fail_closed(key: str, merge_task: Path) -> None:
    end = {**HARNESS, key: "sha256:" + "f" * 64 if key == "corpus_hash" else "9.9.9"}
    reasons = _refusal(merge_task, harness_version_end=json.dumps(end))
    assert "harness_version drift" in reasons and repr(HARNESS[key]) in reasons and repr(end[key]) in reasons


def test_unchecked_drift_is_recorded_and_a_checked_one_is_not(merge_task: Path) -> None:
    unchecked = {"kind": "harness_drift_unchecked",
                 "detail": "--harness-version-end 未注入のため AC-12 の drift 検査を実行していない"}
    assert unchecked in _produce(merge_task)["escalation"]
    record = _produce(merge_task, harness_version_end=dict(HARNESS))
    assert record["escalation"] == [] and record["harness_version"] == HARNESS


@pytest.mark.parametrize("bad", [{"plugin_version": "1"}, {**HARNESS, "extra": "x"}, {**HARNESS, "corpus_hash": "x"},
                                 {**HARNESS, "cli_version": ""}, [1]])
def test_harness_version_shape_is_fail_closed(bad: Any, merge_task: Path) -> None:
    assert "--harness-version" in _refusal(merge_task, harness_version=json.dumps(bad))


def test_out_must_end_in_json(merge_task: Path, tmp_path: Path) -> None:
    refused = run_cli(*produce_args(merge_task, out=str(tmp_path / "ev.jsonl")))
    assert refused.returncode == 1 and ".json" in refused.stderr and not (tmp_path / "ev.jsonl").exists()
    written = run_cli(*produce_args(merge_task, out=str(tmp_path / "out" / "ev.json")))
    assert written.returncode == 0 and written.stdout == ""
    assert (tmp_path / "out" / "ev.json").read_text(encoding="utf-8") == produce(merge_task, **produce_kwargs())


def test_from_git_takes_the_owner_stripped_name_through_dulwich(merge_task: Path, tmp_path: Path) -> None:
    from dulwich.repo import Repo

    repo_dir = tmp_path / "clone"
    repo_dir.mkdir()
    with Repo.init(str(repo_dir)) as repo:
        config = repo.get_config()
        config.set((b"remote", b"origin"), b"url", b"git@github.com:s977043/plangate.git")
        config.write_to_path()
    result = run_cli(*produce_args(merge_task, repository=None), "--from-git", str(repo_dir))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["repository"] == "plangate" and "s977043" not in result.stdout
    both = run_cli(*produce_args(merge_task), "--from-git", str(repo_dir))
    assert both.returncode == 1
    (tmp_path / "plain").mkdir()
    assert run_cli(*produce_args(merge_task, repository=None), "--from-git", str(tmp_path / "plain")).returncode == 2


# --- records ---------------------------------------------------------------------------------------------------------

def test_unknown_record_kinds_are_escalated_never_dropped(tmp_path: Path) -> None:
    task = write_task(tmp_path, "TASK-0006", entries=[notice("https://github.com/o/r/pull/940#issuecomment-5"),
                                                       {"kind": "banana"}, {"no_kind": 1}, state("HUMAN_ESCALATED")])
    record = _produce(task)
    kinds = [e for e in record["escalation"] if e["kind"] == "unknown_record_kind"]
    assert kinds == [{"kind": "unknown_record_kind", "detail": d} for d in ("None", "banana", "notice")]
    assert record["human_interventions"][0] == {"kind": "record_notice", "detail": "pr:940#comment:5"}
    assert "unknown_record_kinds=None,banana,notice" in record["observation"]


def test_tampered_entry_id_fails_closed(merge_task: Path) -> None:
    path = merge_task / "delivery" / "record.jsonl"
    path.write_text(path.read_text(encoding="utf-8").replace('"round": 1', '"round": 0', 1), encoding="utf-8")
    assert "entry_id mismatch" in _refusal(merge_task)


def test_legacy_c3_json_emits_no_evidence(merge_task: Path) -> None:
    (merge_task / "approvals" / "c3.json").write_text(json.dumps(
        {"task_id": "TASK-0001", "phase": "C-3", "c3_status": "APPROVED", "approved_by": "x",
         "approved_at": "2099-01-01T00:00:00Z", "plan_hash": "sha256:" + "0" * 64}), encoding="utf-8")
    result = run_cli(*produce_args(merge_task))
    assert result.returncode == 1 and "legacy" in result.stderr


@pytest.mark.parametrize("kind", [None, "", [], 123, "c3-double-prime"])
def test_other_approval_kinds_are_refused(kind: Any, merge_task: Path) -> None:
    path = merge_task / "approvals" / "c3.json"
    path.write_text(json.dumps({**json.loads(path.read_text(encoding="utf-8")), "approval_kind": kind}), "utf-8")
    assert "approval_kind" in _refusal(merge_task)


# --- c3 re-verification for every decision (seed §6-5) ---------------------------------------------------------------

def _tamper_c3(task_dir: Path, **changes: Any) -> None:
    path = task_dir / "approvals" / "c3.json"
    path.write_text(json.dumps({**json.loads(path.read_text(encoding="utf-8")), **changes}), encoding="utf-8")


def _blocked_tamper_is_refused(produce_module: Any, root: Path) -> bool:
    """The §6-5 case: BLOCKED with a one-character plan_hash change must not yield an EV."""
    task = write_task(root, "TASK-0004", decision="BLOCKED", entries=None)
    plan_hash = json.loads((task / "approvals" / "c3.json").read_text(encoding="utf-8"))["plan_hash"]
    _tamper_c3(task, plan_hash=plan_hash[:-1] + ("0" if plan_hash[-1] != "0" else "1"))
    try:
        produce_module.build_evidence(verigate.evidence.read_task_sources(task), verigate.evidence.Injected(
            **produce_kwargs()))
    except EvidenceError as exc:
        return any("plan_hash" in reason for reason in exc.reasons)
    return False


def test_bindings_are_reverified_when_the_decision_is_not_auto_approved(tmp_path: Path) -> None:
    assert _blocked_tamper_is_refused(sys.modules["verigate.evidence._producer"], tmp_path / "real")


def test_removing_the_binding_recheck_is_caught(tmp_path: Path) -> None:
    # mutation: reproduce PlanGate's hole (bindings checked for AUTO_APPROVED only) in a copy of the c3 module
    source = (EVIDENCE_SRC / "_c3.py").read_text(encoding="utf-8")
    hole = '    errors += binding_errors(record, artifacts) if record.get("decision") == "AUTO_APPROVED" else []\n'
    mutated = source.replace("    errors += binding_errors(record, artifacts)\n", hole)
    assert mutated != source
    mutant_c3 = _load_mutant("verigate.evidence._c3_mutant", mutated)
    producer_source = (EVIDENCE_SRC / "_producer.py").read_text(encoding="utf-8")
    mutant_producer = _load_mutant("verigate.evidence._producer_mutant",
                                   producer_source.replace("from ._c3 import", "from ._c3_mutant import"))
    assert mutant_c3 is not None
    assert not _blocked_tamper_is_refused(mutant_producer, tmp_path / "mutant")


def _load_mutant(name: str, source: str) -> Any:
    spec = importlib.util.spec_from_loader(name, loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "verigate.evidence"
    sys.modules[name] = module
    exec(compile(source, name, "exec"), module.__dict__)
    return module


@pytest.mark.parametrize("decision", ["BLOCKED", "HUMAN_ESCALATED", "AUTO_APPROVED"])
@pytest.mark.parametrize("field", ["plan_hash", "plan_package_hash", "source_sha"])
def test_c3_binding_tamper_is_refused_for_every_decision(decision: str, field: str, tmp_path: Path) -> None:
    task = write_task(tmp_path, "TASK-0004", decision=decision, entries=[merge_ready({}, {})])
    _tamper_c3(task, **{field: "sha256:" + "e" * 64 if field != "source_sha" else "XYZ"})
    assert field in _refusal(task)


def test_reviewer_snapshot_and_marker_rules(tmp_path: Path) -> None:
    task = write_task(tmp_path, "TASK-0001", entries=[merge_ready({}, {})], verdicts=("approve", "reject"))
    assert "non-approve reviewer verdict" in _refusal(task)
    task = write_task(tmp_path / "b", "TASK-0001", entries=[merge_ready({}, {})])
    c3 = json.loads((task / "approvals" / "c3.json").read_text(encoding="utf-8"))
    c3["reviewers"]["model_b"]["evidence_ref"] = c3["reviewers"]["model_a"]["evidence_ref"]
    _tamper_c3(task, reviewers=c3["reviewers"])
    assert "not independent" in _refusal(task)
    (task / "plan.md").write_text("edited\n", encoding="utf-8")
    reasons = _refusal(task)
    assert "stale" in reasons and "plan_hash" in reasons
    task = write_task(tmp_path / "c", "TASK-0002", entries=None)
    assert "task folder name" in _refusal(task.rename(tmp_path / "c" / "TASK-0003"))


# --- secrets and personal data (the shipped secrets/pii rule packs) --------------------------------------------------

def test_secrets_and_personal_data_in_every_free_text_input_are_reduced_and_logged(tmp_path: Path) -> None:
    shaped = secret_shaped(1)
    token, password, email = shaped["github_token"], shaped["password"], shaped["email"]
    task = write_task(tmp_path, "TASK-0001", entries=[
        notice(f"posted with {token}"),
        state("WAITING_FOR_CHECKS", [f"deploy key {token}"]),
        state("MERGE_READY"),
        merge_ready({"CI": "success"}, {"F-1": f"resolved by {email}"}),
    ])
    record = _produce(task, observation=f"deployed with {token}, contact {email}",
                      cause_hypothesis=f"{password} leaked", routing_decisions=json.dumps([{"note": token}]))
    text = json.dumps(record, ensure_ascii=False)
    for value in (token, password.split("=")[1], email):
        assert value not in text
    assert record["observation"] == ("deployed with [REDACTED:github-classic-token#1], "
                                     "contact [REDACTED:email-address#1]")
    assert record["cause_hypothesis"] == "password=[REDACTED:generic-secret-assignment#1] leaked"
    assert record["routing_decisions"] == [{"note": "[REDACTED:github-classic-token#1]"}]
    assert record["human_interventions"][0]["detail"] == "posted with [REDACTED:github-classic-token#1]"
    assert record["review_findings"][0]["disposition"].startswith("resolved by [REDACTED:email-address#1]")
    logged = {(item["kind"], item["detail"]) for item in record["escalation"]}
    assert {("privacy_secret_reduced", "github-classic-token"), ("privacy_secret_reduced", "generic-secret-assignment"),
            ("privacy_personal_data_reduced", "email-address")} <= logged
    # the producer's own output passes the verifier's check (partial in Phase 1, never rejected)
    with pytest.raises(EvidencePartialError):
        verify(record, task)


def test_a_documentation_domain_e_mail_is_still_an_account(merge_task: Path) -> None:
    # the pii pack lets example.org through; an EV keeps no account identifier at all (seed §7-3)
    record = _produce(merge_task, observation="contact alice.smith@example.org")
    assert record["observation"] == "contact account:redacted"
    assert {"kind": "privacy_account_email", "detail": "e-mail アドレスを含む入力値を還元した"} in record["escalation"]


def test_a_secret_in_an_identifier_is_refused_naming_the_field(merge_task: Path) -> None:
    token = secret_shaped(2)["github_token"]
    reasons = _refusal(merge_task, run_id=f"run-{token}")
    assert "run_id" in reasons and "github-classic-token" in reasons and token not in reasons


def test_a_refusal_that_quotes_a_value_never_repeats_a_secret(merge_task: Path) -> None:
    token = secret_shaped(5)["github_token"]
    reasons = _refusal(merge_task, repository=f"owner/{token}")
    assert "--repository" in reasons and "[REDACTED:github-classic-token#1]" in reasons and token not in reasons


def test_an_inline_allow_marker_does_not_let_a_secret_into_an_ev(merge_task: Path) -> None:
    token = secret_shaped(3)["github_token"]
    reasons = _refusal(merge_task, observation=f"{token} verigate: allow")
    assert "observation" in reasons and token not in reasons


def test_the_reduction_is_deterministic_and_the_scanner_is_the_shipped_packs(merge_task: Path) -> None:
    observation = "token " + secret_shaped(4)["github_token"]
    assert produce(merge_task, **produce_kwargs(observation=observation)) == \
        produce(merge_task, **produce_kwargs(observation=observation))
    rules = {rule for rule, _ in secret_scanner().categories.items()}
    assert {"github-classic-token", "email-address"} <= rules


def test_started_after_now_is_refused(merge_task: Path) -> None:
    assert "--started-at" in _refusal(merge_task, started_at="2100-01-02T00:00:00Z")


def test_an_injected_routing_decision_is_recorded_as_injected(merge_task: Path) -> None:
    assert {"kind": "injected_value", "detail": "routing_decisions"} in \
        _produce(merge_task, routing_decisions="[]")["escalation"]
    assert all(item["kind"] != "injected_value" for item in _produce(merge_task)["escalation"])


# --- purity ----------------------------------------------------------------------------------------------------------

BANNED_MODULES = {"os", "time", "datetime", "random", "uuid", "socket", "subprocess", "urllib", "http", "requests",
                  "importlib", "shutil", "pathlib", "secrets", "io", "tempfile", "glob", "sys", "dulwich"}
BANNED_NAMES = {"open", "environ", "getenv", "transcript", "session_log", "input", "__import__", "exec", "eval"}
BANNED_CALLS = {"now", "utcnow", "today", "time", "monotonic", "perf_counter", "read_text", "read_bytes", "urandom"}


@pytest.mark.parametrize("module", PURE_MODULES)
def test_the_pure_producer_modules_use_no_clock_randomness_environment_network_or_io(module: str) -> None:
    tree = ast.parse((EVIDENCE_SRC / f"{module}.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            assert not {a.name.split(".")[0] for a in node.names} & BANNED_MODULES, ast.dump(node)
        elif isinstance(node, ast.ImportFrom):
            assert node.level > 0 or (node.module or "").split(".")[0] not in BANNED_MODULES, ast.dump(node)
            assert node.module not in ("..", "_data") and not {a.name for a in node.names} & {"_data", "_sources"}
        elif isinstance(node, ast.Name | ast.Attribute):
            name = node.id if isinstance(node, ast.Name) else node.attr
            assert name not in BANNED_NAMES, f"{module}: {name}"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name):
            called = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
            assert called not in BANNED_CALLS, f"{module}: {called}()"


def test_the_scan_would_catch_a_clock() -> None:
    tree = ast.parse("import datetime\nstamp = datetime.datetime.now()\nkey = os.environ\n")
    calls = {n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
    names = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    imports = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert calls & BANNED_CALLS and names & BANNED_NAMES and imports & BANNED_MODULES


def test_the_producer_opens_only_the_allow_listed_sources(merge_task: Path, tmp_path: Path) -> None:
    # run in a child with an audit hook: every file opened must lie in the task folder or the runs folder
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "r.json").write_text("{}", encoding="utf-8")
    script = (
        "import sys, json\n"
        "import verigate.evidence as ev\n"
        "opened = []\n"
        "sys.addaudithook(lambda e, a: opened.append(str(a[0])) if e == 'open' and isinstance(a[0], str) else None)\n"
        f"ev.produce({str(merge_task)!r}, runs_dir={str(runs)!r}, **json.loads(sys.argv[1]))\n"
        "print(json.dumps(opened))\n"
    )
    import subprocess

    kwargs = json.dumps(produce_kwargs())
    result = subprocess.run([sys.executable, "-c", script, kwargs], capture_output=True, text=True, check=True)
    opened = [Path(p).resolve() for p in json.loads(result.stdout)]
    # besides the inputs: verigate's own shipped corpus (the secrets/pii rule packs, read through _data) and the
    # byte code of modules imported on first use; neither is run input
    from verigate._data import data_root
    from verigate.rules._cache import cache_folder

    shipped = Path(str(data_root())).resolve()
    packs_cache = Path(cache_folder()).resolve()  # the shipped packs, parsed once (verigate's own, not run input)
    # the import system probes the interpreter's own files (python311.zip) for a module imported on first use
    interpreter = Path(sys.base_prefix).resolve()
    inputs = [p for p in opened if not (p.is_relative_to(shipped) or p.is_relative_to(packs_cache)
                                        or p.is_relative_to(interpreter) or p.suffix in (".py", ".pyc", ".so"))]
    assert inputs and all(p.is_relative_to(merge_task.resolve()) or p.is_relative_to(runs.resolve()) for p in inputs)
    assert {p.name for p in opened if p.is_relative_to(shipped / "rules")} <= {"secrets.yaml", "pii.yaml"}


@pytest.mark.parametrize("case", sorted(golden_cases.CASES))
def test_goldens_verify_as_partial_and_carry_no_identifier(case: str) -> None:
    folder = golden_cases.GOLDEN / case
    text = (folder / "expected.json").read_text(encoding="utf-8")
    for needle in ("github.com", "s977043", "/Users/", "alice", "https://"):
        assert needle not in text, needle
    task_dir = next(folder.glob("TASK-*"))
    result = run_cli("evidence", "verify", str(folder / "expected.json"), str(task_dir))
    assert result.returncode == 11, result.stderr
