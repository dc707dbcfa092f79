"""The sealed cache format of the fast path: a JSON body with its crc32, this cache version and installation.

The full check writes these caches and the fast path trusts one only while it is whole, of this version, written
by this installation, and every file it names still has the stat signature it recorded. Anything else is a
``Doubt``: the fast path steps aside and the full check runs.
"""

# os and os.path rather than pathlib: the pre-tool-use fast path imports this module on every tool call
from __future__ import annotations

import json
import os
import zlib
from collections.abc import Mapping
from typing import Any

from .._fileio import replace_file
from ._statsig import as_json, signature

__all__ = ["CACHE_VERSION", "Doubt", "read_cache", "require_same", "write_cache"]

#: 2: the store moved to the per-user state folder; the configuration cache names its file and the hardening
CACHE_VERSION = 2
#: the installation a cache belongs to: another copy of verigate may compute other answers
_PACKAGE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


class Doubt(Exception):
    """The fast path cannot vouch for an answer: the full check decides."""


def _canonical(body: Mapping[str, Any]) -> bytes:
    return json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def write_cache(path: str, body: Mapping[str, Any]) -> None:
    """Replace a cache atomically; a cache that cannot be written only costs the next call the full check."""
    whole = {"version": CACHE_VERSION, "package": _PACKAGE, **body}
    sealed = {"body": whole, "crc32": zlib.crc32(_canonical(whole))}
    data = json.dumps(sealed, ensure_ascii=False).encode("utf-8")
    try:
        # most full checks would write some caches with the bytes they already hold (the phrase keywords, the
        # configuration): reading them back is cheaper than a rename, and the same bytes are the same answer
        with open(path, "rb") as handle:
            if handle.read(len(data) + 1) == data:
                return
    except OSError:
        pass
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        replace_file(path, data)
    except OSError:
        pass


def read_cache(path: str) -> dict[str, Any]:
    """A cache's body when it is whole, of this version and written by this installation; doubt otherwise."""
    try:
        with open(path, "rb") as handle:
            sealed = json.loads(handle.read())
        body = sealed["body"]
        whole = isinstance(body, dict) and sealed["crc32"] == zlib.crc32(_canonical(body))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise Doubt(f"no usable cache {path}") from exc
    if not whole or body.get("version") != CACHE_VERSION or body.get("package") != _PACKAGE:
        raise Doubt(f"cache {path} is damaged or from another version")
    checked: dict[str, Any] = body
    return checked


def require_same(recorded: Any, path: str | os.PathLike[str]) -> None:
    """Doubt unless ``path`` still has the recorded signature (a JSON list, or null for "did not exist")."""
    if recorded != as_json(signature(path)):
        raise Doubt(f"{path} changed since the cache was written")
