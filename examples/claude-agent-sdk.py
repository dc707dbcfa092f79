"""verigate's hooks in the Claude Agent SDK, offline.

The SDK has no test model of its own; its test seam is the public ``Transport`` (what the SDK talks to instead of
the ``claude`` CLI). ``ScriptedCLI`` below plays the CLI's side of the control protocol: it answers ``initialize``,
writes a Claude Code transcript, calls the Stop hook callback the way the CLI does, and continues with the hook's
feedback when the hook blocks. The gate's judge is verigate's ``ScriptedJudge``. Prints one line per run:

    completed: 2 + 2 = 4
    pending review rv_… (escalate_budget_exhausted)
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from claude_agent_sdk import ClaudeAgentOptions, Transport
from verigate_claude_agent_sdk import run_gated

from verigate import Gate, ReviewPendingError, Verdict
from verigate.testing import ScriptedJudge

PASS = Verdict(passed=True, score=1.0)
FAIL = Verdict(passed=False, rubric_misses=("claim_unverified",), score=0.2, retryable=True)


class ScriptedCLI(Transport):
    """The CLI's half of the SDK protocol, answering each turn with the next scripted text."""

    def __init__(self, project: Path, answers: list[str]) -> None:
        self.project = project
        self.answers = list(answers)
        self.session = str(uuid.uuid4())
        self.transcript = project / f"{self.session}.jsonl"
        self.out: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self.replies: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.stop_ids: list[str] = []
        self.requests = 0

    async def connect(self) -> None:
        return None

    def is_ready(self) -> bool:
        return True

    async def end_input(self) -> None:
        return None

    async def close(self) -> None:
        await self.out.put(None)

    def read_messages(self) -> AsyncIterator[dict[str, Any]]:
        async def messages() -> AsyncIterator[dict[str, Any]]:
            while (message := await self.out.get()) is not None:
                yield message
        return messages()

    async def write(self, data: str) -> None:
        message = json.loads(data)
        if message["type"] == "control_request" and message["request"]["subtype"] == "initialize":
            for matcher in (message["request"].get("hooks") or {}).get("Stop", []):
                self.stop_ids += matcher["hookCallbackIds"]
            await self._respond(message["request_id"], {"commands": []})
        elif message["type"] == "control_response":
            self.replies.pop(message["response"]["request_id"]).set_result(message["response"].get("response", {}))
        elif message["type"] == "user":
            self._line("user", {"role": "user", "content": message["message"]["content"]})
            asyncio.get_running_loop().create_task(self._turns())

    async def _respond(self, request_id: str, response: dict[str, Any]) -> None:
        await self.out.put({"type": "control_response",
                            "response": {"subtype": "success", "request_id": request_id, "response": response}})

    def _line(self, kind: str, message: dict[str, Any]) -> None:
        with self.transcript.open("a", encoding="utf-8") as file:
            file.write(json.dumps({"type": kind, "uuid": str(uuid.uuid4()), "isSidechain": False,
                                   "sessionId": self.session, "cwd": str(self.project), "message": message}) + "\n")

    async def _stop(self, text: str, active: bool) -> dict[str, Any]:
        answer: dict[str, Any] = {}
        for callback_id in self.stop_ids:
            request_id = f"req_{uuid.uuid4().hex[:8]}"
            self.replies[request_id] = asyncio.get_running_loop().create_future()
            await self.out.put({"type": "control_request", "request_id": request_id, "request": {
                "subtype": "hook_callback", "callback_id": callback_id, "input": {
                    "session_id": self.session, "transcript_path": str(self.transcript), "cwd": str(self.project),
                    "hook_event_name": "Stop", "stop_hook_active": active, "last_assistant_message": text}}})
            answer |= await self.replies[request_id]
        return answer

    async def _turns(self) -> None:
        active = False
        while self.answers:
            text = self.answers.pop(0)
            self.requests += 1
            self._line("assistant", {"role": "assistant", "content": [{"type": "text", "text": text}],
                                     "model": "scripted", "type": "message"})
            await self.out.put({"type": "assistant", "session_id": self.session,
                                "message": {"role": "assistant", "model": "scripted",
                                            "content": [{"type": "text", "text": text}]}})
            answer = await self._stop(text, active)
            if answer.get("decision") != "block":
                break
            active = True  # the CLI feeds the block reason back as the next instruction
            self._line("user", {"role": "user", "content": answer["reason"]})
        await self.out.put({"type": "result", "subtype": "success", "duration_ms": 1, "duration_api_ms": 1,
                            "is_error": False, "num_turns": self.requests, "session_id": self.session,
                            "result": text})
        await self.out.put(None)


async def one_run(folder: Path, verdicts: list[Verdict], answers: list[str], revise: int) -> str:
    judge = ScriptedJudge(verdicts)
    with Gate.from_config({"judge": {"engine": "scripted"}, "budget": {"revise": revise}}, plugins=[judge],
                          store=str(folder / "verigate.db"), entry_points=False) as gate:
        cli = ScriptedCLI(folder, answers)
        try:
            answer = await run_gated("What is 2 + 2?", options=ClaudeAgentOptions(cwd=str(folder)), gate=gate,
                                     transport=cli)
        except ReviewPendingError as held:
            return f"pending review {held.review_id} ({held.policy_action})"
        return f"completed: {answer.text}"


async def main() -> None:
    with tempfile.TemporaryDirectory() as first, tempfile.TemporaryDirectory() as second:
        # a failing verdict, the gate's follow-up, a passing second attempt
        print(await one_run(Path(first), [FAIL, PASS], ["5", "2 + 2 = 4"], revise=2))
        # every attempt fails: the revise budget (1) ends in a pending review, however many answers the model has
        print(await one_run(Path(second), [FAIL, FAIL, FAIL], ["5", "6", "7", "8"], revise=1))


if __name__ == "__main__":
    asyncio.run(main())
