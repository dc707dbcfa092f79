"""Entry-point discovery, remembered by the installed distributions' fingerprint.

``importlib.metadata.entry_points`` reads and parses the entry points of every installed distribution, on every
Gate and in every hook process. Its answer changes only when what is installed changes, so it is kept — in this
process, and in a small file in the per-user state folder shared by the next processes — under a fingerprint of
everything discovery reads: each ``sys.path`` entry, and in each folder every ``*.dist-info`` / ``*.egg-info``
name with its ``entry_points.txt`` signature: inode, size, modification and change time (the change time cannot
be set back, a replaced file is another inode; an entry that cannot be listed, a zip file, by its own
modification time). Any doubt means a fresh discovery: a different fingerprint, an unreadable or malformed file,
a finder other than the standard path finder that could provide distributions, or a timestamp too recent to trust
(a change within the file system's timestamp granularity could hide behind it, as git's "racy" index entries do).
Writing the file is best effort.

When the file answers, ``importlib.metadata`` is not imported at all (with the ``email``, ``zipfile`` and
``csv`` modules it pulls in, tens of milliseconds of every hook process): :meth:`Found.load` imports an entry
point's module itself, the way ``EntryPoint.load`` does.
"""

# os rather than pathlib: this runs at every hook process's start
# ruff: noqa: PTH100, PTH103, PTH116, PTH118, PTH120, PTH123
from __future__ import annotations

import importlib
import importlib.machinery
import json
import os
import re
import sys
import time
from collections.abc import Sequence

import attrs

from ._builtin_sha256 import sha256_hex
from ._fileio import replace_file
from .selfgate._location import state_root

__all__ = ["CACHE_ENV", "Found", "discover", "fingerprint"]

