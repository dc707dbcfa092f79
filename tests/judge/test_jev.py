"""The jev engine over the verigate-jev plug-in (entry point, stdlib HTTP) against a loopback System One server."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from judge_servers import JudgeServer, Reply, jev_answers, refused_url
from verigate import ConfigError, JudgeError, Verdict
from verigate.judge import JevJudge, JudgeConfig, JudgeEngine

SUPPORTED = {"supported": 0.86, "contradicted": 0.04, "insufficient_evidence": 0.10}


def _jev(build_judge: Callable[..., JudgeEngine], server: JudgeServer, **settings: Any) -> JudgeEngine:
    return build_judge("jev", "jev", base_url=server.base_url, **settings)


def _reason(run: Callable[[], Verdict]) -> str:
    with pytest.raises(JudgeError) as caught:
        run()
    return caught.value.reason


def test_supported_passes(build_judge, jev_server, make_request, run_judge, api_key) -> None:
    jev_server.reply_json(jev_answers("supported", SUPPORTED))
    verdict = run_judge(_jev(build_judge, jev_server), make_request())
    assert verdict.passed and not verdict.retryable and verdict.rubric_misses == ()
    assert verdict.score == 0.86
    assert verdict.engine == "jev" and verdict.effective_engine == "jev/jev-1.13.0"
    assert verdict.reflection is not None and "'supported'" in verdict.reflection.observation
    [request] = jev_server.requests
    assert request.path == "/v1/systemone"
    assert request.headers["authorization"] == f"Bearer {api_key}"
    body = request.json()
    assert body["model"] == "jev-latest"
    assert set(body) == {"model", "state", "questions"}
    verdict_question = body["questions"]["verdict"]
    assert verdict_question["type"] == "choice"
    assert set(verdict_question["criteria"]) == {"supported", "contradicted", "insufficient_evidence"}
    assert body["state"]["final_answer"] == "I ran the tests: 12 passed."
    assert body["state"]["tool_observations"][0]["result"] == "12 passed in 0.31s"


@pytest.mark.parametrize(
    ("choice", "probabilities", "miss"),
    [
        ("contradicted", {"supported": 0.1, "contradicted": 0.8, "insufficient_evidence": 0.1}, "claim_contradicted"),
        ("insufficient_evidence", {"supported": 0.3, "contradicted": 0.1, "insufficient_evidence": 0.6},
         "insufficient_evidence"),
        ("supported", {"supported": 0.45, "contradicted": 0.3, "insufficient_evidence": 0.25},
         "support_below_threshold"),
    ],
)
def test_not_supported_is_a_retryable_fail(build_judge, jev_server, make_request, run_judge, choice,
                                           probabilities, miss) -> None:
    jev_server.reply_json(jev_answers(choice, probabilities))
    verdict = run_judge(_jev(build_judge, jev_server), make_request())
    assert not verdict.passed and verdict.retryable and verdict.rubric_misses == (miss,)
    assert verdict.reflection is not None and repr(choice) in verdict.reflection.observation


def test_gate_is_on_probability_not_confidence(build_judge, jev_server, make_request, run_judge) -> None:
    answers = jev_answers("supported", {"supported": 0.7, "contradicted": 0.2, "insufficient_evidence": 0.1})
    answers["answers"]["verdict"]["confidence"] = 0.01
    jev_server.reply_json(answers)
    assert run_judge(_jev(build_judge, jev_server, threshold=0.7), make_request()).passed
    jev_server.reply_json(jev_answers("supported", {"supported": 0.69, "contradicted": 0.3,
                                                    "insufficient_evidence": 0.01}))
    assert not run_judge(_jev(build_judge, jev_server, threshold=0.7), make_request()).passed


def test_requirement_questions_derive_misses(build_judge, jev_server, make_request, run_judge) -> None:
    jev_server.reply_json(jev_answers("supported", SUPPORTED,
                                      nouls={"requirement_1": 0.9, "requirement_2": 0.2}))
    request = make_request(requirements=("tests_pass", "Update the changelog entry for 1.2"))
    verdict = run_judge(_jev(build_judge, jev_server), request)
    assert not verdict.passed and verdict.rubric_misses == ("requirement_2",)
    questions = jev_server.requests[0].json()["questions"]
    assert [questions[key]["type"] for key in ("requirement_1", "requirement_2")] == ["noul", "noul"]
    assert "Update the changelog entry for 1.2" in questions["requirement_2"]["instructions"]


def test_at_most_ten_questions(build_judge, jev_server, make_request, run_judge) -> None:
    requirements = tuple(f"req_{n}" for n in range(12))
    jev_server.reply_json(jev_answers("supported", SUPPORTED, nouls={f"requirement_{n}": 0.9 for n in range(1, 10)}))
    assert run_judge(_jev(build_judge, jev_server), make_request(requirements=requirements)).passed
    body = jev_server.requests[0].json()
    assert len(body["questions"]) == 10 and len(body["state"]["requirements"]) == 12


@pytest.mark.parametrize(
    "reply",
    [
        {"model": "jev", "answers": {}},
        {"model": "jev"},
        {"model": "jev", "answers": {"verdict": {"type": "choice", "choice": "approved",
                                                 "probabilities": {"supported": 1.0}}}},
        {"model": "jev", "answers": {"verdict": {"type": "noul", "noul": 0.99}}},
        {"model": "jev", "answers": {"verdict": {"type": "choice", "choice": "supported"}}},
        {"model": "jev", "answers": {"verdict": {"type": "choice", "choice": "supported",
                                                 "probabilities": {"supported": "0.9"}}}},
        {"model": "jev", "answers": {"verdict": {"type": "choice", "choice": "supported",
                                                 "probabilities": {"supported": 1.4}}}},
        {"model": "jev", "answers": {"verdict": {"type": "choice", "choice": "supported",
                                                 "probabilities": {"supported": 0.9, "contradicted": 0.9}}}},
        {"model": "jev", "answers": {"verdict": {"type": "choice", "choice": "supported",
                                                 "probabilities": {"supported": 0.9, "approved": 0.1}}}},
        [1, 2, 3],
    ],
)
def test_malformed_answers(build_judge, jev_server, make_request, run_judge, reply) -> None:
    jev_server.reply_json(reply)
    assert _reason(lambda: run_judge(_jev(build_judge, jev_server), make_request())) == "invalid_jev_response"


def test_missing_requirement_answer(build_judge, jev_server, make_request, run_judge) -> None:
    jev_server.reply_json(jev_answers("supported", SUPPORTED))
    request = make_request(requirements=("tests_pass",))
    assert _reason(lambda: run_judge(_jev(build_judge, jev_server), request)) == "invalid_jev_response"


@pytest.mark.parametrize("body", [b"not json", b"", b"<html>502</html>"])
def test_not_json(build_judge, jev_server, make_request, run_judge, body) -> None:
    jev_server.reply_raw(body)
    assert _reason(lambda: run_judge(_jev(build_judge, jev_server), make_request())) == "invalid_jev_response"


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422, 429, 500, 502, 503])
def test_http_status(build_judge, jev_server, make_request, run_judge, status) -> None:
    jev_server.reply_status(status)
    assert _reason(lambda: run_judge(_jev(build_judge, jev_server), make_request())) == f"judge_http_{status}"
    assert len(jev_server.requests) == 1


def test_wrong_key_is_401(build_judge, jev_server, make_request, run_judge, monkeypatch) -> None:
    monkeypatch.setenv("TYPESAFE_API_KEY", "test-wrong")
    assert _reason(lambda: run_judge(_jev(build_judge, jev_server), make_request())) == "judge_http_401"


def test_missing_key(build_judge, make_request, run_judge, monkeypatch) -> None:
    monkeypatch.delenv("TYPESAFE_API_KEY", raising=False)
    monkeypatch.delenv("TYPESAFE_BASE_URL", raising=False)
    judge = build_judge("jev", "jev")  # the default base: TypeSafe's API; the key check comes first
    assert _reason(lambda: run_judge(judge, make_request())) == "missing_jev_key"


def test_base_url_from_environment(build_judge, jev_server, make_request, run_judge, monkeypatch) -> None:
    monkeypatch.setenv("TYPESAFE_BASE_URL", jev_server.url)
    jev_server.reply_json(jev_answers("supported", SUPPORTED))
    assert run_judge(build_judge("jev", "jev", model="jev-1.13"), make_request()).passed
    assert jev_server.requests[0].json()["model"] == "jev-1.13"


def test_openrouter_style_endpoint(build_judge, make_request, run_judge, monkeypatch) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", "test-openrouter")
    # OpenRouter's decisions endpoint is {https://openrouter.ai/api}/alpha/decisions; the loopback plays it
    with JudgeServer("jev", required_key="test-openrouter", path="/api/alpha/decisions") as server:
        server.reply_json(jev_answers("supported", SUPPORTED, model="typesafe/jev-1.13"))
        judge = build_judge("jev", "jev", base_url=f"{server.url}/api", api_key_env="OPENROUTER_API_KEY",
                            model="typesafe/jev-1.13", options={"endpoint_path": "/alpha/decisions"})
        verdict = run_judge(judge, make_request())
    assert verdict.passed and verdict.effective_engine == "jev/typesafe/jev-1.13"


def test_slow_reply_past_the_deadline(build_judge, jev_server, make_request, run_judge) -> None:
    jev_server.reply(Reply(200, b"{}", delay_s=30))
    judge = _jev(build_judge, jev_server)
    assert _reason(lambda: run_judge(judge, make_request(), timeout_s=0.5)) == "judge_timeout"


def test_connection_refused(build_judge, make_request, run_judge, api_key) -> None:
    judge = build_judge("jev", "jev", base_url=refused_url())
    assert _reason(lambda: run_judge(judge, make_request())) == "judge_transport_error"


def test_huge_body(build_judge, jev_server, make_request, run_judge) -> None:
    jev_server.reply_raw(b'{"pad": "' + b"x" * 2_000_000 + b'"}')
    assert _reason(lambda: run_judge(_jev(build_judge, jev_server), make_request())) == "invalid_jev_response"


def test_jev_engine_refuses_a_chat_client(registries) -> None:
    engines, clients = registries
    config = JudgeConfig(engine="jev", client="callable", function=lambda request: "{}")
    with pytest.raises(ConfigError) as caught:
        engines["jev"](config=config, client=clients["callable"](config=config))
    assert caught.value.field == "judge.client"


def test_llm_judge_refuses_a_decision_client(registries, api_key) -> None:
    engines, clients = registries
    config = JudgeConfig(engine="llm_judge", client="jev")
    with pytest.raises(ConfigError):
        engines["llm_judge"](config=config, client=clients["jev"](config=config))


def test_no_client_is_judge_unavailable(make_request, run_judge) -> None:
    judge = JevJudge(JudgeConfig(engine="jev"))
    assert _reason(lambda: run_judge(judge, make_request())) == "judge_unavailable"
