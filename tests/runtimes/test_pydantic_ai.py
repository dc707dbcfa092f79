"""The Pydantic AI adapter against the real framework: an Agent on Pydantic AI's OpenAI chat model, pointed at a
scripted OpenAI-compatible server on 127.0.0.1, with the gate as its output validator.

The judge is the scripted judge-engine plug-in, or an HTTP judge on a second loopback server (down / garbage)."""

from __future__ import annotations

import asyncio
import json
import secrets
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai", reason="pydantic-ai-slim is not installed")
pytest.importorskip("verigate_pydantic_ai", reason="the verigate-agents-pydantic-ai plug-in is not installed")

from pydantic import BaseModel
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from verigate_pydantic_ai import (
    GateOutputValidator,
    ReviewPendingError,
    UnverifiedError,
    output_validator,
)

from judge_servers import JudgeServer, openai_completion, refused_url
from verigate import Candidate, Gate, PostDecision, Reflection, Verdict
from verigate.hookspecs import hookimpl
from verigate.testing import Delay, ScriptedJudge

ROOT = Path(__file__).resolve().parents[2]
PASS = Verdict(passed=True)
RETRY = Verdict(passed=False, rubric_misses=("cites_the_notes",), retryable=True,
                reflection=Reflection("no source named", "quote the release notes", "name the file"))

MakeGate = Callable[..., tuple[Gate, ScriptedJudge]]


class Answer(BaseModel):
    version: str
    fix: str


# --------------------------------------------------------------------------------------------- fixtures


@pytest.fixture
def model_server() -> Iterator[JudgeServer]:
    """The agent's model: an OpenAI-compatible chat completions server on loopback."""
    with JudgeServer("openai") as server:
        yield server


@pytest.fixture
def make_gate(tmp_path: Path) -> Iterator[MakeGate]:
    opened: list[Gate] = []

    def make(steps: Sequence[Any] = (), *, plugins: Sequence[object] = (), budget: int = 2,
             repeat_last: bool = False) -> tuple[Gate, ScriptedJudge]:
        scripted = ScriptedJudge(steps, repeat_last=repeat_last)
        gate = Gate.from_config({"judge": {"engine": "scripted"}, "budget": {"revise": budget}},
                                plugins=[scripted, *plugins], store=str(tmp_path / "verigate.db"),
                                entry_points=False)
        opened.append(gate)
        return gate, scripted

    yield make
    for gate in opened:
        gate.close()


def _http_gate(tmp_path: Path, base_url: str) -> Gate:
    return Gate.from_config({"judge": {"engine": "llm_judge", "client": "openai", "model": "gpt-4o-mini",
                                       "base_url": base_url}},
                            plugins=["verigate_openai"], store=str(tmp_path / "verigate.db"),
                            entry_points=False)  # the OpenAI judge client is a plug-in of its own


def _agent(server: JudgeServer, validator: GateOutputValidator[Any], *, retries: Any = None,
           output_type: Any = str) -> Agent[None, Any]:
    model = OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(base_url=server.base_url, api_key="sk-test"))
    agent: Agent[None, Any] = Agent(model, output_type=output_type,
                                    retries=validator.retries if retries is None else retries)
    agent.output_validator(validator)

    @agent.tool_plain
    def read_notes(version: str) -> str:
        """Read the release notes of a version."""
        if version == "0.0":
            raise ModelRetry("no such version")
        return f"notes {version}: fixed the login bug"

    return agent


def _tool_call(name: str, arguments: dict[str, Any], call_id: str = "call_1") -> dict[str, Any]:
    reply = openai_completion(None)
    reply["choices"][0]["message"]["tool_calls"] = [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
    ]
    reply["choices"][0]["finish_reason"] = "tool_calls"
    return reply


def _messages(server: JudgeServer, index: int) -> list[dict[str, Any]]:
    return list(server.requests[index].json()["messages"])


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


# --------------------------------------------------------------------------------------------- the rules


