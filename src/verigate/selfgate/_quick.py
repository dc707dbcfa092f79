"""The pre-tool-use fast path: hardening, then the cached answer of the full check while nothing it read has changed."""

# os and os.path rather than pathlib: pathlib (with urllib.parse, ipaddress) costs ms on every tool call
# ruff: noqa: PTH103, PTH110, PTH116, PTH118, PTH119, PTH120, PTH123
from __future__ import annotations

import json
import os
import re
import zlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .._fileio import replace_file
from ._guard import protected_for, violation
from ._location import STORE_NAME, config_candidates, legacy_store, project_state_dir, protected_paths
from ._policy import (
    BEST_EFFORT,
    DEFAULT_BLOCKED_TOOLS,
    DEFAULT_HARDENING,
    DEFAULT_MODE,
    MODE_ENV,
    GateRef,
    Mode,
    Verdict,
    as_mode,
    boundary_verdict,
    gate_verdict,
    hardening_verdict,
    is_blocked,
)
from ._wall import Host, cached_missing, watched_files

# The hook runs before every tool call of the agent, so this module imports no attrs, rule engine, schema
# validator or configuration loader. It answers only when the full check (``_enforce``) would answer the same:
# the caches it reads are written by the full check and name every file that check read by its stat
# signature. Any change, any missing or damaged cache and any doubt at all returns None: the full check runs.

__all__ = ["CACHE_VERSION", "Doubt", "Signature", "contains_keyword", "quick_tool_decision", "read_cache",
           "remember_config", "remember_fold", "remember_phrases", "signature", "store_paths", "write_cache"]

#: 2: the store moved to the per-user state folder; the configuration cache names its file and the hardening
CACHE_VERSION = 2
#: (device, inode, size, mtime ns, ctime ns); ctime cannot be set back by a process, so a file rewritten to the
#: same size and modification time still differs
Signature = tuple[int, int, int, int, int]
StrPath = str | os.PathLike[str]
_CONFIG_FILE = "fast-config.json"
_PHRASES_FILE = "fast-phrases.json"
_FOLDS_DIR = "fast"
_CURSOR_NAME = re.compile(r"[0-9a-f]{32}\.json")
#: more new bytes than this since the last scan: the full check reads them (in chunks)
_CATCH_UP_LIMIT = 64 << 20
_PACKAGE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


class _Doubt(Exception):
    """The fast path cannot vouch for an answer: the full check decides."""


Doubt = _Doubt


def store_paths(store: str) -> tuple[str, str, str]:
    """A store file and its companions: the lock file and the state folder (cursors and caches)."""
    return store, store + ".lock", store + ".state"


def signature(path: StrPath) -> Signature | None:
    """The stat signature of a file or folder, None when it does not exist (other errors propagate)."""
    try:
        status = os.stat(path)
    except FileNotFoundError:
        return None
    return status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns


def contains_keyword(text: str, keywords: Iterable[str]) -> bool:
    """Whether a prefilter keyword occurs in the text, lower-cased or NFKC case-folded (as the engine folds)."""
    import unicodedata

    lowered = text.lower()
    folded = unicodedata.normalize("NFKC", text).casefold()
    return any(keyword in folded or keyword in lowered for keyword in keywords)


# -- sealed cache files ------------------------------------------------------------------------------------
def _canonical(body: Mapping[str, Any]) -> bytes:
    return json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _write(path: str, body: dict[str, Any]) -> None:
    """Replace a cache atomically; a cache that cannot be written only costs the next call the full check."""
    body = {"version": CACHE_VERSION, "package": _PACKAGE, **body}
    sealed = {"body": body, "crc32": zlib.crc32(_canonical(body))}
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        replace_file(path, json.dumps(sealed, ensure_ascii=False).encode("utf-8"))
    except OSError:
        pass


