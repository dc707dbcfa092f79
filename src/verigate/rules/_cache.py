"""A per-user cache of parsed rule packs, keyed by the sha256 of each pack file's bytes (this module stores the
entries; ``_pack`` turns packs into entries and back).

Parsing the shipped YAML packs with ruamel costs a grader or a hook process a few hundred milliseconds, every
time; the files rarely change. A parsed pack is therefore kept as strict JSON in
``${VERIGATE_STATE_HOME:-${XDG_STATE_HOME:-~/.local/state}}/verigate/cache/rule-packs/`` (the self-gate's state
root: out of the agents' sandboxes), one file per (pack bytes, source name, verigate version, format).

The cache is never trusted over the YAML:

* an entry is written only for a pack that loaded without error, and only when reading the entry back gives a
  pack equal to the one parsed (a value JSON cannot carry exactly means no entry, not a different pack);
* it is written atomically (:func:`verigate._fileio.replace_file`), so a reader sees a whole entry or none;
* it is read with the strict JSON reader; an entry that does not parse, names another key, or whose content does
  not match the sha256 it carries, or has any unexpected shape, is ignored and the pack is parsed from its YAML
  (and the entry rewritten);
* any failure to read or write the folder (read-only home, no space) only means parsing the YAML.

The pack's rules are still checked by :meth:`RuleSet.compile` (every kind and field, every pattern compiled or
found in the record of rules checked before, see ``_checked``), as for a pack just parsed.
The trace grader keeps the parsed data of its config file here the same way (``verigate.trace._config``; it is
still validated against its schema on every load).
"""

# os rather than pathlib: hooks import this on their start-up path
from __future__ import annotations

import contextlib
import os
from typing import Any

from .. import _json as strict_json
from .._builtin_sha256 import sha256_hex
from .._fileio import replace_file
from ..selfgate._location import cache_folder

__all__ = ["CACHE_FORMAT", "cache_folder", "entry_key", "read_entry", "write_entry"]

#: bump when the shape of an entry (or what a Pack holds) changes: older entries are then simply not found
CACHE_FORMAT = 1
#: an entry larger than this is not read (the shipped packs make entries of a few tens of KB)
MAX_ENTRY_CHARS = 8 * 1024 * 1024


def _version() -> str:
    """The running verigate's version (the one source, ``verigate.__version__``): an upgrade parses anew."""
    from .. import __version__

    return __version__


def entry_key(text: str, source: str) -> str:
    """The entry of exactly this pack text from this source, for this verigate and entry format."""
    material = strict_json.dumps({"format": CACHE_FORMAT, "pack_sha256": sha256_hex(text.encode()),
                                  "source": source, "verigate": _version()})
    return sha256_hex(material.encode())


def _path(key: str, folder: str) -> str:
    return os.path.join(cache_folder(name=folder), f"{key}.json")


def _content(raw: bytes, entry: dict[str, Any], key: str) -> bytes:
    """The canonical text of the entry's data, whose sha256 it carries: as read, between the parts
    :func:`write_entry` puts around it (canonical JSON, sorted keys), else written out again (writing a shipped
    pack's data out again cost as much as reading it)."""
    head = b'{"content_sha256":' + strict_json.dumps(entry.get("content_sha256")).encode() + b',"data":'
    tail = f',"format":{strict_json.dumps(CACHE_FORMAT)},"key":{strict_json.dumps(key)}}}'.encode()
    if len(raw) > len(head) + len(tail) and raw.startswith(head) and raw.endswith(tail):
        return raw[len(head):len(raw) - len(tail)]
    return strict_json.dumps(entry["data"]).encode()


def read_entry(key: str, *, folder: str = "rule-packs") -> Any:
    """The data of the entry ``key``, or None when there is none or it is damaged in any way (never trusted)."""
    try:
        with open(_path(key, folder), "rb") as stream:
            raw = stream.read(MAX_ENTRY_CHARS + 1)
    except OSError:
        return None
    try:
        entry = strict_json.loads(raw, max_chars=MAX_ENTRY_CHARS)
        if type(entry) is not dict or entry.get("key") != key or entry.get("format") != CACHE_FORMAT:
            return None
        if sha256_hex(_content(raw, entry, key)) != entry.get("content_sha256"):
            return None  # damaged (or written by something else): ignored
        return entry["data"]
    except Exception:  # any damage means: parse the YAML (the cache can only save time)
        return None


def write_entry(key: str, data: Any, *, folder: str = "rule-packs") -> None:
    """Keep ``data`` (plain JSON values) as the entry ``key``, atomically; a failure to write is no error."""
    try:
        content = strict_json.dumps(data)
        entry = strict_json.dumps({"content_sha256": sha256_hex(content.encode()),
                                   "data": data, "format": CACHE_FORMAT, "key": key})
    except (TypeError, ValueError):  # a value JSON cannot hold: no entry
        return
    path = _path(key, folder)
    with contextlib.suppress(OSError):
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        replace_file(path, entry.encode(), mode=0o600)