def test_a_pass_returns_the_answer_and_the_candidate_comes_from_the_runs_records(
        model_server: JudgeServer, make_gate: MakeGate) -> None:
    gate, judge = make_gate([PASS])
    model_server.reply_json(_tool_call("read_notes", {"version": "0.0"}, "call_bad"))
    model_server.reply_json(_tool_call("read_notes", {"version": "1.2"}, "call_ok"))
    model_server.reply_text("1.2 fixed the login bug (release notes).")
    agent = _agent(model_server, output_validator(gate, requirements=("cites_the_notes",)))

    result = agent.run_sync("What did 1.2 fix?", conversation_id="conv-pass")

    assert result.output == "1.2 fixed the login bug (release notes)."
    assert judge.calls == 1
    candidate = judge.requests[0].candidate
    assert candidate.request == "What did 1.2 fix?"
    assert candidate.final_text == "1.2 fixed the login bug (release notes)."
    assert candidate.session_id == "conv-pass" and candidate.attempt == 0
    assert candidate.requirements == ("cites_the_notes",)
    calls = [(call.name, dict(call.input), call.ok) for call in candidate.tool_calls]
    assert calls == [("read_notes", {"version": "0.0"}, False), ("read_notes", {"version": "1.2"}, True)]
    assert "no such version" in candidate.tool_calls[0].output
    assert candidate.tool_calls[1].output == "notes 1.2: fixed the login bug"
    assert candidate.usage["requests"] == 3 and candidate.usage["input_tokens"] == 30
    assert candidate.rounds == 3
    session = gate.store.get_session("conv-pass")
    assert session is not None and session.state == "completed"


def test_secrets_in_the_runs_records_are_redacted_before_the_judge(
        model_server: JudgeServer, make_gate: MakeGate) -> None:
    token = "ghp_" + secrets.token_hex(18)  # generated: no secret-shaped data in the repository
    gate, judge = make_gate([PASS])
    model_server.reply_json(_tool_call("read_notes", {"version": token}))
    model_server.reply_text(f"Read the notes with {token}.")
    agent = _agent(model_server, output_validator(gate))

    assert agent.run_sync("What did 1.2 fix?").output == f"Read the notes with {token}."  # the answer is the caller's

    candidate = judge.requests[0].candidate
    seen = json.dumps([candidate.final_text, [dict(call.input) for call in candidate.tool_calls],
                       [call.output for call in candidate.tool_calls]])
    assert token not in seen and "[REDACTED:github-classic-token" in seen


def test_a_refusal_is_never_handed_out_as_an_answer(model_server: JudgeServer, make_gate: MakeGate) -> None:
    gate, judge = make_gate([PASS])
    refusal = openai_completion("I cannot help with that.")
    refusal["choices"][0]["finish_reason"] = "content_filter"
    model_server.reply_json(refusal)
    agent = _agent(model_server, output_validator(gate))

    with pytest.raises(UnverifiedError) as raised:
        agent.run_sync("What did 1.2 fix?")

    assert judge.calls == 0 and raised.value.result.answer == ""


def test_a_retryable_fail_feeds_the_follow_up_and_the_second_attempt_passes(
        model_server: JudgeServer, make_gate: MakeGate) -> None:
    gate, judge = make_gate([RETRY, PASS])
    model_server.reply_text("It fixed a bug.")
    model_server.reply_text("Per the release notes, 1.2 fixed the login bug.")
    agent = _agent(model_server, output_validator(gate))

    result = agent.run_sync("What did 1.2 fix?", conversation_id="conv-revise")

    assert result.output == "Per the release notes, 1.2 fixed the login bug."
    assert judge.calls == 2 and len(model_server.requests) == 2
    follow_up = _text(_messages(model_server, 1)[-1])
    assert "cites_the_notes" in follow_up and "quote the release notes" in follow_up
    assert "cites_the_notes" not in json.dumps(_messages(model_server, 0))
    assert [request.candidate.attempt for request in judge.requests] == [0, 1]
    assert judge.requests[1].candidate.final_text == "Per the release notes, 1.2 fixed the login bug."


