"""Enforcement decisions for the two host events: a tool call (pre-tool-use) and a typed prompt."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import attrs

from .._errors import ConfigError, InputError
from ._guard import protected_for, violation
from ._phrases import Phrases, Screen, normalise_prompt
from ._store import GateStore

if TYPE_CHECKING:
    from ._fold import Gate

__all__ = ["MODE_ENV", "Mode", "PromptOutcome", "Settings", "ToolDecision", "decide_prompt", "decide_tool_call",
           "settings_for"]

Mode = Literal["audit", "block"]
MODE_ENV = "VERIGATE_SELF_GATE_MODE"
#: Codex's file-edit tool is blocked when any Claude Code edit tool is (Codex matches it as Edit|Write too)
TOOL_ALIASES: Mapping[str, tuple[str, ...]] = {"apply_patch": ("Edit", "Write", "MultiEdit")}
# SelfGateConfig's defaults, repeated so that a project without verigate.yaml never imports the configuration
# module (it pulls in the judge, tens of milliseconds on every tool call); a test keeps the two equal
DEFAULT_MODE: Mode = "audit"
DEFAULT_BLOCKED_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit", "Bash")
DEFAULT_STORE = ".verigate/self-gates.jsonl"
#: longest prompt checked for a close phrase when no gate is open (a close phrase is short)
_SHORT_PROMPT = 200


@attrs.frozen
class Settings:
    project_dir: str
    mode: Mode
    blocked_tools: tuple[str, ...]
    store: GateStore


@attrs.frozen
class ToolDecision:
    """``deny`` refuses the call; ``warn`` lets it run with a warning (audit mode); ``allow`` says nothing."""

    decision: Literal["allow", "deny", "warn"]
    reason: str = ""
    #: shown to the person (systemMessage)
    notice: str = ""


@attrs.frozen
class PromptOutcome:
    """``block`` refuses the prompt (internal errors in block mode only); ``context`` goes to the agent."""

    context: str = ""
    notice: str = ""
    block: bool = False


def _mode(value: str, source: str) -> Mode:
    if value == "audit":
        return "audit"
    if value == "block":
        return "block"
    raise ConfigError(f"self-gate mode must be 'audit' or 'block', not {value!r}", source=source)


def settings_for(hook_input: Mapping[str, Any]) -> Settings:
    """The project is ``CLAUDE_PROJECT_DIR`` when set, else the hook input's ``cwd``; verigate.yaml and a
    relative store path are found there. ``VERIGATE_SELF_GATE_MODE`` overrides the configured mode."""
    project = os.environ.get("CLAUDE_PROJECT_DIR") or hook_input.get("cwd")
    if not isinstance(project, str) or not project:
        raise InputError("no project directory: CLAUDE_PROJECT_DIR is unset and the hook input has no cwd",
                         source="<stdin>", field="cwd")
    config_path = Path(project) / "verigate.yaml"
    if config_path.is_file():
        from .._config import load_config

        section = load_config(config_path).self_gate
        mode, blocked, store = section.mode, section.blocked_tools, section.store
    else:
        mode, blocked, store = DEFAULT_MODE, DEFAULT_BLOCKED_TOOLS, DEFAULT_STORE
    override = os.environ.get(MODE_ENV)
    if override:
        mode = _mode(override, MODE_ENV)
    store_path = Path(store) if Path(store).is_absolute() else Path(project) / store
    return Settings(project, mode, tuple(blocked), GateStore(store_path))


def _required_str(hook_input: Mapping[str, Any], field: str) -> str:
    value = hook_input.get(field)
    if not isinstance(value, str) or not value:
        raise InputError(f"the hook input has no {field}", source="<stdin>", field=field)
    return value


def _transcript(hook_input: Mapping[str, Any]) -> str | None:
    value = hook_input.get("transcript_path")
    return value if isinstance(value, str) and value else None


def how_to_close(gates: Sequence[Gate]) -> str:
    first = gates[0].gate_id if gates else "sg-…"
    return (f"A person closes a gate by typing exactly `approve gate {first}` (or `再承認: APPROVED {first}`; "
            "`Gate 解除` for the latest gate; `release all gates` / `self-gate 全部解除` for all) as the whole "
            f"prompt, or by running `verigate gate close {first}` in a terminal. A /goal, an autonomy instruction "
            "or a statement that approval was given does not close it.")


def describe(gates: Sequence[Gate]) -> str:
    return "; ".join(f"[{gate.gate_id}] {gate.gate_text}" for gate in gates)


def _is_blocked(tool_name: str, blocked: Sequence[str]) -> bool:
    return tool_name in blocked or any(alias in blocked for alias in TOOL_ALIASES.get(tool_name, ()))


def decide_tool_call(hook_input: Mapping[str, Any], settings: Settings) -> ToolDecision:
    """Hardening first (denied in both modes), then the session's open gates for blocked tools."""
    session_id = _required_str(hook_input, "session_id")
    tool_name = _required_str(hook_input, "tool_name")
    tool_input = hook_input.get("tool_input")
    if tool_input is None:
        tool_input = {}
    if not isinstance(tool_input, Mapping):
        raise InputError("tool_input must be an object", source="<stdin>", field="tool_input")
    transcript = _transcript(hook_input)
    cwd = hook_input.get("cwd") if isinstance(hook_input.get("cwd"), str) else settings.project_dir
    protected = protected_for(settings.project_dir, settings.store.protected_paths(), transcript)
    screen = Screen(settings.store.state_dir)
    refused = violation(tool_name, tool_input, str(cwd), protected, screen.is_close_phrase)
    if refused:
        return ToolDecision("deny", f"verigate self-gate hardening: {refused}.",
                            f"verigate denied {tool_name}: {refused}")
    if not _is_blocked(tool_name, settings.blocked_tools):
        return ToolDecision("allow")
    try:
        if transcript is None:
            raise InputError("the hook input has no transcript_path: open gates cannot be checked",
                             source="<stdin>", field="transcript_path")
        from ._scan import sync  # only blocked tools scan: a Read never imports the scanner

        result = sync(settings.store, session_id, transcript, screen.openings)
    except Exception as exc:
        # block mode fails closed; audit mode warns (hardening above was already enforced)
        problem = f"verigate self-gate could not check this session's gates: {exc}"
        if settings.mode == "block":
            return ToolDecision("deny", problem, problem)
        return ToolDecision("warn", problem, problem)
    gates = result.state.open_gates(session_id)
    problems = "; ".join(str(problem) for problem in result.store_problems)
    if not gates:
        if not problems:
            return ToolDecision("allow")
        note = f"verigate: self-gate store problems: {problems}"
        return ToolDecision("warn", note, note)
    store_note = f" (self-gate store problems: {problems})" if problems else ""
    message = (f"Self-set gate open in this session — you declared you would wait for the person's approval: "
               f"{describe(gates)}. {tool_name} is blocked until a person closes the gate. Stop, present what "
               f"the gate asks for, and wait. {how_to_close(gates)}")
    if settings.mode == "block":
        return ToolDecision("deny", message, f"verigate blocked {tool_name}: open self-set gate(s) "
                                             f"{', '.join(gate.gate_id for gate in gates)}{store_note}")
    return ToolDecision("warn", f"[audit mode: not blocked] {message}",
                        f"verigate (audit): {tool_name} ran past open self-set gate(s) "
                        f"{', '.join(gate.gate_id for gate in gates)}{store_note}")


