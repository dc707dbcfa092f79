"""Extraction and validation of the verdict: tolerant to wrapping, strict on content, never a pass by accident."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judge_servers import verdict_json
from verigate import JudgeError
from verigate._data import compiled_schema, schema
from verigate.judge import VERDICT_SCHEMA, extract_json_objects, parse_verdict


def parse(text: object):
    return parse_verdict(text, engine="llm_judge", effective_engine="llm_judge/test")


def test_schema_is_valid_draft7_and_agrees_with_fastjsonschema() -> None:
    definition = schema(VERDICT_SCHEMA)
    jsonschema.Draft7Validator.check_schema(definition)
    sample = json.loads(verdict_json(passed=False, misses=("a_b",)))
    jsonschema.validate(sample, definition)
    compiled_schema(VERDICT_SCHEMA)(sample)


@pytest.mark.parametrize(
    "text",
    [
        verdict_json(passed=True),
        f"```json\n{verdict_json(passed=True)}\n```",
        f"```\n{verdict_json(passed=True)}\n```",
        f"After checking the observations, my verdict is {verdict_json(passed=True)}. Let me know!",
        f"{verdict_json(passed=True)}\n{verdict_json(passed=True)}",  # the same verdict twice agrees with itself
        f'notes: {{"a": 1}} then {verdict_json(passed=True)}',  # a non-verdict object beside it is ignored
    ],
)
def test_tolerant_extraction(text: str) -> None:
    verdict = parse(text)
    assert verdict.passed and verdict.effective_engine == "llm_judge/test"


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        ("", "no JSON object"),
        ("[1, 2]", "no JSON object"),
        ('{"passed": true, "passed": true, "score": 1, "rubric_misses": [], '
         '"reflection": {"observation": "", "lesson": "", "next_check": ""}}', "not a valid verdict"),
        ('{"passed": true, "score": NaN, "rubric_misses": [], '
         '"reflection": {"observation": "", "lesson": "", "next_check": ""}}', "not a valid verdict"),
        ('{"passed": true, "score": true, "rubric_misses": [], '
         '"reflection": {"observation": "", "lesson": "", "next_check": ""}}', "score"),
        ('{"passed": false, "score": 0, "rubric_misses": ["has spaces"], '
         '"reflection": {"observation": "", "lesson": "", "next_check": ""}}', "rubric_misses"),
        (f"{verdict_json(passed=True)} {verdict_json(passed=False)}", "2 different verdicts"),
        (verdict_json(passed=True, observation="x" * 70_000), "characters"),
    ],
)
def test_strict_validation(text: str, detail: str) -> None:
    with pytest.raises(JudgeError) as caught:
        parse(text)
    assert caught.value.reason == "invalid_judge_response"
    assert detail in str(caught.value)


@pytest.mark.parametrize("reply", [None, 1, b"{}", {"passed": True}])
def test_a_reply_that_is_not_text(reply: Any) -> None:
    with pytest.raises(JudgeError) as caught:
        parse(reply)
    assert caught.value.reason == "invalid_judge_response"


def test_pass_with_misses_is_read_as_a_retryable_fail() -> None:
    verdict = parse(verdict_json(passed=True, misses=("tests_missing", "tests_missing")))
    assert not verdict.passed and verdict.retryable and verdict.rubric_misses == ("tests_missing",)


def test_nested_objects_are_not_separate_finds() -> None:
    assert extract_json_objects('x {"a": {"b": 1}} y {"c": 2}') == [{"a": {"b": 1}}, {"c": 2}]


# ------------------------------------------------------------------------------------------ properties

_codes = st.from_regex(r"[a-z][a-z0-9_]{0,15}", fullmatch=True)
verdict_objects = st.fixed_dictionaries(
    {
        "passed": st.booleans(),
        "score": st.floats(min_value=0, max_value=1),
        "rubric_misses": st.lists(_codes, max_size=3),
        "reflection": st.fixed_dictionaries(
            {"observation": st.text(max_size=20), "lesson": st.text(max_size=20), "next_check": st.text(max_size=20)}
        ),
    }
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=8,
)
fragments = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["{", "}", "```json\n", "```", '"passed": true', "null", ",", ":"]),
    verdict_objects.map(json.dumps),
    json_values.map(json.dumps),
)


def _strict_json(text: str) -> Any:
    """JSON as the RFC has it: no NaN/Infinity, no repeated keys."""

    def no_constants(name: str) -> Any:
        raise ValueError(name)

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        if len({key for key, _ in pairs}) != len(pairs):
            raise ValueError("repeated key")
        return dict(pairs)

    return json.loads(text, parse_constant=no_constants, object_pairs_hook=unique)


def _embedded_passing_verdicts(text: str) -> bool:
    """Brute force: does some substring of ``text`` parse as a valid verdict object with passed true and no misses?"""
    validate = compiled_schema(VERDICT_SCHEMA)
    for start, char in enumerate(text):
        if char != "{":
            continue
        for end in range(start + 2, len(text) + 1):
            if text[end - 1] != "}":
                continue
            try:
                value = _strict_json(text[start:end])
                validate(value)
            except Exception:
                continue
            if value["passed"] and not value["rubric_misses"]:
                return True
    return False


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(fragments, max_size=6).map("".join))
def test_no_pass_from_text_without_a_valid_passing_verdict(text: str) -> None:
    try:
        verdict = parse(text)
    except JudgeError as exc:
        assert exc.reason == "invalid_judge_response"
        return
    assert verdict.error is None
    if verdict.passed:
        assert _embedded_passing_verdicts(text)
        assert not verdict.rubric_misses and not verdict.retryable
    else:
        assert verdict.retryable


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200) | st.binary(max_size=50).map(lambda raw: raw.decode("latin-1")))
def test_arbitrary_text_only_ever_raises_judge_error(text: str) -> None:
    try:
        verdict = parse(text)
    except JudgeError:
        return
    assert _embedded_passing_verdicts(text) or not verdict.passed


@settings(max_examples=200, deadline=None)
@given(verdict_objects, st.text(max_size=30), st.text(max_size=30))
def test_a_valid_verdict_amid_prose_is_found(data: dict[str, Any], before: str, after: str) -> None:
    text = f"{before.replace('{', '(')}{json.dumps(data)}{after.replace('{', '(')}"
    verdict = parse(text)
    assert verdict.passed == (data["passed"] and not data["rubric_misses"])
    assert verdict.rubric_misses == tuple(dict.fromkeys(data["rubric_misses"]))