@pytest.mark.parametrize("framework_retries", [50, {"output": 50, "tools": 50}])
def test_a_high_framework_retry_count_never_extends_the_gates_budget(
        model_server: JudgeServer, make_gate: MakeGate, framework_retries: Any) -> None:
    gate, judge = make_gate([RETRY], budget=2, repeat_last=True)
    for index in range(10):
        model_server.reply_text(f"attempt {index}")
    agent = _agent(model_server, output_validator(gate), retries=framework_retries)

    with pytest.raises(ReviewPendingError) as raised:
        agent.run_sync("What did 1.2 fix?", conversation_id="conv-budget")

    assert type(raised.value) is ReviewPendingError  # the verigate exception itself, not a framework wrapper
    assert judge.calls == 3 and len(model_server.requests) == 3  # budget 2: two revises, then held
    assert [request.candidate.attempt for request in judge.requests] == [0, 1, 2]
    assert raised.value.policy_action == "escalate_budget_exhausted"
    review = gate.store.get_review(raised.value.review_id or "")
    assert review.status == "pending" and review.pending_text == "attempt 2"
    assert raised.value.result.answer == ""


@pytest.mark.parametrize("structured", [False, True], ids=["text", "output-tool"])
def test_a_framework_retry_limit_below_the_budget_still_ends_in_a_review(
        model_server: JudgeServer, make_gate: MakeGate, structured: bool) -> None:
    gate, judge = make_gate([RETRY], budget=3, repeat_last=True)
    for index in range(5):
        if structured:
            model_server.reply_json(_tool_call("final_result", {"version": "1.2", "fix": f"attempt {index}"},
                                               f"out_{index}"))
        else:
            model_server.reply_text(f"attempt {index}")
    agent = _agent(model_server, output_validator(gate), retries={"output": 1},
                   output_type=Answer if structured else str)

    with pytest.raises(ReviewPendingError) as raised:  # never pydantic_ai's UnexpectedModelBehavior
        agent.run_sync("What did 1.2 fix?", conversation_id="conv-low")

    assert judge.calls == 2 and len(model_server.requests) == 2
    assert raised.value.policy_action == "escalate_budget_exhausted"
    assert "attempt 1" in gate.store.get_review(raised.value.review_id or "").pending_text


def test_the_validator_sets_the_output_retries_from_the_budget(make_gate: MakeGate) -> None:
    gate, _ = make_gate(budget=4)
    assert output_validator(gate).retries == {"output": 4}


