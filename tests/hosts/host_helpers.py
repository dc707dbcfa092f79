"""The real host CLIs (Claude Code, Codex) run non-interactively inside a throw-away project, with verigate's hooks
wired as the README says, against the scripted model servers of ``host_servers``.

Layout of one project (all under a pytest temp folder)::

    <root>/home            HOME of the host (Claude Code's ~/.claude.json trusts the project; Codex's CODEX_HOME)
    <root>/proj            the project: verigate.yaml, .claude/settings.json or .codex/hooks.json, the files
    <root>/state           VERIGATE_STATE_HOME (the self-gate's per-user state)
    <root>/bin/verigate    the hook command on the hook's PATH: runs this virtualenv's verigate and appends one
                           timing line per call to <root>/hook-timings.txt (the tier reports medians per event)

Nothing here reaches an address other than 127.0.0.1, and no key is stored: API keys are generated per project.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

REPO = Path(__file__).resolve().parents[2]
#: the one place the versions are pinned (scripts/install-host-clis.sh installs exactly these)
PINS_FILE = REPO / "scripts" / "host-clis.txt"
PACKAGES = {"claude-code": "@anthropic-ai/claude-code", "codex": "@openai/codex"}
BINARIES = {"claude-code": "claude", "codex": "codex"}
#: every host process is bounded: killed with its process group after this many seconds
RUN_TIMEOUT_S = 60.0
VERIGATE = Path(sys.executable).with_name("verigate")
#: the model Codex is told it talks to: a name it knows, so it offers apply_patch (issue 10)
CODEX_MODEL = "gpt-5.5"
#: the judge key's variable in verigate.yaml (a generated value is put in the hook's environment)
JUDGE_KEY_ENV = "VERIGATE_TEST_JUDGE_KEY"


def pins() -> dict[str, str]:
    """``{package: version}`` from scripts/host-clis.txt."""
    found: dict[str, str] = {}
    for line in PINS_FILE.read_text(encoding="utf-8").splitlines():
        spec = line.split("#", 1)[0].strip()
        if spec:
            name, _, version = spec.rpartition("@")
            found[name] = version
    return found


def cli_cache() -> Path:
    return Path(os.environ.get("VERIGATE_HOST_CLIS") or REPO / ".cache" / "host-clis")


def installed_version(package: str) -> str | None:
    manifest = cli_cache() / "node_modules" / package / "package.json"
    try:
        return str(json.loads(manifest.read_text(encoding="utf-8"))["version"])
    except (OSError, ValueError, KeyError):
        return None


def host_binary(host: str) -> tuple[Path | None, str]:
    """The host's CLI, or None and the reason it cannot run (what the tier's skip says)."""
    package = PACKAGES[host]
    wanted = pins()[package]
    cache = cli_cache()
    unavailable = cache / "unavailable.txt"
    if unavailable.is_file():
        return None, f"{package}@{wanted}: {unavailable.read_text(encoding='utf-8').strip()}"
    version = installed_version(package)
    if version != wanted:
        state = "not installed" if version is None else f"{version} installed"
        return None, (f"{package}@{wanted} {state} in {cache} (run scripts/install-host-clis.sh, "
                      "or point VERIGATE_HOST_CLIS at its cache)")
    if shutil.which("node") is None:
        return None, f"{package}@{wanted} needs node on PATH"
    binary = cache / "node_modules" / ".bin" / BINARIES[host]
    if not binary.exists():
        return None, f"{package}@{wanted} is installed but {binary} is missing"
    return binary, ""


# ------------------------------------------------------------------------------------------------------ runs


@attrs.define
class HostRun:
    """One finished host process."""

    argv: list[str]
    returncode: int | None
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool

    @property
    def events(self) -> list[dict[str, Any]]:
        """The JSON lines of stdout (stream-json / exec --json), other lines skipped."""
        found = []
        for line in self.stdout.splitlines():
            with contextlib.suppress(ValueError):
                value = json.loads(line)
                if isinstance(value, dict):
                    found.append(value)
        return found

    def describe(self) -> str:
        return (f"{' '.join(self.argv[:2])}… exit {self.returncode} after {self.seconds:.1f}s"
                f"{' (TIMED OUT)' if self.timed_out else ''}\n--- stdout (tail)\n{self.stdout[-3000:]}"
                f"\n--- stderr (tail)\n{self.stderr[-3000:]}")


def run_bounded(argv: Sequence[str], *, cwd: Path, env: dict[str, str], timeout: float = RUN_TIMEOUT_S) -> HostRun:
    """Run a process in its own process group; on timeout the whole group is killed."""
    start = time.monotonic()
    process = subprocess.Popen(list(argv), cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    timed_out = False
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
    finally:
        # a host's hooks or tools left behind in the group (the host itself has exited)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
    return HostRun(list(argv), process.returncode, stdout, stderr, time.monotonic() - start, timed_out)


# ------------------------------------------------------------------------------------------------------ project

_SHIM = """#!/bin/bash
# verigate as the host runs it, timed: one line per call (start end exit host event) for the tier's report
start=$EPOCHREALTIME
{verigate} "$@"
code=$?
printf '%s %s %s %s %s\\n' "$start" "$EPOCHREALTIME" "$code" "$2" "$3" >> {timings}
exit $code
"""


def _toml_str(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string for these paths and URLs


class Project:
    """A temp project wired for one host; ``run`` starts the host CLI in it."""

    def __init__(self, root: Path, host: str, binary: Path, *, model_url: str, judge_url: str | None,
                 mode: str = "block", revise: int = 2, stop: bool = True, subagent_stop: bool = False) -> None:
        self.root = root
        self.host = host
        self.binary = binary
        self.home = root / "home"
        self.dir = root / "proj"
        self.state = root / "state"
        self.bin = root / "bin"
        self.timings = root / "hook-timings.txt"
        self.model_url = model_url
        self.codex_home = self.home / ".codex"
        self.model_key = "sk-loopback-" + secrets.token_hex(12)
        self.judge_key = "sk-judge-" + secrets.token_hex(12)
        for folder in (self.home, self.dir, self.state, self.bin):
            folder.mkdir(parents=True, exist_ok=True)
        shim = self.bin / "verigate"
        shim.write_text(_SHIM.format(verigate=VERIGATE, timings=self.timings), encoding="utf-8")
        shim.chmod(0o755)
        self.mode = mode
        #: the Stop hook is wired (scenarios about gates leave it out when they only pay for its time)
        self.stop = stop
        self.write_config(judge_url, revise=revise)
        if host == "claude-code":
            self._wire_claude(subagent_stop=subagent_stop)
        else:
            self._wire_codex()

    # ---------------------------------------------------------------- configuration

    def write_config(self, judge_url: str | None, *, revise: int = 2) -> None:
        lines = []
        if judge_url is not None:
            lines += ["judge:", "  engine: llm_judge", "  client: openai", "  model: gpt-4o-mini",
                      f"  base_url: {judge_url}", f"  api_key_env: {JUDGE_KEY_ENV}", "  timeout_s: 10"]
        lines += [f"budget:\n  revise: {revise}",
                  "self_gate:",
                  f"  mode: {self.mode}",
                  # The tier tests the hooks, not the host sandbox boundary: without this, block mode refuses
                  # blocked tools while the host's sandbox settings are missing (README, self-set gates).
                  "  hardening: best-effort"]
        (self.dir / "verigate.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")

    def _hook(self, event: str) -> list[dict[str, Any]]:
        timeout = 180 if event in ("stop", "subagent-stop") else 150
        return [{"type": "command", "command": f"verigate hook {self.host} {event}", "timeout": timeout}]

    def _wire_claude(self, *, subagent_stop: bool) -> None:
        hooks: dict[str, Any] = {
            "PreToolUse": [{"matcher": "*", "hooks": self._hook("pre-tool-use")}],
            "UserPromptSubmit": [{"hooks": self._hook("user-prompt-submit")}],
        }
        if self.stop:
            hooks["Stop"] = [{"hooks": self._hook("stop")}]
        if subagent_stop:
            hooks["SubagentStop"] = [{"hooks": self._hook("subagent-stop")}]
        settings = {
            # as root Claude Code refuses bypassPermissions: allow the tools, run with acceptEdits (issue 10)
            "permissions": {"allow": ["Read", "Edit", "Write", "Bash", "Task", "Agent"]},
            "hooks": hooks,
        }
        (self.dir / ".claude").mkdir(exist_ok=True)
        (self.dir / ".claude" / "settings.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")
        # the trust dialog, answered: without it Claude Code ignores the project's permissions.allow
        (self.home / ".claude.json").write_text(json.dumps({
            "hasCompletedOnboarding": True,
            "projects": {str(self.dir): {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True}},
        }), encoding="utf-8")

    def _wire_codex(self) -> None:
        hooks: dict[str, Any] = {
            "PreToolUse": [{"matcher": "Bash|apply_patch|mcp__.*", "hooks": self._hook("pre-tool-use")}],
            "UserPromptSubmit": [{"hooks": self._hook("user-prompt-submit")}],
        }
        if self.stop:
            hooks["Stop"] = [{"hooks": self._hook("stop")}]
        (self.dir / ".codex").mkdir(exist_ok=True)
        (self.dir / ".codex" / "hooks.json").write_text(json.dumps({"hooks": hooks}, indent=2), encoding="utf-8")
        self.codex_home.mkdir(exist_ok=True)
        (self.codex_home / "config.toml").write_text("\n".join([
            f"model = {_toml_str(CODEX_MODEL)}",
            'model_provider = "loopback"',
            'approval_policy = "never"',
            # the tier tests the hooks: the commands run unsandboxed (the boundary has its own tests)
            'sandbox_mode = "danger-full-access"',
            "check_for_update_on_startup = false",
            "",
            "[model_providers.loopback]",
            'name = "scripted loopback server"',
            f"base_url = {_toml_str(self.model_url + '/v1')}",
            'wire_api = "responses"',
            'env_key = "VERIGATE_TEST_MODEL_KEY"',
            "request_max_retries = 0",
            "stream_max_retries = 0",
            "",
            f"[projects.{_toml_str(str(self.dir))}]",
            'trust_level = "trusted"',
            "",
        ]), encoding="utf-8")

    # ---------------------------------------------------------------- environment

    def env(self) -> dict[str, str]:
        """The whole environment of the host (nothing of the test runner's leaks in: no real keys)."""
        node = shutil.which("node")
        path = [str(self.bin), str(VERIGATE.parent)]
        if node:
            path.append(str(Path(node).parent))
        path += ["/usr/local/bin", "/usr/bin", "/bin"]
        env = {
            "PATH": os.pathsep.join(dict.fromkeys(path)),
            "HOME": str(self.home),
            "LANG": "C.UTF-8",
            "VERIGATE_STATE_HOME": str(self.state),
            JUDGE_KEY_ENV: self.judge_key,
        }
        if self.mode == "block":
            env["VERIGATE_SELF_GATE_MODE"] = "block"
        if self.host == "claude-code":
            env |= {
                "ANTHROPIC_BASE_URL": self.model_url,
                "ANTHROPIC_API_KEY": self.model_key,
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",  # no telemetry, error reports, update checks
                "DISABLE_TELEMETRY": "1",
                "DISABLE_AUTOUPDATER": "1",
                "DISABLE_ERROR_REPORTING": "1",
                "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
            }
        else:
            env |= {"CODEX_HOME": str(self.codex_home), "VERIGATE_TEST_MODEL_KEY": self.model_key}
        return env

    # ---------------------------------------------------------------- running

    def run(self, prompt: str, *, resume: str | None = None, timeout: float = RUN_TIMEOUT_S,
            trust_hooks: bool = True) -> HostRun:
        """Run the host once. ``trust_hooks=False`` (Codex): without ``--dangerously-bypass-hook-trust``, as a
        user runs it before trusting the hooks in Codex's /hooks screen."""
        if self.host == "claude-code":
            argv = [str(self.binary), "-p", prompt, "--output-format", "stream-json", "--verbose",
                    "--permission-mode", "acceptEdits"]
            if resume:
                argv += ["--resume", resume]
        else:
            flags = ["--json", "--skip-git-repo-check"] + (["--dangerously-bypass-hook-trust"] if trust_hooks else [])
            argv = [str(self.binary), "exec", *flags, prompt] if resume is None else \
                [str(self.binary), "exec", "resume", *flags, resume, prompt]
        return run_bounded(argv, cwd=self.dir, env=self.env(), timeout=timeout)

    def verigate(self, *args: str) -> subprocess.CompletedProcess[str]:
        """verigate's CLI in the project, with the hooks' environment."""
        return subprocess.run([str(VERIGATE), *args], cwd=self.dir, env=self.env(), capture_output=True,
                              text=True, timeout=60, check=False)

    def gates(self) -> list[dict[str, Any]]:
        done = self.verigate("selfgate", "list", "--json")
        assert done.returncode == 0, done.stderr
        return list(json.loads(done.stdout)["gates"])

    def reviews(self, status: str = "pending") -> list[dict[str, Any]]:
        done = self.verigate("review", "list", "--status", status, "--json")
        assert done.returncode == 0, done.stderr
        return list(json.loads(done.stdout))

    def hook_timings(self) -> list[tuple[str, str, float, int]]:
        """``(host, event, seconds, exit code)`` of every hook call so far."""
        found = []
        if self.timings.exists():
            for line in self.timings.read_text(encoding="utf-8").splitlines():
                parts = line.split()
                if len(parts) == 5:
                    start, end, code, host, event = parts
                    found.append((host, event, float(end) - float(start), int(code)))
        return found

    # ---------------------------------------------------------------- what the host wrote

    def transcripts(self) -> list[Path]:
        """Claude Code's session logs of this project (main sessions, not sub-agents), oldest first."""
        projects = self.home / ".claude" / "projects"
        found = list(projects.glob("*/*.jsonl")) if projects.is_dir() else []
        return sorted(found, key=lambda path: path.stat().st_mtime)

    def rollouts(self) -> list[Path]:
        sessions = self.home / ".codex" / "sessions"
        found = list(sessions.rglob("rollout-*.jsonl")) if sessions.is_dir() else []
        return sorted(found, key=lambda path: path.stat().st_mtime)


def session_of(run: HostRun) -> str:
    """The host's session id from its JSON output (Claude Code: ``session_id``; Codex: ``thread.started``)."""
    for event in run.events:
        if event.get("type") == "thread.started" and event.get("thread_id"):
            return str(event["thread_id"])
        if event.get("session_id"):
            return str(event["session_id"])
    raise AssertionError("no session id in the host's output\n" + run.describe())


def result_event(run: HostRun) -> dict[str, Any] | None:
    """Claude Code's final ``result`` line."""
    results = [event for event in run.events if event.get("type") == "result"]
    return results[-1] if results else None
