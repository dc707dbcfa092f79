"""The judge's view of a candidate: capped, truncation-marked, delimited data that cannot forge its delimiters.

Each data block is fenced by ``<<<BEGIN name TAG>>>`` / ``<<<END name TAG>>>`` lines whose TAG is drawn at random for
each call (and named to the judge in the prompt), so text the agent wrote — which is fixed before the call — cannot
know it; runs of ``<<<`` / ``>>>`` inside the data are broken up as well."""

from __future__ import annotations

import functools
import json
import re
import secrets
import string
from collections.abc import Mapping
from typing import Any

from .. import _face
from .._data import read_text
from .._errors import SchemaError
from .._models import ToolObservation
from ._base import ChatRequest, JudgeCaps, JudgeRequest

__all__ = [
    "DELIMITER",
    "build_chat_request",
    "capped",
    "neutralise",
    "observation_view",
    "recent_observations",
    "wire_schema",
]

#: data blocks open with ``<<<BEGIN name TAG>>>`` and close with ``<<<END name TAG>>>`` (prompts/judge_user.txt)
DELIMITER = "<<<"
#: random bytes of a call's delimiter tag (hex doubles them): far past guessing
TAG_BYTES = 12
_RUNS = re.compile(r"<{3,}|>{3,}")
#: keywords every structured-output API accepts; the full schema is enforced locally after the reply
_WIRE_KEYWORDS = frozenset({"type", "properties", "required", "additionalProperties", "items", "enum", "description"})


def neutralise(text: str) -> str:
    """Break every run of three or more ``<`` or ``>`` so data can never open or close a data block."""
    if "<<<" not in text and ">>>" not in text:  # the common case; a substring search is far cheaper than the regex
        return text
    return _RUNS.sub(lambda match: " ".join(match.group()), text)


