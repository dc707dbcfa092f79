"""The fast paths of the two events: the full check's answer from its caches while nothing it read has changed
(pre-tool-use: hardening, then the open gates; user-prompt-submit: a prompt no phrase rule can match)."""

# os and os.path rather than pathlib: pathlib (with urllib.parse, ipaddress) costs ms on every tool call
from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from typing import Any

from .._fileio import replace_file
from . import _cursorfile
from ._caches import config_cache, fold_cache, phrases_cache
from ._defaults import (
    BEST_EFFORT,
    DEFAULT_BLOCKED_TOOLS,
    DEFAULT_HARDENING,
    DEFAULT_MODE,
    HARDENINGS,
    Mode,
    as_mode,
    mode_from_env,
)
from ._guard import protected_for, violation
from ._keywords import SHORT_PROMPT, contains_keyword, normalise_prompt
from ._location import STORE_NAME, config_candidates, legacy_store, project_state_dir, protected_paths, store_paths
from ._sealed import Doubt, read_cache, require_same, write_cache
from ._statsig import Signature, as_json, of_status, signature
from ._tool_policy import (
    GateRef,
    ToolVerdict,
    boundary_verdict,
    gate_verdict,
    hardening_verdict,
    is_blocked,
    still_open,
)
from ._wall import Host, cached_missing, watched_files

# The hook runs before every tool call of the agent, so this module (and every module it imports: the
# primitives ``_statsig``, ``_sealed``, ``_flock``, ``_lines``, ``_cursorfile``, the caches' layout ``_caches``)
# imports no attrs, pathlib, rule engine, schema validator or configuration loader. It answers only when the full
# check (``_enforce``) would answer the same: the caches it reads are written by the full check and name every
# file that check read by its stat signature. Any change, any missing or damaged cache and any doubt at all
# returns None: the full check runs.

__all__ = ["quick_prompt_context", "quick_tool_decision"]

#: more new bytes than this since the last scan: the full check reads them (in chunks)
_CATCH_UP_LIMIT = 64 << 20


# -- the fast path -----------------------------------------------------------------------------------------
def _text(hook_input: Mapping[str, Any], field: str) -> str:
    value = hook_input.get(field)
    if not isinstance(value, str) or not value:
        raise Doubt(f"no {field}")
    return value


def _is_file(path: str) -> bool:
    """Whether the full check takes ``path`` as a configuration file (a regular file; a folder is none). Any
    error but absence propagates: the full check then decides, as it fails on it."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)  # noqa: PTH116  # os: see the imports
    except FileNotFoundError:
        return False


def _settings(project: str, state_dir: str) -> tuple[Mode, tuple[str, ...], str, str]:
    """Mode, blocked tools, hardening and the configuration file they came from ("" for none)."""
    candidates = config_candidates(project)
    found = [path for path in candidates if _is_file(path)]
    hardening: str
    if not found:
        mode, blocked, hardening, config = DEFAULT_MODE, DEFAULT_BLOCKED_TOOLS, DEFAULT_HARDENING, ""
    else:
        cached = read_cache(config_cache(state_dir))
        recorded = cached.get("candidates")
        if not isinstance(recorded, list) or [row[0] for row in recorded] != list(candidates):
            raise Doubt("damaged configuration cache")
        for path, sig in recorded:
            require_same(sig, path)
        configured, listed = as_mode(cached.get("mode")), cached.get("blocked_tools")
        hardening = str(cached.get("hardening"))
        if configured is None or not isinstance(listed, list) or not all(isinstance(t, str) for t in listed) \
                or hardening not in HARDENINGS:
            raise Doubt("damaged configuration cache")
        mode, blocked, config = configured, tuple(listed), found[0]
    # an invalid override is a ValueError: the full check names the error
    return mode_from_env(mode), blocked, hardening, config


def _strings(value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(word, str) and word for word in value):
        raise Doubt("damaged phrase cache")
    return value


class _Keywords:
    """The pack's prefilter keywords from the cache, loaded on first use; a possible match is a doubt."""

    def __init__(self, state_dir: str) -> None:
        self._state_dir = state_dir
        self._cached: dict[str, Any] | None = None

    def _get(self, field: str) -> list[str]:
        if self._cached is None:
            cached = read_cache(phrases_cache(self._state_dir))
            require_same(cached.get("pack_signature"), str(cached.get("pack")))
            self._cached = cached
        return _strings(self._cached.get(field))

    def is_close_phrase(self, text: str) -> bool:
        if contains_keyword(text, self._get("close_keywords")):
            raise Doubt("may be a close phrase")  # the rule engine decides
        return False

    def check_prose(self, text: str) -> None:
        if contains_keyword(text, self._get("open_keywords")):
            raise Doubt("new prose may declare a gate")  # the rule engine decides

    def check_prompt(self, prompt: str, gates_open: bool) -> None:
        """Doubt unless the full check would find no close phrase in the prompt and, with a gate open, no
        never-close phrase (a /goal, an approval claim) either: then it only reminds of the open gates."""
        self.is_close_phrase(normalise_prompt(prompt))
        if gates_open and contains_keyword(prompt, self._get("not_close_keywords")):
            raise Doubt("the prompt may be a never-close phrase")  # the rule engine decides


