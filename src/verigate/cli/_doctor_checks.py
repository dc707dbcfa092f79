"""``verigate doctor``'s checks beyond the sandbox boundary: does the host run *this* verigate, does Codex trust
the hooks, and would the Stop gate work (its configuration, its store, its judge)?

Every check only reads. The one exception is a temporary file in the store's folder, removed at once: the only
way to know a folder is writable for real (``os.access`` does not see read-only mounts or ACLs everywhere).
"""

# os.path on str paths: the hook files name their paths as strings
from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import tempfile
import time
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..selfgate._boundary import Check
from ..selfgate._wall import Host, codex_files
from ..selfgate._wiring import HookEntry, hook_entries

__all__ = ["codex_trust_checks", "config_check", "judge_check", "path_checks", "store_check"]

#: how long ``<verigate> --version`` and the judge probe may take before doctor gives up on them
VERSION_TIMEOUT_S = 10.0
JUDGE_PROBE_S = 10.0
_CODEX_EVENTS = {"PreToolUse": "pre_tool_use", "UserPromptSubmit": "user_prompt_submit", "Stop": "stop"}
_FAIL_CLOSED = ("every Stop then becomes a pending review (verigate fails closed: safe, but every answer waits "
                "for a person)")


# ------------------------------------------------------------------------------------------- the hook's command


