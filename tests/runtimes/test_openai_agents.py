"""verigate_openai_agents against the real Agents SDK: the agent's model is the SDK's OpenAIChatCompletionsModel
pointed at a scripted chat-completions server on 127.0.0.1; the judge is the scripted judge plug-in, or
``llm_judge`` over HTTP against a second loopback server (down, or answering garbage).

The fixtures live in this file (not a conftest) so that the other runtimes' tests in this folder stay apart.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

agents = pytest.importorskip("agents", reason="openai-agents is not installed")
pytest.importorskip("verigate_openai_agents", reason="the verigate-openai-agents plug-in is not installed")

import pydantic  # noqa: E402  (after the skips: only needed when the SDK is there)
from agents import (  # noqa: E402
    Agent,
    ModelSettings,
    OpenAIChatCompletionsModel,
    OutputGuardrailTripwireTriggered,
    RunConfig,
    Runner,
    function_tool,
    set_tracing_disabled,
)
from agents.retry import ModelRetrySettings  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402
from verigate_openai_agents import GateCheck, gate_guardrail, run_gated, run_gated_sync  # noqa: E402

from judge_servers import JudgeServer, openai_completion, refused_url, verdict_json  # noqa: E402
from verigate import (  # noqa: E402
    Candidate,
    Gate,
    Reflection,
    ReviewPendingError,
    UnverifiedError,
    Verdict,
    VerigateError,
    hookimpl,
)
from verigate.testing import ScriptedJudge  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PASS = Verdict(passed=True, score=1.0)
RETRY = Verdict(passed=False, rubric_misses=("evidence",), retryable=True,
                reflection=Reflection("no weather source", "call the weather tool", "cite the tool's reading"))


@pytest.fixture(autouse=True, scope="module")
def _no_tracing() -> Iterator[None]:
    # the SDK would otherwise export traces to the network
    set_tracing_disabled(True)
    yield


@pytest.fixture
def model_server() -> Iterator[JudgeServer]:
    with JudgeServer("openai") as server:
        yield server


MakeGate = Callable[..., tuple[Gate, ScriptedJudge]]


@pytest.fixture
def make_gate(tmp_path: Path) -> Iterator[MakeGate]:
    opened: list[Gate] = []

    def make(steps: Sequence[Any] = (), *, plugins: Sequence[object] = (), repeat_last: bool = False,
             **sections: Any) -> tuple[Gate, ScriptedJudge]:
        scripted = ScriptedJudge(steps, repeat_last=repeat_last)
        config = {"judge": {"engine": "scripted"}, **sections}
        gate = Gate.from_config(config, plugins=[scripted, *plugins], store=str(tmp_path / "verigate.db"),
                                entry_points=False)
        opened.append(gate)
        return gate, scripted

    yield make
    for gate in opened:
        gate.close()


def http_gate(tmp_path: Path, base_url: str) -> Gate:
    """``llm_judge`` through the ``openai`` client against ``base_url`` (a loopback server, or a refused port)."""
    config = {"judge": {"engine": "llm_judge", "client": "openai", "model": "gpt-4o-mini", "base_url": base_url,
                        "timeout_s": 5}}
    return Gate.from_config(config, plugins=["verigate_openai"], store=str(tmp_path / "verigate.db"),
                            entry_points=False)


def model(server: JudgeServer) -> OpenAIChatCompletionsModel:
    client = AsyncOpenAI(base_url=server.base_url, api_key="loopback", max_retries=0)
    return OpenAIChatCompletionsModel(model="gpt-loopback", openai_client=client)


@function_tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"{city}: 21C, sunny"


@function_tool
def broken(city: str) -> str:
    """A tool that fails."""
    raise RuntimeError("sensor offline")


def make_agent(server: JudgeServer, **kwargs: Any) -> Agent[Any]:
    kwargs.setdefault("tools", [weather, broken])
    return Agent(name="forecaster", instructions="Answer with the tool's reading.", model=model(server), **kwargs)


def tool_call_reply(name: str, arguments: dict[str, Any], call_id: str = "call_1") -> dict[str, Any]:
    reply = openai_completion(None)
    reply["choices"][0]["message"]["tool_calls"] = [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}]
    reply["choices"][0]["finish_reason"] = "tool_calls"
    return reply


def messages(server: JudgeServer, index: int) -> list[dict[str, Any]]:
    return list(server.requests[index].json()["messages"])


def user_texts(server: JudgeServer, index: int) -> list[str]:
    return [m["content"] for m in messages(server, index) if m["role"] == "user"]


# --------------------------------------------------------------------------------------------- run_gated


def test_pass_hands_out_the_answer_built_from_the_runs_own_records(model_server: JudgeServer,
                                                                   make_gate: MakeGate) -> None:
    gate, judge = make_gate([PASS])
    model_server.reply_json(tool_call_reply("weather", {"city": "Oslo"}, "call_w"))
    model_server.reply_json(tool_call_reply("broken", {"city": "Oslo"}, "call_b"))
    model_server.reply_text("Oslo: 21C and sunny (weather tool).")
    gated = run_gated_sync(gate, make_agent(model_server), "Weather in Oslo?", session_id="thread-1")
    assert (gated.status, gated.answer, gated.review_id) == ("completed", "Oslo: 21C and sunny (weather tool).", None)
    assert gated.answer_or_raise() == gated.answer and gated.run is not None
    judged = judge.requests[0].candidate
    assert isinstance(judged, Candidate)
    assert (judged.request, judged.final_text, judged.session_id) == (
        "Weather in Oslo?", "Oslo: 21C and sunny (weather tool).", "thread-1")
    assert [(c.name, dict(c.input), c.ok) for c in judged.tool_calls] == [
        ("weather", {"city": "Oslo"}, True), ("broken", {"city": "Oslo"}, False)]
    assert judged.tool_calls[0].output == "Oslo: 21C, sunny"
    assert judged.usage["requests"] == 3 and judged.usage["total_tokens"] == 60
    session = gate.store.get_session("thread-1")
    assert session is not None and session.state == "completed"


def test_a_retryable_fail_feeds_the_follow_up_and_the_second_attempt_passes(model_server: JudgeServer,
                                                                            make_gate: MakeGate) -> None:
    gate, judge = make_gate([RETRY, PASS])
    model_server.reply_text("It is nice in Oslo.")
    model_server.reply_text("Oslo: 21C, sunny (weather tool).")
    gated = run_gated_sync(gate, make_agent(model_server), "Weather in Oslo?", session_id="thread-2")
    assert (gated.status, gated.answer, gated.attempts) == ("completed", "Oslo: 21C, sunny (weather tool).", 2)
    follow_up = gated.results[0].follow_up
    assert gated.results[0].outcome == "revise" and follow_up
    # the model's next instruction is the follow-up; it also sees its own first answer, the request once
    second = messages(model_server, 1)
    assert second[-1] == {"role": "user", "content": follow_up}
    assert user_texts(model_server, 1) == ["Weather in Oslo?", follow_up]
    assert any(m["role"] == "assistant" and m.get("content") == "It is nice in Oslo." for m in second)
    assert [r.attempt for r in gated.results] == [0, 1]
    assert [r.candidate.attempt for r in judge.requests] == [0, 1]


def test_only_the_latest_follow_up_is_fed_back(model_server: JudgeServer, make_gate: MakeGate) -> None:
    gate, _ = make_gate([RETRY, RETRY, PASS], budget={"revise": 2})
    for text in ("one", "two", "three"):
        model_server.reply_text(text)
    gated = run_gated_sync(gate, make_agent(model_server), "Weather?", session_id="thread-3")
    assert gated.status == "completed" and gated.attempts == 3
    assert user_texts(model_server, 2) == ["Weather?", gated.results[1].follow_up]
    assert [r.attempt for r in gated.results] == [0, 1, 2]  # strictly growing per session


def test_budget_exhausted_pends_without_the_answer_and_the_sdk_counters_cannot_extend_it(
        model_server: JudgeServer, make_gate: MakeGate) -> None:
    gate, judge = make_gate([RETRY], repeat_last=True, budget={"revise": 1})
    for n in range(10):
        model_server.reply_text(f"attempt {n}")
    # the SDK's own counters set high: many turns, many model retries
    agent = make_agent(model_server, model_settings=ModelSettings(retry=ModelRetrySettings(max_retries=20)))
    gated = run_gated_sync(gate, agent, "Weather?", session_id="thread-4", max_turns=100)
    assert (gated.status, gated.answer, gated.run) == ("pending", "", None)
    assert gated.attempts == 2 == len(model_server.requests) == judge.calls  # budget.revise + 1
    assert gated.result.policy_action == "escalate_budget_exhausted"
    assert gated.review_id is not None
    review = gate.store.get_review(gated.review_id)
    assert (review.session_id, review.status, review.pending_text) == ("thread-4", "pending", "attempt 1")
    with pytest.raises(ReviewPendingError) as raised:
        gated.answer_or_raise()
    assert raised.value.review_id == gated.review_id and raised.value.exit_code == 3


def test_a_judge_that_is_down_pends_at_once_without_a_retry(model_server: JudgeServer, tmp_path: Path) -> None:
    gate = http_gate(tmp_path, refused_url() + "/v1")
    try:
        model_server.reply_text("Oslo: 21C.")
        model_server.reply_text("never asked for")
        gated = run_gated_sync(gate, make_agent(model_server), "Weather?", session_id="thread-5")
        assert (gated.status, gated.answer, gated.attempts) == ("pending", "", 1)
        assert gated.result.policy_action == "escalate_verification_error"
        assert len(model_server.requests) == 1 and model_server.pending_replies == 1  # no second attempt
        assert gated.review_id is not None and gate.store.get_review(gated.review_id).status == "pending"
    finally:
        gate.close()


def test_a_judge_answering_garbage_pends_at_once(model_server: JudgeServer, tmp_path: Path) -> None:
    with JudgeServer("openai") as judge_server:
        judge_server.reply_text("I think it is fine, probably.")
        gate = http_gate(tmp_path, judge_server.base_url)
        try:
            model_server.reply_text("Oslo: 21C.")
            gated = run_gated_sync(gate, make_agent(model_server), "Weather?", session_id="thread-6")
            assert (gated.status, gated.answer, gated.attempts) == ("pending", "", 1)
            assert gated.result.verdict is not None and gated.result.verdict.error == "invalid_judge_response"
            assert len(judge_server.requests) == 1 and len(model_server.requests) == 1
        finally:
            gate.close()


TOKEN = "gh" + "p_" + "Zq8XrT2vLm9WcK4nYb7HsD3fJp6Ga1Ue5RiO"  # a GitHub token shape (split: no scanner alarm)


@function_tool
def deploy_status(service: str) -> str:
    """The deploy status, with the credential a careless tool leaks."""
    return f"{service}: deployed with token {TOKEN}"


def test_the_runs_records_are_redacted_before_the_judge_and_the_store(model_server: JudgeServer,
                                                                      tmp_path: Path) -> None:
    with JudgeServer("openai") as judge_server:
        for _ in range(3):  # the default budget: two revises, then a pending review
            judge_server.reply_text(verdict_json(passed=False, misses=("leak",)))
        gate = http_gate(tmp_path, judge_server.base_url)
        try:
            for attempt in range(3):
                model_server.reply_json(tool_call_reply("deploy_status", {"service": "api"}, f"call_{attempt}"))
                model_server.reply_text(f"api is deployed (token {TOKEN}).")
            agent = make_agent(model_server, tools=[deploy_status])
            gated = run_gated_sync(gate, agent, "Is api deployed?", session_id="thread-redact")
            assert gated.status == "pending" and gated.answer == ""
            assert judge_server.requests and all(TOKEN not in r.text for r in judge_server.requests)
            assert "deploy_status" in judge_server.requests[0].text  # the tool call reached the judge, redacted
            review = gate.store.get_review(gated.review_id or "")
            assert TOKEN not in json.dumps(dict(review.candidate)) and TOKEN not in review.pending_text
            assert [call["name"] for call in review.candidate["tool_calls"]] == ["deploy_status"]
        finally:
            gate.close()
        for stored in tmp_path.glob("verigate.db*"):
            assert TOKEN.encode() not in stored.read_bytes()


class RaisingPostVerify:
    __name__ = "raising-post-verify"

    @hookimpl
    def verigate_post_verify(self, verdict: Verdict) -> Any:
        raise RuntimeError("hook bug")


def test_a_hook_error_escalates(model_server: JudgeServer, make_gate: MakeGate) -> None:
    gate, _ = make_gate([PASS], plugins=[RaisingPostVerify()])
    model_server.reply_text("Oslo: 21C.")
    gated = run_gated_sync(gate, make_agent(model_server), "Weather?", session_id="thread-7")
    assert (gated.status, gated.answer) == ("pending", "")
    assert gated.result.policy_action == "escalate_hook_error" and gated.review_id is not None


class Forecast(pydantic.BaseModel):
    city: str
    celsius: int

    def model_dump_json(self, **kwargs: Any) -> str:
        raise RuntimeError("cannot serialize")  # makes the adapter's own candidate building fail


def test_an_exception_inside_the_adapter_files_a_review_never_a_pass(model_server: JudgeServer,
                                                                     make_gate: MakeGate) -> None:
    gate, judge = make_gate([PASS])
    model_server.reply_text(json.dumps({"city": "Oslo", "celsius": 21}))
    agent = make_agent(model_server, output_type=Forecast)
    gated = run_gated_sync(gate, agent, "Weather?", session_id="thread-8")
    assert (gated.status, gated.answer, gated.run) == ("pending", "", None)
    assert gated.result.policy_action == "escalate" and judge.calls == 0
    review = gate.store.get_review(gated.review_id or "")
    assert "the adapter raised: RuntimeError: cannot serialize" in review.reason


def test_a_model_error_is_never_a_pass(model_server: JudgeServer, make_gate: MakeGate) -> None:
    gate, judge = make_gate([PASS])
    model_server.reply_status(500, "model down")
    gated = run_gated_sync(gate, make_agent(model_server), "Weather?", session_id="thread-9")
    assert gated.status in ("pending", "unverified") and gated.answer == "" and judge.calls == 0
    with pytest.raises((ReviewPendingError, UnverifiedError)):
        gated.answer_or_raise()


def test_max_turns_is_never_a_pass(model_server: JudgeServer, make_gate: MakeGate) -> None:
    gate, judge = make_gate([PASS])
    for n in range(3):
        model_server.reply_json(tool_call_reply("weather", {"city": "Oslo"}, f"call_{n}"))
    gated = run_gated_sync(gate, make_agent(model_server), "Weather?", session_id="thread-10", max_turns=2)
    assert gated.status in ("pending", "unverified") and gated.answer == "" and judge.calls == 0
    assert gated.result.policy_action != "accept"


@function_tool
async def cancelling(city: str) -> str:
    """A tool that raises CancelledError on its own (nobody cancelled the run)."""
    raise asyncio.CancelledError


def test_a_cancelled_error_inside_a_tool_is_a_failed_call_not_a_cancellation(model_server: JudgeServer,
                                                                            make_gate: MakeGate) -> None:
    gate, judge = make_gate([PASS])
    model_server.reply_json(tool_call_reply("cancelling", {"city": "Oslo"}))
    model_server.reply_text("Oslo: 21C.")
    agent = make_agent(model_server, tools=[cancelling])
    gated = run_gated_sync(gate, agent, "Weather?", session_id="thread-11")
    # the SDK contains it as a failed tool call: the judge sees the call with ok=False (and here passes anyway)
    assert [(c.name, c.ok) for c in judge.requests[0].candidate.tool_calls] == [("cancelling", False)]
    assert gated.status == "completed"


def test_the_callers_cancellation_propagates(model_server: JudgeServer, make_gate: MakeGate) -> None:
    gate, judge = make_gate([PASS])
    model_server.reply_json(openai_completion("late"), delay_s=30)

    async def scenario() -> None:
        task = asyncio.create_task(run_gated(gate, make_agent(model_server), "Weather?", session_id="thread-12"))
        while not model_server.requests:  # the model call is under way
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert judge.calls == 0


def test_the_sdks_group_id_is_the_session_and_one_of_the_two_is_required(model_server: JudgeServer,
                                                                           make_gate: MakeGate) -> None:
    gate, judge = make_gate([PASS])
    model_server.reply_text("Oslo: 21C.")
    gated = run_gated_sync(gate, make_agent(model_server), "Weather?", run_config=RunConfig(group_id="chat-42"))
    assert gated.status == "completed" and judge.requests[0].candidate.session_id == "chat-42"
    with pytest.raises(VerigateError, match="conversation's id"):
        run_gated_sync(gate, make_agent(model_server), "Weather?")
    assert len(model_server.requests) == 1


def test_run_gated_refuses_an_agent_that_already_carries_the_guardrail(model_server: JudgeServer,
                                                                       make_gate: MakeGate) -> None:
    gate, _ = make_gate([PASS])
    agent = make_agent(model_server, output_guardrails=[gate_guardrail(gate)])
    with pytest.raises(VerigateError, match="already carries gate_guardrail"):
        run_gated_sync(gate, agent, "Weather?", session_id="thread-13")
    assert model_server.requests == []


def test_run_gated_sync_refuses_a_running_loop(model_server: JudgeServer, make_gate: MakeGate) -> None:
    gate, _ = make_gate([PASS])

    async def inside() -> None:
        with pytest.raises(VerigateError, match="running event loop"):
            run_gated_sync(gate, make_agent(model_server), "Weather?", session_id="thread-14")

    asyncio.run(inside())


# --------------------------------------------------------------------------------------------- gate_guardrail


def test_the_guardrail_lets_a_pass_through(model_server: JudgeServer, make_gate: MakeGate) -> None:
    gate, judge = make_gate([PASS])
    model_server.reply_text("Oslo: 21C.")
    agent = make_agent(model_server, output_guardrails=[gate_guardrail(gate, session_id="g-1")])
    result = Runner.run_sync(agent, "Weather in Oslo?")
    assert result.final_output == "Oslo: 21C."
    info = result.output_guardrail_results[0].output.output_info
    assert isinstance(info, GateCheck) and info.outcome == "completed"
    assert (judge.requests[0].candidate.request, judge.requests[0].candidate.session_id) == ("Weather in Oslo?",
                                                                                             "g-1")


def test_the_guardrail_trips_on_revise_with_the_follow_up_and_on_pending_with_the_review_id(
        model_server: JudgeServer, make_gate: MakeGate) -> None:
    gate, _ = make_gate([RETRY], repeat_last=True, budget={"revise": 1})
    agent = make_agent(model_server, output_guardrails=[gate_guardrail(gate, session_id="g-2")])
    checks: list[GateCheck] = []
    for text in ("first", "second"):
        model_server.reply_text(text)
        with pytest.raises(OutputGuardrailTripwireTriggered) as raised:
            Runner.run_sync(agent, "Weather?")  # the caller's own loop: the store counts the attempts
        checks.append(raised.value.guardrail_result.output.output_info)
    assert [c.outcome for c in checks] == ["revise", "pending_review"]
    assert checks[0].follow_up and checks[0].review_id is None
    assert checks[1].review_id is not None and gate.store.get_review(checks[1].review_id).pending_text == "second"


def test_the_guardrail_trips_when_the_judge_is_down(model_server: JudgeServer, tmp_path: Path) -> None:
    gate = http_gate(tmp_path, refused_url() + "/v1")
    try:
        model_server.reply_text("Oslo: 21C.")
        agent = make_agent(model_server, output_guardrails=[gate_guardrail(gate, session_id="g-3")])
        with pytest.raises(OutputGuardrailTripwireTriggered) as raised:
            Runner.run_sync(agent, "Weather?")
        info = raised.value.guardrail_result.output.output_info
        assert info.outcome == "pending_review" and info.policy_action == "escalate_verification_error"
        assert info.review_id is not None
    finally:
        gate.close()


def test_an_exception_inside_the_guardrail_trips_with_a_review(model_server: JudgeServer,
                                                               make_gate: MakeGate) -> None:
    gate, judge = make_gate([PASS])
    model_server.reply_text(json.dumps({"city": "Oslo", "celsius": 21}))
    agent = make_agent(model_server, output_type=Forecast,
                       output_guardrails=[gate_guardrail(gate, session_id="g-4")])
    with pytest.raises(OutputGuardrailTripwireTriggered) as raised:
        Runner.run_sync(agent, "Weather?")
    info = raised.value.guardrail_result.output.output_info
    assert info.outcome == "pending_review" and info.policy_action == "escalate" and judge.calls == 0


# --------------------------------------------------------------------------------------------- the example


def test_the_example_runs_offline_and_prints_the_outcomes() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    env.pop("OPENAI_API_KEY", None)
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "openai_agents.py")], capture_output=True,
                          text=True, env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("completed after 2 attempts: ")
    assert lines[1].startswith("pending: review ")