def _open_gates(state_dir: str, session_id: str, transcript: str, store: str, keywords: _Keywords) -> list[GateRef]:
    path = fold_cache(state_dir, session_id, transcript)
    cached = read_cache(path)
    if cached.get("session_id") != session_id or cached.get("transcript") != transcript:
        raise Doubt("the fold cache is another session's")
    sources = cached.get("sources")
    if not isinstance(sources, list) or not sources or sources[0][0] != transcript:
        raise Doubt("damaged fold cache")
    require_same(cached.get("store"), store)
    for source, recorded in sources[1:]:
        require_same(recorded, source)
    gates = cached.get("open")
    if not isinstance(gates, list) or not all(
            isinstance(gate, list) and len(gate) == 2 and all(isinstance(part, str) for part in gate)
            for gate in gates):
        raise Doubt("damaged fold cache")
    try:
        require_same(sources[0][1], transcript)
    except Doubt:
        _catch_up(path, cached, state_dir, store, keywords)
    return [(gate[0], gate[1]) for gate in gates]


def _cursor(cached: Mapping[str, Any], state_dir: str) -> tuple[dict[str, Any], str]:
    cursor, path = _cursorfile.checked(cached.get("cursor")), cached.get("cursor_path")
    if cursor is None:
        raise Doubt("damaged cursor in the fold cache")
    # the cursor is rewritten at this path: it must be a cursor file of this store, never anything else
    if not _cursorfile.is_cursor_file(path, state_dir):
        raise Doubt("damaged cursor path in the fold cache")
    return cursor, str(path)


def _catch_up(cache_path: str, cached: dict[str, Any], state_dir: str, store: str, keywords: _Keywords) -> None:
    """Scan the session log's new lines as the full check would, when none of them can change the gates: no
    prose holding a keyword of an opening phrase, no line the full check would make a problem gate of, and no
    close request waiting for a typed prompt. Then move the cursor and the cache on, under the store lock."""
    from ._lines import read_lines
    from ._transcript import HEAD_BYTES, classify, head_crc

    if cached.get("pending") is not False:
        raise Doubt("a close request waits for the transcript")
    cursor, cursor_path = _cursor(cached, state_dir)
    offset = cursor["offset"]
    if offset < HEAD_BYTES:
        raise Doubt("a short log: its head is not settled yet")

    def check(raw: bytes, number: int) -> None:
        classified = classify(raw, number)
        if classified.kind == "problem":
            raise Doubt("a line the full check reports")
        if classified.kind == "assistant_text":
            for text in classified.texts:
                keywords.check_prose(text)
        # a typed prompt only confirms a waiting close request, and none waits

    from .._transcript_lines import open_log_stream  # a pipe or a device never blocks the hook (the full check's)

    with open_log_stream(cached["transcript"]) as handle:
        status = os.fstat(handle.fileno())
        if (status.st_dev, status.st_ino) != (cursor["device"], cursor["inode"]) or status.st_size < offset \
                or status.st_size - offset > _CATCH_UP_LIMIT or head_crc(handle, offset) != cached.get("head_crc"):
            raise Doubt("the log was replaced, truncated or grew too much")
        # only up to the size taken: the signature recorded below covers no byte past it
        moved_to, line = read_lines(handle, offset, cursor["line"], check, end=status.st_size)
    _advance(cache_path, cached, {**cursor, "offset": moved_to, "line": line}, cursor_path, of_status(status), store)


def _advance(cache_path: str, cached: dict[str, Any], cursor: dict[str, Any], cursor_path: str,
             transcript: Signature, store: str) -> None:
    """Save the moved cursor and cache under the store lock, if the store is still as folded; when the lock is
    busy or the store moved on, save nothing (the answer stands: it was right when the store was checked)."""
    from ._flock import hold, open_lock  # fcntl and time only for a call that caught up

    try:
        lock = open_lock(store_paths(store)[1], create=False)
    except OSError:
        return
    try:
        hold(lock)
        require_same(cached.get("store"), store)
        replace_file(cursor_path, json.dumps(cursor).encode("utf-8"))
        body = {key: value for key, value in cached.items() if key not in ("version", "package")}
        body["sources"] = [[cached["transcript"], as_json(transcript)], *cached["sources"][1:]]
        body["cursor"] = cursor
        write_cache(cache_path, body)
    except (OSError, Doubt):
        pass
    finally:
        os.close(lock)  # releases the lock


