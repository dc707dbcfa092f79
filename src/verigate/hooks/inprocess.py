"""The Claude Code hooks in-process: the answer ``verigate hook claude-code <event>`` would print, as a value.

A runtime that calls hooks in its own process (the Claude Agent SDK's ``HookMatcher`` callbacks) gets the same
decisions without a process start per call: the Stop gate of ``_stop`` (the same input parsing, request, counters,
loop guard and error path) and the self-gate checks of ``selfgate`` (``quick_tool_decision`` /
``decide_tool_call`` / ``decide_prompt``). What differs from the CLI is only the I/O: the answer is returned, not
written, and an exit code 2 (the CLI's "block, with stderr as the reason") is folded into the JSON answer the host
reads for that event, because a callback has no exit code.

PreToolUse and UserPromptSubmit run ``_selfgate_hooks``' own handlers (``pre_tool_use_handlers`` /
``user_prompt_submit_handlers``, the ones ``run_hook`` runs on the process's stdin). The Stop run is
``_stop._Run`` itself, given the runtime's own :class:`~verigate.Gate` (``given``); it keeps the finalize result
for the caller.

These functions are synchronous and may block for the judge (``asyncio.run`` inside): call them from a worker
thread when an event loop is running.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import attrs

from ._protocol import HookAnswer, Host, _reason
from ._selfgate_hooks import pre_tool_use_handlers, user_prompt_submit_handlers
from ._stop import _Run
from ._stop_deadline import RESULT_POLL_S, RESULT_WAIT_S

if TYPE_CHECKING:
    from .._models import FinalizeResult
    from ..gate import Gate

__all__ = ["ClaudeEvent", "StopOutcome", "claude_code_answer", "host_json", "pre_tool_use", "stop",
           "user_prompt_submit"]

ClaudeEvent = Literal["stop", "subagent-stop", "pre-tool-use", "user-prompt-submit"]
_HOST: Host = "claude-code"


@attrs.frozen
class StopOutcome:
    """One Stop / SubagentStop answer and what produced it: the gate's result (None when the answer came from the
    error path, the loop guard or the time budget) and the gate's session key (``<session>/agent/<id>`` for a
    sub-agent; "" when the input was unreadable)."""

    answer: HookAnswer
    session_key: str = ""
    result: FinalizeResult | None = None
    #: the pending review filed outside finalize (loop guard, time budget, repeated error), when there is one
    review_id: str | None = None


def _guarded(handler: Any, on_error: Any, data: dict[str, Any]) -> HookAnswer:
    """``run_hook`` without the I/O: any exception becomes ``on_error(reason)``; a failing error path blocks."""
    try:
        answer: HookAnswer = handler(data)
        return answer
    except BaseException as exc:  # fail closed on anything, as run_hook does (a plug-in's SystemExit included)
        reason = _reason(exc, data, io.StringIO(), _HOST)  # debug output: the error log keeps it
        try:
            fallback: HookAnswer = on_error(reason)
            return fallback
        except BaseException:
            return 2, None, reason


def _review_in(answer: HookAnswer) -> str | None:
    payload = answer[1] or {}
    reason = str(payload.get("stopReason") or "")
    marker = ": review "
    return reason.split(marker, 1)[1].strip() or None if marker in reason else None


def _await_transcript(data: dict[str, Any], event: str, started: float) -> None:
    """Wait (at most ``RESULT_WAIT_S``) for the transcript file to appear. Claude Code writes it asynchronously;
    a command hook's process start covers that, an in-process callback can run first (a turn without tool calls
    reaches Stop before its first line is on disk). A file still missing then is the Stop run's own InputError."""
    import time

    name = "agent_transcript_path" if event == "subagent-stop" and data.get("agent_transcript_path") else \
        "transcript_path"
    path = data.get(name)
    if not isinstance(path, str) or not path:
        return
    until = started + RESULT_WAIT_S
    while not _has_lines(Path(path)) and time.monotonic() < until:
        time.sleep(RESULT_POLL_S)


def _has_lines(path: Path) -> bool:
    try:
        return path.stat().st_size > 0
    except OSError:
        return False


def stop(data: dict[str, Any], *, event: Literal["stop", "subagent-stop"] = "stop",
         gate: Gate | None = None) -> StopOutcome:
    """``verigate hook claude-code stop`` (or ``subagent-stop``) on ``data``; ``gate`` None: the project's gate."""
    run = _Run(_HOST, event, given=gate)
    _await_transcript(data, event, run.started)
    answer = _guarded(run.handle, run.on_error, data)
    key = run.stop.session_key if run.stop is not None else ""
    review = run.result.pending_id if run.result is not None else _review_in(answer)
    return StopOutcome(answer, key, run.result, review)


def pre_tool_use(data: dict[str, Any]) -> HookAnswer:
    """``verigate hook claude-code pre-tool-use`` on ``data``."""
    return _guarded(*pre_tool_use_handlers(_HOST), data)


def user_prompt_submit(data: dict[str, Any]) -> HookAnswer:
    """``verigate hook claude-code user-prompt-submit`` on ``data``."""
    return _guarded(*user_prompt_submit_handlers(_HOST), data)


def host_json(event: ClaudeEvent, answer: HookAnswer) -> dict[str, Any]:
    """The JSON answer a callback returns for ``answer``: the payload, or — for the CLI's exit 2, which a callback
    cannot give — the blocking answer of that event carrying the stderr text as its reason ({} says nothing)."""
    code, payload, message = answer
    result: dict[str, Any] = dict(payload or {})
    if code == 0:
        return result
    reason = message.strip() or "verigate hook error (no reason given)"
    if event == "pre-tool-use":
        result["hookSpecificOutput"] = {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                        "permissionDecisionReason": reason}
    else:
        result |= {"decision": "block", "reason": reason}
    return result


def claude_code_answer(event: ClaudeEvent, data: dict[str, Any], *, gate: Gate | None = None) -> dict[str, Any]:
    """The host JSON for one event (see :func:`host_json`)."""
    if event in ("stop", "subagent-stop"):
        return host_json(event, stop(data, event=event, gate=gate).answer)
    if event == "pre-tool-use":
        return host_json(event, pre_tool_use(data))
    return host_json(event, user_prompt_submit(data))

