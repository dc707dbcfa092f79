"""The verigate-otel plug-in with the real SDK and its in-memory exporter: one verigate.finalize span and one
gen_ai.evaluation.result event per finalize, carrying codes only; its place under the runtime's span; the judge's
chat span; stage spans; the evaluation event as a log record; an observer that raises changes nothing."""

from __future__ import annotations

import asyncio
import json
import secrets
import string
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.trace import SpanKind, StatusCode
from otel_helpers import Otel, exported_values, verdict

from verigate import Candidate, Gate, PostDecision, Strengthen, Termination, ToolObservation, hookimpl
from verigate.judge import report_usage

NATURAL = Termination("natural")


def github_token() -> str:
    """A token of the shape of a GitHub classic token, made now (never a real one)."""
    return "ghp_" + "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(36))


def finalize(gate: Gate, candidate: Candidate, termination: Termination = NATURAL) -> Any:
    return asyncio.run(gate.finalize(candidate, termination))


def test_one_finalize_span_with_codes_and_one_evaluation_event(otel: Otel) -> None:
    gate = otel.gate(judge_function=lambda request: verdict(True, score=0.75))
    result = finalize(gate, Candidate(request="add two numbers", final_text="added them; 3 tests pass"))
    assert result.outcome == "completed"
    [span] = otel.spans("verigate.finalize")
    attributes = dict(span.attributes or {})
    assert attributes["verigate.outcome"] == "completed"
    assert attributes["verigate.policy_action"] == "accept"
    assert attributes["verigate.attempt"] == 0
    assert attributes["verigate.engine"] == "llm_judge"
    assert "verigate.reason" not in attributes
    [event] = span.events
    assert event.name == "gen_ai.evaluation.result"
    assert dict(event.attributes or {}) == {"gen_ai.evaluation.name": "verigate.verification",
                                            "gen_ai.evaluation.score.label": "completed",
                                            "gen_ai.evaluation.score.value": 0.75}
    assert span.status.status_code is not StatusCode.ERROR


@pytest.mark.parametrize(("reply", "termination", "outcome", "reason"), [
    (verdict(False, misses=("tests_not_run",)), NATURAL, "revise", None),
    ("not json at all", NATURAL, "pending_review", "invalid_judge_response"),
    (verdict(True), Termination("max_rounds"), "unverified", None),
])
def test_every_outcome_has_exactly_one_span_and_event(otel: Otel, reply: str, termination: Termination,
                                                      outcome: str, reason: str | None) -> None:
    gate = otel.gate(judge_function=lambda request: reply)
    result = finalize(gate, Candidate(request="fix the bug", final_text="fixed"), termination)
    assert result.outcome == outcome
    [span] = otel.spans("verigate.finalize")
    [event] = span.events
    event_attributes = dict(event.attributes or {})
    assert event_attributes["gen_ai.evaluation.score.label"] == outcome
    assert event_attributes.get("error.type") == reason
    assert (span.attributes or {}).get("verigate.reason") == reason


def test_an_unfixable_structural_finding_is_the_reason_code(otel: Otel) -> None:
    gate = otel.gate(judge_function=lambda request: verdict(True))
    result = finalize(gate, Candidate(request="deploy it", final_text="Please run `make` and paste the output."))
    assert result.policy_action == "escalate_unfixable_structural"
    [span] = otel.spans("verigate.finalize")
    assert dict(span.events[0].attributes or {})["error.type"] == "model_action_required"
    assert not otel.spans("chat m1")  # the judge was skipped


texts = st.text(alphabet=string.ascii_letters + string.digits + " ", min_size=12, max_size=200)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(request=texts, final=texts, output=texts, reflection=texts)
def test_no_candidate_text_reaches_any_attribute_or_event(otel: Otel, request: str, final: str, output: str,
                                                          reflection: str) -> None:
    otel.exporter.clear()
    token = github_token()
    candidate = Candidate(request=f"{request} {token}", final_text=f"{final} key={token}",
                          tool_calls=(ToolObservation("Bash", {"command": request}, f"{output} {token}", True),))
    # the judge quotes the candidate back in its reflection: that is judge text, and must not be exported either
    gate = otel.gate(judge_function=lambda chat: verdict(False, misses=("x",), observation=reflection + final))
    finalize(gate, candidate)
    spans = otel.spans()
    assert len(otel.spans("verigate.finalize")) == 1
    assert sum(len(span.events) for span in spans) == 1
    exported = "\n".join(exported_values(spans))
    assert token not in exported
    for text in (request, final, output, reflection):
        for start in range(len(text) - 11):
            window = text[start:start + 12]
            assert window not in exported, window


