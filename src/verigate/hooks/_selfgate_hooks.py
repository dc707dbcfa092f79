"""Self-gate host hooks: pre-tool-use (enforce open gates, hardening) and user-prompt-submit (human close)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._protocol import HookAnswer, Host, run_hook

__all__ = ["claude_pre_tool_use", "claude_user_prompt_submit", "codex_pre_tool_use", "codex_user_prompt_submit",
           "pre_tool_use_handlers", "user_prompt_submit_handlers"]

#: a hook's handler of the input, and its answer when the handler fails (run by ``run_hook`` or in-process)
Handlers = tuple[Callable[[dict[str, Any]], HookAnswer], Callable[[str], HookAnswer]]

# Both hosts read the same JSON for these two events (docs/hook-protocols.md). Never answer permissionDecision
# "allow": that would skip the host's own permission prompt. Saying nothing lets the call go its normal way.


def _output(event: str, notice: str, **specific: str) -> dict[str, Any]:
    payload: dict[str, Any] = {"hookSpecificOutput": {"hookEventName": event, **specific}}
    if notice:
        payload["systemMessage"] = notice
    return payload


def pre_tool_use_handlers(host: Host) -> Handlers:
    """PreToolUse: the fast path, else the full check; an error refuses the call."""

    def handle(hook_input: dict[str, Any]) -> HookAnswer:
        from ..selfgate._quick import quick_tool_decision

        # the fast path answers when its caches vouch for the full check's answer; otherwise the full check runs.
        # Every tool goes through both, MCP tools (mcp__…) included: they run outside the host's sandbox.
        verdict = quick_tool_decision(hook_input, host)
        if verdict is None:
            from ..selfgate._enforce import decide_tool_call, settings_for

            decision = decide_tool_call(hook_input, settings_for(hook_input, host))
            verdict = (decision.decision, decision.reason, decision.notice)
        outcome, reason, notice = verdict
        if outcome == "deny":
            return 0, _output("PreToolUse", notice, permissionDecision="deny", permissionDecisionReason=reason), ""
        if outcome == "warn":
            return 0, _output("PreToolUse", notice, additionalContext=reason), ""
        # an allowed call says nothing to the agent; a notice for the person (an old store imported) goes alone
        return 0, ({"systemMessage": notice} if notice else None), ""

    def on_error(reason: str) -> HookAnswer:
        # errors before or inside the hardening check: the call cannot be shown safe, so it is refused in
        # both modes (errors of the gate check itself are turned into warnings by decide_tool_call in audit)
        return 2, None, f"{reason} ({host} pre-tool-use; verigate fails closed: the tool call is refused)"

    return handle, on_error


def user_prompt_submit_handlers(host: Host) -> Handlers:
    """UserPromptSubmit: the fast path, else a person's close command; an error refuses the prompt unless the
    mode is audit."""
    state: dict[str, str] = {}

    def handle(hook_input: dict[str, Any]) -> HookAnswer:
        from ..selfgate._quick import quick_prompt_context

        # most prompts close nothing and claim nothing: the fast path answers them while its caches vouch
        quick = quick_prompt_context(hook_input, host)
        if quick is not None:
            state["mode"], context = quick
            return 0, (_output("UserPromptSubmit", "", additionalContext=context) if context else None), ""
        from ..selfgate._enforce import decide_prompt, settings_for

        settings = settings_for(hook_input, host)
        state["mode"] = settings.mode
        outcome = decide_prompt(hook_input, settings)
        notice = "\n".join(part for part in (settings.notice, outcome.notice) if part)
        if not outcome.context and not notice:
            return 0, None, ""
        if not outcome.context:
            return 0, {"systemMessage": notice}, ""
        return 0, _output("UserPromptSubmit", notice, additionalContext=outcome.context), ""

    def on_error(reason: str) -> HookAnswer:
        if state.get("mode") == "audit":
            return 0, {"systemMessage": f"verigate (audit): the self-gate check failed: {reason}"}, ""
        # block mode, or the mode is unknown (bad input or configuration): refuse the prompt with the reason
        return 0, {"decision": "block", "reason": f"{reason} ({host} user-prompt-submit; verigate fails closed)"}, ""

    return handle, on_error


def _pre_tool_use(host: Host) -> int:
    return run_hook(*pre_tool_use_handlers(host), host=host)


def _user_prompt_submit(host: Host) -> int:
    return run_hook(*user_prompt_submit_handlers(host), host=host)


def claude_pre_tool_use() -> int:
    return _pre_tool_use("claude-code")


def claude_user_prompt_submit() -> int:
    return _user_prompt_submit("claude-code")


def codex_pre_tool_use() -> int:
    return _pre_tool_use("codex")


def codex_user_prompt_submit() -> int:
    return _user_prompt_submit("codex")
