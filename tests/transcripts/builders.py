"""Builders of Claude Code and Codex transcript lines for tests (the shapes of real session files)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

_ids = itertools.count(1)


def _base(kind: str, *, session: str, cwd: str, sidechain: bool, **extra: Any) -> dict[str, Any]:
    line: dict[str, Any] = {"type": kind, "uuid": f"u{next(_ids)}", "parentUuid": None, "isSidechain": sidechain,
                            "sessionId": session, "timestamp": "2026-01-01T00:00:00Z", "cwd": cwd,
                            "version": "2.0.0", "userType": "external"}
    line.update(extra)
    return line


class ClaudeSession:
    """Appends Claude Code lines in the real layout: one content block per line, results by tool_use_id."""

    def __init__(self, session: str = "s1", cwd: str = "/repo") -> None:
        self.session = session
        self.cwd = cwd
        self.lines: list[dict[str, Any]] = []

    def prompt(self, text: str, *, sidechain: bool = False, **extra: Any) -> ClaudeSession:
        self.lines.append(_base("user", session=self.session, cwd=self.cwd, sidechain=sidechain,
                                message={"role": "user", "content": text}, **extra))
        return self

    def say(self, text: str, *, message_id: str | None = None, sidechain: bool = False) -> ClaudeSession:
        self.lines.append(_base("assistant", session=self.session, cwd=self.cwd, sidechain=sidechain,
                                message={"id": message_id or f"msg_{next(_ids)}", "type": "message",
                                         "role": "assistant", "content": [{"type": "text", "text": text}]}))
        return self

    def call(self, tool_id: str, name: str, tool_input: Mapping[str, Any], *, message_id: str | None = None,
             sidechain: bool = False, cwd: str | None = None, agent_id: str | None = None) -> ClaudeSession:
        extra = {"agentId": agent_id} if agent_id else {}
        self.lines.append(_base("assistant", session=self.session, cwd=cwd or self.cwd, sidechain=sidechain,
                                message={"id": message_id or f"msg_{next(_ids)}", "type": "message",
                                         "role": "assistant",
                                         "content": [{"type": "tool_use", "id": tool_id, "name": name,
                                                      "input": dict(tool_input)}]}, **extra))
        return self

    def result(self, tool_id: str, text: str, *, is_error: bool | str | None = False,
               sidechain: bool = False) -> ClaudeSession:
        """``is_error="missing"`` leaves the field out."""
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_id, "content": text}
        if is_error != "missing":
            block["is_error"] = is_error
        self.lines.append(_base("user", session=self.session, cwd=self.cwd, sidechain=sidechain,
                                message={"role": "user", "content": [block]}, toolUseResult=text))
        return self

    def tool(self, tool_id: str, name: str, tool_input: Mapping[str, Any], text: str = "ok", *,
             is_error: bool | str | None = False, sidechain: bool = False, cwd: str | None = None) -> ClaudeSession:
        return self.call(tool_id, name, tool_input, sidechain=sidechain, cwd=cwd).result(
            tool_id, text, is_error=is_error, sidechain=sidechain)

    def raw(self, line: Mapping[str, Any]) -> ClaudeSession:
        self.lines.append(dict(line))
        return self

    def write(self, path: Path, *, tail: bytes = b"") -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"".join(json.dumps(line).encode() + b"\n" for line in self.lines) + tail)
        return path


def codex_lines(items: Iterable[tuple[str, Mapping[str, Any]]]) -> str:
    """Codex rollout lines ``{timestamp, type, payload}`` from (type, payload) pairs."""
    return "".join(json.dumps({"timestamp": "2026-01-01T00:00:00Z", "type": kind, "payload": dict(payload)}) + "\n"
                   for kind, payload in items)
