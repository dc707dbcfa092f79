"""The one answer to "which folder is the project?" for every hook and CLI command.

* Claude Code: ``CLAUDE_PROJECT_DIR`` when set and non-empty (Claude Code sets it for hook commands, and it stays
  the project when the agent ``cd``-ed elsewhere), else the hook input's ``cwd``.
* Codex: the hook input's ``cwd`` only. Codex defines no such variable, so a ``CLAUDE_PROJECT_DIR`` there was
  inherited from a parent Claude Code session and names *that* session's project: it must not redirect Codex's
  hooks.
* No host (CLI commands): the explicit ``--project``, else ``CLAUDE_PROJECT_DIR``, else the current folder.

Imports only ``os`` at load time (the exception class is imported on the failure path): the self-gate's
pre-tool-use fast path runs before every tool call and uses :func:`find_project` without paying for more.
"""

from __future__ import annotations

import os

#: ``typing`` costs milliseconds on every hook call; type checkers read this constant as typing.TYPE_CHECKING
_TYPE_CHECKING = False
if _TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

__all__ = ["CLAUDE_PROJECT_DIR", "find_project", "project_dir"]

#: set by Claude Code for hook commands: the folder the session was started in
CLAUDE_PROJECT_DIR = "CLAUDE_PROJECT_DIR"


def _cwd(hook_input: Mapping[str, Any] | None, *, strict: bool) -> str:
    value = (hook_input or {}).get("cwd")
    if value is None:
        return ""
    if not isinstance(value, str):
        if strict:
            from ._errors import InputError

            raise InputError(f"cwd must be a string, not {type(value).__name__}", source="<stdin>", field="cwd")
        return ""
    return value


def _resolve(host: str | None, hook_input: Mapping[str, Any] | None, environ: Mapping[str, str] | None,
             explicit: str | None, *, strict: bool) -> str:
    environ = os.environ if environ is None else environ
    if host == "codex":
        return _cwd(hook_input, strict=strict)
    from_claude = environ.get(CLAUDE_PROJECT_DIR) or ""
    if host == "claude-code":
        return from_claude or _cwd(hook_input, strict=strict)
    # no host: a CLI command, run by a person (or an agent) in a terminal
    return explicit or from_claude or _cwd(hook_input, strict=strict) or os.getcwd()  # noqa: PTH109 (no pathlib)


def find_project(host: str | None, hook_input: Mapping[str, Any] | None = None,
                 environ: Mapping[str, str] | None = None, *, explicit: str | None = None) -> str | None:
    """The project folder by the rules above, or None when nothing names one (a ``cwd`` that is not a string
    counts as none). The folder is not checked to exist. ``environ`` defaults to ``os.environ``; ``explicit``
    (a CLI's ``--project``) counts only when there is no host."""
    return _resolve(host, hook_input, environ, explicit, strict=False) or None


def project_dir(host: str | None, hook_input: Mapping[str, Any] | None = None,
                environ: Mapping[str, str] | None = None, *, explicit: str | None = None) -> str:
    """:func:`find_project`, strictly: a ``cwd`` that is not a string, or no project at all, is an InputError
    (``field="cwd"``, source ``<stdin>``) — a hook never guesses a folder."""
    found = _resolve(host, hook_input, environ, explicit, strict=True)
    if found:
        return found
    from ._errors import InputError

    if host == "codex":
        raise InputError("no project directory: the hook input has no cwd", source="<stdin>", field="cwd")
    raise InputError("no project directory: CLAUDE_PROJECT_DIR is unset and the hook input has no cwd",
                     source="<stdin>", field="cwd")
