"""Exact reasons of the verifier, written for the mutants of ``evidence/_verify.py`` that the tamper tests let live
(docs/mutation.md): those tests check that a tamper is rejected naming its field, and a later, broader check
(the JSON schema) often names the field too, so a first check that stopped working went unnoticed. Here each
check must give its own reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from evidence_helpers import arbiter_task, assert_fullest, produce_kwargs, state, write_task

from verigate._errors import EvidenceError
from verigate.evidence import produce, verify


def _reasons(record: dict[str, Any], task: Path) -> list[str]:
    with pytest.raises(EvidenceError) as caught:
        verify(record, task)
    assert type(caught.value) is EvidenceError
    return list(caught.value.reasons)


def test_an_unknown_top_level_key_is_named_before_the_schema_runs(fullest_ev: dict[str, Any],
                                                                  merge_task: Path) -> None:
    # a `_` note beside it is neither unknown nor reported
    assert _reasons({**fullest_ev, "foo": 1, "_x": "note"}, merge_task) == ["未知のトップレベルキー: ['foo']"]
    assert _reasons({**fullest_ev, "foo": 1, "_b": 1}, merge_task) == ["未知のトップレベルキー: ['foo']"]


def test_each_non_string_note_is_named(fullest_ev: dict[str, Any], merge_task: Path) -> None:
    assert _reasons({**fullest_ev, "_b": 1, "_a": [2], "_c": "ok"}, merge_task) == [
        "_a: a `_` note must be a string", "_b: a `_` note must be a string"]


def test_a_schema_violation_names_the_field_without_the_validators_data_prefix(
        fullest_ev: dict[str, Any], merge_task: Path) -> None:
    assert _reasons({**fullest_ev, "run_id": ""}, merge_task) == [
        "schema 不適合: run_id: must be longer than or equal to 1 characters"]


def test_without_the_runs_folder_only_a_tail_of_arbiter_items_is_partial(tmp_path: Path) -> None:
    task, _, record = arbiter_task(tmp_path)
    arbiter_item, invented = record["human_interventions"][-1], {"kind": "delivery_state", "detail": "MERGED"}
    assert arbiter_item == {"kind": "arbiter_decision", "detail": "HUMAN_ESCALATED"}
    # one arbiter item in the unconfirmed tail does not carry an invented item beside it into "partial"
    mixed = {**record, "human_interventions": [*record["human_interventions"], invented]}
    reasons = _reasons(mixed, task)
    assert len(reasons) == 1 and reasons[0].startswith("human_interventions: EV=")


def test_the_producers_observation_brings_its_reductions_with_it(tmp_path: Path) -> None:
    # a state reason with a URL: the observation quotes it reduced, and only that reduction records it
    task = write_task(tmp_path, "TASK-0006", entries=[state("HUMAN_ESCALATED", ["see https://example.com/p"])])
    record = json.loads(produce(task, **produce_kwargs()))
    assert record["observation"].endswith("reasons=see ref:redacted")
    reduced = {"kind": "privacy_url_reduced", "detail": "URL を番号参照へ還元した"}
    assert reduced in record["escalation"]
    dropped = {**record, "escalation": [item for item in record["escalation"] if item != reduced]}
    assert _reasons(dropped, task) == ["escalation: task folder から導出される "
                                       "{kind: 'privacy_url_reduced', detail: 'URL を番号参照へ還元した'} が欠落"]


def test_the_task_name_is_the_resolved_folders_through_a_link_or_a_parent_step(fullest_ev: dict[str, Any],
                                                                             merge_task: Path) -> None:
    # the verifier's one-lstat shortcut for task_dir.resolve().name must give way to resolve() for these
    (merge_task.parent / "link").symlink_to(merge_task, target_is_directory=True)
    assert_fullest(fullest_ev, merge_task.parent / "link")  # the link names TASK-0001
    assert_fullest(fullest_ev, merge_task / "approvals" / "..")
    (merge_task.parent / "TASK-0002").symlink_to(merge_task, target_is_directory=True)
    assert_fullest(fullest_ev, merge_task.parent / "TASK-0002")  # a link's own name is not the task's
    other = merge_task.parent / "TASK-0003"
    other.mkdir()
    (other / "inner").symlink_to(merge_task, target_is_directory=True)
    assert _reasons(fullest_ev, other / "inner" / "..") == [  # the link first, then its parent
        f"task_id: EV='TASK-0001' is not the task folder name {merge_task.parent.name!r}"]