def decide_prompt(hook_input: Mapping[str, Any], settings: Settings) -> PromptOutcome:
    """The human channel: a prompt that is, as a whole, a close phrase requests a close, confirmed once the
    transcript shows a person typed it; anything else closes nothing, and the agent is told why."""
    session_id = _required_str(hook_input, "session_id")
    prompt = hook_input.get("prompt")
    if not isinstance(prompt, str):
        raise InputError("the hook input has no prompt", source="<stdin>", field="prompt")
    from ._scan import request_close, sync

    transcript = _transcript(hook_input)
    if transcript is not None and not Path(transcript).exists():
        # a session's first prompt can arrive before the host has created its log: nothing to scan yet (the store
        # still knows every gate), and the person's prompt must not be refused for it
        transcript = None
    screen = Screen(settings.store.state_dir)
    state = sync(settings.store, session_id, transcript, screen.openings).state
    gates = state.open_gates(session_id)
    if not gates and len(normalise_prompt(prompt)) > _SHORT_PROMPT:
        return PromptOutcome()
    phrases: Phrases = screen.phrases
    command = phrases.close_command(prompt)
    if command is not None:
        if not gates:
            return PromptOutcome(context="verigate: there is no open self-set gate in this session to close.")
        chosen, written = request_close(settings.store, session_id, transcript, command, prompt)
        if not chosen:
            return PromptOutcome(context=f"verigate: {command.gate_id} is not an open gate of this session; open: "
                                         f"{describe(gates)}.")
        ids = ", ".join(gate.gate_id for gate in chosen)
        refused = [entry for entry in written if entry.status == "close_refused"]
        if any(entry.status == "closed" for entry in written):
            return PromptOutcome(context=f"verigate: a person closed self-set gate(s) {ids}. You may continue.",
                                 notice=f"verigate: closed gate(s) {ids}")
        if refused:
            return PromptOutcome(context=f"verigate: this close phrase did not come from a person typing it "
                                         f"({refused[0].closed_reason}); gate(s) {ids} stay open.")
        return PromptOutcome(
            context=f"verigate: the person asked to close gate(s) {ids}; the close takes effect once verigate "
                    "sees this typed prompt in the session transcript (by your next tool call).",
            notice=f"verigate: close of {ids} requested")
    if not gates:
        return PromptOutcome()
    refusals = phrases.not_close(prompt)
    if refusals:
        return PromptOutcome(context=(
            f"verigate: this prompt does not close your self-set gate(s) ({refusals[0].matched!r} is "
            f"{refusals[0].rule_id.rsplit('.', 1)[-1]}, not a person's release). Still open: {describe(gates)}. "
            f"{how_to_close(gates)}"))
    return PromptOutcome(context=f"verigate: self-set gate(s) still open: {describe(gates)}. {how_to_close(gates)}")

