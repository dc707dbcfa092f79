"""Canonical hash vectors, the entry_id rule, round counting, and the privacy primitives."""

from __future__ import annotations

import hashlib
import json

import pytest
from evidence_helpers import PR, receipt, record_line, state

from verigate._errors import EvidenceError
from verigate.evidence import (
    canonical_hash,
    check_output_privacy,
    check_snapshot_trio,
    completed_rounds,
    entry_id,
    load_entries,
    redact,
    secret_scanner,
)


def test_canonical_hash_vectors() -> None:
    assert canonical_hash({"b": 2, "a": 1}) == "sha256:" + hashlib.sha256(b'{"a":1,"b":2}').hexdigest()
    assert canonical_hash({}) == "sha256:" + hashlib.sha256(b"{}").hexdigest()
    assert canonical_hash({"k": "é𝄞"}) == "sha256:" + hashlib.sha256(b'{"k":"\\u00e9\\ud834\\udd1e"}').hexdigest()


def test_reference_plan_package_hash() -> None:
    # plangate-formats §9: any dict of these six hashes, hashed canonically, is the plan_package_hash
    hashes = {"plan.md": "sha256:" + "1" * 64, "todo.md": "sha256:" + "2" * 64}
    text = json.dumps(hashes, sort_keys=True, separators=(",", ":"))
    assert canonical_hash(dict(reversed(list(hashes.items())))) == "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def test_entry_id_leaves_out_at_and_entry_id() -> None:
    entry = {"kind": "state", "state": "MERGE_READY", "head_sha": "abc1234", "pr_number": 1, "reasons": []}
    assert entry_id({**entry, "at": "2099-01-01T00:00:00Z", "entry_id": "x"}) == canonical_hash(entry)
    stored = json.loads(record_line(entry))
    assert stored["entry_id"] == canonical_hash(entry) and stored["at"]


def test_load_entries_recomputes_every_entry_id() -> None:
    good = record_line(state("MERGE_READY"))
    assert len(load_entries(good + "\n" + json.dumps({"kind": "notice"}) + "\n", "r")) == 2
    tampered = good.replace("MERGE_READY", "HUMAN_ESCALATED")
    with pytest.raises(EvidenceError, match=r"r:1: entry_id mismatch"):
        load_entries(tampered, "r")
    with pytest.raises(EvidenceError, match="r:2: line is not strict JSON"):
        load_entries(good + "{\n", "r")
    with pytest.raises(EvidenceError, match="must be a JSON object"):
        load_entries("[1]\n", "r")


def test_completed_rounds_counts_repair_receipts_of_the_pr_only() -> None:
    entries = [receipt("repair_ci", 1), receipt("repair_review", 2, "F-1"), receipt("record_disposition", 7),
               receipt("repair_ci", 5, pr=41), receipt("resolve_conflict", 9, pr=None),
               {**receipt("repair_ci", 3), "round": True}, {"kind": "intent", "action_kind": "repair_ci", "round": 8}]
    assert completed_rounds(entries, PR) == 2
    assert completed_rounds(entries, 41) == 5
    assert completed_rounds([], PR) == 0


def test_snapshot_trio_order_and_strictness() -> None:
    trio = {"plan_hash": "p", "source_sha": "s", "plan_package_hash": "k"}
    good = {**trio, "verdict": "approve", "evidence_ref": "r"}
    assert check_snapshot_trio(trio, {"model_a": good, "model_b": good}, strict=True) == []
    assert check_snapshot_trio(trio, {"model_a": {**good, "x": 1}, "model_b": good}, strict=False) == []
    reasons = check_snapshot_trio(trio, {"model_a": {**good, "x": 1}, "model_b": {**good, "source_sha": "t",
                                                                                   "plan_hash": "q"}}, strict=True)
    assert reasons[0].startswith("reviewers.model_a: keys")
    assert reasons[1:] == ["reviewers.model_b.plan_hash differs from the record's plan_hash",
                           "reviewers.model_b.source_sha differs from the record's source_sha"]
    assert check_snapshot_trio(trio, {"model_a": {**good, "verdict": ""}}, strict=True) == [
        "reviewers.model_a: empty values ['verdict']", "reviewers.model_b: snapshot missing"]


def test_redact_reduces_and_logs_each_class() -> None:
    text, logged = redact("see https://github.com/s977043/PlanGate/pull/940#issuecomment-5140067809 by @alice "
                          "in /Users/alice/x.txt", secret_scanner())
    assert text == "see pr:940#comment:5140067809 by account:redacted in path:redacted"
    assert [kind for kind, _ in logged] == ["privacy_url_reduced", "privacy_absolute_path", "privacy_account_handle"]
    assert redact("plain words, a/b, 2026/01/02, pr:940", secret_scanner()) == \
        ("plain words, a/b, 2026/01/02, pr:940", [])


@pytest.mark.parametrize(("value", "fragment"), [
    ({"stdout": "x"}, "forbidden key"), ({"a": [{"owner": "x"}]}, "account key"), ({"a": "/var/x"}, "絶対パス"),
    ({"a": "see /home/bob/notes"}, "絶対パス"), ({"a": "https://example.org"}, "URL"), ({"a": "github.com/o"}, "URL"),
    ({"a": "hi @bob"}, "account"),
])
def test_output_check_catches_every_class(value: object, fragment: str) -> None:
    reasons = check_output_privacy(value, secret_scanner())
    assert reasons and fragment in reasons[0]


def test_output_check_passes_clean_values() -> None:
    assert check_output_privacy({"a": ["pr:940#comment:1", "docs/working/TASK-0001/plan.md", "x@y"], "b": 1},
                                secret_scanner()) == []
