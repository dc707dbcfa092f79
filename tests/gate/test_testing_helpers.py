"""verigate.testing: the scripted model client and the scripted judge-engine plug-in users test with."""

from __future__ import annotations

import asyncio
import json

import pytest

from verigate import Candidate, JudgeError, Verdict
from verigate.judge import ChatRequest, JudgeRequest, ModelClient
from verigate.testing import Delay, ScriptedJudge, ScriptedModelClient, ScriptExhaustedError, verdict_reply

CHAT = ChatRequest(system="s", user="u")


def test_the_scripted_client_plays_replies_and_exceptions_in_order_and_records_requests() -> None:
    client = ScriptedModelClient(["first", JudgeError("judge_http_429"), Delay(0.0, "third")])
    assert isinstance(client, ModelClient)
    assert client(CHAT) == "first"
    with pytest.raises(JudgeError):
        client(CHAT)
    assert asyncio.run(client.complete(CHAT, timeout_s=1)) == "third"
    assert client.calls == 3 and client.requests == [CHAT, CHAT, CHAT]
    with pytest.raises(ScriptExhaustedError):
        client(CHAT)


def test_repeat_last_and_verdict_reply() -> None:
    client = ScriptedModelClient([verdict_reply(False, ["tests_pass"], lesson="run them")], repeat_last=True)
    replies = {client(CHAT) for _ in range(3)}
    assert len(replies) == 1
    data = json.loads(replies.pop())
    assert data["passed"] is False and data["rubric_misses"] == ["tests_pass"] and data["score"] == 0.0


def test_the_scripted_judge_is_a_judge_engine_plug_in() -> None:
    judge = ScriptedJudge([Verdict(passed=True), "garbage"], name="mine")
    factory = judge.verigate_judge_engines()["mine"]
    engine = factory(config=None, client=None)
    request = JudgeRequest(candidate=Candidate("r", "t"))
    assert asyncio.run(engine.judge(request, timeout_s=5)).passed
    assert asyncio.run(engine.judge(request, timeout_s=7)) == "garbage"
    assert judge.timeouts == [5, 7] and judge.calls == 2 and judge.requests == [request, request]
