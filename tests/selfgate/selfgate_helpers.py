"""Self-gate test helpers: a project folder, a real Claude Code–style transcript, hooks run as subprocesses."""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import attrs

from verigate.selfgate import PromptOutcome, ToolDecision, decide_prompt, decide_tool_call, settings_for
from verigate.selfgate._location import project_state_dir
from verigate.selfgate._snippets import claude_settings, codex_config

#: variables that would point the hooks at the real home's settings or state: never passed to a hook
HOST_VARIABLES = ("CLAUDE_PROJECT_DIR", "VERIGATE_SELF_GATE_MODE", "XDG_STATE_HOME", "CODEX_HOME",
                  "CLAUDE_CONFIG_DIR", "TMPDIR")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
#: what a test home's Codex configuration adds to verigate's snippet: pytest's folders are under /tmp
CODEX_TEST_TMP = "exclude_slash_tmp = true\nexclude_tmpdir_env_var = true\n"


def now_iso() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class HookRun:
    def __init__(self, completed: subprocess.CompletedProcess[str]) -> None:
        self.code = completed.returncode
        self.stderr = completed.stderr
        self.output: dict[str, Any] | None = json.loads(completed.stdout) if completed.stdout.strip() else None

    @property
    def specific(self) -> dict[str, Any]:
        return (self.output or {}).get("hookSpecificOutput", {})

    @property
    def denied(self) -> bool:
        return self.code == 2 or self.specific.get("permissionDecision") == "deny"

    @property
    def context(self) -> str:
        return str(self.specific.get("additionalContext", ""))

    @property
    def reason(self) -> str:
        return str(self.specific.get("permissionDecisionReason", "")) + self.stderr


def write_if_changed(path: Path, text: str) -> None:
    """Unchanged files keep their stat signature (a rewrite would make the fast path step aside)."""
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


class Session:
    """One agent session: its transcript under a fake home, the project it works in, and hook calls. The fake
    home holds both hosts' settings with verigate's boundary snippet (``boundary=False``: none), and the
    self-gate's state goes to ``<root>/state`` (``VERIGATE_STATE_HOME``), never the real home."""

    def __init__(self, root: Path, session_id: str = "sess-1", host: str = "claude-code",
                 boundary: bool = True, state_home: Path | None = None) -> None:
        self.root = root
        self.home = root / "home"
        self.state_home = state_home or root / "state"
        self.project = root / "project"
        self.project.mkdir(parents=True, exist_ok=True)
        self.session_id = session_id
        self.host = host
        folder = self.home / ".claude" / "projects" / "-project"
        folder.mkdir(parents=True, exist_ok=True)
        self.transcript = folder / f"{session_id}.jsonl"
        self.transcript.touch()
        self.boundary = boundary
        if boundary:
            self.write_boundary()
        self.store = Path(project_state_dir(str(self.project), self.env(None))) / "self-gates.jsonl"

    def write_boundary(self) -> None:
        """The home's settings as a person would have them: verigate's hooks wired as the examples show, and
        the boundary snippet."""
        env = self.env(None)
        hooks = json.loads((EXAMPLES / "claude-code" / "settings.json").read_text(encoding="utf-8"))["hooks"]
        write_if_changed(self.home / ".claude" / "settings.json",
                         json.dumps({**claude_settings(env), "hooks": hooks}, indent=2))
        write_if_changed(self.home / ".codex" / "config.toml", codex_config(env).replace(
            "[sandbox_workspace_write]\n", "[sandbox_workspace_write]\n" + CODEX_TEST_TMP))
        write_if_changed(self.home / ".codex" / "hooks.json",
                         (EXAMPLES / "codex" / "hooks.json").read_text(encoding="utf-8"))
        if self.host == "codex":  # Codex needs the self-gate's configuration where workspace-write cannot write
            write_if_changed(self.project / ".codex" / "verigate.yaml", "self_gate: {}\n")

    def other(self, session_id: str) -> Session:
        return Session(self.root, session_id, self.host, self.boundary, self.state_home)

    def append(self, record: dict[str, Any], path: Path | None = None) -> dict[str, Any]:
        with (path or self.transcript).open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        return record

    def assistant(self, text: str, *, sidechain: bool = False, path: Path | None = None) -> dict[str, Any]:
        return self.append({"type": "assistant", "uuid": str(uuid.uuid4()), "sessionId": self.session_id,
                            "isSidechain": sidechain, "timestamp": now_iso(),
                            "message": {"role": "assistant", "content": [{"type": "text", "text": text}]}}, path)

    def user(self, text: str, **markers: Any) -> dict[str, Any]:
        record = {"type": "user", "uuid": str(uuid.uuid4()), "sessionId": self.session_id, "isSidechain": False,
                  "userType": "external", "timestamp": now_iso(), "message": {"role": "user", "content": text}}
        record.update(markers)
        return self.append(record)

    def env(self, mode: str | None) -> dict[str, str]:
        env = {key: value for key, value in os.environ.items() if key not in HOST_VARIABLES}
        env["HOME"] = str(self.home)
        env["VERIGATE_STATE_HOME"] = str(self.state_home)
        if mode is not None:
            env["VERIGATE_SELF_GATE_MODE"] = mode
        return env

    def hook(self, event: str, payload: dict[str, Any] | str, mode: str | None = "block") -> HookRun:
        stdin = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
        completed = subprocess.run([sys.executable, "-m", "verigate", "hook", self.host, event], input=stdin,
                                   capture_output=True, text=True, env=self.env(mode), cwd=self.project,
                                   timeout=60, check=False)
        return HookRun(completed)

    def base(self, event_name: str) -> dict[str, Any]:
        return {"session_id": self.session_id, "transcript_path": str(self.transcript), "cwd": str(self.project),
                "permission_mode": "default", "hook_event_name": event_name}

    def tool(self, tool_name: str, tool_input: dict[str, Any] | None = None, mode: str | None = "block",
             **extra: Any) -> HookRun:
        payload = {**self.base("PreToolUse"), "tool_name": tool_name, "tool_input": tool_input or {},
                   "tool_use_id": "toolu_" + uuid.uuid4().hex[:12], **extra}
        return self.hook("pre-tool-use", payload, mode)

    def prompt(self, text: str, mode: str | None = "block", *, typed: bool = True) -> HookRun:
        """Submit a prompt; ``typed`` first writes it to the transcript the way Claude Code records a person's
        prompt (the host may also write it after the hook: see test_close_confirmed_at_next_tool_call)."""
        if typed:
            self.user(text)
        return self.hook("user-prompt-submit", {**self.base("UserPromptSubmit"), "prompt": text}, mode)

    def decide_tool(self, tool_name: str, tool_input: dict[str, Any] | None = None,
                    mode: str = "block") -> ToolDecision:
        """The same decision in this process (for the many cases that need no process boundary)."""
        payload = {**self.base("PreToolUse"), "tool_name": tool_name, "tool_input": tool_input or {}}
        return decide_tool_call(payload, attrs.evolve(settings_for(payload), mode=mode))

    def decide_prompt(self, text: str, *, typed: bool = True) -> PromptOutcome:
        if typed:
            self.user(text)
        payload = {**self.base("UserPromptSubmit"), "prompt": text}
        return decide_prompt(payload, settings_for(payload))

    def cli(self, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "verigate", "selfgate", "--project", str(self.project), *args],
                              input=stdin, capture_output=True, text=True, env=self.env(None), timeout=60,
                              check=False)

    def store_lines(self) -> list[dict[str, Any]]:
        if not self.store.exists():
            return []
        return [json.loads(line) for line in self.store.read_text(encoding="utf-8").splitlines() if line.strip()]

