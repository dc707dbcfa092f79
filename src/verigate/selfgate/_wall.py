"""The boundary check's cache: the full check's verdict on the host's sandbox settings, valid while every file it
read keeps its stat signature, the environment that located them is unchanged and every path whose links it
resolved resolves as it did (a writable root the agent replaced by a link changes no settings file)."""

# os and os.path rather than pathlib: the pre-tool-use fast path imports this module on every tool call
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from ._location import resolved

__all__ = ["ENV_KEYS", "HOSTS", "Host", "cached_missing", "claude_files", "codex_files", "key", "remember_missing",
           "watched_files"]

Host = Literal["claude-code", "codex"]
HOSTS: tuple[Host, ...] = ("claude-code", "codex")
#: the variables that decide where the settings files and the state folder are: part of the cache's key
ENV_KEYS = ("HOME", "TMPDIR", "CODEX_HOME", "CLAUDE_CONFIG_DIR", "VERIGATE_STATE_HOME", "XDG_STATE_HOME")
CLAUDE_MANAGED = "/etc/claude-code/managed-settings.json"
CODEX_MANAGED = "/etc/codex/managed_config.toml"


def _home(env: Mapping[str, str]) -> str:
    return env.get("HOME") or os.path.expanduser("~")


def claude_files(project: str, environ: Mapping[str, str] | None = None) -> tuple[tuple[str, str], ...]:
    """Claude Code's settings files, lowest precedence first, each with its scope (user, project, local,
    managed)."""
    env = os.environ if environ is None else environ
    user_dir = env.get("CLAUDE_CONFIG_DIR") or os.path.join(_home(env), ".claude")
    managed_dir = CLAUDE_MANAGED[:-len(".json")] + ".d"
    try:
        drop_ins = sorted(name for name in os.listdir(managed_dir) if name.endswith(".json"))
    except OSError:
        drop_ins = []
    return ((os.path.join(user_dir, "settings.json"), "user"),
            (os.path.join(project, ".claude", "settings.json"), "project"),
            (os.path.join(project, ".claude", "settings.local.json"), "local"),
            (CLAUDE_MANAGED, "managed"), *((os.path.join(managed_dir, name), "managed") for name in drop_ins))


def codex_files(project: str, environ: Mapping[str, str] | None = None) -> tuple[tuple[str, str], ...]:
    """Codex's configuration files, lowest precedence first, each with its scope."""
    env = os.environ if environ is None else environ
    codex_home = env.get("CODEX_HOME") or os.path.join(_home(env), ".codex")
    return ((os.path.join(codex_home, "config.toml"), "user"),
            (os.path.join(project, ".codex", "config.toml"), "project"), (CODEX_MANAGED, "managed"))


def watched_files(host: Host, project: str, config_candidates: Sequence[str],
                  environ: Mapping[str, str] | None = None) -> list[str]:
    """Every file whose content or existence changes the verdict: the host's settings, the managed drop-in
    folder (a new file there) and the self-gate configuration candidates."""
    files = claude_files(project, environ) if host == "claude-code" else codex_files(project, environ)
    folders = [CLAUDE_MANAGED[:-len(".json")] + ".d"] if host == "claude-code" else []
    return [path for path, _ in files] + folders + list(config_candidates)


def key(host: Host, project: str, store: str, files: Sequence[str],
        environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """What the verdict depends on: the host, project and store, the locating variables, and the signature of
    every watched file (None: absent)."""
    from ._statsig import as_json, signature

    env = os.environ if environ is None else environ
    return {"host": host, "project": project, "store": store, "env": {name: env.get(name) for name in ENV_KEYS},
            "files": [[path, as_json(signature(path))] for path in files]}


def _cache_path(state_dir: str, host: Host) -> str:
    return os.path.join(state_dir, f"fast-boundary-{host}.json")


def remember_missing(state_dir: str, host: Host, taken: Mapping[str, Any], missing: Sequence[str],
                     seen: Mapping[str, str]) -> None:
    """Keep the full check's verdict (what is missing, empty when the boundary holds) under the ``key`` taken
    before the files were read, with the paths the check resolved (``_boundary.missing``'s ``seen``)."""
    from ._sealed import write_cache

    write_cache(_cache_path(state_dir, host), {**taken, "missing": list(missing),
                                               "resolved": sorted([path, real] for path, real in seen.items())})


def cached_missing(state_dir: str, host: Host, project: str, store: str, files: Sequence[str],
                   environ: Mapping[str, str] | None = None) -> list[str]:
    """The cached verdict when nothing it depends on changed; raises the fast path's doubt otherwise."""
    from ._sealed import Doubt, read_cache

    cached = read_cache(_cache_path(state_dir, host))
    current = key(host, project, store, files, environ)
    if any(cached.get(name) != value for name, value in current.items()):
        raise Doubt("the host's settings changed since the boundary was checked")
    missing, recorded = cached.get("missing"), cached.get("resolved")
    if (not isinstance(missing, list) or not all(isinstance(item, str) and item for item in missing)
            or not isinstance(recorded, list)):
        raise Doubt("damaged boundary cache")
    for pair in recorded:
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(part, str) for part in pair)):
            raise Doubt("damaged boundary cache")
        try:
            now = resolved(pair[0])
        except OSError as exc:  # it cannot be resolved for certain: the full check refuses
            raise Doubt(f"{pair[0]} cannot be resolved ({exc.strerror})") from exc
        if now != pair[1]:
            raise Doubt(f"{pair[0]} resolves elsewhere since the boundary was checked")
    return missing
