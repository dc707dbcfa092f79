"""The four Claude Code hooks as in-process callbacks of the Claude Agent SDK.

Each callback hands the hook input (the same JSON the CLI writes to a command hook's stdin) to
``verigate.hooks.inprocess``, which runs exactly what ``verigate hook claude-code <event>`` runs, in a worker
thread (the Stop gate calls the judge and ``asyncio.run``s the finalize; the SDK's event loop must stay free), and
returns the same JSON answer. The Stop answers are remembered per session, so that :func:`run_gated` can say what
the gate decided without parsing messages.

Fail closed at the boundary: anything raised around the call (a worker thread that cannot start, a bug here) is
answered with the event's blocking answer — a Stop is let through as NOT verified (``continue: false``, never a
second block that could loop) and recorded as held; only the caller's own cancellation propagates.
"""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING, Any

import attrs
from claude_agent_sdk import HookMatcher

from verigate.hooks import inprocess

if TYPE_CHECKING:
    from claude_agent_sdk import HookContext, HookInput, HookJSONOutput
    from claude_agent_sdk.types import HookEvent

    from verigate import Gate

__all__ = ["GateHooks", "verigate_hooks"]

#: above the Stop hook's own budget (VERIGATE_HOOK_DEADLINE_S, 150 s by default) as the CLI examples wire it;
#: the SDK's matcher default (60 s) would cut a slow judge off before the gate files its review
STOP_TIMEOUT_S = 180.0
TOOL_TIMEOUT_S = 150.0

_EVENTS: dict[str, inprocess.ClaudeEvent] = {
    "Stop": "stop", "SubagentStop": "subagent-stop", "PreToolUse": "pre-tool-use",
    "UserPromptSubmit": "user-prompt-submit",
}


@attrs.frozen
class _Held:
    """The shape ``GateHeldError`` reads, for a hold that came without a ``FinalizeResult`` (error path, loop
    guard, time budget, an adapter failure)."""

    outcome: str
    policy_action: str
    pending_id: str | None


class GateHooks:
    """The callbacks, bound to one gate (None: each Stop opens the project's gate, as the CLI hook does), and the
    Stop outcomes they produced, by the gate's session key (the SDK's ``session_id``; ``<session>/agent/<id>``
    for a sub-agent)."""

    def __init__(self, gate: Gate | None = None, *, stop_timeout_s: float = STOP_TIMEOUT_S,
                 tool_timeout_s: float = TOOL_TIMEOUT_S, tool_matcher: str | None = None) -> None:
        self.gate = gate
        self.stop_timeout_s = stop_timeout_s
        self.tool_timeout_s = tool_timeout_s
        #: None: every tool, MCP tools included (they run outside the CLI's sandbox)
        self.tool_matcher = tool_matcher
        self._lock = threading.Lock()
        self._stops: dict[str, inprocess.StopOutcome] = {}

    # ------------------------------------------------------------------------------------------- what was decided

    def last_stop(self, session_key: str) -> inprocess.StopOutcome | None:
        """The latest Stop / SubagentStop answer of a session, None before its first."""
        with self._lock:
            return self._stops.get(session_key)

    def stops(self) -> dict[str, inprocess.StopOutcome]:
        """Every session's latest Stop / SubagentStop answer (a copy)."""
        with self._lock:
            return dict(self._stops)

    def _remember(self, outcome: inprocess.StopOutcome, data: dict[str, Any]) -> None:
        key = outcome.session_key or str(data.get("session_id") or "")
        if key:
            with self._lock:
                self._stops[key] = outcome

    # ------------------------------------------------------------------------------------------- the callbacks

    def _answer(self, event: inprocess.ClaudeEvent, data: dict[str, Any]) -> dict[str, Any]:
        """Runs in the worker thread."""
        if event in ("stop", "subagent-stop"):
            outcome = inprocess.stop(data, event=event, gate=self.gate)
            self._remember(outcome, data)
            return inprocess.host_json(event, outcome.answer)
        if event == "pre-tool-use":
            return inprocess.host_json(event, inprocess.pre_tool_use(data))
        return inprocess.host_json(event, inprocess.user_prompt_submit(data))

    def _failed(self, event: inprocess.ClaudeEvent, data: Any, exc: BaseException) -> dict[str, Any]:
        reason = f"verigate adapter error: {type(exc).__name__}: {exc}"
        if event == "pre-tool-use":
            return inprocess.host_json(event, (2, None, f"{reason} (the tool call is refused)"))
        if event == "user-prompt-submit":
            return {"decision": "block", "reason": f"{reason} (verigate fails closed)"}
        message = f"verigate: the agent's last answer is NOT verified ({reason})"
        session = str(data.get("session_id") or "") if isinstance(data, dict) else ""
        if event == "subagent-stop" and isinstance(data, dict):
            session = f"{session}/agent/{data.get('agent_id') or '<no agent_id>'}"
        held = inprocess.StopOutcome((0, {"continue": False, "stopReason": message}, ""), session)
        if session:
            with self._lock:
                self._stops[session] = held
        return {"continue": False, "stopReason": message, "systemMessage": message}

    def callback(self, event: inprocess.ClaudeEvent) -> Any:
        """The SDK ``HookCallback`` for one event."""

        async def hook(input_data: HookInput, tool_use_id: str | None, context: HookContext) -> HookJSONOutput:
            data: Any = input_data
            try:
                answer = await asyncio.to_thread(self._answer, event, dict(data))
            except asyncio.CancelledError:
                raise  # the caller's own cancellation (the run is being torn down)
            except BaseException as exc:  # never a pass: the event's blocking answer
                answer = self._failed(event, data, exc)
            return answer  # type: ignore[return-value]

        hook.__name__ = f"verigate_{event.replace('-', '_')}"
        return hook

    def matchers(self, events: tuple[str, ...] = tuple(_EVENTS)) -> dict[HookEvent, list[HookMatcher]]:
        """``{event: [HookMatcher]}`` for ``ClaudeAgentOptions(hooks=...)``."""
        found: dict[Any, list[HookMatcher]] = {}
        for name in events:
            event = _EVENTS[name]
            stop = event in ("stop", "subagent-stop")
            found[name] = [HookMatcher(matcher=None if stop else self.tool_matcher, hooks=[self.callback(event)],
                                       timeout=self.stop_timeout_s if stop else self.tool_timeout_s)]
        return found


def verigate_hooks(gate: Gate | None = None, *, events: tuple[str, ...] = tuple(_EVENTS),
                   **options: Any) -> dict[HookEvent, list[HookMatcher]]:
    """The hooks of a new :class:`GateHooks` (keep a ``GateHooks`` yourself to read the Stop outcomes)."""
    return GateHooks(gate, **options).matchers(events)


def merge(extra: dict[Any, list[HookMatcher]] | None, ours: dict[Any, list[HookMatcher]]
          ) -> dict[Any, list[HookMatcher]]:
    """The caller's hooks first, then verigate's, per event."""
    merged: dict[Any, list[HookMatcher]] = {name: list(matchers) for name, matchers in (extra or {}).items()}
    for name, matchers in ours.items():
        merged.setdefault(name, []).extend(matchers)
    return merged


def held_from(outcome: inprocess.StopOutcome) -> _Held:
    payload = outcome.answer[1] or {}
    return _Held("pending_review" if outcome.review_id else "unverified",
                 str(payload.get("stopReason") or "verigate_hook_error"), outcome.review_id)