def _launcher(command: str) -> tuple[str, ...]:
    """The words of a hook command before ``hook`` (``verigate``, ``/venv/bin/verigate``, ``python -m
    verigate``): what starts verigate, to which doctor appends ``--version``."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    return tuple(words[:words.index("hook")]) if "hook" in words else tuple(words[:1])


def _core_version() -> str:
    from .._plugins import _core_version as version

    return version()


def path_checks(host: Host, project: str, env: Mapping[str, str]) -> list[Check]:
    """Each distinct launcher the hooks run resolves on PATH (the host passes its hooks its own environment,
    which is the one doctor runs in when started from the same shell) and is this verigate: ``<launcher>
    --version`` prints this core version."""
    launchers = dict.fromkeys(_launcher(entry.command) for entry in hook_entries(host, project, env))
    checks = []
    for launcher in [words for words in launchers if words]:
        program = launcher[0]
        name = f"hook command {shlex.join(launcher)}"
        resolved = shutil.which(program, path=env.get("PATH", os.defpath))
        if resolved is None:
            checks.append(Check(name, False, f"{program!r} is not found on PATH ({env.get('PATH', '')}): the host "
                                             "cannot run the hook, and a hook that cannot start lets actions through",
                                "write the absolute path of the virtualenv's bin/verigate in the hook command, or "
                                "put that folder on the PATH the host starts with"))
            continue
        try:
            ran = subprocess.run([resolved, *launcher[1:], "--version"], capture_output=True, text=True,
                                 timeout=VERSION_TIMEOUT_S, env=dict(env), check=False)
            answer = ran.stdout.strip()
        except (OSError, subprocess.TimeoutExpired) as exc:
            answer, ran = f"({type(exc).__name__})", None
        wanted = f"verigate {_core_version()}"
        shown = shlex.join((resolved, *launcher[1:]))
        if ran is None or ran.returncode != 0 or answer != wanted:
            checks.append(Check(name, False, f"{shown} --version answered {answer or '(nothing)'!r}"
                                             f"{'' if ran is None else f', exit {ran.returncode}'}, not {wanted!r}",
                                "point the hook command at this verigate (`python -m verigate` of the environment "
                                "that has it installed, or its bin/verigate)"))
        else:
            checks.append(Check(name, True, f"{shown} ({wanted})"))
    return checks


# ------------------------------------------------------------------------------------------- Codex trust


def _codex_layers(project: str, env: Mapping[str, str]) -> list[tuple[str, Mapping[str, Any]]]:
    layers: list[tuple[str, Mapping[str, Any]]] = []
    for path, _scope in codex_files(project, env):
        try:
            data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # an unreadable config.toml is reported by the boundary checks
        layers.append((path, data))
    return layers


def _section(data: Mapping[str, Any], *keys: str) -> Mapping[str, Any]:
    value: Any = data
    for key in keys:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value if isinstance(value, Mapping) else {}


def _trusted_project(project: str, layers: list[tuple[str, Mapping[str, Any]]]) -> str | None:
    """The ``[projects."<path>"]`` entry with ``trust_level = "trusted"`` covering the project (Codex keys it by
    the project root, which may be the git root above the folder), or None."""
    real = os.path.realpath(project)
    for _path, data in layers:
        for key, entry in _section(data, "projects").items():
            if not isinstance(entry, Mapping) or entry.get("trust_level") != "trusted":
                continue
            root = os.path.realpath(key)
            if real == root or real.startswith(root.rstrip("/") + "/"):
                return key
    return None


def _trust_key(entry: HookEntry) -> str:
    return f"{entry.path}:{_CODEX_EVENTS[entry.event]}:{entry.group}:{entry.handler}"


#: the handler fields Codex 0.171's trust hash is known to cover; a handler with others is checked for presence
_HASHED_FIELDS = frozenset({"type", "command", "timeout", "async"})


def codex_hook_hash(entry: HookEntry) -> str | None:
    """The ``currentHash`` Codex 0.171 computes for a hooks.json handler (checked against ``codex app-server``'s
    hooks/list): sha256 of the compact key-sorted JSON of ``{event_name, matcher (tool events only), hooks: [the
    handler with its timeout, default 600, and async]}``. None when the handler has fields this does not cover."""
    if set(entry.spec) - _HASHED_FIELDS or entry.spec.get("type", "command") != "command":
        return None
    timeout = entry.spec.get("timeout", 600)
    if isinstance(timeout, bool) or not isinstance(timeout, int):
        return None
    identity: dict[str, Any] = {"event_name": _CODEX_EVENTS[entry.event], "hooks": [{
        "type": "command", "command": entry.command, "timeout": max(timeout, 1),
        "async": entry.spec.get("async", False) is True}]}
    if entry.event == "PreToolUse" and isinstance(entry.matcher, str):  # Codex ignores the others' matchers
        identity["matcher"] = entry.matcher
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def codex_trust_checks(project: str, env: Mapping[str, str]) -> list[Check]:
    """Codex runs a hooks.json handler only when it is trusted (``[hooks.state."<key>"] trusted_hash``, written
    by its /hooks screen) and, for the project's .codex/hooks.json, only when the project is trusted; otherwise
    it runs none of them and says nothing. ``--dangerously-bypass-hook-trust`` skips the hook trust, but a flag
    on Codex's command line is invisible here."""
    entries = [entry for entry in hook_entries("codex", project, env) if entry.event in _CODEX_EVENTS]
    if not entries:
        return [Check("codex hook trust", True, "no verigate hooks in hooks.json to trust", skipped=True)]
    layers = _codex_layers(project, env)
    user_config = codex_files(project, env)[0][0]
    checks = []
    project_hooks = os.path.join(project, ".codex", "hooks.json")
    if any(entry.path == project_hooks for entry in entries):
        trusted = _trusted_project(project, layers)
        checks.append(Check("codex project trust", trusted is not None,
                            f'[projects."{trusted}"] trust_level = "trusted"' if trusted else
                            f"{project} is not trusted: Codex ignores its .codex/hooks.json (and .codex/config.toml)",
                            f'add [projects."{project}"] trust_level = "trusted" to {user_config} (or answer '
                            "Codex's trust prompt when it opens the project)"))
    states: dict[str, Any] = {}
    for _path, data in layers:
        states.update(_section(data, "hooks", "state"))
    untrusted, modified, disabled, unhashed = [], [], [], []
    for entry in entries:
        key = _trust_key(entry)
        state = states.get(key)
        current = codex_hook_hash(entry)
        if not isinstance(state, Mapping) or not isinstance(state.get("trusted_hash"), str):
            untrusted.append(key)
        elif state.get("enabled") is False:
            disabled.append(key)
        elif current is None:
            unhashed.append(key)
        elif state["trusted_hash"] != current:
            modified.append(key)
    if untrusted or modified or disabled:
        detail = "; ".join(part for part in (
            f"no trusted_hash for {', '.join(untrusted)}" if untrusted else "",
            f"trusted_hash is not the hook as written now (edited since it was trusted): {', '.join(modified)}"
            if modified else "",
            f"disabled: {', '.join(disabled)}" if disabled else "") if part)
        checks.append(Check("codex hook trust", False, detail + ": Codex does not run these hooks",
                            "open Codex in the project, run /hooks and trust each verigate hook (it writes "
                            f'[hooks.state."<file>:<event>:<group>:<handler>"] trusted_hash to {user_config}); '
                            "automation that vets its hooks can run `codex --dangerously-bypass-hook-trust`"))
    else:
        unchecked = (f" ({', '.join(unhashed)}: fields doctor cannot hash, so only the presence of trusted_hash "
                     "is checked)") if unhashed else ""
        checks.append(Check("codex hook trust", True,
                            f"each of the {len(entries)} verigate hooks is trusted{unchecked}"))
    return checks


