"""Helpers for the ``verigate judge eval`` / ``calibrate`` / ``review export`` tests (tests/judge/eval): a
loopback OpenAI server whose answer is scripted per case, by a token in the case's final text (which the judge
prompt carries).

Tokens: ``JUDGE:pass:<key>``, ``JUDGE:fail:<key>``, ``JUDGE:http500:<key>`` (an HTTP 500), ``JUDGE:slow:<key>``
(answers after the judge timeout), ``JUDGE:garbage:<key>`` (a reply that is no verdict), ``JUDGE:flip:<key>``
(pass, then fail, then pass … per key: an inconsistent judge), ``JUDGE:costly:<key>`` (a pass whose usage carries a
gateway's ``cost`` of 0.25 USD and 1000 + 50 tokens), ``JUDGE:overpriced:<key>`` (a pass whose gateway ``cost`` is
1e308 USD: two of them overflow a float sum)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from judge_servers import (
    JudgeServer,
    Protocol,
    RecordedRequest,
    Reply,
    anthropic_message,
    jev_answers,
    openai_completion,
    verdict_json,
)

ROOT = Path(__file__).resolve().parents[1]
TOKEN = re.compile(r"JUDGE:(pass|fail|http500|slow|garbage|flip|costly|overpriced):([A-Za-z0-9_-]+)")
#: the judge timeout the test configurations set; a slow reply waits well past it
JUDGE_TIMEOUT_S = 2.0
SLOW_DELAY_S = 30.0


#: Jev's verdict distributions for a pass and a fail
JEV_PASS = {"supported": 0.95, "contradicted": 0.03, "insufficient_evidence": 0.02}
JEV_FAIL = {"supported": 0.05, "contradicted": 0.9, "insufficient_evidence": 0.05}


class CaseServer(JudgeServer):
    """A loopback server (OpenAI, Anthropic or Jev protocol) answering each request by the token in its body."""

    def __init__(self, protocol: Protocol = "openai", *, required_key: str) -> None:
        super().__init__(protocol, required_key=required_key)
        self.flips: dict[str, int] = {}

    def _next(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self._requests.append(request)
            if request.headers.get("authorization") != f"Bearer {self.required_key}" and \
                    request.headers.get("x-api-key") != self.required_key:
                return Reply(401, b'{"error": {"message": "invalid api key"}}')
            found = TOKEN.search(request.text)
            if found is None:
                return Reply(599, b'{"error": {"message": "no token in the request"}}')
            action, key = found.groups()
            if action == "flip":
                count = self.flips.get(key, 0)
                self.flips[key] = count + 1
                action = "pass" if count % 2 == 0 else "fail"
        if action == "http500":
            return Reply(500, b'{"error": {"message": "scripted failure", "type": "server_error"}}')
        delay = SLOW_DELAY_S if action == "slow" else 0.0
        return Reply(200, json.dumps(self._answer(action)).encode(), delay_s=delay)

    def _answer(self, action: str) -> dict[str, Any]:
        passed = action != "fail"
        if self.protocol == "jev":
            if action == "garbage":
                return {"model": "jev-1.13.0", "answers": {}, "usage": {"input_tokens": 100, "output_tokens": 0}}
            return jev_answers("supported" if passed else "contradicted", JEV_PASS if passed else JEV_FAIL)
        if self.protocol == "anthropic":
            if action == "garbage":
                return anthropic_message("I think it is fine.")
            return anthropic_message("", tool_input=json.loads(verdict_json(passed=passed)))
        if action == "garbage":
            return openai_completion("I think it is fine.")
        completion = openai_completion(verdict_json(passed=passed))
        if action == "costly":
            completion["usage"] = {"prompt_tokens": 1000, "completion_tokens": 50, "total_tokens": 1050, "cost": 0.25}
        if action == "overpriced":
            completion["usage"] = {"prompt_tokens": 1, "completion_tokens": 1, "cost": 1e308}
        return completion


def judge_config(server: JudgeServer, **extra: Any) -> dict[str, Any]:
    if server.protocol == "jev":
        return {"engine": "jev", "client": "jev", "base_url": server.base_url, "timeout_s": JUDGE_TIMEOUT_S, **extra}
    model = "claude-haiku-4-5" if server.protocol == "anthropic" else "gpt-4o-mini"
    return {"engine": "llm_judge", "client": server.protocol, "model": model, "base_url": server.base_url,
            "timeout_s": JUDGE_TIMEOUT_S, **extra}


def case(label: str, token: str, *, id: str | None = None, request: str = "Fix the failing test.",
         text: str = "Done.", note: str = "", tool_calls: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    data: dict[str, Any] = {"request": request, "final_text": f"{text} {token}", "tool_calls": list(tool_calls),
                            "label": label}
    if id is not None:
        data["id"] = id
    if note:
        data["note"] = note
    return data


def write_cases(path: Path, cases: Sequence[Mapping[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(item) + "\n" for item in cases), encoding="utf-8")
    return path
