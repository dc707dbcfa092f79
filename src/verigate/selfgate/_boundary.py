"""Whether the host's sandbox is the self-gate's wall: the settings ``_snippets`` produces, read back from the
host's own settings files (as the host merges them), plus where the self-gate's state and configuration live.

Used by the pre-tool-use full check (block mode refuses blocked tools while a check fails) and by
``verigate doctor``, which adds the checks of the machine itself (``_machine``).
"""

# os.path on str paths throughout: settings values, rule paths and realpath comparisons are all strings
from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import attrs

from .._errors import StrictJSONError
from .._json import loads as strict_loads
from ._location import config_candidates, inside, resolved, state_root
from ._snippets import PROJECT_PROTECTED, claude_settings, rule_path
from ._wall import Host, claude_files, codex_files

__all__ = ["Check", "host_checks", "missing"]

_APPROVALS = ("untrusted", "on-request", "on-failure", "never")
_GLOB = re.compile(r"[*?\[]")


@attrs.frozen
class Check:
    """One requirement: ``detail`` says what was found, ``fix`` what a person does when it fails."""

    name: str
    ok: bool
    detail: str
    fix: str = ""
    #: a check that could not run here (no bubblewrap on macOS, say): neither a pass nor a failure
    skipped: bool = False
    #: a failure that weakens the boundary by the person's own choice (an explicit ``self_gate.store``): a
    #: warning, not a missing piece — block mode does not refuse for it
    advisory: bool = False

    @property
    def failed(self) -> bool:
        return not self.ok and not self.skipped and not self.advisory

    @property
    def status(self) -> str:
        return "skip" if self.skipped else "ok" if self.ok else "WARN" if self.advisory else "MISSING"

    def line(self) -> str:
        return f"{self.status:7} {self.name}: {self.detail}" + (f" — fix: {self.fix}" if self.fix and not self.ok
                                                                and not self.skipped else "")


@attrs.frozen
class _Value:
    """A setting's value with the file it came from (relative rule paths are read against that file)."""

    value: Any
    source: str