def _project(hook_input: Mapping[str, Any], host: Host) -> str:
    from .._project import find_project  # the one resolver, as the full check uses (it imports only os)

    project = find_project(host, hook_input)
    if not project:
        raise Doubt("no project directory")
    return project


def _no_store_to_import(project: str, store: str, state_dir: str) -> None:
    if signature(store) is None and os.path.exists(legacy_store(project)) \
            and not os.path.exists(os.path.join(state_dir, "legacy-imported")):
        raise Doubt("an old store may wait to be imported")  # the full check imports it once


def _decide(hook_input: Mapping[str, Any], host: Host) -> ToolVerdict:
    project = _project(hook_input, host)
    session_id, tool_name = _text(hook_input, "session_id"), _text(hook_input, "tool_name")
    tool_input = hook_input.get("tool_input")
    if tool_input is None:
        tool_input = {}
    if not isinstance(tool_input, Mapping):
        raise Doubt("tool_input is not an object")
    transcript = hook_input.get("transcript_path")
    transcript = transcript if isinstance(transcript, str) and transcript else None
    cwd = hook_input.get("cwd") if isinstance(hook_input.get("cwd"), str) else project
    # only the default store: a store named in the configuration is found by loading the configuration
    project_state = project_state_dir(project)
    companions = store_paths(os.path.join(project_state, STORE_NAME))
    state_dir = companions[2]
    mode, blocked, hardening, config = _settings(project, state_dir)
    keywords = _Keywords(state_dir)
    # hardening runs on every call and for every tool (MCP tools included: they run outside the host's
    # sandbox, so this check is all that stands between them and the store), as in the full check
    protected = protected_for(project, protected_paths(project, companions[0], project_state, False), transcript)
    refused = violation(tool_name, tool_input, str(cwd), protected, keywords.is_close_phrase)
    if refused:
        return hardening_verdict(tool_name, refused)
    if not is_blocked(tool_name, blocked):
        return "allow", "", ""
    _no_store_to_import(project, companions[0], state_dir)
    if mode == "block" and hardening != BEST_EFFORT:
        files = watched_files(host, project, config_candidates(project))
        missing = cached_missing(state_dir, host, project, companions[0], files)
        if missing:
            return boundary_verdict(tool_name, host, missing, config)
    if transcript is None:
        raise Doubt("no transcript")
    return gate_verdict(mode, tool_name, _open_gates(state_dir, session_id, transcript, companions[0], keywords), "")


def quick_tool_decision(hook_input: Mapping[str, Any], host: Host = "claude-code") -> ToolVerdict | None:
    """The full check's answer when the caches vouch for it, else None (then the full check must run)."""
    try:
        return _decide(hook_input, host)
    except Exception:  # any doubt, even a bug here, hands the call to the full check
        return None


def _prompt_context(hook_input: Mapping[str, Any], host: Host) -> tuple[Mode, str]:
    project = _project(hook_input, host)
    session_id, prompt = _text(hook_input, "session_id"), hook_input.get("prompt")
    transcript = hook_input.get("transcript_path")
    if not isinstance(prompt, str) or not isinstance(transcript, str) or not transcript:
        raise Doubt("no prompt or no transcript")
    companions = store_paths(os.path.join(project_state_dir(project), STORE_NAME))
    state_dir = companions[2]
    mode = _settings(project, state_dir)[0]  # the mode names how a failure answers; the prompt check has no other
    _no_store_to_import(project, companions[0], state_dir)
    keywords = _Keywords(state_dir)
    gates = _open_gates(state_dir, session_id, transcript, companions[0], keywords)
    if not gates and len(normalise_prompt(prompt)) > SHORT_PROMPT:
        return mode, ""
    keywords.check_prompt(prompt, bool(gates))
    return mode, still_open(gates) if gates else ""


def quick_prompt_context(hook_input: Mapping[str, Any], host: Host = "claude-code") -> tuple[Mode, str] | None:
    """The mode and the full check's context for the agent ("" for none) of a prompt that closes nothing and
    claims nothing, when the caches vouch for it; else None (then the full check must run)."""
    try:
        return _prompt_context(hook_input, host)
    except Exception:  # any doubt, even a bug here, hands the prompt to the full check
        return None
