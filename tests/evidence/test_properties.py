"""Hypothesis: no EV verifies as complete in Phase 1, and a mutation of the fullest one never keeps its verdict
unless the change is neutral; the producer never leaks, whatever its inputs."""

from __future__ import annotations

import copy
import json
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from evidence_helpers import (
    PHASE_ONE_PARTIAL,
    fullest_ev_for,
    merge_ready,
    notice,
    produce_kwargs,
    receipt,
    secret_shaped,
    state,
    write_task,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verigate._errors import EvidenceError, EvidencePartialError
from verigate.evidence import check_output_privacy, produce, secret_scanner, verify
from verigate.evidence._privacy import ACCOUNT_KEYS, FORBIDDEN_KEYS

_SCRATCH = Path(tempfile.mkdtemp(prefix="ev-props-"))
TASK = write_task(_SCRATCH, "TASK-0001", entries=[
    receipt("repair_review", 1, "F-2"), state("MERGE_READY"),
    merge_ready({"CI": "success", "lint": "success"}, {"F-1": "resolved"}, 1),
])
#: the fullest EV Phase 1 produces: every check runs on it, and it is partial for PHASE_ONE_PARTIAL alone
FULLEST = fullest_ev_for(TASK)
FULLEST_VERDICT = (11, PHASE_ONE_PARTIAL)

json_scalars = st.none() | st.booleans() | st.integers(-3, 100) | st.text(max_size=12) | st.just("unavailable")
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=6)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


def _replace(record: Any, path: tuple[Any, ...], value: Any) -> None:
    for step in path[:-1]:
        record = record[step]
    record[path[-1]] = value


def _verdict(record: dict[str, Any]) -> tuple[int, tuple[str, ...]]:
    """The exit code and, for a partial EV, its reasons."""
    try:
        verify(record, TASK)
    except EvidencePartialError as exc:
        return exc.exit_code, exc.reasons
    except EvidenceError as exc:
        return exc.exit_code, ()
    return 0, ()


def test_the_base_is_the_fullest_verdict() -> None:
    assert _verdict(copy.deepcopy(FULLEST)) == FULLEST_VERDICT


#: injected or free-text fields: nothing in the task folder can re-derive them, so another valid value verifies
#: (the verifier still holds them to the schema, the privacy check, the time order, the injection records and the
#: partial rules); human_interventions and escalation are re-derived, and replan_count and cost_metrics are always
#: "unavailable", so they are mutated like the rest
NOT_DERIVABLE = frozenset({"run_id", "started_at", "completed_at", "repository", "harness_version",
                           "routing_decisions", "observation", "cause_hypothesis"})


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_mutated_ev_never_keeps_the_fullest_verdict_unless_the_change_is_neutral(data: st.DataObject) -> None:
    record = copy.deepcopy(FULLEST)
    paths = [p for p in _paths(record) if p[0] not in NOT_DERIVABLE]
    kind = data.draw(st.sampled_from(["replace", "drop", "add"]))
    if kind == "replace":
        _replace(record, data.draw(st.sampled_from(paths)), data.draw(json_values))
    elif kind == "drop":
        path = data.draw(st.sampled_from([p for p in paths if isinstance(p[-1], str)]))
        parent: Any = record
        for step in path[:-1]:
            parent = parent[step]
        del parent[path[-1]]
    else:
        key = data.draw(st.text(min_size=1, max_size=8).filter(lambda k: k not in FULLEST))
        record[key] = data.draw(json_values)
    if json.dumps(record, sort_keys=True) == json.dumps(FULLEST, sort_keys=True):
        return
    added = set(record) - set(FULLEST)
    neutral = kind == "add" and all(k.startswith("_") and isinstance(record[k], str) for k in added)
    code, reasons = _verdict(record)
    assert code != 0, record
    if neutral:  # a string note changes nothing, but a note "unavailable" is listed like any other
        assert code == 11 and set(PHASE_ONE_PARTIAL) <= set(reasons), record
    else:
        assert (code, reasons) != FULLEST_VERDICT, record


#: what an EV may put where Phase 1 writes "unavailable": JSON's zeros and empties (0.0 and -0.0 pass the schema's
#: "integer"), near misses of the word, and anything else
_FIXED_VALUES = st.sampled_from([0, 0.0, -0.0, 1, {}, {"usd": 0}, [], None, False, "Unavailable", "unavailable ",
                                 "unavailable"]) | json_values