def capped(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, with the cut marked so the judge knows part is missing."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[truncated: {limit} of {len(text)} characters shown]"


def _compact_json(value: Any) -> str:
    # strict: egress leaves only JSON-native values, so anything else here never passed redaction — fail (the gate
    # turns the engine's error into a verification error) rather than send its str()
    return json.dumps(value, ensure_ascii=False, sort_keys=True, allow_nan=False)


def observation_view(observation: ToolObservation, caps: JudgeCaps) -> dict[str, Any]:
    """One tool observation as the judge sees it: result, input and the other fields each capped."""
    status = {True: "ok", False: "error", None: "unknown"}[observation.ok]
    return {
        "tool": capped(observation.name, caps.observation_other_chars),
        "status": status,
        "input": capped(_compact_json(dict(observation.input)), caps.observation_input_chars),
        "result": capped(observation.output, caps.observation_result_chars),
    }


def recent_observations(observations: tuple[ToolObservation, ...], caps: JudgeCaps) -> tuple[list[dict[str, Any]], int]:
    """The last ``caps.observations`` observations as views, and how many earlier ones were left out."""
    kept = observations[-caps.observations:] if caps.observations else ()
    return [observation_view(item, caps) for item in kept], len(observations) - len(kept)


def _observations_text(request: JudgeRequest, caps: JudgeCaps) -> str:
    views, omitted = recent_observations(request.candidate.tool_calls, caps)
    lines = [f"[truncated: {omitted} earlier tool calls not shown]"] if omitted else []
    if not views and not omitted:
        return "(the agent made no tool calls)"
    for number, view in enumerate(views, start=omitted + 1):
        lines.append(f"#{number} {view['tool']} ({view['status']})")
        lines.append(f"input: {view['input']}")
        lines.append(f"result: {view['result']}")
    return "\n".join(lines)


def _rubric_text(request: JudgeRequest, caps: JudgeCaps) -> str:
    lines = ["requirements:"]
    # requirements come from the runtime and PreVerify hooks; each is capped like the request itself
    lines += [f"- {capped(item, caps.request_chars)}" for item in request.requirements] or [
        "- (none beyond the request)"
    ]
    if request.known_misses:
        lines.append("already failed (deterministic checks; list these codes in rubric_misses):")
        lines += [f"- {capped(code, caps.observation_other_chars)}" for code in request.known_misses]
    return "\n".join(lines)


class _Template:
    """A shipped prompt template split once into its literal text and its placeholders, so filling it is one join:
    ``string.Template.substitute`` re-parses the whole template with a regex and a callback per placeholder at
    every call (~15 µs a judgment for the two prompts). The same ``$`` syntax, read by ``string.Template``'s own
    pattern: ``$$`` is a ``$``, ``$name`` / ``${name}`` a placeholder; a placeholder it does not fill, or a ``$``
    that is neither, is a SchemaError (as ``substitute`` would fail at every call)."""

    __slots__ = ("_parts",)

    def __init__(self, name: str, text: str, names: frozenset[str]) -> None:
        #: (is a placeholder, literal text or placeholder name), adjacent literals merged
        parts: list[tuple[bool, str]] = []
        position = 0

        def literal(piece: str) -> None:
            if not piece:
                return
            if parts and not parts[-1][0]:
                parts[-1] = (False, parts[-1][1] + piece)
            else:
                parts.append((False, piece))

        for found in string.Template.pattern.finditer(text):
            literal(text[position:found.start()])
            position = found.end()
            if found.group("escaped") is not None:
                literal(string.Template.delimiter)
                continue
            placeholder = found.group("named") or found.group("braced")
            if placeholder is None or placeholder not in names:
                shown = found.group() if placeholder is None else placeholder
                raise SchemaError(f"prompts/{name} has a bad placeholder: {shown!r}")
            parts.append((True, placeholder))
        literal(text[position:])
        self._parts = tuple(parts)

    def fill(self, values: Mapping[str, str]) -> str:
        return "".join([values[piece] if slot else piece for slot, piece in self._parts])


_USER_NAMES = frozenset({"request", "final_answer", "observations", "rubric", "tag"})


@functools.cache
def _template(name: str) -> _Template:
    """A template, parsed at its first use and kept for the process (the shipped files never change)."""
    return _Template(name, read_text("prompts", name), _USER_NAMES if name == "judge_user.txt" else frozenset({"tag"}))


def wire_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The verdict schema reduced to the subset every structured-output API accepts (no length/range/pattern)."""

    def reduce(node: Any) -> Any:
        if isinstance(node, Mapping):
            kept: dict[str, Any] = {}
            for key, value in node.items():
                if key == "properties":
                    kept[key] = {name: reduce(item) for name, item in value.items()}
                elif key in _WIRE_KEYWORDS:
                    kept[key] = reduce(value)
            return kept
        if isinstance(node, list):
            return [reduce(item) for item in node]
        return node

    reduced: dict[str, Any] = reduce(schema)
    return reduced


def build_chat_request(
    request: JudgeRequest, caps: JudgeCaps, *, response_schema: Mapping[str, Any] | None,
    max_output_tokens: int | None = None,
) -> ChatRequest:
    """System and user prompt for one judgment; every piece of data is capped, neutralised and fenced by this
    call's random tag. ``max_output_tokens``: the ChatRequest's (None: its default)."""
    candidate = request.candidate
    tag = secrets.token_hex(TAG_BYTES)
    user = _template("judge_user.txt").fill({
        "request": neutralise(capped(candidate.request, caps.request_chars)),
        "final_answer": neutralise(capped(candidate.final_text, caps.candidate_chars) or "(empty)"),
        "observations": neutralise(_observations_text(request, caps)),
        "rubric": neutralise(_rubric_text(request, caps)),
        "tag": tag,
    })
    system = _template("judge_system.txt").fill({"tag": tag})
    if max_output_tokens is None:
        return ChatRequest(system=system, user=user, response_schema=response_schema)
    return ChatRequest(system=system, user=user, response_schema=response_schema,
                       max_output_tokens=max_output_tokens)


_face.present_module(globals())  # the names verigate.judge exports report it
