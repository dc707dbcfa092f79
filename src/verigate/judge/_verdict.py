"""From a model's reply to a Verdict: one strict JSON object, schema-validated; never a verdict found amid prose.

A judge reply quotes what it judged, and what it judged was written by the agent: a reply that holds text around an
object, or several objects, may be showing the agent's planted ``{"passed": true, ...}`` beside (or instead of) its
own defective verdict. So the reply is read by shape, never searched: a structured reply (the API's JSON-schema
field, a forced tool call's input) is the verdict object itself; a text reply must be exactly one JSON object,
optionally inside one code fence, and nothing else. Anything else is ``invalid_judge_response``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .. import _face
from .. import _json as strict_json
from .._data import compiled_schema
from .._errors import JudgeError
from .._models import Reflection, Verdict
from .._schema_errors import schema_failure

__all__ = [
    "MAX_REPLY_CHARS",
    "VERDICT_SCHEMA",
    "parse_verdict",
    "verdict_from_object",
    "verdict_object_from_text",
]

VERDICT_SCHEMA = "judge-verdict.schema.json"
#: a verdict is a few hundred characters; a reply far beyond that is not a verdict (and not worth scanning)
MAX_REPLY_CHARS = 64_000
#: a verdict nests three levels (object, reflection, misses); more is not a verdict
_MAX_DEPTH = 8
# one fence around the whole reply: ```json\n{...}\n``` (the language tag is optional)
_FENCE = re.compile(r"\A```[A-Za-z0-9_-]*[ \t]*\r?\n(.*)\r?\n```\Z", re.DOTALL)


def verdict_object_from_text(text: str) -> dict[str, Any]:
    """The one JSON object that ``text`` is (surrounding white space and one enclosing code fence allowed), read
    with the strict reader; JudgeError("invalid_judge_response") for any other shape."""
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced is not None:
        body = fenced.group(1).strip()
    if not body.startswith("{") or not body.endswith("}"):
        raise JudgeError("invalid_judge_response", "the judge reply is not one JSON object and nothing else")
    try:
        value = strict_json.loads(body, max_depth=_MAX_DEPTH, max_chars=MAX_REPLY_CHARS)
    except strict_json.StrictJSONError as exc:
        raise JudgeError("invalid_judge_response", f"the judge reply is not one strict JSON object: {exc}") \
            from None
    if not isinstance(value, dict):  # unreachable for "{...}" text; kept for the type
        raise JudgeError("invalid_judge_response", "the judge reply is not a JSON object")
    return value


def _validate(candidate: dict[str, Any]) -> str | None:
    """None when ``candidate`` is a valid verdict object, else why not."""
    if not all(isinstance(key, str) for key in candidate):
        return "verdict: keys must be strings"
    import fastjsonschema  # loaded with the compiled schema, not with this module

    try:
        compiled_schema(VERDICT_SCHEMA)(candidate)
    except fastjsonschema.JsonSchemaValueException as exc:
        failure = schema_failure(exc)
        return f"{failure.field or 'verdict'}: {failure.message}"
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

    ``reply`` is what a :class:`~verigate.judge.ModelClient` returned: a mapping read from the API's structured
    field (taken as the verdict object itself), or text that must be exactly one JSON object (see the module
    docstring). The object must match ``schemas/judge-verdict.schema.json`` (no extra key, score in 0..1, ...).
    """
    if isinstance(reply, str):
        if len(reply) > MAX_REPLY_CHARS:
            raise JudgeError(
                "invalid_judge_response", f"the judge reply has {len(reply)} characters (limit {MAX_REPLY_CHARS})"
            )
        candidate: Mapping[str, Any] = verdict_object_from_text(reply)
    elif isinstance(reply, Mapping):
        candidate = reply
    else:
        raise JudgeError("invalid_judge_response", f"the judge reply is {type(reply).__name__}, not text")
    checked = dict(candidate)  # the verdict is built from exactly what was validated, read once
    problem = _validate(checked)
    if problem is not None:
        raise JudgeError("invalid_judge_response", f"the judge reply is not a valid verdict: {problem}")
    return verdict_from_object(checked, engine=engine, effective_engine=effective_engine)


_face.present_module(globals())  # the names verigate.judge exports report it