_INJECTED = st.sets(st.sampled_from(["cost_metrics", "replan_count", "routing_decisions", "repair_rounds", ""]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(replan=_FIXED_VALUES, cost=_FIXED_VALUES, routing=_FIXED_VALUES | st.lists(json_values, max_size=2),
       injected=_INJECTED)
def test_no_edit_of_the_phase_one_fixed_fields_verifies_as_complete(replan: Any, cost: Any, routing: Any,
                                                                     injected: set[str]) -> None:
    # the attack: fill in the fields Phase 1 cannot source and add their injection records, so nothing is left
    # "unavailable"; the producer never writes replan_count or cost_metrics, so any value there is a rejection
    record = copy.deepcopy(FULLEST)
    record.update(replan_count=replan, cost_metrics=cost, routing_decisions=routing)
    items = [e for e in record["escalation"] if e["kind"] != "injected_value"]
    items += [{"kind": "injected_value", "detail": detail} for detail in injected]
    record["escalation"] = sorted(items, key=lambda e: (e["kind"], e["detail"]))
    try:
        verify(record, TASK)
    except EvidencePartialError as exc:
        assert replan == "unavailable" and cost == "unavailable", exc.reasons
        assert set(PHASE_ONE_PARTIAL) <= set(exc.reasons)
    except EvidenceError as exc:
        assert type(exc) is EvidenceError
        reasons = "\n".join(exc.reasons)
        if not reasons.startswith("schema 不適合"):  # past the schema (which names its first finding only), every
            for field, value in (("replan_count", replan), ("cost_metrics", cost)):  # filled-in field is named
                assert value == "unavailable" or f"{field}: EV=" in reasons, (field, reasons)
    else:
        raise AssertionError(f"verified as complete: {record}")


#: secret- and personal-data-shaped values, made when the tests run (nothing secret-shaped is committed)
SHAPED = secret_shaped(5)
TEXT = st.lists(st.sampled_from([*"ab /:@.#-_", "Users", "/Users/", "https://", "github.com/", "~/", "C:\\",
                                 "/pull/12", "#issuecomment-3", "/home/x/", *SHAPED.values()]),
                max_size=8).map("".join)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reasons=st.lists(TEXT, max_size=3), url=TEXT, observation=st.none() | TEXT, owner=st.from_regex(
    r"\A[a-z][a-z0-9]{5,9}\Z"), extra_key=st.sampled_from(sorted(FORBIDDEN_KEYS | ACCOUNT_KEYS)),
    disposition=TEXT, hypothesis=st.none() | TEXT)
def test_the_producer_never_emits_a_forbidden_key_an_absolute_path_an_owner_or_a_secret(
        reasons: list[str], url: str, observation: str | None, owner: str, extra_key: str, disposition: str,
        hypothesis: str | None) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        owner_url = f"https://github.com/{owner}/plangate/pull/7#issuecomment-9"
        task = write_task(Path(scratch), "TASK-0001", entries=[
            notice(url + " " + owner_url, **{extra_key: f"/Users/{owner}/secret"}),
            state("WAITING_FOR_CHECKS", [*reasons, f"by @{owner}", f"see github.com/{owner}/plangate"]),
            state("MERGE_READY"),
            merge_ready({"CI": "success"}, {"F-1": {"kind": "rejected", "evidence_ref": disposition + owner_url}}),
        ])
        try:
            text = produce(task, **produce_kwargs(observation=observation, cause_hypothesis=hypothesis))
        except EvidenceError as exc:
            assert all("privacy" in reason for reason in exc.reasons), exc.reasons
            return
        record = json.loads(text)
        assert owner not in text and "github.com" not in text and "/Users/" not in text
        # the rule packs decide what is a secret ("aghp_…" is not a token): none may find anything in the output
        assert check_output_privacy(record, secret_scanner()) == []
        assert not re.search(r'"(?:' + "|".join(FORBIDDEN_KEYS | ACCOUNT_KEYS) + r')":', text)
        with pytest.raises(EvidencePartialError):  # a producer output always verifies, as partial in Phase 1
            verify(record, task)
