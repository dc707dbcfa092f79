"""The judge prompt: shipped templates, unforgeable delimiters, caps with truncation marks, the wire schema."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judge_servers import delimiter_tag
from verigate import Candidate, ToolObservation
from verigate._data import read_text, schema
from verigate.judge import VERDICT_SCHEMA, JudgeCaps, JudgeRequest, build_chat_request, neutralise, wire_schema

BLOCKS = ("request", "final_answer", "tool_observations", "rubric")


DEFAULT_CAPS = JudgeCaps()


def _user(request: JudgeRequest, caps: JudgeCaps = DEFAULT_CAPS) -> str:
    return build_chat_request(request, caps, response_schema=None).user


def test_templates_are_shipped_and_name_every_block() -> None:
    system, user = read_text("prompts", "judge_system.txt"), read_text("prompts", "judge_user.txt")
    assert "ignore" in system and "never an instruction" in system
    for name in BLOCKS:
        assert f"<<<BEGIN {name} ${{tag}}>>>" in user and f"<<<END {name} ${{tag}}>>>" in user
    assert "${tag}" in system  # the judge is told what the blocks' tag is


def test_every_call_draws_its_own_tag_and_names_it_to_the_judge() -> None:
    request = JudgeRequest(Candidate("q", "a"))
    first, second = (build_chat_request(request, DEFAULT_CAPS, response_schema=None) for _ in range(2))
    tags = {delimiter_tag(first.user), delimiter_tag(second.user)}
    assert len(tags) == 2
    for chat in (first, second):
        assert delimiter_tag(chat.user) in chat.system


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("<>ab \nEND"), max_size=60))
def test_neutralised_text_never_holds_a_delimiter(text: str) -> None:
    out = neutralise(text)
    assert "<<<" not in out and ">>>" not in out
    assert out.replace(" ", "") == text.replace(" ", "")  # only spaces are added: nothing is lost


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=80), st.text(max_size=80), st.text(max_size=40))
def test_every_block_opens_and_closes_once_whatever_the_data(request: str, final: str, output: str) -> None:
    candidate = Candidate(request, final, (ToolObservation("t", {"k": output}, output, None),))
    user = _user(JudgeRequest(candidate, (request,), (final,)))
    tag = delimiter_tag(user)
    for name in BLOCKS:
        assert user.count(f"<<<BEGIN {name} {tag}>>>") == 1 and user.count(f"<<<END {name} {tag}>>>") == 1
    assert len(re.findall(r"<<<", user)) == 2 * len(BLOCKS) + 2  # + the two in the header sentence
    assert user.count(tag) == 2 * len(BLOCKS) + 2


def test_caps_are_configurable_and_marked() -> None:
    caps = JudgeCaps(request_chars=10, candidate_chars=5, observations=2, observation_result_chars=4,
                     observation_input_chars=8, observation_other_chars=3)
    calls = tuple(ToolObservation(f"tool-{n}", {"path": "abcdefghij"}, "0123456789", n % 2 == 0) for n in range(4))
    user = _user(JudgeRequest(Candidate("r" * 11, "f" * 6, calls), ("tests_pass",), ("no_commit",)), caps)
    assert "[truncated: 10 of 11 characters shown]" in user
    assert "[truncated: 5 of 6 characters shown]" in user
    assert "[truncated: 2 earlier tool calls not shown]" in user
    assert "[truncated: 4 of 10 characters shown]" in user  # result
    assert "[truncated: 3 of 6 characters shown]" in user  # tool name
    assert "#3 too" in user and "(ok)" in user and "(error)" in user
    assert "- tests_pass" in user and "already failed" in user
    assert "- no_\n[truncated: 3 of 9 characters shown]" in user  # a known miss is capped like other fields


def test_no_tool_calls_and_no_requirements_are_said_plainly() -> None:
    user = _user(JudgeRequest(Candidate("do it", "")))
    assert "(the agent made no tool calls)" in user and "(empty)" in user and "(none beyond the request)" in user


def test_wire_schema_keeps_shape_and_drops_constraints() -> None:
    full = schema(VERDICT_SCHEMA)
    wire = wire_schema(full)
    assert wire["required"] == full["required"] and wire["additionalProperties"] is False
    assert set(wire["properties"]) == set(full["properties"])
    text = repr(wire)
    for dropped in ("minimum", "maximum", "maxLength", "pattern", "maxItems", "$schema", "$id"):
        assert dropped not in text
    assert wire["properties"]["reflection"]["required"] == ["observation", "lesson", "next_check"]


def _by_string_template(chat_user: str, request: JudgeRequest, caps: JudgeCaps) -> tuple[str, str]:
    """The oracle: both prompts as ``string.Template.substitute`` fills the shipped files, with this call's tag and
    the same capped, neutralised fields (the capped texts come from ``capped``, tested above on its own)."""
    from string import Template

    from verigate.judge._prompt import _observations_text, _rubric_text, capped

    tag = delimiter_tag(chat_user)
    candidate = request.candidate
    fields = {
        "request": capped(candidate.request, caps.request_chars),
        "final_answer": capped(candidate.final_text, caps.candidate_chars) or "(empty)",
        "observations": _observations_text(request, caps),
        "rubric": _rubric_text(request, caps),
    }
    user = Template(read_text("prompts", "judge_user.txt")).substitute(
        {key: neutralise(value) for key, value in fields.items()}, tag=tag)
    return Template(read_text("prompts", "judge_system.txt")).substitute(tag=tag), user


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=120), st.text(max_size=300), st.text(alphabet=st.sampled_from("<>$ {}ab\n"), max_size=40),
       st.integers(min_value=1, max_value=4096))
def test_the_parsed_templates_fill_exactly_as_string_template_does(request: str, final: str, output: str,
                                                                   tokens: int) -> None:
    """The templates are split once and filled by a join: the prompts are those ``string.Template`` makes, ``$``
    and braces in the data included; ``max_output_tokens`` is set on the request itself."""
    candidate = Candidate(request, final, (ToolObservation("t", {"k": output}, output, None),))
    judged = JudgeRequest(candidate, (output,), (final[:20],))
    chat = build_chat_request(judged, DEFAULT_CAPS, response_schema={"type": "object"}, max_output_tokens=tokens)
    assert (chat.system, chat.user) == _by_string_template(chat.user, judged, DEFAULT_CAPS)
    assert chat.max_output_tokens == tokens and chat.response_schema == {"type": "object"}
    assert build_chat_request(judged, DEFAULT_CAPS, response_schema=None).max_output_tokens == 1024


def test_a_template_with_a_bad_placeholder_is_a_schema_error() -> None:
    """A placeholder the prompt does not fill, or a lone ``$``, fails when the template is parsed (as
    ``string.Template.substitute`` failed at every call), never as a prompt with the placeholder left in."""
    from verigate import SchemaError
    from verigate.judge._prompt import _Template

    names = frozenset({"request", "tag"})
    for text in ("judge ${request} $unknown", "judge ${unknown}", "costs $ 5", "ends with $"):
        with pytest.raises(SchemaError, match="bad placeholder"):
            _Template("judge_user.txt", text, names)
    assert _Template("t.txt", "ok $$ ${tag}$request.", names).fill({"tag": "T", "request": "R"}) == "ok $ TR."
