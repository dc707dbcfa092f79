"""The case file: the schema (its tool calls are the Candidate's), the strict reader and its bounds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verigate import InputError
from verigate._data import schema
from verigate.judge import (
    CASE_SCHEMA,
    MAX_CASE_LINE_CHARS,
    MAX_CASES,
    MAX_CASES_FILE_BYTES,
    case_record,
    parse_judge_cases,
    read_judge_cases,
)

GOOD = {"request": "r", "final_text": "f", "tool_calls": [{"name": "Bash", "input": {"command": "ls"},
                                                           "output": "a", "ok": True}], "label": "complete"}


def test_the_tool_calls_are_the_candidates_tool_observations() -> None:
    mine = schema(CASE_SCHEMA)["$defs"]["tool_observation"]
    candidates = schema("candidate.schema.json")["$defs"]["tool_observation"]
    assert mine["required"] == candidates["required"] and set(mine["properties"]) == set(candidates["properties"])
    for name, definition in candidates["properties"].items():
        assert mine["properties"][name]["type"] == definition["type"], name


def test_a_case_reads_into_the_gates_candidate(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(GOOD).encode() + b"\n\n" + json.dumps({**GOOD, "id": "x",
                     "label": "incomplete", "note": "n"}).encode())
    first, second = read_judge_cases(path)
    assert (first.name, second.name, second.note) == ("line 1", "x", "n")
    candidate = first.candidate("s")
    assert candidate.tool_calls[0].input == {"command": "ls"} and candidate.tool_calls[0].ok is True
    assert case_record(**{**GOOD, "label": "complete"}) == GOOD


def test_the_line_count_is_bounded() -> None:
    with pytest.raises(InputError, match=f"more than {MAX_CASES} lines"):
        parse_judge_cases("\n" * MAX_CASES + json.dumps(GOOD), source="cases.jsonl")


def test_a_line_is_bounded() -> None:
    long = json.dumps({**GOOD, "final_text": "x" * MAX_CASE_LINE_CHARS})
    with pytest.raises(InputError, match=r"cases\.jsonl:2: the line has"):
        parse_judge_cases(json.dumps(GOOD) + "\n" + long, source="cases.jsonl")


def test_a_field_is_bounded() -> None:
    with pytest.raises(InputError, match="final_text"):
        parse_judge_cases(json.dumps({**GOOD, "final_text": "x" * 200_001}))
    with pytest.raises(InputError, match="tool_calls"):
        parse_judge_cases(json.dumps({**GOOD, "tool_calls": [{"name": "a"}] * 501}))


def test_the_file_is_bounded(tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as handle:
        handle.truncate(MAX_CASES_FILE_BYTES + 1)  # sparse: no 64 MiB written
    with pytest.raises(InputError, match="larger than"):
        read_judge_cases(path)


def test_deep_nesting_and_invalid_utf8_are_refused(tmp_path: Path) -> None:
    deep = {**GOOD, "tool_calls": [{"name": "a", "input": {"k": json.loads("[" * 40 + "]" * 40)}}]}
    with pytest.raises(InputError, match="depth"):
        parse_judge_cases(json.dumps(deep))
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(json.dumps(GOOD).encode().replace(b'"f"', b'"\xe9"'))
    with pytest.raises(InputError, match="not UTF-8"):
        read_judge_cases(path)


def test_an_invalid_record_is_not_exported() -> None:
    with pytest.raises(InputError, match="request"):
        case_record(request="x" * 200_001, final_text="f", tool_calls=[], label="complete", id="r1")


def test_a_file_of_exactly_max_cases_lines_each_ending_in_a_newline_is_read() -> None:
    from verigate.judge import MAX_CASES, parse_judge_cases

    line = json.dumps({"request": "r", "final_text": "f", "tool_calls": [], "label": "complete"}) + "\n"
    assert len(parse_judge_cases(line * MAX_CASES)) == MAX_CASES
    with pytest.raises(InputError, match=f"more than {MAX_CASES} lines"):
        parse_judge_cases(line * MAX_CASES + "\n")