# ------------------------------------------------------------------------------------------- the Stop gate


def config_source(project: str) -> Path | dict[str, Any]:
    """What the Stop hook loads: the project's verigate.yaml, else the embedded defaults."""
    path = Path(project) / "verigate.yaml"
    return path if path.is_file() else {}


def config_check(project: str) -> tuple[Check, Any]:
    """The project's verigate.yaml loaded with verigate's own loader; the Config too (None when invalid)."""
    from .._config import load_config
    from .._errors import VerigateError

    source = config_source(project)
    try:
        config = load_config(source)
    except VerigateError as exc:
        return Check("verigate.yaml", False, f"invalid: {exc}",
                     "fix the file: every hook refuses (exit 2) or files a review while it is invalid"), None
    where = str(source) if isinstance(source, Path) else "none: the embedded defaults"
    return Check("verigate.yaml", True, f"valid ({where})"), config


def _writable(folder: Path) -> str | None:
    """Why the folder is not writable, or None: os.access, then a temporary file made and removed there."""
    if not os.access(folder, os.W_OK | os.X_OK):
        return "os.access says it is not writable"
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".verigate-doctor-", delete=True):
            pass
    except OSError as exc:
        return f"a file cannot be created there ({exc.strerror or exc})"
    return None


def store_check(project: str, config: Any) -> Check:
    """The Stop gate's store (``store.url``, relative to the project, as the hook resolves it): its folder, or
    the nearest existing folder above it the hook would create it in, must be writable."""
    from .._config import store_folder

    url = config.store.url
    folder = store_folder(config, Path(project))
    if folder is None:
        from ..store._open import shown_url  # a database URL may carry a password: never shown

        return Check("Stop gate store", True, f"{shown_url(url)} is not a local file", skipped=True)
    database = folder / Path(url.removeprefix("sqlite:///")).name
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        return Check("Stop gate store", False, f"{existing} is not a folder", "fix store.url in verigate.yaml")
    problem = _writable(existing)
    if problem is None and database.exists() and not os.access(database, os.R_OK | os.W_OK):
        problem = f"{database} is not readable and writable"
    fix = (f"make {existing} writable for the user the host runs as, or point store.url in verigate.yaml at a "
           "writable folder")
    if problem:
        return Check("Stop gate store", False, f"{existing}: {problem}: the Stop hook cannot record a review", fix)
    later = "" if existing == folder else f" (the first Stop creates {folder} in {existing})"
    return Check("Stop gate store", True, f"{database} can be written{later}")


def judge_check(project: str, config: Any) -> Check:
    """One Gate.finalize of a fixed tiny candidate through the configured judge, with an in-memory store so
    nothing is recorded, bounded by JUDGE_PROBE_S. A verification_error is a warning, not a failure: the gate
    fails closed, so nothing goes through unguarded, but nothing is judged either."""
    if config.judge is None:
        return Check("judge", False, f"no judge configured in verigate.yaml: {_FAIL_CLOSED}",
                     "add a judge section (README, judges)", advisory=True)
    from .._models import Candidate, Termination, TerminationReason
    from ..gate import Gate

    candidate = Candidate(request="Reply with the word OK.", final_text="OK", session_id="verigate-doctor-probe")

    async def probe() -> Any:
        with Gate.from_config(config_source(project), store=":memory:") as gate:
            return await asyncio.wait_for(
                gate.finalize(candidate, Termination(TerminationReason.NATURAL),
                              deadline=time.monotonic() + JUDGE_PROBE_S), JUDGE_PROBE_S + 5)

    started = time.monotonic()
    error: str | None
    try:
        result = asyncio.run(probe())
    except Exception as exc:  # any failure of the probe is what the Stop hook would meet: report it, never crash
        error = f"{type(exc).__name__}: {exc}"
    else:
        verdict = result.verdict
        error = (verdict.error if verdict is not None and verdict.error else
                 None if verdict is not None else f"no verdict (outcome {result.outcome})")
    took = time.monotonic() - started
    if error:
        return Check("judge", False, f"the probe got {error} after {took:.1f} s: {_FAIL_CLOSED}",
                     "check judge.base_url / model / the key variable in verigate.yaml, and that the server is up",
                     advisory=True)
    return Check("judge", True, f"answered a probe in {took:.1f} s ({config.judge.engine})")
