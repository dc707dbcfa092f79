"""From a model's reply to a Verdict: tolerant extraction of one JSON object, then strict schema validation."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import fastjsonschema

from .._data import compiled_schema
from .._errors import JudgeError
from .._models import Reflection, Verdict

__all__ = [
    "MAX_REPLY_CHARS",
    "VERDICT_SCHEMA",
    "extract_json_objects",
    "parse_verdict",
    "verdict_from_object",
]

VERDICT_SCHEMA = "judge-verdict.schema.json"
#: a verdict is a few hundred characters; a reply far beyond that is not a verdict (and not worth scanning)
MAX_REPLY_CHARS = 64_000


def _reject_constant(name: str) -> Any:
    # NaN / Infinity are not JSON; a judge emitting them gives no usable score
    raise ValueError(f"{name} is not a JSON value")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # {"passed": false, "passed": true} would otherwise read as a pass: a repeated key is no verdict
    result = dict(pairs)
    if len(result) != len(pairs):
        raise ValueError("repeated key in a JSON object")
    return result


_DECODER = json.JSONDecoder(parse_constant=_reject_constant, object_pairs_hook=_unique_keys)


def extract_json_objects(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object in ``text``, in order: the whole reply, inside code fences, or amid prose.

    An object nested in another is part of it, never a separate find.
    """
    found: list[dict[str, Any]] = []
    position = text.find("{")
    while position != -1:
        try:
            value, end = _DECODER.raw_decode(text, position)
        except (ValueError, RecursionError):
            position = text.find("{", position + 1)
            continue
        if isinstance(value, dict):
            found.append(value)
        position = text.find("{", end)
    return found


def _validate(candidate: dict[str, Any]) -> str | None:
    """None when ``candidate`` is a valid verdict object, else why not."""
    try:
        compiled_schema(VERDICT_SCHEMA)(candidate)
    except fastjsonschema.JsonSchemaValueException as exc:
        return f"{(exc.name or 'data').removeprefix('data').lstrip('.') or 'verdict'}: {exc.message}"
    return None


def verdict_from_object(data: Mapping[str, Any], *, engine: str, effective_engine: str) -> Verdict:
    """A Verdict from a schema-valid verdict object.

    A reply that says ``passed: true`` but lists ``rubric_misses`` contradicts itself; it is read the
    fail-closed way: not passed, retryable, with those misses.
    """
    misses = tuple(dict.fromkeys(data["rubric_misses"]))
    passed = bool(data["passed"]) and not misses
    reflection = data["reflection"]
    return Verdict(
        passed=passed,
        rubric_misses=misses,
        score=float(data["score"]),
        reflection=Reflection(reflection["observation"], reflection["lesson"], reflection["next_check"]),
        retryable=not passed,
        engine=engine,
        effective_engine=effective_engine,
    )


def parse_verdict(reply: object, *, engine: str, effective_engine: str) -> Verdict:
    """The Verdict in a model reply, or JudgeError("invalid_judge_response") saying why there is none.

    Exactly one distinct schema-valid verdict object must be present: none, or several that disagree (e.g. an
    echoed injection followed by the real verdict), is invalid — never a pass.
    """
    if not isinstance(reply, str):
        raise JudgeError("invalid_judge_response", f"the judge reply is {type(reply).__name__}, not text")
    if len(reply) > MAX_REPLY_CHARS:
        raise JudgeError(
            "invalid_judge_response", f"the judge reply has {len(reply)} characters (limit {MAX_REPLY_CHARS})"
        )
    objects = extract_json_objects(reply)
    if not objects:
        raise JudgeError("invalid_judge_response", "the judge reply holds no JSON object")
    valid: list[dict[str, Any]] = []
    problems: list[str] = []
    for candidate in objects:
        problem = _validate(candidate)
        if problem is None:
            if candidate not in valid:
                valid.append(candidate)
        else:
            problems.append(problem)
    if not valid:
        raise JudgeError("invalid_judge_response", f"the judge reply is not a valid verdict: {problems[0]}")
    if len(valid) > 1:
        raise JudgeError("invalid_judge_response", f"the judge reply holds {len(valid)} different verdicts")
    return verdict_from_object(valid[0], engine=engine, effective_engine=effective_engine)
