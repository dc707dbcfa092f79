"""The host settings verigate's boundary needs, generated for a project (``verigate doctor --print-settings``).

One copy: the checks in ``_boundary`` test for what these functions produce, and ``examples/host-settings/``
holds their output for a typical home (a test keeps the files equal to it).
"""

# str paths: they become settings values
from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from ._location import state_root

__all__ = ["PROJECT_PROTECTED", "USER_PROTECTED", "claude_settings", "codex_config", "rule_path", "snippet"]

#: project paths the agent's shell and file tools must not write: the self-gate's configuration (both places),
#: the old store folder (it also holds the review database) and the hook settings of both hosts
PROJECT_PROTECTED = ("verigate.yaml", ".verigate", ".claude/settings.json", ".claude/settings.local.json", ".codex")
#: per-user hook settings (under Claude Code's sandbox the shell cannot write the home folder anyway; the file
#: tools are held by permission rules only)
USER_PROTECTED = ("~/.claude/settings.json", "~/.codex")
_FOLDERS = (".verigate", ".codex")


def rule_path(path: str, home: str) -> str:
    """An absolute path in Claude Code's path syntax: ``~/…`` under the home folder, else ``//…``."""
    if path == home or path.startswith(home.rstrip("/") + "/"):
        return "~/" + os.path.relpath(path, home)
    return "/" + path


def claude_settings(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The Claude Code ``settings.json`` fragment: the Bash sandbox on, failing closed, with no unsandboxed
    escape, writes denied to verigate's files, and the same paths denied to the file tools (Edit rules apply to
    every built-in tool that edits files; Write rules are repeated for versions that read them separately).
    Project paths are relative to the folder Claude Code runs in, so the fragment can be committed."""
    env = os.environ if environ is None else environ
    home = env.get("HOME") or os.path.expanduser("~")
    state = rule_path(state_root(env), home)
    deny_write = [f"./{path}" for path in PROJECT_PROTECTED] + [*USER_PROTECTED, state]
    patterns = [f"./{path}/**" if path in _FOLDERS else f"./{path}" for path in PROJECT_PROTECTED]
    patterns += ["~/.claude/settings.json", "~/.codex/**", state + "/**"]
    return {
        "sandbox": {
            "enabled": True,
            "failIfUnavailable": True,
            "allowUnsandboxedCommands": False,
            "filesystem": {"denyWrite": deny_write},
        },
        "permissions": {"deny": [f"{tool}({pattern})" for tool in ("Edit", "Write") for pattern in patterns]},
    }


def codex_config(environ: Mapping[str, str] | None = None) -> str:
    """The Codex ``config.toml`` fragment. Codex cannot deny single paths inside the workspace, so verigate's
    state lives outside it and the self-gate's configuration goes to ``.codex/verigate.yaml``, which
    workspace-write keeps read-only (with ``.git`` and ``.agents``)."""
    env = os.environ if environ is None else environ
    home = env.get("HOME") or os.path.expanduser("~")
    root = rule_path(state_root(env), home).removeprefix("/")  # ~/… or an absolute path
    return "\n".join([
        "# verigate self-gate boundary for Codex (verigate doctor --host codex checks it)",
        "# the agent's commands run sandboxed: writes only inside the workspace and the temp folders;",
        "# .git, .codex and .agents stay read-only inside the workspace",
        'sandbox_mode = "workspace-write"',
        "# a command outside the sandbox needs a person's approval",
        'approval_policy = "on-request"',
        "",
        "[sandbox_workspace_write]",
        f"# do not list verigate's state folder ({root}) or a folder above it here",
        "writable_roots = []",
        "",
        "# and put the self_gate section of verigate.yaml in .codex/verigate.yaml (read-only for the agent):",
        "# verigate reads the self-gate's configuration from there before the project's verigate.yaml",
        "",
    ])


def snippet(host: str, environ: Mapping[str, str] | None = None) -> str:
    """What ``verigate doctor --print-settings HOST`` prints."""
    if host == "claude-code":
        return json.dumps(claude_settings(environ), indent=2) + "\n"
    if host == "codex":
        return codex_config(environ)
    raise ValueError(f"unknown host {host!r}")