def test_the_finalize_span_is_a_child_of_the_runtimes_invoke_agent_span(otel: Otel) -> None:
    gate = otel.gate(judge_function=lambda request: verdict(True))
    tracer = otel.provider.get_tracer("a-runtime")

    async def agent_run() -> None:
        with tracer.start_as_current_span("invoke_agent coder", kind=SpanKind.INTERNAL):
            await gate.finalize(Candidate(request="r", final_text="done, tests pass"), NATURAL)

    asyncio.run(agent_run())
    [agent] = otel.spans("invoke_agent coder")
    [span] = otel.spans("verigate.finalize")
    assert span.parent is not None and span.parent.span_id == agent.context.span_id
    assert span.context.trace_id == agent.context.trace_id
    children = [found for found in otel.spans() if found.parent and found.parent.span_id == span.context.span_id]
    assert sorted(child.name for child in children) == ["chat m1", "verigate.post_verify", "verigate.pre_verify",
                                                        "verigate.stop", "verigate.structural_check"]


def test_the_judge_call_is_a_genai_chat_span_with_token_usage(otel: Otel) -> None:
    def judge(chat: Any) -> str:
        report_usage(input_tokens=321, output_tokens=54, response_model="m1-2026", response_id="resp-1",
                     finish_reason="stop")
        return verdict(True)

    gate = otel.gate({"judge": {"client": "callable", "model": "m1", "base_url": "http://127.0.0.1:9/v1"}},
                     judge_function=judge)
    finalize(gate, Candidate(request="r", final_text="done"))
    [chat] = otel.spans("chat m1")
    assert chat.kind is SpanKind.CLIENT
    attributes = dict(chat.attributes or {})
    assert attributes["gen_ai.operation.name"] == "chat"
    assert attributes["gen_ai.provider.name"] == "callable"
    assert attributes["gen_ai.request.model"] == "m1"
    assert attributes["gen_ai.usage.input_tokens"] == 321
    assert attributes["gen_ai.usage.output_tokens"] == 54
    assert attributes["gen_ai.response.model"] == "m1-2026"
    assert attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert attributes["server.address"] == "127.0.0.1" and attributes["server.port"] == 9
    assert not any(key.startswith(("gen_ai.input", "gen_ai.output", "gen_ai.system_")) for key in attributes)


def test_a_failed_judge_call_carries_its_reason_code(otel: Otel) -> None:
    from verigate import JudgeError

    def judge(chat: Any) -> str:
        raise JudgeError("judge_http_503", "the judge server answered HTTP 503")

    gate = otel.gate(judge_function=judge)
    result = finalize(gate, Candidate(request="r", final_text="done"))
    assert result.verdict is not None and result.verdict.error == "judge_http_503"
    [chat] = otel.spans("chat m1")
    assert (chat.attributes or {})["error.type"] == "judge_http_503"
    assert chat.status.status_code is StatusCode.ERROR
    [span] = otel.spans("verigate.finalize")
    assert dict(span.events[0].attributes or {})["error.type"] == "judge_http_503"


def test_content_capture_hands_on_the_redacted_request_and_reply_only(otel: Otel) -> None:
    token = github_token()
    gate = otel.gate(judge_function=lambda chat: verdict(True, observation=f"saw {token} in the answer"),
                     options={"capture_content": True})
    assert token not in gate.egress.text(token).text  # the oracle: the default packs redact this shape
    finalize(gate, Candidate(request=f"rotate {token}", final_text=f"rotated {token}; done"))
    [chat] = otel.spans("chat m1")
    attributes = dict(chat.attributes or {})
    inputs = json.loads(str(attributes["gen_ai.input.messages"]))
    outputs = json.loads(str(attributes["gen_ai.output.messages"]))
    assert inputs[0]["role"] == "user" and "rotate [REDACTED:github-classic-token" in inputs[0]["parts"][0]["content"]
    assert "saw [REDACTED:github-classic-token" in outputs[0]["parts"][0]["content"]
    assert json.loads(str(attributes["gen_ai.system_instructions"]))[0]["type"] == "text"
    assert token not in "\n".join(exported_values(otel.spans()))


