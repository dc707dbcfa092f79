"""The fast path's caches, written by the full check: where each lives in the store's state folder and its body.

Each is a sealed cache (``_sealed``) naming every file its answer depends on with the stat signature the file had
before the full check read it; the fast path (``_quick``) reads them back and steps aside at the first doubt.
"""

# os.path rather than pathlib: the pre-tool-use fast path imports this module on every tool call
from __future__ import annotations

import os
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

from ._defaults import Mode
from ._sealed import write_cache
from ._statsig import Signature, as_json
from ._tool_policy import GateRef

__all__ = ["CONFIG_FILE", "PHRASES_FILE", "config_cache", "fold_cache", "phrases_cache", "remember_config",
           "remember_fold", "remember_phrases"]

CONFIG_FILE = "fast-config.json"
PHRASES_FILE = "fast-phrases.json"
_FOLDS_DIR = "fast"
StrPath = str | os.PathLike[str]


def config_cache(state_dir: StrPath) -> str:
    return os.path.join(state_dir, CONFIG_FILE)


def phrases_cache(state_dir: StrPath) -> str:
    return os.path.join(state_dir, PHRASES_FILE)


def fold_cache(state_dir: StrPath, session_id: str, transcript: str) -> str:
    # crc32 keeps hashlib off the fast path; the body names its session and transcript, so a collision only misses
    key = zlib.crc32(f"{session_id}\x1f{transcript}".encode())
    return os.path.join(state_dir, _FOLDS_DIR, f"{key:08x}.json")


def remember_config(state_dir: StrPath, candidates: Sequence[tuple[str, Signature | None]], mode: Mode,
                    blocked_tools: Sequence[str], hardening: str) -> None:
    """The self_gate section as read from the first existing configuration candidate; ``candidates`` are all of
    them with their signatures taken before reading (None: absent), so a file appearing above it is a change."""
    write_cache(config_cache(state_dir), {
        "candidates": [[path, as_json(sig)] for path, sig in candidates], "mode": mode,
        "blocked_tools": list(blocked_tools), "hardening": hardening})


def remember_phrases(state_dir: StrPath, pack: StrPath, pack_signature: Signature, close_keywords: Sequence[str],
                     open_keywords: Sequence[str] | None, not_close_keywords: Sequence[str] | None) -> None:
    """The keywords one of which every close phrase of the pack at ``pack`` contains, and every opening and
    never-close phrase (None when a rule of that role has none: it always runs)."""
    def words(keywords: Sequence[str] | None) -> list[str] | None:
        return list(keywords) if keywords is not None else None

    write_cache(phrases_cache(state_dir), {
        "pack": os.fspath(pack), "pack_signature": list(pack_signature), "close_keywords": list(close_keywords),
        "open_keywords": words(open_keywords), "not_close_keywords": words(not_close_keywords)})


def remember_fold(state_dir: StrPath, session_id: str, transcript: str, store: Signature | None,
                  sources: Sequence[tuple[str, Signature | None]], open_gates: Sequence[GateRef], *,
                  cursor: Mapping[str, Any], cursor_path: StrPath, head_crc: int, pending: bool) -> None:
    """A session's open gates, folded from the store at signature ``store`` after every transcript in
    ``sources`` (the session's log, its sub-agent folder and logs) was scanned at the signature given; with the
    session log's cursor (and where it is saved) and whether a close request of the session waits."""
    write_cache(fold_cache(state_dir, session_id, transcript), {
        "session_id": session_id, "transcript": transcript, "store": as_json(store),
        "sources": [[path, as_json(sig)] for path, sig in sources],
        "open": [list(gate) for gate in open_gates], "cursor": dict(cursor), "cursor_path": os.fspath(cursor_path),
        "head_crc": head_crc, "pending": pending})
