"""Whether the host runs verigate's self-gate hooks at all, on every tool (``verigate doctor`` only: a hook that
answers is evidently wired, one that is not can say nothing)."""

# ruff: noqa: PTH118
from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._boundary import Check
from ._wall import Host, claude_files

__all__ = ["wiring_checks"]

#: tools the PreToolUse matcher must reach: the hardening has to see every tool that can write, MCP tools included
_SAMPLES: Mapping[str, tuple[str, ...]] = {
    "claude-code": ("Edit", "Write", "MultiEdit", "NotebookEdit", "Bash", "CronCreate", "mcp__filesystem__write_file"),
    "codex": ("Bash", "apply_patch", "mcp__filesystem__write_file"),
}
_EXAMPLE = {"claude-code": "examples/claude-code/settings.json (PreToolUse matcher \"*\")",
            "codex": "examples/codex/hooks.json (PreToolUse matcher \"Bash|apply_patch|mcp__.*\")"}


def _hook_files(host: Host, project: str, env: Mapping[str, str]) -> list[str]:
    if host == "claude-code":
        return [path for path, _ in claude_files(project, env)]
    home = env.get("HOME") or str(Path.home())
    codex_home = env.get("CODEX_HOME") or os.path.join(home, ".codex")
    return [os.path.join(codex_home, "hooks.json"), os.path.join(project, ".codex", "hooks.json")]


def _groups(path: str, event: str) -> list[Mapping[str, Any]]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []  # an unreadable settings file is reported by the boundary checks
    hooks = data.get("hooks") if isinstance(data, Mapping) else None
    groups = hooks.get(event) if isinstance(hooks, Mapping) else None
    return [group for group in groups if isinstance(group, Mapping)] if isinstance(groups, list) else []


def _covers(matcher: object, tools: tuple[str, ...]) -> bool:
    if matcher in (None, "", "*"):
        return True
    try:
        return isinstance(matcher, str) and all(re.fullmatch(matcher, tool) for tool in tools)
    except re.error:
        return False


def wiring_checks(host: Host, project: str, environ: Mapping[str, str] | None = None) -> list[Check]:
    env = os.environ if environ is None else environ
    files = _hook_files(host, project, env)
    checks = []
    for event, command in (("PreToolUse", "pre-tool-use"), ("UserPromptSubmit", "user-prompt-submit")):
        wired = [group.get("matcher") for path in files for group in _groups(path, event)
                 if any(f"hook {host} {command}" in str(hook.get("command", "")) for hook in group.get("hooks", [])
                        if isinstance(hook, Mapping))]
        name = f"{event} hook"
        if not wired:
            checks.append(Check(name, False, f"no `verigate hook {host} {command}` in {', '.join(files)}",
                                f"wire it as in {_EXAMPLE[host]}"))
        elif event == "PreToolUse" and not any(_covers(matcher, _SAMPLES[host]) for matcher in wired):
            checks.append(Check(name, False, f"its matcher ({', '.join(map(str, wired))}) does not reach every tool "
                                             f"({', '.join(_SAMPLES[host])})", f"use the matcher of {_EXAMPLE[host]}"))
        else:
            checks.append(Check(name, True, f"`verigate hook {host} {command}` is wired"))
    return checks