class _Layers:
    """A host's settings files merged as the host merges them: a scalar from the highest layer that sets it,
    a list as the union of every layer's entries."""

    def __init__(self, layers: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
        self._layers = layers  # lowest precedence first

    @staticmethod
    def _get(data: Mapping[str, Any], dotted: str) -> Any:
        value: Any = data
        for part in dotted.split("."):
            if not isinstance(value, Mapping) or part not in value:
                return None
            value = value[part]
        return value

    def scalar(self, dotted: str) -> _Value | None:
        for source, data in reversed(self._layers):
            value = self._get(data, dotted)
            if value is not None:
                return _Value(value, source)
        return None

    def entries(self, dotted: str) -> list[_Value]:
        found: list[_Value] = []
        for source, data in self._layers:
            value = self._get(data, dotted)
            if isinstance(value, list):
                found += [_Value(item, source) for item in value]
        return found


def _read_layers(files: Sequence[tuple[str, str]], parse: Any) -> tuple[_Layers, list[Check]]:
    """Every settings file that exists, parsed; one failing check per file that cannot be read (fail closed:
    the host may read it differently, so nothing it says can be vouched for)."""
    layers: list[tuple[str, Mapping[str, Any]]] = []
    problems: list[Check] = []
    for path, _scope in files:
        try:
            with open(path, "rb") as handle:
                data = parse(handle.read())
        except FileNotFoundError:
            continue
        except (OSError, ValueError, StrictJSONError) as exc:
            problems.append(Check(f"readable {path}", False, f"cannot read it ({exc})", "fix or remove the file"))
            continue
        if not isinstance(data, Mapping):
            problems.append(Check(f"readable {path}", False, "not an object", "fix or remove the file"))
            continue
        layers.append((path, data))
    return _Layers(layers), problems


def _claude_path(entry: str, source: str, project: str, home: str) -> str | None:
    """A Claude Code sandbox path as an absolute path: ``//`` from the root, ``~/`` from home, ``/`` from the
    settings file's folder, else from the project (where Claude Code runs). Globs: None (not applied on Linux)."""
    if _GLOB.search(entry):
        return None
    if entry.startswith("//"):
        return entry[1:]
    if entry == "~" or entry.startswith("~/"):
        return os.path.join(home, entry[2:])
    if entry.startswith("/"):
        return os.path.join(os.path.dirname(source), entry[1:])
    return os.path.join(project, entry)


def _rule_regex(pattern: str, project: str, home: str) -> re.Pattern[str] | None:
    """A permission rule's gitignore-style pattern as a regex over absolute paths (``//`` root, ``~/`` home,
    ``/`` and ``./`` the project)."""
    if pattern.startswith("//"):
        base, rest = "/", pattern[2:]
    elif pattern.startswith("~/"):
        base, rest = home, pattern[2:]
    elif pattern.startswith("**/"):
        return re.compile("(?:.*/)?" + _glob_regex(pattern[3:]) + "(?:/.*)?")
    else:
        base, rest = project, pattern.removeprefix("./").removeprefix("/")
    return re.compile(re.escape(base.rstrip("/") + "/") + _glob_regex(rest) + "(?:/.*)?")


def _glob_regex(glob: str) -> str:
    out = ""
    index = 0
    while index < len(glob):
        if glob.startswith("/**", index) and index + 3 == len(glob):
            out += "(?:/.*)?"
            index += 3
        elif glob.startswith("**/", index):
            out += "(?:.*/)?"
            index += 3
        elif glob.startswith("**", index):
            out += ".*"
            index += 2
        elif glob[index] == "*":
            out += "[^/]*"
            index += 1
        elif glob[index] == "?":
            out += "[^/]"
            index += 1
        else:
            out += re.escape(glob[index])
            index += 1
    return out


def _denied_by_rules(layers: _Layers, path: str, folder: bool, project: str, home: str) -> bool:
    """Whether an ``Edit(…)`` deny rule (it covers every built-in tool that edits files) covers the file
    ``path``, or every file beneath the folder ``path``."""
    probe = path.rstrip("/") + "/any-file" if folder else path
    for rule in layers.entries("permissions.deny"):
        found = re.fullmatch(r"Edit\((.+)\)", str(rule.value).strip())
        regex = _rule_regex(found.group(1), project, home) if found else None
        if regex is not None and regex.fullmatch(probe):
            return True
    return False


def _flag(layers: _Layers, key: str, wanted: bool, why: str) -> Check:
    found = layers.scalar(key)
    if found is not None and found.value is wanted:
        return Check(key, True, f"{json.dumps(wanted)} ({found.source})")
    seen = "not set" if found is None else f"{json.dumps(found.value)} in {found.source}"
    return Check(key, False, f"{seen}; {why}", f'set "{key}": {json.dumps(wanted)} (verigate doctor --print-settings '
                                               "claude-code)")


def _state_check(state: str, roots: Iterator[tuple[str, str]], fix: str, custom: bool,
                 seen: dict[str, str] | None) -> Check:
    """The store's folder must be outside the sandbox's writable roots, and no root inside it (a root linked into
    it makes what lies below writable). A store the person named in ``self_gate.store`` is their choice: a warning
    that it weakens the boundary, not a refusal."""
    name = "self-gate store (self_gate.store)" if custom else "self-gate state"
    if not custom:
        fix = ("point VERIGATE_STATE_HOME (or XDG_STATE_HOME) in the host's environment at a folder outside the "
               "project and the sandbox's writable folders, or unset it (default ~/.local/state)")
    for root, what in roots:
        if root and inside(state, root, seen):
            return Check(name, False, f"{state} is inside {what} ({root}), which the agent's sandbox can write",
                         fix, advisory=custom)
        if root and inside(root, state, seen):
            return Check(name, False, f"{what} ({root}) lies inside {state}: the agent's sandbox can write there",
                         fix, advisory=custom)
    return Check(name, True, f"{state} is outside every writable root")


def _claude_checks(project: str, store: str, custom: bool, env: Mapping[str, str],
                   seen: dict[str, str] | None) -> list[Check]:
    home = env.get("HOME") or os.path.expanduser("~")
    layers, checks = _read_layers(claude_files(project, env), strict_loads)
    checks += [
        _flag(layers, "sandbox.enabled", True, "Bash commands run without the OS sandbox"),
        _flag(layers, "sandbox.failIfUnavailable", True,
              "when the sandbox cannot start (no bubblewrap/socat), commands run unsandboxed"),
        _flag(layers, "sandbox.allowUnsandboxedCommands", False,
              "the agent can rerun a command outside the sandbox (dangerouslyDisableSandbox)"),
    ]
    excluded = [str(item.value) for item in layers.entries("sandbox.excludedCommands")]
    checks.append(Check("sandbox.excludedCommands", not excluded,
                        f"{', '.join(excluded)} run outside the sandbox" if excluded else "none",
                        "remove sandbox.excludedCommands: an excluded command can write verigate's files"))
    protected = [os.path.join(project, path) for path in PROJECT_PROTECTED]
    denied = [path for item in layers.entries("sandbox.filesystem.denyWrite") if isinstance(item.value, str)
              if (path := _claude_path(item.value, item.source, project, home)) is not None]
    open_paths = [path for path in protected if not any(inside(path, deny, seen) for deny in denied)]
    checks.append(Check("sandbox.filesystem.denyWrite", not open_paths,
                        "covers " + ", ".join(PROJECT_PROTECTED) if not open_paths else
                        "does not cover " + ", ".join(os.path.relpath(path, project) for path in open_paths),
                        "add " + ", ".join(f'"./{os.path.relpath(path, project)}"' for path in open_paths)
                        + " to sandbox.filesystem.denyWrite"))
    state = os.path.dirname(store)
    # the file tools are not sandboxed: rules must cover verigate's files and the whole per-user state root
    wanted = [(os.path.join(project, path), path in (".verigate", ".codex")) for path in PROJECT_PROTECTED]
    wanted += [(os.path.join(home, ".claude", "settings.json"), False), (state_root(env), True)]
    unruled = [path for path, folder in wanted if not _denied_by_rules(layers, path, folder, project, home)]
    rules = {rule for rule in claude_settings(env)["permissions"]["deny"] if rule.startswith("Edit(")}
    checks.append(Check("permissions.deny", not unruled,
                        "Edit rules cover verigate's files" if not unruled else
                        "no Edit(…) deny rule covers " + ", ".join(rule_path(path, home) for path in unruled),
                        "add the Edit(…) rules of `verigate doctor --print-settings claude-code` ("
                        + ", ".join(sorted(rules)[:3]) + ", …) to permissions.deny"))
    roots = [(project, "the project")]
    roots += [(path, "sandbox.filesystem.allowWrite") for item in layers.entries("sandbox.filesystem.allowWrite")
              if isinstance(item.value, str) and (path := _claude_path(item.value, item.source, project, home))]
    roots += [(_claude_path(str(item.value), item.source, project, home) or "", "permissions.additionalDirectories")
              for item in layers.entries("permissions.additionalDirectories")]
    # the sandbox's own temp folder (/tmp/claude, or a per-user /tmp/claude-<uid>) is writable without listing
    for temp in sorted({"/tmp", "/private/tmp", "/var/tmp", env.get("TMPDIR", "")} - {""}):
        below = os.path.relpath(resolved(state), resolved(temp))
        if inside(state, temp, seen) and below.startswith("claude"):
            roots.append((state, f"Claude Code's sandbox temp folder under {temp}"))
    checks.append(_state_check(state, iter(roots), "remove self_gate.store from the configuration: the default "
                               "is the per-user state folder, outside the sandbox's writable folders", custom,
                               seen))
    return checks


def _toml(raw: bytes) -> Any:
    import tomllib

    return tomllib.loads(raw.decode("utf-8"))


def _codex_checks(project: str, store: str, custom: bool, config: str, env: Mapping[str, str],
                  seen: dict[str, str] | None) -> list[Check]:
    layers, checks = _read_layers(codex_files(project, env), _toml)
    profile = layers.scalar("profile")
    prefix = f"profiles.{profile.value}." if profile is not None and isinstance(profile.value, str) else ""

    def setting(key: str) -> _Value | None:
        return (layers.scalar(prefix + key) if prefix else None) or layers.scalar(key)

    mode = setting("sandbox_mode")
    mode_ok = mode is not None and mode.value in ("workspace-write", "read-only")
    checks.append(Check("sandbox_mode", mode_ok,
                        "not set" if mode is None else f"{mode.value!r} ({mode.source})",
                        'set sandbox_mode = "workspace-write" in .codex/config.toml or ~/.codex/config.toml'))
    approval = setting("approval_policy")
    checks.append(Check("approval_policy", approval is not None and approval.value in _APPROVALS,
                        "not set" if approval is None else f"{approval.value!r} ({approval.source})",
                        'set approval_policy = "on-request" (a command outside the sandbox needs a person)'))
    state = os.path.dirname(store)
    section = "sandbox_workspace_write."
    roots = [(project, "the workspace")]
    listed = layers.entries(section + "writable_roots") + (layers.entries(prefix + section + "writable_roots")
                                                           if prefix else [])
    roots += [(str(item.value), "sandbox_workspace_write.writable_roots") for item in listed]
    excluded_tmp = setting(section + "exclude_slash_tmp")
    excluded_env = setting(section + "exclude_tmpdir_env_var")
    if excluded_tmp is None or excluded_tmp.value is not True:
        roots.append(("/tmp", "/tmp (writable under workspace-write)"))
    if (excluded_env is None or excluded_env.value is not True) and env.get("TMPDIR"):
        roots.append((env["TMPDIR"], "$TMPDIR (writable under workspace-write)"))
    checks.append(_state_check(state, iter(roots), "remove self_gate.store from the configuration (the default is "
                               "the per-user state folder), and keep it out of /tmp, $TMPDIR and writable_roots",
                               custom, seen))
    first = config_candidates(project, env)
    protected_config = config in first[:2]
    checks.append(Check("self-gate configuration", protected_config,
                        f"read from {config}" if protected_config else
                        (f"read from {config}, which the agent can write under workspace-write" if config else
                         "no .codex/verigate.yaml: the agent could create a verigate.yaml that verigate would read"),
                        f"put the self_gate section in {first[1]} (Codex keeps .codex/ read-only; verigate then "
                        "ignores the project's verigate.yaml for the self-gate)"))
    return checks


def host_checks(host: Host, project: str, store: str, config: str, custom_store: bool = False,
                environ: Mapping[str, str] | None = None, seen: dict[str, str] | None = None) -> list[Check]:
    """Every settings check for ``host``: ``store`` is the self-gate store in use (``custom_store``: named in
    ``self_gate.store``), ``config`` the configuration file the self-gate read ("" for none); ``seen`` collects
    the paths whose links the checks resolved, each with its resolved form."""
    env = os.environ if environ is None else environ
    if host == "claude-code":
        return _claude_checks(project, store, custom_store, env, seen)
    return _codex_checks(project, store, custom_store, config, env, seen)


def missing(host: Host, project: str, store: str, config: str, custom_store: bool = False,
            environ: Mapping[str, str] | None = None, seen: dict[str, str] | None = None) -> list[str]:
    """What block mode lacks: one short line per failing check (empty when the boundary holds). Errors
    propagate: the caller fails closed. ``seen``: as for :func:`host_checks`."""
    failed = [check for check in host_checks(host, project, store, config, custom_store, environ, seen)
              if check.failed]
    return [f"{check.name}: {check.detail} (fix: {check.fix})" for check in failed]