def _read(path: str) -> dict[str, Any]:
    """A cache's body when it is whole, of this version and written by this installation; doubt otherwise."""
    try:
        with open(path, "rb") as handle:
            sealed = json.loads(handle.read())
        body = sealed["body"]
        whole = isinstance(body, dict) and sealed["crc32"] == zlib.crc32(_canonical(body))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise _Doubt(f"no usable cache {path}") from exc
    if not whole or body.get("version") != CACHE_VERSION or body.get("package") != _PACKAGE:
        raise _Doubt(f"cache {path} is damaged or from another version")
    checked: dict[str, Any] = body
    return checked


write_cache = _write
read_cache = _read


def _same(recorded: Any, path: StrPath) -> None:
    """Doubt unless ``path`` still has the recorded signature (a JSON list, or null for "did not exist")."""
    current = signature(path)
    if recorded != (list(current) if current is not None else None):
        raise _Doubt(f"{path} changed since the cache was written")


def _fold_cache(state_dir: StrPath, session_id: str, transcript: str) -> str:
    # crc32 keeps hashlib off this path; the body names its session and transcript, so a collision only misses
    key = zlib.crc32(f"{session_id}\x1f{transcript}".encode())
    return os.path.join(state_dir, _FOLDS_DIR, f"{key:08x}.json")


# -- written by the full check -----------------------------------------------------------------------------
def remember_config(state_dir: StrPath, candidates: Sequence[tuple[str, Signature | None]], mode: Mode,
                    blocked_tools: Sequence[str], hardening: str) -> None:
    """The self_gate section as read from the first existing configuration candidate; ``candidates`` are all of
    them with their signatures taken before reading (None: absent), so a file appearing above it is a change."""
    _write(os.path.join(state_dir, _CONFIG_FILE), {
        "candidates": [[path, list(sig) if sig is not None else None] for path, sig in candidates], "mode": mode,
        "blocked_tools": list(blocked_tools), "hardening": hardening})


def remember_phrases(state_dir: StrPath, pack: StrPath, pack_signature: Signature,
                     close_keywords: Sequence[str], open_keywords: Sequence[str] | None) -> None:
    """The keywords one of which every close phrase (and every opening phrase, None when a rule has none) of
    the pack at ``pack`` contains."""
    _write(os.path.join(state_dir, _PHRASES_FILE), {
        "pack": os.fspath(pack), "pack_signature": list(pack_signature), "close_keywords": list(close_keywords),
        "open_keywords": list(open_keywords) if open_keywords is not None else None})


def remember_fold(state_dir: StrPath, session_id: str, transcript: str, store: Signature | None,
                  sources: Sequence[tuple[str, Signature | None]], open_gates: Sequence[GateRef], *,
                  cursor: Mapping[str, Any], cursor_path: StrPath, head_crc: int, pending: bool) -> None:
    """A session's open gates, folded from the store at signature ``store`` after every transcript in
    ``sources`` (the session's log, its sub-agent folder and logs) was scanned at the signature given; with the
    session log's cursor (and where it is saved) and whether a close request of the session waits."""
    _write(_fold_cache(state_dir, session_id, transcript), {
        "session_id": session_id, "transcript": transcript, "store": list(store) if store is not None else None,
        "sources": [[path, list(sig) if sig is not None else None] for path, sig in sources],
        "open": [list(gate) for gate in open_gates], "cursor": dict(cursor), "cursor_path": os.fspath(cursor_path),
        "head_crc": head_crc, "pending": pending})


# -- the fast path -----------------------------------------------------------------------------------------
def _text(hook_input: Mapping[str, Any], field: str) -> str:
    value = hook_input.get(field)
    if not isinstance(value, str) or not value:
        raise _Doubt(f"no {field}")
    return value


