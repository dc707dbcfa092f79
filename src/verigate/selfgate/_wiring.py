"""Whether the host runs verigate's hooks at all, on every tool (``verigate doctor`` only: a hook that answers is
evidently wired, one that is not can say nothing)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from ._boundary import Check
from ._wall import Host, claude_files

__all__ = ["HookEntry", "hook_entries", "hook_files", "wiring_checks"]

#: tools the PreToolUse matcher must reach: the hardening has to see every tool that can write, MCP tools included
_SAMPLES: Mapping[str, tuple[str, ...]] = {
    "claude-code": ("Edit", "Write", "MultiEdit", "NotebookEdit", "Bash", "CronCreate", "mcp__filesystem__write_file"),
    "codex": ("Bash", "apply_patch", "mcp__filesystem__write_file"),
}
_EXAMPLE = {"claude-code": "examples/claude-code/settings.json (PreToolUse matcher \"*\")",
            "codex": "examples/codex/hooks.json (PreToolUse matcher \"Bash|apply_patch|mcp__.*\")"}
#: the host's event names with verigate's command for each; a missing one lets actions through unguarded
EVENTS: tuple[tuple[str, str], ...] = (("PreToolUse", "pre-tool-use"), ("UserPromptSubmit", "user-prompt-submit"),
                                       ("Stop", "stop"))
#: optional: without it a Claude Code sub-agent's answer is not gated, the main agent's still is
SUBAGENT = ("SubagentStop", "subagent-stop")


@attrs.frozen
class HookEntry:
    """One ``verigate hook <host> <command>`` handler in a hooks file, with its position (Codex keys its trust
    on ``<file>:<event>:<group index>:<handler index>``)."""

    path: str
    event: str
    group: int
    handler: int
    matcher: object
    command: str
    #: the handler object as written (its timeout and other fields: Codex hashes them for trust)
    spec: Mapping[str, Any] = attrs.field(factory=dict, eq=False)


def hook_files(host: Host, project: str, env: Mapping[str, str]) -> list[str]:
    """The files the host reads hooks from: Claude Code's settings (as it merges them), Codex's hooks.json."""
    if host == "claude-code":
        return [path for path, _ in claude_files(project, env)]
    home = env.get("HOME") or str(Path.home())
    codex_home = env.get("CODEX_HOME") or os.path.join(home, ".codex")
    return [os.path.join(codex_home, "hooks.json"), os.path.join(project, ".codex", "hooks.json")]


def _groups(path: str, event: str) -> list[Any]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []  # an unreadable settings file is reported by the boundary checks
    hooks = data.get("hooks") if isinstance(data, Mapping) else None
    groups = hooks.get(event) if isinstance(hooks, Mapping) else None
    return groups if isinstance(groups, list) else []


def hook_entries(host: Host, project: str, env: Mapping[str, str]) -> list[HookEntry]:
    """Every handler in the host's hook files whose command runs ``verigate hook <host> …``."""
    found = []
    for path in hook_files(host, project, env):
        for event, _command in (*EVENTS, SUBAGENT):
            for group_index, group in enumerate(_groups(path, event)):
                hooks = group.get("hooks") if isinstance(group, Mapping) else None
                for handler_index, hook in enumerate(hooks if isinstance(hooks, list) else []):
                    command = str(hook.get("command", "")) if isinstance(hook, Mapping) else ""
                    if f"hook {host} " in command:
                        found.append(HookEntry(path, event, group_index, handler_index, group.get("matcher"),
                                               command, hook))
    return found


def _covers(matcher: object, tools: tuple[str, ...]) -> bool:
    if matcher in (None, "", "*"):
        return True
    try:
        return isinstance(matcher, str) and all(re.fullmatch(matcher, tool) for tool in tools)
    except re.error:
        return False


def wiring_checks(host: Host, project: str, environ: Mapping[str, str] | None = None) -> list[Check]:
    env = os.environ if environ is None else environ
    files = hook_files(host, project, env)
    entries = hook_entries(host, project, env)
    checks = []
    events = (*EVENTS, SUBAGENT) if host == "claude-code" else EVENTS
    for event, command in events:
        wired = [entry.matcher for entry in entries
                 if entry.event == event and re.search(rf"hook {host} {command}(?:\s|$)", entry.command)]
        name = f"{event} hook"
        if not wired and event == SUBAGENT[0]:
            checks.append(Check(name, False, "not wired: sub-agents' answers are not gated (the main agent's are)",
                                f'add "SubagentStop" with `verigate hook {host} {command}` (timeout 180)',
                                advisory=True))
        elif not wired:
            checks.append(Check(name, False, f"no `verigate hook {host} {command}` in {', '.join(files)}",
                                f"wire it as in {_EXAMPLE[host]}"))
        elif event == "PreToolUse" and not any(_covers(matcher, _SAMPLES[host]) for matcher in wired):
            checks.append(Check(name, False, f"its matcher ({', '.join(map(str, wired))}) does not reach every tool "
                                             f"({', '.join(_SAMPLES[host])})", f"use the matcher of {_EXAMPLE[host]}"))
        else:
            checks.append(Check(name, True, f"`verigate hook {host} {command}` is wired"))
    return checks