def test_content_capture_is_off_by_default_and_on_with_the_environment(otel: Otel,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from verigate_otel import CAPTURE_ENV, OtelObserver

    monkeypatch.delenv(CAPTURE_ENV, raising=False)
    assert OtelObserver().capture_content is False
    monkeypatch.setenv(CAPTURE_ENV, "true")
    assert OtelObserver().capture_content is True
    monkeypatch.setenv(CAPTURE_ENV, "false")
    assert OtelObserver().capture_content is False


class Stages:
    """A plug-in on every decision stage: PreVerify strengthens, PostVerify raises."""

    __name__ = "stage-plugin"

    @hookimpl
    def verigate_pre_verify(self, candidate: Candidate) -> Strengthen:
        return Strengthen(requirements=("mention the test count",))

    @hookimpl
    def verigate_post_verify(self, candidate: Candidate) -> PostDecision:
        raise RuntimeError("a bug in a hook")


def test_each_decision_stage_is_a_span_and_a_failing_hook_is_its_error(otel: Otel) -> None:
    gate = otel.gate(judge_function=lambda chat: verdict(True), plugins=(Stages(),))
    result = finalize(gate, Candidate(request="r", final_text="done"))
    assert result.policy_action == "escalate_hook_error"
    [pre] = otel.spans("verigate.pre_verify")
    assert dict(pre.attributes or {})["verigate.stage.handlers"] == ("stage-plugin",)
    assert dict(pre.attributes or {})["verigate.stage.decisions"] == 1
    [post] = otel.spans("verigate.post_verify")
    assert dict(post.attributes or {})["error.type"] == "hook_error"
    assert post.status.status_code is StatusCode.ERROR
    assert len(otel.spans("verigate.structural_check")) == len(otel.spans("verigate.stop")) == 1
    [span] = otel.spans("verigate.finalize")
    assert dict(span.events[0].attributes or {})["error.type"] == "escalate_hook_error"


def test_the_evaluation_event_as_a_log_record_in_the_finalize_spans_context(otel: Otel) -> None:
    gate = otel.gate(judge_function=lambda chat: verdict(True, score=0.5), options={"evaluation_event": "log"})
    finalize(gate, Candidate(request="r", final_text="done"))
    [span] = otel.spans("verigate.finalize")
    assert not span.events
    [record] = otel.logs.get_finished_logs()
    log = record.log_record
    assert log.event_name == "gen_ai.evaluation.result"
    assert dict(log.attributes or {})["gen_ai.evaluation.score.value"] == 0.5
    assert log.span_id == span.context.span_id and log.trace_id == span.context.trace_id


class Broken:
    """An observer that raises (a BaseException, too) wherever it is called."""

    def __init__(self, where: str, error: type[BaseException]) -> None:
        self.where, self.error = where, error
        self.__name__ = f"broken-{where}-{error.__name__}"

    def start(self, kind: str, attributes: Any, *, current: bool) -> Any:
        if self.where == "start":
            raise self.error("observer start failed")
        return self

    def end(self, attributes: Any, error: str | None) -> None:
        if self.where == "end":
            raise self.error("observer end failed")

    @hookimpl
    def verigate_observer(self) -> Any:
        if self.where == "hook":
            raise self.error("no observer")
        return self


@pytest.mark.parametrize("where", ["hook", "start", "end"])
@pytest.mark.parametrize("error", [RuntimeError, SystemExit, GeneratorExit])
def test_an_observer_that_raises_changes_nothing(otel: Otel, where: str, error: type[BaseException]) -> None:
    candidates = [Candidate(request="r", final_text="done", session_id="s"),
                  Candidate(request="r", final_text="half of it is incomplete", session_id="u"),
                  Candidate(request="r", final_text="Please run `make` and paste the output.", session_id="t")]

    def judge(chat: Any) -> str:
        return verdict(False, misses=("m",)) if "incomplete" in chat.user else verdict(True)

    plain = Gate.from_config({"judge": {"client": "callable", "model": "m1"}}, store=":memory:",
                             entry_points=False, judge_function=judge)
    broken = otel.gate(judge_function=judge, plugins=(Broken(where, error),))
    for candidate in candidates:
        expected, got = finalize(plain, candidate), finalize(broken, candidate)
        assert (got.outcome, got.policy_action, got.verdict, got.attempt, got.follow_up) == (
            expected.outcome, expected.policy_action, expected.verdict, expected.attempt, expected.follow_up)
    # the working observer beside it still saw every finalize
    assert len(otel.spans("verigate.finalize")) == 3


def test_an_observer_without_start_is_ignored(otel: Otel) -> None:
    class NotAnObserver:
        __name__ = "not-an-observer"

        @hookimpl
        def verigate_observer(self) -> object:
            return object()

    gate = otel.gate(judge_function=lambda chat: verdict(True), plugins=(NotAnObserver(),))
    assert finalize(gate, Candidate(request="r", final_text="done")).outcome == "completed"
    assert len(otel.spans("verigate.finalize")) == 1


def test_usage_of_the_wrong_types_is_left_out_and_reporting_outside_a_call_does_nothing(otel: Otel) -> None:
    report_usage(input_tokens=1, output_tokens=2)  # no observed call: nothing to tell, nothing raised

    def judge(chat: Any) -> str:
        report_usage(input_tokens=True, output_tokens=-3, response_model="a model name with spaces",
                     response_id=12, finish_reason=None)
        return verdict(True)

    gate = otel.gate(judge_function=judge)
    assert finalize(gate, Candidate(request="r", final_text="done")).outcome == "completed"
    [chat] = otel.spans("chat m1")
    assert not any(key.startswith(("gen_ai.usage", "gen_ai.response")) for key in chat.attributes or {})
