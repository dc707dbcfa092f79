"""Attacks on verify and produce through the EV and the task folder, as an independent attacker ran them: a forged
"complete" EV, malformed record lines, special and huge files, impossible times, a link planted at --out.

The CLI runs as a child (the exit code is the verdict), limited in memory and time so that a regression fails
here with exit 2 or a timeout instead of taking the machine's memory or hanging the suite."""

from __future__ import annotations

import contextlib
import copy
import datetime
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from evidence_helpers import (
    HARNESS,
    PHASE_ONE_PARTIAL,
    RUN_ID,
    assert_fullest,
    produce_args,
    produce_kwargs,
    shipped_schema,
    write_merge_task,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verigate._errors import EvidenceError, EvidencePartialError
from verigate.evidence import produce, verify, write_evidence
from verigate.evidence._canonical import ISO_UTC, is_utc_timestamp

POSIX = pytest.mark.skipif(sys.platform == "win32", reason="needs POSIX FIFOs, /dev/zero and rlimits")
_MEMORY = 1 << 30  # the child's address space: far above what a verification needs, far below /dev/zero's appetite


def _limited() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (_MEMORY, _MEMORY))


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m verigate …`` with 1 GiB of memory and 60 s: a read without a bound fails, never the machine."""
    return subprocess.run([sys.executable, "-m", "verigate", *args], capture_output=True, text=True, check=False,
                          timeout=60, preexec_fn=_limited if sys.platform != "win32" else None)


def _write(record: Any, path: Path) -> Path:
    path.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
    return path


def _fullest(task: Path) -> dict[str, Any]:
    record: dict[str, Any] = json.loads(produce(task, **produce_kwargs(routing_decisions="[]",
                                                                       harness_version_end=dict(HARNESS))))
    return record


def _add_escalations(record: dict[str, Any], *items: dict[str, str]) -> None:
    record["escalation"] = sorted([*record["escalation"], *items], key=lambda e: (e["kind"], e["detail"]))


# --- 1. exit 0 by editing the EV alone: replan_count and cost_metrics are always "unavailable" in Phase 1 ---------

def test_the_forged_complete_ev_exits_1_naming_each_field(tmp_path: Path) -> None:
    task = write_merge_task(tmp_path)
    record = _fullest(task)
    record.update(replan_count=0, cost_metrics={"usd": 0}, routing_decisions=[])
    _add_escalations(record, *({"kind": "injected_value", "detail": field}
                               for field in ("cost_metrics", "replan_count")))
    result = _cli("evidence", "verify", str(_write(record, tmp_path / "ev.json")), str(task))
    assert result.returncode == 1, result.stderr
    lines = result.stderr.splitlines()
    for prefix in ("run-evidence: replan_count: EV=0,", "run-evidence: cost_metrics: EV={'usd': 0},",
                   "run-evidence: escalation: injected_value 'cost_metrics':",
                   "run-evidence: escalation: injected_value 'replan_count':"):
        assert any(line.startswith(prefix) for line in lines), (prefix, lines)


@pytest.mark.parametrize("raw", ["0", "-0", "0.0", "-0.0", "1", "0e0"])
def test_every_json_spelling_of_a_replan_count_is_rejected(raw: str, tmp_path: Path) -> None:
    # 0.0 and -0.0 pass the schema's "integer"; -0 reads as 0: each is a value the producer never writes
    task = write_merge_task(tmp_path)
    record = _fullest(task)
    record["replan_count"] = "PLACEHOLDER"
    _add_escalations(record, {"kind": "injected_value", "detail": "replan_count"})
    ev = tmp_path / "ev.json"
    ev.write_text(json.dumps(record).replace('"PLACEHOLDER"', raw), encoding="utf-8")
    result = _cli("evidence", "verify", str(ev), str(task))
    assert result.returncode == 1, result.stderr
    assert "run-evidence: replan_count: EV=" in result.stderr


def test_the_only_injection_record_the_producer_writes_is_routing_decisions(tmp_path: Path) -> None:
    task = write_merge_task(tmp_path)
    record = _fullest(task)
    assert [e for e in record["escalation"] if e["kind"] == "injected_value"] == [
        {"kind": "injected_value", "detail": "routing_decisions"}]
    assert_fullest(record, task)
    for field in ("cost_metrics", "replan_count", "final_head_sha"):
        forged = copy.deepcopy(record)
        _add_escalations(forged, {"kind": "injected_value", "detail": field})
        with pytest.raises(EvidenceError) as caught:
            verify(forged, task)
        assert type(caught.value) is EvidenceError
        assert any(reason.startswith(f"escalation: injected_value {field!r}:") for reason in caught.value.reasons)


# --- 2. malformed record lines and receipts are rejections (exit 1), never a crash (exit 2) -----------------------

MALFORMED = {
    "kind is an array": ({"kind": []}, "kind must be a string, not an array"),
    "kind is an object": ({"kind": {"a": 1}}, "kind must be a string, not an object"),
    "kind is null": ({"kind": None}, "kind must be a string, not null"),
    "kind is a number": ({"kind": 7}, "kind must be a string, not a number"),
    "receipt action_kind is an array": ({"kind": "receipt", "pr_number": 940, "action_kind": ["repair_ci"],
                                         "round": 9}, "action_kind must be a string, not an array"),
    "intent action_kind is an object": ({"kind": "intent", "action_id": "a", "action_kind": {"x": 1},
                                         "payload": {}}, "action_kind must be a string, not an object"),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_a_malformed_record_line_is_rejected_by_verify_and_produce(name: str, tmp_path: Path) -> None:
    line, reason = MALFORMED[name]
    task = write_merge_task(tmp_path)
    ev = _write(_fullest(task), tmp_path / "ev.json")
    record = task / "delivery" / "record.jsonl"
    count = len(record.read_text(encoding="utf-8").splitlines())
    with record.open("a", encoding="utf-8") as handle:  # no entry_id: the format accepts such lines
        handle.write(json.dumps(line) + "\n")
    expected = f"delivery/record.jsonl:{count + 1}: {reason}"
    verified = _cli("evidence", "verify", str(ev), str(task))
    assert verified.returncode == 1 and expected in verified.stderr, verified.stderr
    produced = _cli(*produce_args(task))
    assert produced.returncode == 1 and expected in produced.stderr, produced.stderr


def test_a_notice_may_carry_any_action_kind(tmp_path: Path) -> None:
    # only the fields the derivations look up by name are held to strings: an unknown entry is escalated as before
    task = write_merge_task(tmp_path)
    with (task / "delivery" / "record.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"kind": "notice", "action_kind": ["x"], "comment_url": ""}) + "\n")
    assert_fullest(_fullest(task), task)


_HOSTILE = st.recursive(st.none() | st.booleans() | st.integers(-2, 2) | st.floats(allow_nan=False,
                                                                                    allow_infinity=False)
                        | st.sampled_from(["", "receipt", "state", "merge_ready", "repair_ci", "HUMAN_ESCALATED",
                                           "unavailable", "abcdef1", "sha256:" + "0" * 64]),
                        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                            st.sampled_from(["kind", "record", "pr_number", "head_sha", "state", "round",
                                             "action_kind", "finding_type", "check_summary", "review_disposition",
                                             "reasons", "comment_url", "decision", "run", "run_id", "x"]),
                            inner, max_size=4), max_leaves=8)
#: each example builds a task folder (hence the function-scoped tmp_path_factory)
_FOLDER_EXAMPLES = settings(max_examples=120, deadline=None,
                            suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
_ENTRY_KEYS = st.sampled_from(["kind", "state", "head_sha", "pr_number", "reasons", "record", "action_kind",
                               "round", "finding_type", "comment_url", "entry_id"])
_C3_KEYS = st.sampled_from(["decision", "phase", "source_sha", "plan_hash", "artifact_hashes", "reviewers",
                            "issued_at", "task_id", "_note", "c1_evidence_ref"])


@_FOLDER_EXAMPLES
@given(data=st.data())
def test_no_hostile_value_in_the_task_folder_is_an_internal_error(tmp_path_factory: pytest.TempPathFactory,
                                                                  data: st.DataObject) -> None:
    # every record line, the c3.json and an arbiter record of this run, each with hostile values at the keys the
    # derivations read: verify and produce answer with a verdict (an EvidenceError) or an EV, never another error
    root = tmp_path_factory.mktemp("hostile")
    task = write_merge_task(root)
    ev = _fullest(task)
    record = task / "delivery" / "record.jsonl"
    entries = [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]
    entries += data.draw(st.lists(st.dictionaries(_ENTRY_KEYS, _HOSTILE, max_size=4), max_size=2))
    for entry in entries:
        entry.pop("entry_id", None)
        for key, value in data.draw(st.dictionaries(_ENTRY_KEYS, _HOSTILE, max_size=2)).items():
            entry[key] = value
    record.write_text("".join(json.dumps(entry) + "\n" for entry in entries), encoding="utf-8")
    c3_path = task / "approvals" / "c3.json"
    c3 = json.loads(c3_path.read_text(encoding="utf-8"))
    c3.update(data.draw(st.dictionaries(_C3_KEYS, _HOSTILE, max_size=2)))
    c3_path.write_text(json.dumps(c3), encoding="utf-8")
    runs = root / "runs"
    runs.mkdir()
    arbiter = data.draw(st.dictionaries(st.sampled_from(["decision", "run", "login", "x"]), _HOSTILE, max_size=3))
    (runs / "a.json").write_text(json.dumps({**arbiter, "run": {"run_id": RUN_ID}}), encoding="utf-8")
    (runs / "b.json").write_text(json.dumps(arbiter), encoding="utf-8")
    for runs_dir in (None, runs):
        with contextlib.suppress(EvidenceError):  # a verdict; any other exception fails the test
            verify(ev, task, runs_dir=runs_dir)
        with contextlib.suppress(EvidenceError):
            produce(task, runs_dir=runs_dir, **produce_kwargs())


@_FOLDER_EXAMPLES
@given(data=st.data())
def test_a_loosened_schema_never_lets_a_malformed_ev_crash_the_verifier(tmp_path_factory: pytest.TempPathFactory,
                                                                         data: st.DataObject) -> None:
    # a --schema that requires nothing and lets every key hold anything: the EV's fields dropped or given any JSON
    # value are still a verdict (the shipped contract's floor), never a KeyError or TypeError of the verifier
    root = tmp_path_factory.mktemp("loose")
    task = write_merge_task(root)
    ev = _fullest(task)
    shipped = shipped_schema()
    loose = {**shipped, "required": [], "properties": {key: {} for key in shipped["properties"]}}
    loose.pop("$defs", None)
    schema = _write(loose, root / "loose.schema.json")
    for key in data.draw(st.lists(st.sampled_from(sorted(shipped["properties"])), min_size=1, max_size=3)):
        if data.draw(st.booleans()):
            ev.pop(key, None)
        else:
            ev[key] = data.draw(_HOSTILE)
    with pytest.raises(EvidenceError):  # the partial verdict too: no edit leaves the fullest verdict's reasons
        verify(ev, task, schema_path=schema)


def test_a_schema_may_add_to_the_contract_never_take_from_it(tmp_path: Path) -> None:
    task = write_merge_task(tmp_path)
    ev = _fullest(task)
    shipped = shipped_schema()
    looser = copy.deepcopy(shipped)
    looser["required"].remove("ci_outcomes")
    looser["properties"]["c3_prime_decision_ref"] = {}
    looser["properties"]["reviewer_notes"] = {"type": "string"}
    schema = _write(looser, tmp_path / "looser.schema.json")
    with pytest.raises(EvidencePartialError):  # the fullest verdict, with a key only the new schema knows
        verify({**ev, "reviewer_notes": "ok"}, task, schema_path=schema)
    without = {key: value for key, value in ev.items() if key != "ci_outcomes"}
    with pytest.raises(EvidenceError, match="ci_outcomes") as missing:
        verify(without, task, schema_path=schema)
    assert not isinstance(missing.value, EvidencePartialError)
    done = _cli("evidence", "verify", str(_write({**ev, "c3_prime_decision_ref": "x"}, tmp_path / "ev.json")),
                str(task), "--schema", str(schema))
    assert done.returncode == 1 and "c3_prime_decision_ref" in done.stderr and "internal error" not in done.stderr


def test_a_schema_that_knows_no_shipped_key_cannot_make_a_tampered_ev_legacy(tmp_path: Path) -> None:
    from verigate._errors import EvidenceLegacyError
    from verigate.evidence._arbiter import ARBITER_MARKER_KEYS

    task = write_merge_task(tmp_path)
    ev = {**_fullest(task), "final_head_sha": "f" * 40, **dict.fromkeys(ARBITER_MARKER_KEYS, "x")}
    schema = _write({"type": "object", "properties": {"note": {}}, "required": []}, tmp_path / "s.json")
    with pytest.raises(EvidenceError) as caught:
        verify(ev, task, schema_path=schema)
    assert not isinstance(caught.value, EvidenceLegacyError | EvidencePartialError)


@pytest.mark.parametrize("edit", [
    {"pattern": "("}, {"pattern": 5}, {"items": 5}, {"anyOf": 5}, {"properties": ["a"]},
    {"$ref": "file:///dev/zero"}, {"$ref": "ftp://127.0.0.1:9/x"}, {"$ref": "#"}, {"type": "foo"},
])
def test_a_malformed_schema_cannot_run_and_never_crashes(edit: dict[str, Any], tmp_path: Path) -> None:
    from verigate._errors import SchemaError

    task = write_merge_task(tmp_path)
    shipped = shipped_schema()
    shipped["properties"]["run_id"] = edit
    with pytest.raises(SchemaError):  # exit 2: the check never ran
        verify(_fullest(task), task, schema_path=_write(shipped, tmp_path / "bad.schema.json"))
    # a nested $id moves the base of a #/$defs/ reference: fastjsonschema would urlopen the file it names
    nested = shipped_schema()
    nested.setdefault("$defs", {})["b"] = {"type": "string"}
    nested["properties"]["run_id"] = {"$id": "file:///dev/zero#x", "properties": {"p": {"$ref": "#/$defs/b"}}}
    with pytest.raises(SchemaError, match="refused"):
        verify(_fullest(task), task, schema_path=_write(nested, tmp_path / "nested.schema.json"))
    required = {**shipped_schema(), "required": [1]}
    with pytest.raises(SchemaError):
        verify(_fullest(task), task, schema_path=_write(required, tmp_path / "required.schema.json"))


# --- 3. special and huge files: refused (exit 1) at once, never a hang, never all memory --------------------------

def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _dev_zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _sparse(path: Path) -> None:
    with path.open("wb") as handle:
        handle.truncate(4 << 30)  # 4 GiB of holes: costs no disk, but one read of it takes 4 GiB of memory


PLANTS: dict[str, Callable[[Path], None]] = {"fifo": _fifo, "dev_zero": _dev_zero, "sparse": _sparse}
#: where the plant goes, and what the refusal names (an artifact or record.jsonl that is not a regular file is
#: absent, as the format reads it: the rejection then names what is missing)
PLACES = {
    "ev": "the EV file is refused: it ",
    "c3": "approvals/c3.json is refused: it ",
    "plan": "plan.md",
    "record": "record.jsonl",
    "runs": "--runs-dir 'zz.json' is refused: it ",
}


@POSIX
@pytest.mark.parametrize("plant", sorted(PLANTS))
@pytest.mark.parametrize("place", sorted(PLACES))
def test_a_special_or_huge_file_is_refused_by_verify(place: str, plant: str, tmp_path: Path) -> None:
    task = write_merge_task(tmp_path)
    ev = _write(_fullest(task), tmp_path / "ev.json")
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "a.json").write_text(json.dumps({"decision": "AUTO_APPROVED", "run": {"run_id": RUN_ID}}),
                                 encoding="utf-8")
    target = {"ev": tmp_path / "planted.json", "c3": task / "approvals" / "c3.json", "plan": task / "plan.md",
              "record": task / "delivery" / "record.jsonl", "runs": runs / "zz.json"}[place]
    if target.exists():
        target.unlink()
    PLANTS[plant](target)
    result = _cli("evidence", "verify", str(target if place == "ev" else ev), str(task), "--runs-dir", str(runs))
    assert result.returncode == 1, result.stderr
    assert "internal error" not in result.stderr and PLACES[place] in result.stderr, result.stderr


@POSIX
@pytest.mark.parametrize("plant", sorted(PLANTS))
@pytest.mark.parametrize("place", ["c3", "runs"])
def test_a_special_or_huge_file_is_refused_by_produce(place: str, plant: str, tmp_path: Path) -> None:
    task = write_merge_task(tmp_path)
    runs = tmp_path / "runs"
    runs.mkdir()
    target = task / "approvals" / "c3.json" if place == "c3" else runs / "zz.json"
    if target.exists():
        target.unlink()
    PLANTS[plant](target)
    result = _cli(*produce_args(task, runs_dir=str(runs)))
    assert result.returncode == 1, result.stderr
    assert PLACES[place] in result.stderr, result.stderr


@POSIX
def test_a_special_schema_file_cannot_run_and_does_not_hang(tmp_path: Path) -> None:
    task = write_merge_task(tmp_path)
    ev = _write(_fullest(task), tmp_path / "ev.json")
    os.mkfifo(tmp_path / "schema.json")
    result = _cli("evidence", "verify", str(ev), str(task), "--schema", str(tmp_path / "schema.json"))
    assert result.returncode == 2 and "a FIFO, not a regular file" in result.stderr, result.stderr


def test_the_runs_folder_is_bounded_in_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from verigate.evidence import _sources

    task = write_merge_task(tmp_path)
    runs = tmp_path / "runs"
    runs.mkdir()
    for name in ("a", "b", "c"):
        (runs / f"{name}.json").write_text(json.dumps({"pad": "x" * 100}), encoding="utf-8")
    monkeypatch.setattr(_sources, "MAX_RUNS_BYTES", 250)  # two records fit, the third does not
    with pytest.raises(EvidenceError, match="hold more than 250 bytes together"):
        verify(_fullest(task), task, runs_dir=runs)


def test_links_to_regular_files_are_still_followed(tmp_path: Path) -> None:
    # the existing policy: a linked task folder or artifact is read through its link
    task = write_merge_task(tmp_path)
    record = _fullest(task)
    outside = tmp_path / "outside-plan.md"
    (task / "plan.md").rename(outside)
    (task / "plan.md").symlink_to(outside)
    (tmp_path / "link").symlink_to(task, target_is_directory=True)
    assert_fullest(record, tmp_path / "link")


# --- 4. impossible times -------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("field", "value"), [
    ("completed_at", "2100-13-45T99:99:99Z"), ("started_at", "0000-00-00T00:00:00Z"),
    ("completed_at", "2100-02-29T00:00:00Z"), ("started_at", "2099-12-31T24:00:00Z"),
    ("started_at", "2099-12-31T23:59:60Z"),
])
def test_an_impossible_time_is_rejected_by_verify(field: str, value: str, tmp_path: Path) -> None:
    task = write_merge_task(tmp_path)
    record = {**_fullest(task), field: value}
    result = _cli("evidence", "verify", str(_write(record, tmp_path / "ev.json")), str(task))
    assert result.returncode == 1 and f"run-evidence: {field}: " in result.stderr, result.stderr


def test_a_real_leap_day_verifies(tmp_path: Path) -> None:
    task = write_merge_task(tmp_path)
    assert_fullest({**_fullest(task), "started_at": "2096-02-29T23:59:59Z"}, task)


@pytest.mark.parametrize(("flag", "value"), [("now", "2100-13-45T99:99:99Z"), ("started_at", "0000-00-00T00:00:00Z"),
                                             ("now", "2100-02-30T00:00:00Z"), ("started_at", "2099-12-31T00:00:00Z\n")])
def test_an_impossible_time_is_refused_by_produce(flag: str, value: str, tmp_path: Path) -> None:
    task = write_merge_task(tmp_path)
    result = _cli(*produce_args(task, **{flag: value}))
    assert result.returncode == 1 and f"--{flag.replace('_', '-')} is required and must be a real UTC time" \
        in result.stderr, result.stderr


@settings(max_examples=400, deadline=None)
@given(value=st.from_regex(ISO_UTC, fullmatch=True) | st.text(max_size=22))
def test_a_utc_timestamp_is_what_strptime_reads(value: str) -> None:
    try:
        datetime.datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ")
        real = bool(ISO_UTC.fullmatch(value))  # strptime also takes "2099-1-1T…": the width is the pattern's
    except ValueError:
        real = False
    assert is_utc_timestamp(value) == real


# --- 5. --out: a planted link is replaced, never followed ------------------------------------------------------------

@POSIX
def test_write_evidence_replaces_a_planted_link_and_leaves_its_target_alone(tmp_path: Path) -> None:
    precious = tmp_path / "precious.txt"
    precious.write_text("PRECIOUS\n", encoding="utf-8")
    out = tmp_path / "out" / "ev.json"
    out.parent.mkdir()
    out.symlink_to(precious)
    write_evidence(out, '{"a": 1}\n')
    assert precious.read_text(encoding="utf-8") == "PRECIOUS\n"
    assert not out.is_symlink() and out.read_text(encoding="utf-8") == '{"a": 1}\n'
    assert sorted(p.name for p in out.parent.iterdir()) == ["ev.json"]  # no temporary file left behind
    write_evidence(tmp_path / "new" / "deeper" / "ev.json", "x\n")  # the folder is created, as --out did
    assert (tmp_path / "new" / "deeper" / "ev.json").read_text(encoding="utf-8") == "x\n"


@POSIX
def test_produce_out_replaces_a_planted_link_and_leaves_its_target_alone(tmp_path: Path) -> None:
    task = write_merge_task(tmp_path)
    precious = tmp_path / "precious.txt"
    precious.write_text("PRECIOUS\n", encoding="utf-8")
    out = tmp_path / "ev.json"
    out.symlink_to(precious)
    result = _cli(*produce_args(task, out=str(out)))
    assert result.returncode == 0, result.stderr
    assert precious.read_text(encoding="utf-8") == "PRECIOUS\n" and not out.is_symlink()
    with pytest.raises(EvidencePartialError) as caught:
        verify(out, task)
    assert set(PHASE_ONE_PARTIAL) <= set(caught.value.reasons)
