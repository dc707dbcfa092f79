"""The files a ``verigate grade --transcripts`` pattern names: glob's matching, without glob's blind spots.

``glob.iglob(pattern, recursive=True)`` skips a folder it cannot list (no permission, a path past PATH_MAX): the
sessions in it are runs never graded while the summary says exit 0. It recurses, so a deep tree ends in
RecursionError, and its ``**`` follows links to folders without end (two links back to their own folder give
2**depth paths). This walk lists each folder with :func:`os.scandir`, from a stack: a folder or a link that cannot
be read is an :class:`InputError` naming it; a link to a folder is followed (a run folder may be one) unless it leads
back to a folder on its own path that was entered with the same pattern states or more (a loop: nothing new can
match); at most :data:`MAX_WALKED_FOLDERS` folders are listed.

The pattern's parts after its literal start are matched as the walk goes down, by a small automaton over path
components: ``**`` any number of names, a magic part one name (``fnmatch``), a hidden name (a leading dot) matched
only by a part that starts with a dot or names it — glob's reading. A folder no state of the pattern can enter is
not walked, so a pattern without ``**`` lists only as deep as it reaches.
"""

# str paths and os.path on purpose: paths are printed as the pattern spelt them
# ruff: noqa: PTH116, PTH118, PTH206
from __future__ import annotations

import fnmatch
import glob
import os
import stat
from collections.abc import Iterator, Sequence

from .._errors import InputError

__all__ = ["MAX_WALKED_ENTRIES", "MAX_WALKED_FOLDERS", "matching_paths"]

#: folders one pattern may list, and entries it may look at in them: past either the pattern is an error (a
#: narrower one, or the folder in parts). A folder with N links back to itself is listed N times under
#: ``runs/*/*.jsonl``: N*N entries for N folders (10,000 links: 10**8 entries, minutes)
MAX_WALKED_FOLDERS = 1_000_000
MAX_WALKED_ENTRIES = 5_000_000

_States = frozenset[int]
#: the folders above one being walked: each one's (device, inode) and the pattern's states on entering it
_Ancestry = tuple[tuple[tuple[int, int], _States], ...]


def matching_paths(pattern: str) -> Iterator[str]:
    """Every entry that is not a folder (a file, a link to one, a pipe: the caller keeps regular files) whose path
    matches ``pattern``, in walk order; a pattern without magic is its own path when that exists."""
    parts = pattern.split(os.sep)
    first = next((index for index, part in enumerate(parts) if glob.has_magic(part)), None)
    if first is None:
        if os.path.lexists(pattern):
            yield pattern
        return
    root = os.sep.join(parts[:first]) or (os.sep if first else "")
    rest = _normalised(parts[first:], pattern)
    start = _closure(rest, frozenset({0}))
    try:
        top = os.stat(root or os.curdir)
    except (FileNotFoundError, NotADirectoryError):  # the literal start names nothing: no match
        return
    except OSError as error:
        raise _unlisted(root or os.curdir, error) from None
    if not stat.S_ISDIR(top.st_mode):  # a file where the pattern's folder would be: no match
        return
    stack: list[tuple[str, _States, _Ancestry]] = [(root, start, (((top.st_dev, top.st_ino), start),))]
    listed = examined = 0
    while stack:
        folder, states, ancestry = stack.pop()
        listed += 1
        if listed > MAX_WALKED_FOLDERS:
            raise _too_much(pattern, f"{MAX_WALKED_FOLDERS:,} folders (MAX_WALKED_FOLDERS)")
        try:
            with os.scandir(folder or os.curdir) as listing:
                entries = list(listing)
        except OSError as error:
            raise _unlisted(folder or os.curdir, error) from None
        examined += len(entries)
        if examined > MAX_WALKED_ENTRIES:  # links back up re-list a folder per link: entries, not folders, grow
            raise _too_much(pattern, f"{MAX_WALKED_ENTRIES:,} entries (MAX_WALKED_ENTRIES)")
        for entry in entries:
            after = _step(rest, states, entry.name)
            if not after:
                continue
            path = os.path.join(folder, entry.name) if folder else entry.name
            identity = _folder_identity(entry, path)
            if identity is None:
                if len(rest) in after:
                    yield path
            elif any(state < len(rest) for state in after) and not _walked_above(ancestry, identity, after):
                stack.append((path, after, (*ancestry, (identity, after))))


def _walked_above(ancestry: _Ancestry, identity: tuple[int, int], states: _States) -> bool:
    """Whether a link leads back to a folder above it that was entered with these states or more: everything it
    could match there is matched already (a loop, cut). Entered anew with other states (``runs/latest -> .`` under
    ``runs/*/*.jsonl``), it can match what it did not; there are finitely many sets of states, so this ends."""
    return any(above == identity and entered >= states for above, entered in ancestry)


def _normalised(parts: Sequence[str], pattern: str) -> tuple[str, ...]:
    """The parts to match: ``.`` and empty parts (``a//b``) before the last name the folder itself, as in glob; a
    ``..`` after a wildcard is refused (it would climb out of what the walk lists)."""
    if ".." in parts:
        raise InputError("'..' after a wildcard is not supported: write the folder it means before the wildcard",
                         source=pattern)
    return (*(part for part in parts[:-1] if part not in ("", ".")), parts[-1])


def _folder_identity(entry: os.DirEntry[str], path: str) -> tuple[int, int] | None:
    """(device, inode) of the folder ``entry`` is or links to; None for anything else (a link to nothing too)."""
    try:
        if entry.is_symlink():
            try:
                target = os.stat(path)
            except FileNotFoundError:
                return None
            return (target.st_dev, target.st_ino) if stat.S_ISDIR(target.st_mode) else None
        if not entry.is_dir(follow_symlinks=False):
            return None
        own = entry.stat(follow_symlinks=False)
    except OSError as error:  # a link loop, no permission on the way: whether it holds sessions cannot be told
        raise InputError(f"a link or folder the pattern walks cannot be examined ({error.strerror})",
                         source=path) from None
    return own.st_dev, own.st_ino


def _too_much(pattern: str, bound: str) -> InputError:
    return InputError(f"the pattern walks more than {bound}; grade a narrower pattern, or the folder in parts",
                      source=pattern)


def _unlisted(folder: str, error: OSError) -> InputError:
    return InputError(f"a folder the pattern walks cannot be listed ({error.strerror}): the sessions in it would "
                      "go ungraded", source=folder)


def _closure(rest: Sequence[str], states: _States) -> _States:
    """``states`` with every state a ``**`` can skip to (it matches no name as well) — but the last part: a
    trailing ``**`` that matches no name names the folder itself, and only files are matched."""
    closed = set(states)
    for state in states:
        while state < len(rest) - 1 and rest[state] == "**":
            state += 1
            closed.add(state)
    return frozenset(closed)


def _step(rest: Sequence[str], states: _States, name: str) -> _States:
    """The states after one more path component ``name``."""
    hidden = name.startswith(".")
    after: set[int] = set()
    for state in states:
        if state == len(rest):
            continue
        part = rest[state]
        if part == "**":
            if not hidden:
                after.update((state, state + 1) if state == len(rest) - 1 else (state,))
        elif glob.has_magic(part):
            if (not hidden or part.startswith(".")) and fnmatch.fnmatch(name, part):
                after.add(state + 1)
        elif name == part:
            after.add(state + 1)
    return _closure(rest, frozenset(after))
