"""Realistic host inputs for the Stop-hook tests: Claude Code / Codex transcripts, projects, hook runs."""

from __future__ import annotations

import io
import itertools
import json
import os
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from judge_servers import verdict_json
from verigate.store import open_store

#: a Claude Code version string as the host writes it on every line
CLAUDE_VERSION = "2.0.14"
_ids = itertools.count(1)


@attrs.frozen
class Tool:
    """One tool call of the turn and its result."""

    name: str
    input: Mapping[str, Any]
    output: str
    is_error: bool = False


def _claude_line(session: str, kind: str, message: Mapping[str, Any], *, sidechain: bool = False,
                 extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    number = next(_ids)
    line: dict[str, Any] = {
        "parentUuid": None, "isSidechain": sidechain, "userType": "external", "cwd": "/work/project",
        "sessionId": session, "version": CLAUDE_VERSION, "gitBranch": "main", "type": kind,
        "message": message, "uuid": f"00000000-0000-4000-8000-{number:012d}",
        "timestamp": f"2026-11-29T10:{number // 60 % 60:02d}:{number % 60:02d}.000Z",
    }
    line.update(extra or {})
    return line


def claude_transcript(path: Path, session: str, turns: Sequence[tuple[str, Sequence[Tool], str]], *,
                      sidechain: bool = False) -> Path:
    """Write a Claude Code session JSONL: for each (request, tools, final text) a typed prompt, the
    assistant's tool_use / tool_result pairs, and the final assistant text."""
    lines: list[dict[str, Any]] = []
    for request, tools, final_text in turns:
        lines.append(_claude_line(session, "user", {"role": "user", "content": request}, sidechain=sidechain))
        for tool in tools:
            tool_id = f"toolu_{next(_ids):020d}"
            message_id = f"msg_{next(_ids):020d}"
            lines.append(_claude_line(session, "assistant", {
                "id": message_id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                "content": [{"type": "tool_use", "id": tool_id, "name": tool.name, "input": dict(tool.input)}],
                "stop_reason": "tool_use", "usage": {"input_tokens": 120, "output_tokens": 40},
            }, sidechain=sidechain, extra={"requestId": f"req_{next(_ids):020d}"}))
            lines.append(_claude_line(session, "user", {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": tool_id, "content": tool.output, "is_error": tool.is_error},
            ]}, sidechain=sidechain, extra={"toolUseResult": tool.output}))
        lines.append(_claude_line(session, "assistant", {
            "id": f"msg_{next(_ids):020d}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": final_text}], "stop_reason": "end_turn",
            "usage": {"input_tokens": 300, "output_tokens": 80},
        }, sidechain=sidechain, extra={"requestId": f"req_{next(_ids):020d}"}))
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def codex_rollout(path: Path, turns: Sequence[tuple[str, Sequence[Tool], str]], *, cwd: str = "/work/project") -> Path:
    """Write a Codex rollout JSONL (session_meta, then response_item lines per turn)."""
    lines: list[dict[str, Any]] = [{"timestamp": "2026-11-29T10:00:00.000Z", "type": "session_meta",
                                     "payload": {"id": "0199-codex", "cwd": cwd, "cli_version": "0.46.0"}}]

    def item(payload: dict[str, Any]) -> None:
        lines.append({"timestamp": "2026-11-29T10:00:01.000Z", "type": "response_item", "payload": payload})

    item({"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "<environment_context>\n  <cwd>/work/project</cwd>\n</environment_context>"}]})
    for request, tools, final_text in turns:
        item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": request}]})
        for tool in tools:
            call_id = f"call_{next(_ids):08d}"
            item({"type": "function_call", "name": tool.name, "arguments": json.dumps(dict(tool.input)),
                  "call_id": call_id})
            item({"type": "function_call_output", "call_id": call_id, "output": json.dumps(
                {"output": tool.output, "metadata": {"exit_code": 1 if tool.is_error else 0}})})
        item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": final_text}]})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def write_config(project: Path, base_url: str, *, revise_budget: int = 2, extra: str = "") -> None:
    """verigate.yaml of a project judged by an OpenAI-compatible loopback server."""
    (project / "verigate.yaml").write_text(
        "judge:\n"
        "  engine: llm_judge\n"
        "  client: openai\n"
        "  model: gpt-4o-mini\n"
        f"  base_url: {base_url}\n"
        "  api_key_env: VERIGATE_TEST_JUDGE_KEY\n"
        "  timeout_s: 10\n"
        f"budget:\n  revise: {revise_budget}\n" + extra,
        encoding="utf-8",
    )


def stop_payload(project: Path, session: str, transcript: Path | None, *, last_message: str | None = None,
                 active: bool = False, event: str = "Stop", **extra: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "session_id": session, "transcript_path": str(transcript) if transcript else None, "cwd": str(project),
        "permission_mode": "default", "hook_event_name": event, "stop_hook_active": active,
    }
    if last_message is not None:
        payload["last_assistant_message"] = last_message
    payload.update(extra)
    return payload


@attrs.frozen
class HookRun:
    code: int
    output: dict[str, Any] | None
    stderr: str

    @property
    def blocked(self) -> bool:
        return self.output is not None and self.output.get("decision") == "block"

    @property
    def pending(self) -> bool:
        return (self.output is not None and self.output.get("continue") is False
                and "EXTERNAL_VERIFICATION_REQUIRED" in self.output.get("stopReason", ""))

    @property
    def allowed_silently(self) -> bool:
        return self.output is None


def hook_env(**overrides: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items()
           if key not in ("CLAUDE_PROJECT_DIR", "VERIGATE_GIT_REPO")}
    env["VERIGATE_TEST_JUDGE_KEY"] = "sk-loopback-test"
    env.update(overrides)
    return env


def run_hook_process(host: str, event: str, stdin: str | Mapping[str, Any], *,
                     env: Mapping[str, str] | None = None) -> HookRun:
    """``python -m verigate hook <host> <event>`` with ``stdin`` (a mapping is sent as JSON)."""
    text = stdin if isinstance(stdin, str) else json.dumps(stdin)
    done = subprocess.run([sys.executable, "-m", "verigate", "hook", host, event], input=text, capture_output=True,
                          text=True, env=dict(env or hook_env()), timeout=120, check=False)
    return HookRun(done.returncode, json.loads(done.stdout) if done.stdout.strip() else None, done.stderr)


def run_hook_in_process(host: str, event: str, stdin: Mapping[str, Any]) -> HookRun:
    """The same hook code without the process start (for long sequences); real stdin JSON text."""
    from verigate.hooks._protocol import run_hook
    from verigate.hooks._stop import _Run

    out, err = io.StringIO(), io.StringIO()
    run = _Run(host, event)  # type: ignore[arg-type]
    code = run_hook(run.handle, run.on_error, stdin=io.StringIO(json.dumps(stdin)), stdout=out, stderr=err)
    text = out.getvalue()
    return HookRun(code, json.loads(text) if text.strip() else None, err.getvalue())


# ------------------------------------------------------------------------------------------- a pager fix

REQUEST = "Fix the off-by-one in pager.py and make sure the tests pass."
ANSWER = "Fixed the off-by-one in `pager.py`; all tests pass."
TOOLS = (
    Tool("Read", {"file_path": "/work/project/pager.py"}, "def page(items, size):\n    return items[0:size-1]"),
    Tool("Edit", {"file_path": "/work/project/pager.py", "old_string": "size-1", "new_string": "size"}, "ok"),
)
FAIL = verdict_json(passed=False, misses=("tests_not_run",), observation="no test run is in the observations",
                    next_check="run the test suite and report its result")
PASS = verdict_json(passed=True)
REVIEW_ID = re.compile(r"\brv_[0-9a-f]+\b")


def transcript(project: Path, session: str = "sess-1", answer: str = ANSWER, request: str = REQUEST) -> Path:
    return claude_transcript(project.parent / f"{session}.jsonl", session, [(request, TOOLS, answer)])


def stop(project: Path, session: str = "sess-1", **kwargs: object) -> dict[str, object]:
    return stop_payload(project, session, transcript(project, session), **kwargs)  # type: ignore[arg-type]


def review_status(project: Path, review_id: str) -> str:
    store = open_store(str(project / ".verigate" / "verigate.db"), create=False)
    try:
        return store.get_review(review_id).status
    finally:
        store.close()
