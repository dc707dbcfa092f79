"""verigate_langgraph against the real langgraph / langchain packages: the gate node in a StateGraph (interrupt and
resume, InMemorySaver) and the create_agent middleware, with a real SQLite store.

The agent's model is a LangChain fake chat model (``langchain-openai`` is not in the project's environment, so no
OpenAI-protocol chat model of LangChain can be used); the judge is the scripted judge plug-in or the OpenAI-compatible
HTTP judge (verigate-openai) against a loopback server that is up, down or answers garbage.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic import Field

langgraph = pytest.importorskip("langgraph", reason="langgraph is not installed")
pytest.importorskip("langchain.agents", reason="langchain is not installed")

from langchain.agents import create_agent  # noqa: E402
from langchain.agents.middleware import ModelRetryMiddleware  # noqa: E402
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel  # noqa: E402
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage  # noqa: E402
from langchain_core.outputs import ChatGeneration, ChatResult  # noqa: E402
from langchain_core.tools import ToolException, tool  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.graph import START, StateGraph  # noqa: E402
from langgraph.types import Command, RetryPolicy  # noqa: E402
from verigate_langgraph import GateMiddleware, GateState, gate_node  # noqa: E402

from judge_servers import JudgeServer, refused_url, verdict_json  # noqa: E402
from verigate import (  # noqa: E402
    Gate,
    Reflection,
    ReviewPendingError,
    Verdict,
    VerigateError,
    hookimpl,
)
from verigate.testing import Delay, ScriptedJudge  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PASS = Verdict(passed=True)
RETRY = Verdict(passed=False, rubric_misses=("tests_pass",), retryable=True,
                reflection=Reflection("no test output", "run pytest", "pytest -q"))
USAGE = {"input_tokens": 7, "output_tokens": 3, "total_tokens": 10}


class ScriptedChat(FakeMessagesListChatModel):
    """The fake chat model, playing ``responses`` in order (the last one repeats), recording every prompt; each
    reply is a fresh copy, so LangChain gives every call's message its own id as a real model's would get."""

    prompts: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChat:
        return self

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        self.prompts.append(list(messages))
        reply = self.responses[min(len(self.prompts) - 1, len(self.responses) - 1)]
        return ChatResult(generations=[ChatGeneration(message=reply.model_copy(deep=True))])


def chat(*replies: str | AIMessage) -> ScriptedChat:
    messages = [AIMessage(content=r, usage_metadata=USAGE) if isinstance(r, str) else r for r in replies]
    return ScriptedChat(responses=messages, prompts=[])


def call_tests() -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": "run_tests", "args": {"path": "tests"}, "id": "call-1"}],
                     usage_metadata=USAGE)


@tool
def run_tests(path: str) -> str:
    """Run the test suite under ``path``."""
    return f"{path}: 12 passed"


@tool
def deploy(target: str) -> str:
    """Deploy (always fails here)."""
    raise ToolException(f"deploy to {target} refused")


deploy.handle_tool_error = True


class FailingHook:
    """A pre_verify hook that raises: the gate must escalate, never pass."""

    @hookimpl
    def verigate_pre_verify(self, candidate: Any) -> Any:
        raise RuntimeError("hook broke")


@pytest.fixture
def make_gate(tmp_path: Path) -> Iterator[Any]:
    opened: list[Gate] = []

    def make(steps: Sequence[Any] = (), *, repeat_last: bool = False, plugins: Sequence[object] = (),
             judge: dict[str, Any] | None = None, **sections: Any) -> tuple[Gate, ScriptedJudge]:
        scripted = ScriptedJudge(steps, repeat_last=repeat_last)
        if judge is None:  # the scripted judge; entry points off so only the plug-ins given take part
            gate = Gate.from_config({"judge": {"engine": "scripted"}, **sections}, plugins=[scripted, *plugins],
                                    store=str(tmp_path / "verigate.db"), entry_points=False)
        else:  # an HTTP judge: the installed verigate-openai plug-in, through its entry point
            gate = Gate.from_config({"judge": judge, **sections}, plugins=list(plugins),
                                    store=str(tmp_path / "verigate.db"))
        opened.append(gate)
        return gate, scripted

    yield make
    for gate in opened:
        gate.close()


def cfg(thread: str, **extra: Any) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}, **extra}


def ask(text: str = "Fix the failing test and run the suite.") -> dict[str, Any]:
    return {"messages": [HumanMessage(text)]}


# ============================================================================ create_agent middleware


def agent_of(gate: Gate, model: ScriptedChat, *, retries: int = 0, **kwargs: Any) -> Any:
    retry = [ModelRetryMiddleware(max_retries=retries, initial_delay=0.0, jitter=False)] if retries else []
    return create_agent(model, tools=[run_tests, deploy], middleware=[*retry, GateMiddleware(gate)],
                        checkpointer=InMemorySaver(), **kwargs)


def test_middleware_pass_hands_out_the_answer_built_from_the_agents_records(make_gate: Any) -> None:
    gate, judge = make_gate([PASS])
    model = chat(call_tests(), AIMessage(content="", tool_calls=[
        {"name": "deploy", "args": {"target": "prod"}, "id": "call-2"}], usage_metadata=USAGE),
        "Fixed it; tests: 12 passed.")
    result = agent_of(gate, model).invoke(ask(), cfg("t-pass"))
    assert result["messages"][-1].content == "Fixed it; tests: 12 passed."
    assert judge.calls == 1  # the tool-calling messages were not final: judged once, on the final message
    candidate = judge.requests[0].candidate
    assert candidate.request == "Fix the failing test and run the suite."
    assert candidate.final_text == "Fixed it; tests: 12 passed."
    assert [(c.name, dict(c.input), c.output, c.ok) for c in candidate.tool_calls] == [
        ("run_tests", {"path": "tests"}, "tests: 12 passed", True),
        ("deploy", {"target": "prod"}, "deploy to prod refused", False)]
    assert candidate.session_id == "t-pass" and candidate.attempt == 0 and candidate.rounds == 3
    assert dict(candidate.usage) == {"input_tokens": 21, "output_tokens": 9, "total_tokens": 30}
    session = gate.store.get_session("t-pass")
    assert session is not None and session.state == "completed"


def test_middleware_revise_feeds_the_follow_up_and_the_second_attempt_passes(make_gate: Any) -> None:
    gate, judge = make_gate([RETRY, PASS])
    model = chat("Done.", "Ran pytest -q: 12 passed.")
    result = agent_of(gate, model).invoke(ask(), cfg("t-revise"))
    assert result["messages"][-1].content == "Ran pytest -q: 12 passed."
    assert len(model.prompts) == 2 and judge.calls == 2
    follow_up = model.prompts[1][-1]
    assert isinstance(follow_up, HumanMessage) and "tests_pass" in str(follow_up.content)
    second = judge.requests[1].candidate
    assert second.attempt == 1 and second.request == "Fix the failing test and run the suite."


def test_middleware_budget_bounds_the_loop_not_the_recursion_limit(make_gate: Any) -> None:
    gate, judge = make_gate([RETRY], repeat_last=True, budget={"revise": 2})
    model = chat("Not yet.")
    with pytest.raises(ReviewPendingError) as held:
        # the framework's own counters set high: a retry middleware and the recursion limit
        agent_of(gate, model, retries=50).invoke(ask(), cfg("t-budget", recursion_limit=500))
    assert judge.calls == 3 and len(model.prompts) == 3  # budget.revise + 1 attempts, never more
    assert [r.candidate.attempt for r in judge.requests] == [0, 1, 2]
    assert held.value.policy_action == "escalate_budget_exhausted" and held.value.review_id
    review = gate.store.get_review(held.value.review_id)
    assert review.status == "pending" and review.session_id == "t-budget"


@pytest.mark.parametrize("judge_down", ["refused", "garbage"])
def test_middleware_http_judge_down_or_garbage_is_pending_at_once(make_gate: Any, judge_down: str) -> None:
    with JudgeServer("openai") as server:
        server.reply_text("this is not a verdict")
        base_url = refused_url() if judge_down == "refused" else server.base_url
        gate, _ = make_gate(judge={"engine": "llm_judge", "client": "openai", "model": "gpt-4o-mini",
                                   "base_url": base_url})
        model = chat("Done.")
        with pytest.raises(ReviewPendingError) as held:
            agent_of(gate, model).invoke(ask(), cfg("t-down", recursion_limit=500))
    assert len(model.prompts) == 1  # no retry spent, no loop
    assert held.value.policy_action == "escalate_verification_error" and held.value.review_id
    assert held.value.result.verdict.error in {"judge_transport_error", "invalid_judge_response"}
    assert gate.store.get_review(held.value.review_id).status == "pending"


def test_middleware_http_judge_up_passes(make_gate: Any) -> None:
    with JudgeServer("openai") as server:
        server.reply_text(verdict_json(passed=True))
        gate, _ = make_gate(judge={"engine": "llm_judge", "client": "openai", "model": "gpt-4o-mini",
                                   "base_url": server.base_url})
        result = agent_of(gate, chat(call_tests(), "12 passed.")).invoke(ask(), cfg("t-http"))
        sent = server.requests[0].text
    assert result["messages"][-1].content == "12 passed." and "tests: 12 passed" in sent


def test_middleware_hook_error_escalates(make_gate: Any) -> None:
    gate, judge = make_gate([PASS], plugins=[FailingHook()])
    with pytest.raises(ReviewPendingError) as held:
        agent_of(gate, chat("Done.")).invoke(ask(), cfg("t-hook"))
    assert held.value.policy_action == "escalate_hook_error" and judge.calls == 0


def test_middleware_adapter_errors_never_pass(make_gate: Any) -> None:
    gate, judge = make_gate([PASS], repeat_last=True)
    agent = create_agent(chat("Done."), middleware=[GateMiddleware(gate)])  # no checkpointer, no thread id
    with pytest.raises(VerigateError, match="thread id"):
        agent.invoke(ask())
    with pytest.raises(VerigateError, match="no user request"):  # nothing to verify the answer against
        agent_of(gate, chat("Done.")).invoke({"messages": [AIMessage("Hello.")]}, cfg("t-norequest"))
    assert judge.calls == 0


def test_middleware_reraises_the_callers_interrupt(make_gate: Any) -> None:
    gate, _ = make_gate([KeyboardInterrupt()])
    with pytest.raises(KeyboardInterrupt):
        agent_of(gate, chat("Done.")).invoke(ask(), cfg("t-kbd"))


def test_middleware_async(make_gate: Any) -> None:
    gate, judge = make_gate([RETRY, PASS, RETRY, RETRY], budget={"revise": 1})
    agent = agent_of(gate, chat("Done.", "12 passed.", "again"))
    result = asyncio.run(agent.ainvoke(ask(), cfg("t-async")))
    assert result["messages"][-1].content == "12 passed." and judge.calls == 2
    # a new request in the same thread starts again at attempt 0, with the whole budget
    with pytest.raises(ReviewPendingError):
        asyncio.run(agent.ainvoke(ask("Now the docs."), cfg("t-async")))
    assert [(r.candidate.request, r.candidate.attempt) for r in judge.requests[2:]] == [
        ("Now the docs.", 0), ("Now the docs.", 1)]


@pytest.mark.parametrize("face", ["middleware", "node"])
def test_the_callers_cancellation_passes_through(make_gate: Any, face: str) -> None:
    gate, judge = make_gate([Delay(30, PASS)])
    runnable = agent_of(gate, chat("Done.")) if face == "middleware" else graph_of(gate, chat("Done."))

    async def cancelled() -> None:
        task = asyncio.ensure_future(runnable.ainvoke(ask(), cfg(f"c-{face}")))
        while not judge.requests:  # cancel while the judge is at work
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancelled())
    assert gate.store.list_reviews() == []  # cancelled: neither a pass nor a review


def test_node_reraises_the_callers_interrupt(make_gate: Any) -> None:
    gate, _ = make_gate([KeyboardInterrupt()])
    with pytest.raises(KeyboardInterrupt):
        graph_of(gate, chat("Done.")).invoke(ask(), cfg("n-kbd"))


# ============================================================================ StateGraph gate node


def graph_of(gate: Gate, model: ScriptedChat, **node: Any) -> Any:
    def agent(state: GateState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(GateState)
    # the framework's own retries (set high) never add attempts: only the gate's budget does
    builder.add_node("agent", agent, retry_policy=RetryPolicy(max_attempts=50))
    builder.add_node("gate", gate_node(gate, agent="agent", **node))
    builder.add_edge(START, "agent")
    builder.add_edge("agent", "gate")
    return builder.compile(checkpointer=InMemorySaver())


def test_node_pass_and_revise(make_gate: Any) -> None:
    gate, judge = make_gate([RETRY, PASS])
    model = chat("Done.", "Ran pytest -q: 12 passed.")
    result = graph_of(gate, model).invoke(ask(), cfg("n-revise"))
    assert result["verigate"]["outcome"] == "completed"
    assert result["verigate"]["answer"] == result["messages"][-1].content == "Ran pytest -q: 12 passed."
    assert "tests_pass" in str(model.prompts[1][-1].content) and judge.calls == 2
    assert [r.candidate.session_id for r in judge.requests] == ["n-revise"] * 2
    assert [r.candidate.attempt for r in judge.requests] == [0, 1]


def test_node_budget_pauses_with_the_review_and_approve_resumes_without_refinalizing(make_gate: Any) -> None:
    gate, judge = make_gate([RETRY], repeat_last=True, budget={"revise": 1})
    model = chat("Not yet.", "Still not.")
    graph = graph_of(gate, model)
    paused = graph.invoke(ask(), cfg("n-budget", recursion_limit=500))
    assert judge.calls == 2 and len(model.prompts) == 2
    (pause,) = paused["__interrupt__"]
    review_id = pause.value["review_id"]
    assert paused["verigate"] == {"outcome": "pending_review", "review_id": review_id, "attempt": 1,
                                  "policy_action": "escalate_budget_exhausted",
                                  "after": paused["messages"][-1].id}
    # the held answer is not handed out: it is not in the graph's state while the review is pending
    assert all(m.content != "Still not." for m in graph.get_state(cfg("n-budget")).values["messages"])
    resumed = graph.invoke(Command(resume={"decision": "approve", "by": "ana"}), cfg("n-budget"))
    assert judge.calls == 2  # the re-run node did not finalize again
    assert resumed["verigate"]["outcome"] == "approved" and resumed["verigate"]["by"] == "ana"
    assert resumed["messages"][-1].content == "Still not."
    assert [r.status for r in gate.store.list_reviews()] == ["approved"]  # one review, not two
    assert gate.store.get_review(review_id).resolved_by == "ana"


def test_node_reject_and_a_bad_resume_value(make_gate: Any) -> None:
    gate, _ = make_gate([RETRY], repeat_last=True, budget={"revise": 0})
    graph = graph_of(gate, chat("Not yet."))
    review_id = graph.invoke(ask(), cfg("n-reject"))["__interrupt__"][0].value["review_id"]
    asked = graph.invoke(Command(resume={"decision": "approve"}), cfg("n-reject"))  # who decided is missing
    (again,) = asked["__interrupt__"]
    assert again.value["review_id"] == review_id and "by" in again.value["error"]
    assert gate.store.get_review(review_id).status == "pending"
    ended = graph.invoke(Command(resume={"decision": "reject", "by": "bo"}), cfg("n-reject"))
    assert ended["verigate"]["outcome"] == "rejected" and "answer" not in ended["verigate"]
    assert all(m.content != "Not yet." for m in ended["messages"])
    assert gate.store.get_review(review_id).status == "rejected"


def test_node_rerun_from_a_checkpoint_finds_its_review_instead_of_filing_another(make_gate: Any) -> None:
    gate, judge = make_gate([RETRY], repeat_last=True, budget={"revise": 0})
    graph = graph_of(gate, chat("Not yet."))
    first = graph.invoke(ask(), cfg("n-again"))["__interrupt__"][0].value["review_id"]
    # time travel: run the gate node again from the checkpoint right before it, on the very same answer
    before_gate = next(s for s in graph.get_state_history(cfg("n-again")) if s.next == ("gate",))
    again = graph.invoke(None, before_gate.config)
    assert again["__interrupt__"][0].value["review_id"] == first
    assert judge.calls == 1 and len(gate.store.list_reviews()) == 1
    graph.invoke(Command(resume={"decision": "approve", "by": "ana"}), cfg("n-again"))
    # once resolved, a re-run on the same answer takes the resolution: no judge call, no interrupt, no new review
    replayed = graph.invoke(None, before_gate.config)
    assert "__interrupt__" not in replayed and replayed["verigate"]["outcome"] == "approved"
    assert judge.calls == 1 and len(gate.store.list_reviews()) == 1


def test_node_review_resolved_out_of_band_is_taken_as_it_is(make_gate: Any) -> None:
    gate, _ = make_gate([RETRY], repeat_last=True, budget={"revise": 0})
    graph = graph_of(gate, chat("Not yet."))
    review_id = graph.invoke(ask(), cfg("n-cli"))["__interrupt__"][0].value["review_id"]
    gate.store.reject_review(review_id, by="cli")  # `verigate review reject` from a terminal
    ended = graph.invoke(Command(resume={"decision": "approve", "by": "late"}), cfg("n-cli"))
    assert ended["verigate"]["outcome"] == "rejected" and ended["verigate"]["by"] == "cli"


@pytest.mark.parametrize("judge_down", ["refused", "garbage"])
def test_node_http_judge_down_or_garbage_pauses_at_once(make_gate: Any, judge_down: str) -> None:
    with JudgeServer("openai") as server:
        server.reply_text("{not json")
        base_url = refused_url() if judge_down == "refused" else server.base_url
        gate, _ = make_gate(judge={"engine": "llm_judge", "client": "openai", "model": "gpt-4o-mini",
                                   "base_url": base_url})
        model = chat("Done.")
        paused = graph_of(gate, model).invoke(ask(), cfg("n-down", recursion_limit=500))
    assert len(model.prompts) == 1 and paused["verigate"]["attempt"] == 0
    assert paused["verigate"]["policy_action"] == "escalate_verification_error"
    assert gate.store.get_review(paused["__interrupt__"][0].value["review_id"]).status == "pending"


def test_node_hook_error_escalates_and_errors_never_pass(make_gate: Any) -> None:
    gate, judge = make_gate([PASS], plugins=[FailingHook()])
    paused = graph_of(gate, chat("Done.")).invoke(ask(), cfg("n-hook"))
    assert paused["verigate"]["policy_action"] == "escalate_hook_error" and judge.calls == 0
    gate.close()
    with pytest.raises(VerigateError):
        graph_of(gate, chat("Done.")).invoke(ask(), cfg("n-closed"))


def test_node_async(make_gate: Any) -> None:
    gate, judge = make_gate([RETRY, PASS, RETRY, RETRY], budget={"revise": 1})
    graph = graph_of(gate, chat("Done.", "12 passed.", "again"))
    done = asyncio.run(graph.ainvoke(ask(), cfg("n-async")))
    assert done["verigate"]["outcome"] == "completed" and judge.calls == 2
    paused = asyncio.run(graph.ainvoke(ask("Now the docs."), cfg("n-async")))
    review_id = paused["__interrupt__"][0].value["review_id"]
    resumed = asyncio.run(graph.ainvoke(Command(resume={"decision": "approve", "by": "ana"}), cfg("n-async")))
    assert resumed["verigate"]["outcome"] == "approved" and judge.calls == 4
    assert gate.store.get_review(review_id).status == "approved"


def test_tool_messages_of_the_graph_reach_the_candidate(make_gate: Any) -> None:
    gate, judge = make_gate([PASS])
    model = chat("12 passed.")
    graph = graph_of(gate, model)
    history = [HumanMessage("Run the tests."), call_tests(),
               ToolMessage("tests: 12 passed", tool_call_id="call-1", name="run_tests")]
    graph.invoke({"messages": history}, cfg("n-tools"))
    (observed,) = judge.requests[0].candidate.tool_calls
    assert (observed.name, observed.output, observed.ok) == ("run_tests", "tests: 12 passed", True)


# ============================================================================ the example


def test_the_example_runs_offline() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "langgraph_gate.py")], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "middleware: completed: Ran pytest -q: 12 passed." in lines
    assert any(line.startswith("node: paused for review rv_") for line in lines)
    assert "node: approved by ana: Not yet." in lines