#: ``0`` turns the file off (discovery then runs in every process; the in-process memory stays)
CACHE_ENV = "VERIGATE_PLUGIN_CACHE"
_FORMAT = 1
#: timestamps closer to now than this are not trusted to reveal a change (coarse file-system clocks)
_RACY_S = 2.0
_METADATA_SUFFIXES = (".dist-info", ".egg-info")
#: an entry point's object reference, ``module.path:attr.path [extras]``, as the entry-point specification (and
#: ``importlib.metadata.EntryPoint``) reads it
_OBJECT_REFERENCE = re.compile(r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$")


@attrs.frozen
class Found:
    """One entry point of the group, with the distribution that declares it (None: unknown)."""

    name: str
    value: str
    distribution: tuple[str, str] | None

    def load(self) -> object:
        """The object the entry point names, as ``EntryPoint.load`` finds it: the module imported, then each
        attribute of the path in turn. Every failure raises (ValueError for a reference that is not one)."""
        match = _OBJECT_REFERENCE.match(self.value)
        if match is None:
            raise ValueError(f"{self.value!r} is not an object reference (module.path:attr.path)")
        loaded: object = importlib.import_module(match.group("module"))
        for attribute in (match.group("attr") or "").split("."):
            if attribute:
                loaded = getattr(loaded, attribute)
        return loaded


_memory: dict[tuple[str, str], tuple[Found, ...]] = {}


def fingerprint() -> tuple[str, bool] | None:
    """(the digest of what discovery would read, whether every timestamp is old enough to trust); None when
    discovery could read something the fingerprint does not cover."""
    for finder in sys.meta_path:
        if finder is not importlib.machinery.PathFinder and hasattr(finder, "find_distributions"):
            return None
    now_ns = time.time_ns()
    newest = 0
    parts: list[str] = []
    for entry in sys.path:
        folder = entry or "."
        if folder.lower().endswith(".egg"):  # an egg's metadata is in its EGG-INFO: not covered, discover
            return None
        try:
            stat = os.stat(folder)
        except OSError:
            parts.append(f"{entry}\0-")
            continue
        try:
            with os.scandir(folder) as listing:
                lowered = {item.name: item.name.lower() for item in listing}
            # importlib.metadata matches these suffixes in any case
            names = sorted(name for name, low in lowered.items() if low.endswith(_METADATA_SUFFIXES))
            eggs = any(low.endswith(".egg") for low in lowered.values())
        except OSError:  # a zip file or an unreadable folder: its own time stands for its content
            newest = max(newest, stat.st_mtime_ns)
            parts.append(f"{entry}\0{os.path.abspath(folder)}\0{stat.st_mtime_ns}")
            continue
        # a listed folder is its metadata names (below), not its own time: that changes with every file created
        # or renamed in it, and the working folder (sys.path[0] of ``python -m`` / ``-c``) is a project's root
        parts.append(f"{entry}\0{os.path.abspath(folder)}\0listed")
        if eggs:  # metadata inside an .egg folder is not covered: discover
            return None
        for name in names:
            try:
                points = os.stat(os.path.join(folder, name, "entry_points.txt"))
            except OSError:
                parts.append(f"\1{name}\0-")
                continue
            # whoever writes the file can set its modification time back, not its change time or inode (the
            # change time is not what the racy window judges: setting the modification time moves it to now)
            newest = max(newest, points.st_mtime_ns)
            parts.append(f"\1{name}\0{points.st_ino}\0{points.st_size}\0{points.st_mtime_ns}\0{points.st_ctime_ns}")
    trusted = now_ns - newest > _RACY_S * 1e9
    return sha256_hex("\n".join(parts).encode("utf-8", "surrogateescape")), trusted


def discover(group: str) -> tuple[Found, ...]:
    """The group's entry points, sorted by name, as ``importlib.metadata.entry_points`` finds them."""
    mark = fingerprint()
    if mark is None:
        return _fresh(group)
    digest, trusted = mark
    remembered = _memory.get((group, digest))
    if remembered is not None:
        return remembered
    use_file = trusted and os.environ.get(CACHE_ENV, "1") != "0"
    path = _cache_path(group) if use_file else None
    found = _read(path, digest) if path is not None else None
    if found is None:
        found = _fresh(group)
        if path is not None:
            _write(path, digest, found)
    if trusted:
        _memory[(group, digest)] = found
    return found


def _fresh(group: str) -> tuple[Found, ...]:
    import importlib.metadata as metadata  # a cache hit does without it (see the docstring)

    found = []
    for point in metadata.entry_points(group=group):
        dist = (point.dist.name, point.dist.version) if point.dist is not None else None
        found.append(Found(point.name, point.value, dist))
    return tuple(sorted(found, key=lambda item: item.name))


def _cache_path(group: str) -> str | None:
    try:
        root = state_root()
    except Exception:  # no home folder: no file
        return None
    # one file per interpreter and path list: processes started from different folders do not evict each other
    key = sha256_hex("\0".join([sys.executable, group, *sys.path]).encode("utf-8", "surrogateescape"))[:24]
    return os.path.join(root, "plugin-cache", f"{key}.json")


def _read(path: str, digest: str) -> tuple[Found, ...] | None:
    try:
        with open(path, "rb") as stream:
            data = json.loads(stream.read())
        if not (isinstance(data, dict) and data.get("format") == _FORMAT and data.get("fingerprint") == digest):
            return None
        found = []
        for item in data["entry_points"]:
            name, value, dist = item["name"], item["value"], item["distribution"]
            if not (isinstance(name, str) and isinstance(value, str)):
                return None
            if dist is not None and not (_is_pair(dist)):
                return None
            found.append(Found(name, value, (dist[0], dist[1]) if dist is not None else None))
    except Exception:  # missing, unreadable or malformed: discover afresh
        return None
    return tuple(found)


def _is_pair(value: object) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(isinstance(part, str) for part in value)


def _write(path: str, digest: str, found: Sequence[Found]) -> None:
    data = {"format": _FORMAT, "fingerprint": digest, "entry_points": [
        {"name": item.name, "value": item.value,
         "distribution": list(item.distribution) if item.distribution is not None else None} for item in found]}
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        replace_file(path, json.dumps(data, sort_keys=True).encode("utf-8"), mode=0o600)
    except OSError:  # best effort: the next process discovers again
        pass
