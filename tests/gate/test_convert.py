"""Strict parsing of what crosses a process boundary: typed errors naming the field, never a silent coercion."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import strategies
from verigate import Candidate, CandidateError, Termination, TerminationReason
from verigate._data import schema
from verigate.gate import parse_candidate, parse_termination, unstructure

GOOD = {"request": "fix it", "final_text": "fixed", "tool_calls": [{"name": "Bash", "input": {"cmd": "make"},
                                                                    "output": "ok", "ok": True}]}


def test_a_full_candidate_round_trips() -> None:
    candidate = parse_candidate(GOOD)
    assert candidate.tool_calls[0].ok is True
    assert parse_candidate(json.loads(json.dumps(unstructure(candidate)))) == candidate


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({**GOOD, "contains_personal_data": "false"}, "contains_personal_data"),  # cattrs would say True
        ({**GOOD, "attempt": "1"}, "attempt"),
        ({**GOOD, "attempt": 1.0}, "attempt"),
        ({**GOOD, "attempt": True}, "attempt"),
        ({**GOOD, "attempt": -1}, "attempt"),
        ({**GOOD, "rounds": 1.5}, "rounds"),
        ({**GOOD, "usage": {"input_tokens": "12"}}, "usage.input_tokens"),
        ({**GOOD, "usage": {"input_tokens": 1.0}}, "usage['input_tokens']"),
        ({**GOOD, "unexpected": 1}, "unexpected"),
        ({"request": "r"}, "final_text"),
        ({**GOOD, "final_text": None}, "final_text"),
        ({**GOOD, "tool_calls": [{"name": "Bash", "ok": "true"}]}, "tool_calls[0].ok"),
        ({**GOOD, "tool_calls": [{"input": {}}]}, "tool_calls[0].name"),
        ({**GOOD, "tool_calls": [{"name": "Bash", "extra": 1}]}, "tool_calls[0].extra"),
        ({**GOOD, "requirements": "one string"}, "requirements"),
    ],
)
def test_malformed_candidates_name_the_field(data: dict[str, Any], field: str) -> None:
    with pytest.raises(CandidateError) as caught:
        parse_candidate(data, source="stdin")
    assert caught.value.field == field
    assert caught.value.source == "stdin"


@pytest.mark.parametrize("data", [None, [], "candidate", 3])
def test_a_candidate_must_be_an_object(data: Any) -> None:
    with pytest.raises(CandidateError):
        parse_candidate(data)


def test_terminations() -> None:
    assert parse_termination({"reason": "forced_text", "detail": "last round"}) == Termination(
        TerminationReason.FORCED_TEXT, "last round")
    for data, field in (({"reason": "finished"}, "reason"), ({"reason": 1}, "reason"), ({}, "reason"),
                        ({"reason": "natural", "extra": 1}, "extra"), ({"reason": "natural", "detail": 2}, "detail")):
        with pytest.raises(CandidateError) as caught:
            parse_termination(data)
        assert caught.value.field == field, data


def test_schema_reasons_are_the_closed_set() -> None:
    assert schema("candidate.schema.json")["$defs"]["termination"]["properties"]["reason"]["enum"] == [
        reason.value for reason in TerminationReason]


@settings(max_examples=150, deadline=None)
@given(strategies.candidates)
def test_every_candidate_round_trips_and_matches_the_schema(candidate: Candidate) -> None:
    data = json.loads(json.dumps(unstructure(candidate)))
    jsonschema.Draft7Validator(schema("candidate.schema.json")).validate(data)
    assert parse_candidate(data) == candidate


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["request", "final_text", "attempt", "tool_calls", "usage", "rounds",
                                        "contains_personal_data", "zz"]),
                       st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=5),
                                 st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3),
                                                                                       st.integers(), max_size=2))))
def test_fuzzed_data_either_parses_or_raises_candidate_error(data: dict[str, Any]) -> None:
    try:
        candidate = parse_candidate(data)
    except CandidateError:
        return
    # what parses agrees with the independent reference validator
    jsonschema.Draft7Validator(schema("candidate.schema.json")).validate(data)
    assert isinstance(candidate, Candidate)
