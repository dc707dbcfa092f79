"""The callable client through its entry point: sync and async functions, and every way one can fail."""

from __future__ import annotations

import asyncio
import threading

import pytest

from judge_servers import delimiter_tag, verdict_json
from verigate import ConfigError, JudgeError
from verigate.judge import ChatRequest, JudgeConfig


def _judge(build_judge, function, **settings):
    return build_judge("llm_judge", "callable", function=function, **settings)


def _reason(run) -> str:
    with pytest.raises(JudgeError) as caught:
        run()
    return caught.value.reason


def test_sync_function(build_judge, make_request, run_judge) -> None:
    seen: list[ChatRequest] = []

    def model(request: ChatRequest) -> str:
        seen.append(request)
        return verdict_json(passed=True)

    verdict = run_judge(_judge(build_judge, model), make_request())
    assert verdict.passed and verdict.effective_engine.startswith("llm_judge/callable:")
    [request] = seen
    tag = delimiter_tag(request.user)
    assert f"<<<BEGIN final_answer {tag}>>>" in request.user and request.response_schema is not None


def test_async_function(build_judge, make_request, run_judge) -> None:
    async def model(request: ChatRequest) -> str:
        await asyncio.sleep(0)
        return verdict_json(passed=False, misses=("tests_not_run",))

    verdict = run_judge(_judge(build_judge, model, model="my-runtime-model"), make_request())
    assert verdict.rubric_misses == ("tests_not_run",)
    assert verdict.effective_engine == "llm_judge/callable:my-runtime-model"


def test_exception_is_a_transport_error(build_judge, make_request, run_judge) -> None:
    def model(request: ChatRequest) -> str:
        raise RuntimeError("model backend down")

    assert _reason(lambda: run_judge(_judge(build_judge, model), make_request())) == "judge_transport_error"


def test_judge_error_keeps_its_reason(build_judge, make_request, run_judge) -> None:
    async def model(request: ChatRequest) -> str:
        raise JudgeError("judge_http_503")

    assert _reason(lambda: run_judge(_judge(build_judge, model), make_request())) == "judge_http_503"


@pytest.mark.parametrize("reply", [None, 1, {"passed": True}, b"{}"])
def test_non_string_reply(build_judge, make_request, run_judge, reply) -> None:
    assert _reason(lambda: run_judge(_judge(build_judge, lambda request: reply), make_request())) == (
        "invalid_judge_response"
    )


def test_slow_sync_function_cannot_hold_the_deadline(build_judge, make_request, run_judge) -> None:
    release = threading.Event()

    def model(request: ChatRequest) -> str:
        release.wait(30)
        return verdict_json(passed=True)

    try:
        reason = _reason(lambda: run_judge(_judge(build_judge, model), make_request(), timeout_s=0.3))
    finally:
        release.set()
    assert reason == "judge_timeout"


def test_no_time_left(build_judge, make_request, run_judge) -> None:
    judge = _judge(build_judge, lambda request: verdict_json(passed=True))
    assert _reason(lambda: run_judge(judge, make_request(), timeout_s=0)) == "verification_time_budget_exhausted"


def test_missing_function_is_a_config_error(registries) -> None:
    _, clients = registries
    with pytest.raises(ConfigError) as caught:
        clients["callable"](config=JudgeConfig(client="callable"))
    assert caught.value.field == "judge.function"


@pytest.mark.parametrize("trust_flag", [True, None])
def test_auxiliary_judge_never_sees_personal_data(build_judge, make_request, run_judge, trust_flag) -> None:
    calls: list[ChatRequest] = []
    judge = _judge(build_judge, lambda request: calls.append(request) or verdict_json(passed=True), trust="auxiliary")
    request = make_request(contains_personal_data=trust_flag)
    assert _reason(lambda: run_judge(judge, request)) == "personal_data_omitted"
    assert calls == []


def test_auxiliary_judge_judges_a_clean_candidate(build_judge, make_request, run_judge) -> None:
    judge = _judge(build_judge, lambda request: verdict_json(passed=True), trust="auxiliary")
    assert run_judge(judge, make_request(contains_personal_data=False)).passed


def test_max_output_tokens_option(build_judge, make_request, run_judge) -> None:
    seen: list[int] = []

    def model(request: ChatRequest) -> str:
        seen.append(request.max_output_tokens)
        return verdict_json(passed=True)

    run_judge(_judge(build_judge, model), make_request())
    run_judge(_judge(build_judge, model, options={"max_output_tokens": 8000}), make_request())
    assert seen == [1024, 8000]
