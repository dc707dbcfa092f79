"""Labelled judge cases: the JSONL file ``verigate judge eval`` reads and ``verigate review export`` writes.

One case per line, each an object of ``schemas/judge-case.schema.json``; the file is read with the strict JSON
reader (a repeated key, NaN or deep nesting is an error, never a second reading) and bounded in size, line count
and line length before anything is parsed."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import attrs

from .. import _face
from .. import _json as strict_json
from .._data import compiled_schema
from .._errors import InputError
from .._models import Candidate, ToolObservation
from .._schema_errors import schema_failure

__all__ = [
    "CASE_SCHEMA",
    "LABELS",
    "MAX_CASES",
    "MAX_CASES_FILE_BYTES",
    "MAX_CASE_LINE_CHARS",
    "JudgeCase",
    "case_record",
    "check_case_record",
    "parse_judge_cases",
    "read_judge_cases",
]

CASE_SCHEMA = "judge-case.schema.json"
#: the whole file; a case set is a few hundred kilobytes, a review export of years a few megabytes
MAX_CASES_FILE_BYTES = 64 * 1024 * 1024
#: lines of the file, blank ones included
MAX_CASES = 20_000
#: one line (one case): far above the schema's field bounds together, far below the file bound
MAX_CASE_LINE_CHARS = 4 * 1024 * 1024
#: a case nests object → tool_calls → call → input → …; a tool input deeper than this is not a real one
_MAX_DEPTH = 32
Label = Literal["complete", "incomplete"]
#: the two labels; "complete" is the positive class of the agreement figures
LABELS: tuple[Label, ...] = ("complete", "incomplete")


@attrs.frozen
class JudgeCase:
    """One labelled case: what the agent was asked, its final answer and tool calls, and the right verdict."""

    request: str
    final_text: str
    label: Label
    tool_calls: tuple[ToolObservation, ...] = ()
    id: str | None = None
    note: str = ""
    #: the line of the file it came from (1-based; 0 when built in Python)
    line: int = 0

    @property
    def name(self) -> str:
        """The case's id, else ``line N``: how reports name it."""
        return self.id if self.id is not None else f"line {self.line}"

    def candidate(self, session_id: str) -> Candidate:
        """The case as the gate's Candidate."""
        return Candidate(request=self.request, final_text=self.final_text, tool_calls=self.tool_calls,
                         session_id=session_id)


def check_case_record(data: Any, *, source: str | None = None, line: int | None = None) -> None:
    """Raise InputError naming the field when ``data`` is not a valid case object."""
    if not isinstance(data, dict):
        raise InputError(f"a case must be a JSON object, got {type(data).__name__}", source=source, line=line)
    import fastjsonschema  # loaded with the compiled schema, not with this module

    try:
        compiled_schema(CASE_SCHEMA)(data)
    except fastjsonschema.JsonSchemaValueException as exc:
        failure = schema_failure(exc)
        message = {"required": "is required", "additionalProperties": "is not an allowed field"}.get(
            failure.rule or "", failure.detail or failure.message)
        raise InputError(message, source=source, line=line, field=failure.target or "case") from None


def _case(data: dict[str, Any], source: str | None, line: int) -> JudgeCase:
    check_case_record(data, source=source, line=line)
    calls = tuple(
        ToolObservation(call["name"], dict(call.get("input", {})), call.get("output", ""), call.get("ok"))
        for call in data["tool_calls"]
    )
    return JudgeCase(request=data["request"], final_text=data["final_text"], label=data["label"],
                     tool_calls=calls, id=data.get("id"), note=data.get("note", ""), line=line)


def parse_judge_cases(text: str, *, source: str | None = None) -> tuple[JudgeCase, ...]:
    """The cases of JSONL ``text`` (blank lines skipped); InputError naming ``source:line field`` for the first
    bad line, a repeated id, too many lines or a line too long, and for a file without a single case."""
    lines = text.split("\n")
    if lines[-1] == "":  # the newline ending the last line starts no line of its own
        lines.pop()
    if len(lines) > MAX_CASES:
        raise InputError(f"more than {MAX_CASES} lines", source=source)
    cases: list[JudgeCase] = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        if len(raw) > MAX_CASE_LINE_CHARS:
            raise InputError(f"the line has {len(raw)} characters (limit {MAX_CASE_LINE_CHARS})", source=source,
                             line=number)
        try:
            data = strict_json.loads(raw, max_depth=_MAX_DEPTH, max_chars=MAX_CASE_LINE_CHARS)
        except strict_json.StrictJSONError as exc:
            raise InputError(f"not one strict JSON object ({exc.kind}): {exc.message}", source=source,
                             line=number) from None
        case = _case(data, source, number)
        if case.id is not None:
            if case.id in seen:
                raise InputError(f"repeats the id {case.id!r} of line {seen[case.id]}", source=source,
                                 line=number, field="id")
            seen[case.id] = number
        cases.append(case)
    if not cases:
        raise InputError("holds no case", source=source)
    return tuple(cases)


def read_judge_cases(path: str | os.PathLike[str]) -> tuple[JudgeCase, ...]:
    """The cases of a JSONL file (see :func:`parse_judge_cases`), read at most ``MAX_CASES_FILE_BYTES`` + 1 bytes
    (a device or a huge file cannot stall the reader); an unreadable file is an InputError."""
    source = os.fspath(path)
    try:
        with Path(path).open("rb") as handle:
            data = handle.read(MAX_CASES_FILE_BYTES + 1)
    except OSError as exc:
        raise InputError(f"cannot read the case file: {exc.strerror or exc}", source=source) from None
    if len(data) > MAX_CASES_FILE_BYTES:
        raise InputError(f"the case file is larger than {MAX_CASES_FILE_BYTES} bytes", source=source)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 at byte {exc.start}", source=source) from None
    return parse_judge_cases(text.removeprefix("\ufeff"), source=source)


def case_record(*, request: str, final_text: str, tool_calls: Sequence[Mapping[str, Any]], label: Label,
                id: str | None = None, note: str = "") -> dict[str, Any]:
    """A case object as a line of the file holds it (checked against the schema: InputError when it is not
    valid, e.g. a stored text past a bound)."""
    record: dict[str, Any] = {}
    if id is not None:
        record["id"] = id
    record.update(request=request, final_text=final_text, tool_calls=[dict(call) for call in tool_calls],
                  label=label)
    if note:
        record["note"] = note
    check_case_record(record, source=None if id is None else f"case {id}")
    return record


_face.present_module(globals())  # the names verigate.judge exports report it
