"""Helpers for the ``verigate judge eval`` / ``calibrate`` / ``review export`` tests (tests/judge/eval): a
loopback OpenAI server whose answer is scripted per case, by a token in the case's final text (which the judge
prompt carries).

Tokens: ``JUDGE:pass:<key>``, ``JUDGE:fail:<key>``, ``JUDGE:http500:<key>`` (an HTTP 500), ``JUDGE:slow:<key>``
(answers after the judge timeout), ``JUDGE:garbage:<key>`` (a reply that is no verdict), ``JUDGE:flip:<key>``
(pass, then fail, then pass … per key: an inconsistent judge), ``JUDGE:costly:<key>`` (a pass whose usage carries a
gateway's ``cost`` of 0.25 USD and 1000 + 50 tokens)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from judge_servers import JudgeServer, RecordedRequest, Reply, openai_completion, verdict_json

ROOT = Path(__file__).resolve().parents[3]
TOKEN = re.compile(r"JUDGE:(pass|fail|http500|slow|garbage|flip|costly):([A-Za-z0-9_-]+)")
#: the judge timeout the test configurations set; a slow reply waits well past it
JUDGE_TIMEOUT_S = 2.0
SLOW_DELAY_S = 30.0


class CaseServer(JudgeServer):
    """An OpenAI-protocol loopback server answering each request by the token in its user prompt."""

    def __init__(self, *, required_key: str) -> None:
        super().__init__("openai", required_key=required_key)
        self.flips: dict[str, int] = {}

    def _next(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self._requests.append(request)
            if request.headers.get("authorization") != f"Bearer {self.required_key}":
                return Reply(401, b'{"error": {"message": "invalid api key"}}')
            user = request.json()["messages"][1]["content"]
            found = TOKEN.search(user)
            if found is None:
                return Reply(599, b'{"error": {"message": "no token in the prompt"}}')
            action, key = found.groups()
            if action == "flip":
                count = self.flips.get(key, 0)
                self.flips[key] = count + 1
                action = "pass" if count % 2 == 0 else "fail"
        if action == "http500":
            return Reply(500, b'{"error": {"message": "scripted failure", "type": "server_error"}}')
        if action == "garbage":
            return Reply(200, json.dumps(openai_completion("I think it is fine.")).encode())
        completion = openai_completion(verdict_json(passed=action != "fail"))
        if action == "costly":
            completion["usage"] = {"prompt_tokens": 1000, "completion_tokens": 50, "total_tokens": 1050, "cost": 0.25}
        body = json.dumps(completion).encode()
        return Reply(200, body, delay_s=SLOW_DELAY_S if action == "slow" else 0.0)


def judge_config(server: JudgeServer, **extra: Any) -> dict[str, Any]:
    return {"engine": "llm_judge", "client": "openai", "model": "gpt-4o-mini", "base_url": server.base_url,
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