def _settings(project: str, state_dir: str) -> tuple[Mode, tuple[str, ...], str, str]:
    """Mode, blocked tools, hardening and the configuration file they came from ("" for none)."""
    candidates = config_candidates(project)
    found = [path for path in candidates if signature(path) is not None]
    if not found:
        mode, blocked, hardening, config = DEFAULT_MODE, DEFAULT_BLOCKED_TOOLS, DEFAULT_HARDENING, ""
    else:
        cached = _read(os.path.join(state_dir, _CONFIG_FILE))
        recorded = cached.get("candidates")
        if not isinstance(recorded, list) or [row[0] for row in recorded] != list(candidates):
            raise _Doubt("damaged configuration cache")
        for path, sig in recorded:
            _same(sig, path)
        configured, listed = as_mode(cached.get("mode")), cached.get("blocked_tools")
        hardening = str(cached.get("hardening"))
        if configured is None or not isinstance(listed, list) or not all(isinstance(t, str) for t in listed) \
                or hardening not in (DEFAULT_HARDENING, BEST_EFFORT):
            raise _Doubt("damaged configuration cache")
        mode, blocked, config = configured, tuple(listed), found[0]
    override = os.environ.get(MODE_ENV)
    if override:
        overriding = as_mode(override)
        if overriding is None:
            raise _Doubt(f"{MODE_ENV} is invalid")  # the full check names the error
        mode = overriding
    return mode, blocked, str(hardening), config


def _strings(value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(word, str) and word for word in value):
        raise _Doubt("damaged phrase cache")
    return value


class _Keywords:
    """The pack's prefilter keywords from the cache, loaded on first use; a possible match is a doubt."""

    def __init__(self, state_dir: str) -> None:
        self._state_dir = state_dir
        self._cached: dict[str, Any] | None = None

    def _get(self, field: str) -> list[str]:
        if self._cached is None:
            cached = _read(os.path.join(self._state_dir, _PHRASES_FILE))
            _same(cached.get("pack_signature"), str(cached.get("pack")))
            self._cached = cached
        return _strings(self._cached.get(field))

    def is_close_phrase(self, text: str) -> bool:
        if contains_keyword(text, self._get("close_keywords")):
            raise _Doubt("may be a close phrase")  # the rule engine decides
        return False

    def check_prose(self, text: str) -> None:
        if contains_keyword(text, self._get("open_keywords")):
            raise _Doubt("new prose may declare a gate")  # the rule engine decides


def _open_gates(state_dir: str, session_id: str, transcript: str, store: str, keywords: _Keywords) -> list[GateRef]:
    path = _fold_cache(state_dir, session_id, transcript)
    cached = _read(path)
    if cached.get("session_id") != session_id or cached.get("transcript") != transcript:
        raise _Doubt("the fold cache is another session's")
    sources = cached.get("sources")
    if not isinstance(sources, list) or not sources or sources[0][0] != transcript:
        raise _Doubt("damaged fold cache")
    _same(cached.get("store"), store)
    for source, recorded in sources[1:]:
        _same(recorded, source)
    gates = cached.get("open")
    if not isinstance(gates, list) or not all(
            isinstance(gate, list) and len(gate) == 2 and all(isinstance(part, str) for part in gate)
            for gate in gates):
        raise _Doubt("damaged fold cache")
    try:
        _same(sources[0][1], transcript)
    except _Doubt:
        _catch_up(path, cached, state_dir, store, keywords)
    return [(gate[0], gate[1]) for gate in gates]


def _cursor(cached: Mapping[str, Any], state_dir: str) -> tuple[dict[str, Any], str]:
    cursor, path = cached.get("cursor"), cached.get("cursor_path")
    fields = {"offset": int, "line": int, "device": int, "inode": int, "head_sha": str}
    if not isinstance(cursor, dict) or set(cursor) != set(fields) or not all(
            type(cursor[name]) is kind for name, kind in fields.items()):
        raise _Doubt("damaged cursor in the fold cache")
    # the cursor is rewritten at this path: it must be a cursor file of this store, never anything else
    if not isinstance(path, str) or _CURSOR_NAME.fullmatch(os.path.basename(path)) is None or \
            os.path.normpath(os.path.dirname(path)) != os.path.normpath(os.path.join(state_dir, "cursors")):
        raise _Doubt("damaged cursor path in the fold cache")
    return cursor, path