@pytest.mark.parametrize("judge_reply", ["down", "garbage"])
def test_a_judge_down_or_garbage_pends_at_once_with_no_retry(
        model_server: JudgeServer, tmp_path: Path, judge_reply: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-loopback-key")  # the judge's client reads its key from there
    with JudgeServer("openai") as judge_server:
        judge_server.reply_text("I think it is fine, probably.")
        url = refused_url() + "/v1" if judge_reply == "down" else judge_server.base_url
        model_server.reply_text("1.2 fixed the login bug.")
        model_server.reply_text("never asked for")
        with _http_gate(tmp_path, url) as gate:
            agent = _agent(model_server, output_validator(gate), retries=10)
            with pytest.raises(ReviewPendingError) as raised:
                agent.run_sync("What did 1.2 fix?", conversation_id=f"conv-{judge_reply}")
            review = gate.store.get_review(raised.value.review_id or "")
    assert len(model_server.requests) == 1  # no retry spent, no loop
    assert raised.value.policy_action == "escalate_verification_error"
    assert review.pending_text == "1.2 fixed the login bug."
    if judge_reply == "garbage":
        assert len(judge_server.requests) >= 1


class FailingPostVerify:
    __name__ = "failing-post-verify"

    @hookimpl
    def verigate_post_verify(self, candidate: Candidate, verdict: Verdict) -> Any:
        raise RuntimeError("the hook broke")


class RevisingPostVerify:
    __name__ = "revising-post-verify"

    @hookimpl
    def verigate_post_verify(self, candidate: Candidate, verdict: Verdict) -> Any:
        return PostDecision("revise", instruction="say which version") if candidate.attempt == 0 else None


def test_a_hook_error_escalates(model_server: JudgeServer, make_gate: MakeGate) -> None:
    gate, _ = make_gate([PASS], plugins=[FailingPostVerify()])
    model_server.reply_text("1.2 fixed the login bug.")
    agent = _agent(model_server, output_validator(gate))

    with pytest.raises(ReviewPendingError) as raised:
        agent.run_sync("What did 1.2 fix?", conversation_id="conv-hook")

    assert raised.value.policy_action == "escalate_hook_error" and raised.value.review_id
    assert len(model_server.requests) == 1


def test_a_hook_revise_is_fed_back_like_the_judges(model_server: JudgeServer, make_gate: MakeGate) -> None:
    gate, _ = make_gate([PASS, PASS], plugins=[RevisingPostVerify()])
    model_server.reply_text("It fixed the login bug.")
    model_server.reply_text("Version 1.2 fixed the login bug.")
    agent = _agent(model_server, output_validator(gate))

    assert agent.run_sync("What did 1.2 fix?").output == "Version 1.2 fixed the login bug."
    assert "say which version" in _text(_messages(model_server, 1)[-1])


def test_an_exception_inside_the_adapter_is_held_never_a_pass(
        model_server: JudgeServer, make_gate: MakeGate) -> None:
    gate, judge = make_gate([PASS])
    model_server.reply_text("1.2 fixed the login bug.")

    def broken_session(ctx: Any) -> str:
        raise RuntimeError("no session today")

    agent = _agent(model_server, output_validator(gate, session_id=broken_session))
    with pytest.raises(ReviewPendingError) as raised:
        agent.run_sync("What did 1.2 fix?", conversation_id="conv-broken")

    assert judge.calls == 0 and raised.value.policy_action == "escalate_hook_error"
    review = gate.store.get_review(raised.value.review_id or "")
    assert review.session_id == "conv-broken" and review.pending_text == "1.2 fixed the login bug."
    assert "no session today" in review.reason
    assert isinstance(raised.value.__cause__, RuntimeError)


def test_when_not_even_a_review_can_be_stored_the_run_ends_unverified(
        model_server: JudgeServer, make_gate: MakeGate) -> None:
    gate, _ = make_gate([PASS])
    gate.store.close()  # the store is gone: the adapter's own review cannot be filed either
    model_server.reply_text("1.2 fixed the login bug.")

    def broken_session(ctx: Any) -> str:
        raise RuntimeError("no session today")

    agent = _agent(model_server, output_validator(gate, session_id=broken_session))
    with pytest.raises(UnverifiedError) as raised:
        agent.run_sync("What did 1.2 fix?", conversation_id="conv-nostore")

    assert raised.value.review_id is None and raised.value.result.answer == ""
    assert raised.value.result.pending_text == "1.2 fixed the login bug."  # the caller keeps the candidate
    assert raised.value.result.store_error


def test_a_held_answer_the_store_cannot_keep_is_still_not_handed_out(
        model_server: JudgeServer, make_gate: MakeGate) -> None:
    gate, _ = make_gate([PASS], plugins=[FailingPostVerify()])
    gate.store.close()
    model_server.reply_text("1.2 fixed the login bug.")
    agent = _agent(model_server, output_validator(gate))

    with pytest.raises(ReviewPendingError) as raised:
        agent.run_sync("What did 1.2 fix?", conversation_id="conv-nostore-hook")

    assert raised.value.review_id is None and raised.value.result.pending_text == "1.2 fixed the login bug."


def test_the_callers_cancellation_is_re_raised(model_server: JudgeServer, make_gate: MakeGate) -> None:
    gate, _ = make_gate([Delay(30, PASS)])
    model_server.reply_text("1.2 fixed the login bug.")
    agent = _agent(model_server, output_validator(gate))

    async def main() -> None:
        task = asyncio.create_task(agent.run("What did 1.2 fix?", conversation_id="conv-cancel"))
        while not gate.store.get_session("conv-cancel"):
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert not [review for review in gate.store.list_reviews() if review.session_id == "conv-cancel"]


def test_structured_output_through_an_output_tool_is_held_the_same_way(
        model_server: JudgeServer, make_gate: MakeGate) -> None:
    gate, judge = make_gate([RETRY], budget=1, repeat_last=True)
    for index in range(3):
        model_server.reply_json(_tool_call("final_result", {"version": "1.2", "fix": f"bug {index}"}, f"out_{index}"))
    agent = _agent(model_server, output_validator(gate), output_type=Answer)

    with pytest.raises(ReviewPendingError) as raised:
        agent.run_sync("What did 1.2 fix?", conversation_id="conv-tool-output")

    assert type(raised.value) is ReviewPendingError
    assert judge.calls == 2
    assert json.loads(judge.requests[0].candidate.final_text) == {"version": "1.2", "fix": "bug 0"}
    assert judge.requests[0].candidate.tool_calls == ()  # the output tool is the answer, not a tool the agent used


def test_the_session_is_the_conversation_and_a_new_run_starts_a_new_request(
        model_server: JudgeServer, make_gate: MakeGate) -> None:
    gate, judge = make_gate([RETRY, PASS, PASS])
    model_server.reply_text("first")
    model_server.reply_text("first, revised")
    model_server.reply_text("second")
    validator = output_validator(gate)
    agent = _agent(model_server, validator)

    first = agent.run_sync("What did 1.2 fix?")
    second = agent.run_sync("And 1.3?", message_history=first.all_messages())

    assert second.output == "second"
    sessions = {request.candidate.session_id for request in judge.requests}
    assert len(sessions) == 1 and sessions == {first.conversation_id}
    assert [request.candidate.attempt for request in judge.requests] == [0, 1, 0]
    assert judge.requests[2].candidate.request == "And 1.3?"
    assert judge.requests[2].candidate.tool_calls == () and judge.requests[2].candidate.usage["requests"] == 1


def test_a_streamed_partial_output_is_not_handed_out(make_gate: MakeGate) -> None:
    gate, judge = make_gate([PASS])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> Any:
        yield "1.2 fixed "
        yield "the login bug."

    agent: Agent[None, str] = Agent(FunctionModel(stream_function=stream))
    agent.output_validator(output_validator(gate))

    async def main() -> list[str]:
        seen: list[str] = []
        async with agent.run_stream("What did 1.2 fix?") as run:
            async for text in run.stream_output():
                seen.append(text)
        return seen

    with pytest.raises(UnverifiedError):
        asyncio.run(main())
    assert judge.calls == 0


def test_agent_iter_revises_and_completes_like_run(model_server: JudgeServer, make_gate: MakeGate) -> None:
    gate, judge = make_gate([RETRY, PASS])
    model_server.reply_text("It fixed a bug.")
    model_server.reply_text("Per the release notes, 1.2 fixed the login bug.")
    agent = _agent(model_server, output_validator(gate))

    async def main() -> str:
        async with agent.iter("What did 1.2 fix?") as run:
            async for _ in run:
                pass
        assert run.result is not None
        return str(run.result.output)

    assert asyncio.run(main()) == "Per the release notes, 1.2 fixed the login bug."
    assert judge.calls == 2


def test_a_streamed_run_cannot_retry_so_a_revise_is_held(make_gate: MakeGate) -> None:
    gate, judge = make_gate([RETRY, PASS])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> Any:
        yield "It fixed a bug."

    agent: Agent[None, str] = Agent(FunctionModel(stream_function=stream))
    validator = output_validator(gate)
    agent.output_validator(validator)

    async def main() -> str:
        async with agent.run_stream("What did 1.2 fix?", retries=validator.retries) as run:
            return await run.get_output()

    with pytest.raises(ReviewPendingError) as raised:
        asyncio.run(main())
    assert judge.calls == 1 and raised.value.policy_action == "escalate_budget_exhausted"
    assert "cannot retry" in gate.store.get_review(raised.value.review_id or "").reason


def test_a_streamed_run_that_passes_hands_out_the_final_output(make_gate: MakeGate) -> None:
    gate, judge = make_gate([PASS])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> Any:
        yield "1.2 fixed "
        yield "the login bug."

    agent: Agent[None, str] = Agent(FunctionModel(stream_function=stream))
    agent.output_validator(output_validator(gate))

    async def main() -> str:
        async with agent.run_stream("What did 1.2 fix?") as run:
            return await run.get_output()

    assert asyncio.run(main()) == "1.2 fixed the login bug."
    assert judge.calls == 1


def test_function_model_runs_are_gated_too(make_gate: MakeGate) -> None:
    gate, judge = make_gate([PASS])

    def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("1.2 fixed the login bug.")])

    agent: Agent[None, str] = Agent(FunctionModel(reply))
    agent.output_validator(output_validator(gate, session_id="fixed-session"))
    assert agent.run_sync("What did 1.2 fix?").output == "1.2 fixed the login bug."
    assert judge.requests[0].candidate.session_id == "fixed-session"


# --------------------------------------------------------------------------------------------- the example


def test_the_example_runs_offline_and_prints_each_outcome(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "pydantic-ai.py")], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "completed: 1.2 fixed the login bug (release notes)."
    assert lines[1].startswith("pending review ") and "escalate_budget_exhausted" in lines[1]