def _catch_up(cache_path: str, cached: dict[str, Any], state_dir: str, store: str, keywords: _Keywords) -> None:
    """Scan the session log's new lines as the full check would, when none of them can change the gates: no
    prose holding a keyword of an opening phrase, no line the full check would make a problem gate of, and no
    close request waiting for a typed prompt. Then move the cursor and the cache on, under the store lock."""
    from ._transcript import HEAD_BYTES, classify, head_crc

    if cached.get("pending") is not False:
        raise _Doubt("a close request waits for the transcript")
    cursor, cursor_path = _cursor(cached, state_dir)
    offset = cursor["offset"]
    if offset < HEAD_BYTES:
        raise _Doubt("a short log: its head is not settled yet")
    transcript = cached["transcript"]
    with open(transcript, "rb") as handle:
        status = os.fstat(handle.fileno())
        if (status.st_dev, status.st_ino) != (cursor["device"], cursor["inode"]) or status.st_size < offset \
                or status.st_size - offset > _CATCH_UP_LIMIT or head_crc(handle, offset) != cached.get("head_crc"):
            raise _Doubt("the log was replaced, truncated or grew too much")
        handle.seek(offset)
        new = handle.read(status.st_size - offset)
    complete = new[:new.rfind(b"\n") + 1]  # a last line without its newline waits, as in the full check
    line = cursor["line"]
    for raw in complete.split(b"\n")[:-1]:
        line += 1
        if not raw.strip():
            continue
        classified = classify(raw, line)
        if classified.kind == "problem":
            raise _Doubt("a line the full check reports")
        if classified.kind == "assistant_text":
            for text in classified.texts:
                keywords.check_prose(text)
        # a typed prompt only confirms a waiting close request, and none waits
    signature = (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)
    moved = {**cursor, "offset": offset + len(complete), "line": line}
    _advance(cache_path, cached, moved, cursor_path, signature, store)


def _advance(cache_path: str, cached: dict[str, Any], cursor: dict[str, Any], cursor_path: str,
             transcript: Signature, store: str) -> None:
    """Save the moved cursor and cache under the store lock, if the store is still as folded; when the lock is
    busy or the store moved on, save nothing (the answer stands: it was right when the store was checked)."""
    import fcntl

    try:
        lock = os.open(store_paths(store)[1], os.O_RDWR)
    except OSError:
        return
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        _same(cached.get("store"), store)
        replace_file(cursor_path, json.dumps(cursor).encode("utf-8"))
        body = {key: value for key, value in cached.items() if key not in ("version", "package")}
        body["sources"] = [[cached["transcript"], list(transcript)], *cached["sources"][1:]]
        body["cursor"] = cursor
        _write(cache_path, body)
    except (OSError, _Doubt):
        pass
    finally:
        os.close(lock)  # releases the lock


def _decide(hook_input: Mapping[str, Any], host: Host) -> Verdict:
    from .._project import find_project  # the one resolver, as the full check uses (it imports only os)

    project = find_project(host, hook_input)
    if not project:
        raise _Doubt("no project directory")
    session_id, tool_name = _text(hook_input, "session_id"), _text(hook_input, "tool_name")
    tool_input = hook_input.get("tool_input")
    if tool_input is None:
        tool_input = {}
    if not isinstance(tool_input, Mapping):
        raise _Doubt("tool_input is not an object")
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
    if signature(companions[0]) is None and os.path.exists(legacy_store(project)) \
            and not os.path.exists(os.path.join(state_dir, "legacy-imported")):
        raise _Doubt("an old store may wait to be imported")  # the full check imports it once
    if mode == "block" and hardening != BEST_EFFORT:
        files = watched_files(host, project, config_candidates(project))
        missing = cached_missing(state_dir, host, project, companions[0], files)
        if missing:
            return boundary_verdict(tool_name, host, missing, config)
    if transcript is None:
        raise _Doubt("no transcript")
    return gate_verdict(mode, tool_name, _open_gates(state_dir, session_id, transcript, companions[0], keywords), "")


def quick_tool_decision(hook_input: Mapping[str, Any], host: Host = "claude-code") -> Verdict | None:
    """The full check's answer when the caches vouch for it, else None (then the full check must run)."""
    try:
        return _decide(hook_input, host)
    except Exception:  # any doubt, even a bug here, hands the call to the full check
        return None
