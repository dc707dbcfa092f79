"""Does a path, a glob or a path's tail name a protected file? The matching half of the self-gate tripwire.

One ``Paths`` per checked tool call: the protected targets normalised once, answers memoised, and the file-system
work bounded (``GLOB_ENTRIES`` directory entries listed, ``GLOBS`` patterns resolved) so a command full of globs
costs time in proportion to its length. Past a bound a glob is *unresolvable*, which the caller refuses.

A little past 400 lines: the path, glob and tail checks share one ``Paths``'s normalised targets and memo tables,
which split modules would have to pass around.
"""

# os and os.path rather than pathlib: pathlib (with urllib.parse, ipaddress) costs ms on every tool call
from __future__ import annotations

import contextlib
import fnmatch
import functools
import os
import stat
from collections.abc import Iterator, Sequence

__all__ = ["GLOBS", "GLOB_ENTRIES", "GLOB_ESCAPE", "PATH_MAX", "Paths", "Target", "folds_case", "nameable", "normal",
           "readings"]

#: a literal as an fnmatch pattern that matches only itself (``str.translate``): the glob metacharacters bracketed
GLOB_ESCAPE = str.maketrans({"*": "[*]", "?": "[?]", "[": "[[]"})
#: directory entries a check may list while resolving globs, and distinct patterns it may resolve
GLOB_ENTRIES = 20_000
GLOBS = 512
_MATCHES = 256
#: no longer path names a file (Linux's PATH_MAX): a longer word is not checked as a path
PATH_MAX = 4096
#: files under a protected folder whose inodes are compared with a hard-linked file's
_TREE_FILES = 2_000
_GLOB_CHARS = frozenset("*?[")
#: paths of at most this many components are resolved by ``os.path.realpath`` itself
_SHORT_PATH_PARTS = 32


class Target:
    """A protected path: one file, a folder and everything under it (``tree``), or the files directly in the
    folder ``path`` whose names match ``glob`` (``settings*.json``). Never changed after creation."""

    __slots__ = ("glob", "label", "path", "tree")

    def __init__(self, path: str, label: str, tree: bool = False, glob: str | None = None) -> None:
        self.path = path
        self.label = label
        self.tree = tree
        self.glob = glob


@functools.cache
def folds_case(folder: str) -> bool:
    """Whether the filesystem holding ``folder`` ignores case (macOS and Windows defaults)."""
    path = folder
    while not os.path.exists(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    swapped = path.swapcase()
    if swapped == path:
        return False
    try:
        return os.path.exists(swapped) and os.path.samefile(path, swapped)
    except OSError:
        return False


def nameable(path: str) -> bool:
    """Whether a file system can hold this name: no NUL byte, and every character encodable (a lone surrogate is
    not). ``os`` raises ``ValueError`` on any other, and ``~name`` expansion does too."""
    if "\x00" in path:
        return False
    try:
        os.fsencode(path)
    except UnicodeError:
        return False
    return True


def _as_node_writes(path: str) -> str:
    """A name no file system holds for a lone surrogate as Node writes it: the surrogate as U+FFFD
    (``settings\ud800.json`` is a ``settings*.json``; a glob ``verigate.yam[l\ud800]`` matches ``verigate.yaml``)."""
    if "\x00" in path or nameable(path):
        return path
    return "".join("\ufffd" if "\ud800" <= char <= "\udfff" else char for char in path)


def _absolute(path: str, cwd: str) -> str | None:
    """``path`` joined to ``cwd`` with ``~`` expanded and collapsed (``os.path.normpath``), a lone surrogate as
    Node writes it; None when either names no file."""
    path = _as_node_writes(path)
    if not (nameable(path) and nameable(cwd)):
        return None
    return os.path.normpath(os.path.join(cwd, os.path.expanduser(path)))


def normal(path: str, cwd: str) -> str:
    """Absolute, ``..``-free, symlink-resolved; case-folded where the filesystem folds case."""
    resolved = _realpath(os.path.join(cwd, os.path.expanduser(path)))
    return resolved.casefold() if folds_case(os.path.dirname(resolved)) else resolved


def _realpath(path: str) -> str:
    """``os.path.realpath``, which lstats every component (missing ones too) and joins the path anew for each: a
    string of thousands of components costs milliseconds. A long one without ``..`` is resolved as its longest
    existing prefix, found in a binary search, with the missing rest appended as realpath appends it: nothing
    exists under a name that is not there, so existence only falls along the path."""
    parts = path.split(os.sep)
    # parts[0] is empty for an absolute path. Past PATH_MAX an lstat of a prefix fails (ENAMETOOLONG) where
    # realpath, lstatting the resolved and shorter prefixes, follows a link: such a path takes realpath's way
    if len(parts) <= _SHORT_PATH_PARTS or ".." in parts or parts[0] or len(path) > PATH_MAX:
        return os.path.realpath(path)
    found, missing = 1, len(parts) + 1  # parts[:found] exists (the root); parts[:missing] does not
    while missing - found > 1:
        middle = (found + missing) // 2
        if os.path.lexists(os.sep.join(parts[:middle])):
            found = middle
        else:
            missing = middle
    head = os.path.realpath(os.sep.join(parts[:found]) or os.sep)
    rest = [part for part in parts[found:] if part not in ("", ".")]
    return os.path.join(head, *rest) if rest else head


def readings(path: str) -> tuple[str, ...]:
    """The paths a string names to the tools that may open it. ``~name/…`` is that user's home folder to a shell
    (and to ``os.path.expanduser``), but a folder named ``~name`` to an MCP server and Codex, which expand only
    ``~`` and ``~/``; Node's ``path.resolve`` expands none of them (``~/../verigate.yaml`` is the project's file to
    it). Both readings are checked."""
    if path.startswith("~"):
        if path[1:2] in ("+", "-") and path[2:3] in ("", "/"):  # bash's $PWD and $OLDPWD: a working folder's path
            return path, "./" + path, "." + path[2:]
        return path, "./" + path
    return (path,)


def _checkable(path: str, cwd: str) -> str | None:
    """``path`` as a check takes it, or None for a string that names no file. The kernel refuses a name longer
    than PATH_MAX, but a tool that normalises a path before opening it (Node's ``path.resolve``,
    ``os.path.normpath``) opens the short path that ``./`` or ``a/../`` repeated collapses to: such a path is
    checked as that one. Only a path still too long once collapsed is no file."""
    if not path:
        return None
    if not nameable(path):
        if ".." in path:  # a tool that normalises first drops the segment ``..`` follows (``x\ud800/../x``)
            path = os.path.normpath(path)
        path = _as_node_writes(path)
        if not nameable(path):
            return None
    if len(path) <= PATH_MAX:
        return path
    collapsed = _absolute(path, cwd)
    return collapsed if collapsed is not None and len(collapsed) <= PATH_MAX else None


def _candidates(path: str, cwd: str) -> Iterator[str]:
    """Each reading of ``path`` that names a file (``readings``, ``_checkable``), normalised; one that cannot be
    resolved names none."""
    for reading in readings(path):
        checkable = _checkable(reading, cwd)
        if checkable is None:
            continue
        try:
            yield normal(checkable, cwd)
        except (OSError, ValueError):
            continue


def _parts(path: str) -> list[str]:
    return [part for part in path.split(os.sep) if part]


def _has_glob(part: str) -> bool:
    return not _GLOB_CHARS.isdisjoint(part)


def _components_match(pattern: Sequence[str], path: Sequence[str], prefix: bool, above: bool = False) -> bool:
    """Whether glob components match path components (``**`` any number of them, as with ``globstar``); with
    ``prefix``, a pattern may also name something under ``path``; with ``above``, a folder above it. ``*``
    matches a leading dot here (``dotglob``): a superset of what bash matches, so it errs towards refusing."""
    if not pattern:
        return not path or above
    head = pattern[0]
    if head == "**":
        return any(_components_match(pattern[1:], path[skip:], prefix, above) for skip in range(len(path) + 1))
    if not path:
        return prefix
    return fnmatch.fnmatchcase(path[0], head) and _components_match(pattern[1:], path[1:], prefix, above)


class Paths:
    """The protected targets of one tool call, normalised, with memoised path, glob and tail checks."""

    def __init__(self, targets: Sequence[Target]) -> None:
        self._given = targets
        self._targets: list[tuple[str, Target]] | None = None
        self._hits: dict[tuple[str, str], str | None] = {}
        self._globs: dict[tuple[str, str, bool], str | None] = {}
        self._inodes: set[tuple[int, int]] | None = None
        self._named: list[tuple[Target, bool, list[list[str]]]] | None = None
        self._tails: dict[tuple[str, bool, bool], str | None] = {}
        self._suffixes: list[tuple[Target, bool, set[tuple[str, ...]]]] | None = None
        self._longest = 0
        self.entries_left = GLOB_ENTRIES
        self.globs_left = GLOBS

    @property
    def targets(self) -> list[tuple[str, Target]]:
        """The targets with their normalised paths, made on first use: a Read never needs them."""
        if self._targets is None:
            self._targets = [(normal(target.path, os.sep), target) for target in self._given]
        return self._targets

    # -- a path ----------------------------------------------------------------------------------------------

    def hit(self, path: str, cwd: str) -> str | None:
        """The label of the protected target ``path`` names (through ``..``, symlinks, a hard link, case)."""
        key = (path, cwd)
        if key not in self._hits:
            self._hits[key] = self._hit(path, cwd)
        return self._hits[key]

    def _hit(self, path: str, cwd: str) -> str | None:
        for candidate in _candidates(path, cwd):
            for protected, target in self.targets:
                if self._covers(protected, target, candidate):
                    return target.label
            label = self._hard_link(candidate)
            if label is not None:
                return label
        return None

    @staticmethod
    def _covers(protected: str, target: Target, candidate: str) -> bool:
        if target.glob is not None:
            folder, name = os.path.split(candidate)
            pattern = target.glob.casefold() if folds_case(protected) else target.glob
            return folder == protected and fnmatch.fnmatchcase(name, pattern)
        if target.tree:
            return candidate == protected or candidate.startswith(protected.rstrip(os.sep) + os.sep)
        return candidate == protected

    def ancestor(self, path: str, cwd: str) -> str | None:
        """The label of a protected target at or under ``path`` (``rm -rf .`` removes ``.verigate/`` too)."""
        for candidate in _candidates(path, cwd):
            folder = candidate.rstrip(os.sep) + os.sep
            for protected, target in self.targets:
                if (protected + os.sep).startswith(folder):
                    return target.label
        return None

    def _hard_link(self, candidate: str) -> str | None:
        """A regular file with more than one name that is one of the protected files under another name."""
        try:
            status = os.stat(candidate)
        except (OSError, ValueError):
            return None
        if not stat.S_ISREG(status.st_mode) or status.st_nlink < 2:
            return None
        if self._inodes is None:
            self._inodes = {(found.st_dev, found.st_ino) for found in self._protected_files()}
        return "a protected file (through a hard link)" if (status.st_dev, status.st_ino) in self._inodes else None

    def _protected_files(self) -> Iterator[os.stat_result]:
        budget = _TREE_FILES
        for protected, target in self.targets:
            folders = [protected] if target.tree or target.glob else []
            if not folders:
                with contextlib.suppress(OSError):
                    yield os.stat(protected)
            while folders and budget > 0:
                try:
                    entries = list(os.scandir(folders.pop()))
                except OSError:
                    continue
                for entry in entries[:budget]:
                    budget -= 1
                    try:
                        if entry.is_dir(follow_symlinks=False) and target.tree:
                            folders.append(entry.path)
                        elif target.tree or fnmatch.fnmatchcase(entry.name, target.glob or "*"):
                            yield entry.stat()
                    except OSError:
                        continue

    # -- a glob ----------------------------------------------------------------------------------------------

    def glob_hit(self, pattern: str, cwd: str, above: bool = False) -> str | None:
        """The label of a protected target the fnmatch ``pattern`` (relative to ``cwd``) matches by name — also
        for files that do not exist yet — or matches on the file system now (a symlink or hard link to one);
        ``"unresolvable"`` when the check's file-system budget is spent. ``above``: a folder holding one counts.
        """
        key = (pattern, cwd, above)
        if key not in self._globs:
            self._globs[key] = self._glob_hit(pattern, cwd, above)
        return self._globs[key]

    def _glob_hit(self, pattern: str, cwd: str, above: bool) -> str | None:
        absolute = _absolute(pattern, cwd) if len(pattern) <= PATH_MAX else None
        if absolute is None:
            return None
        parts = _parts(absolute)
        named = self.names_match(parts, anchored=True, above=above)
        if named is not None:
            return named
        if self.globs_left <= 0:
            return "unresolvable"
        self.globs_left -= 1
        for found in self._resolve(parts):
            label = self.hit(found, os.sep) or (self.ancestor(found, os.sep) if above else None)
            if label is not None:
                return label
        return "unresolvable" if self.entries_left <= 0 else None

    def names_match(self, parts: Sequence[str], anchored: bool, above: bool = False) -> str | None:
        """A protected target whose path components the glob components match (``anchored``: from the root;
        else as the tail of the path, for a relative glob after a ``cd`` the check could not follow)."""
        for target, folds, candidates in self._sampled():
            folded = [part.casefold() for part in parts] if folds else parts
            for path in candidates:
                tails = [path] if anchored else [path[start:] for start in range(len(path))]
                if any(_components_match(folded, tail, target.tree, above) for tail in tails):
                    return target.label
        return None

    def _sampled(self) -> list[tuple[Target, bool, list[list[str]]]]:
        if self._named is None:
            self._named = [(target, folds_case(protected), self._samples(protected, target))
                           for protected, target in self.targets]
        return self._named

    def _literal_match(self, parts: Sequence[str]) -> str | None:
        """``names_match(parts, anchored=False)`` for components that hold no glob, by set lookups: such a
        component matches only itself, so a target matches when one of its samples ends with ``parts`` (a folder
        also when it ends with a leading run of them: ``.verigate/x`` is under ``.verigate``). A check that
        compiled each component as a pattern cost about a millisecond a string."""
        if self._suffixes is None:
            self._suffixes = [(target, folds, {tuple(path[start:]) for path in samples for start in range(len(path))})
                              for target, folds, samples in self._sampled()]
            self._longest = max((len(path) for _, _, samples in self._sampled() for path in samples), default=0)
        for target, folds, suffixes in self._suffixes:
            wanted = tuple(part.casefold() for part in parts) if folds else tuple(parts)
            # a head longer than every sample is in no suffix set: a long tail costs no more than a short one
            heads = [wanted[:end] for end in range(1, min(len(wanted), self._longest) + 1)] if target.tree else [wanted]
            if any(head in suffixes for head in heads):
                return target.label
        return None

    @staticmethod
    def _samples(protected: str, target: Target) -> list[list[str]]:
        """The component lists a glob is matched against: the target's path, or for a folder's glob (a name
        the glob covers, for files that may not exist yet: ``settings.local.json``) a few names it covers."""
        names = _parts(protected)
        if target.glob is None:
            return [names]
        return [[*names, target.glob.replace("*", fill)] for fill in ("", "local", ".local", "x")]

    def _resolve(self, parts: Sequence[str]) -> Iterator[str]:
        """Existing paths the glob components match, listing directories within the budget (hidden names too)."""
        found = [os.sep]
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            following: list[str] = []
            for folder in found:
                if not _has_glob(part):
                    following.append(os.path.join(folder, part))
                    continue
                try:
                    with os.scandir(folder) as entries:
                        for entry in entries:
                            self.entries_left -= 1
                            if self.entries_left < 0:
                                return
                            if fnmatch.fnmatchcase(entry.name, part) and (last or entry.is_dir()):
                                following.append(entry.path)
                except OSError:
                    continue
            found = following[:_MATCHES]
            if not found:
                return
        yield from found

    def expand(self, pattern: str, cwd: str) -> list[str]:
        """The existing paths a glob names (for ``cd`` into a glob), within the budget."""
        absolute = _absolute(pattern, cwd)
        return list(self._resolve(_parts(absolute))) if absolute is not None else []

    # -- a tail ----------------------------------------------------------------------------------------------

    def tail_hit(self, tail: str, pattern: bool = False, above: bool = False) -> str | None:
        """A protected target whose path ends with the relative ``tail`` (``settings.json`` after a ``cd`` to an
        unknown folder, ``$D/.claude/settings.json``); ``pattern``: the tail is an fnmatch pattern; ``above``: or
        that lies under a folder the tail may name, wherever that folder is (``rm -rf $HOME/.claude``)."""
        key = (tail, pattern, above)
        if key not in self._tails:
            tail = os.path.normpath(tail)  # before the bound: ``./`` repeated collapses to a short tail
            if len(tail) > PATH_MAX:
                self._tails[key] = None
                return None
            parts = [part for part in _parts(tail) if part not in (".", "..")]
            if not parts:
                label = None
            else:
                label = self.names_match(parts, anchored=False) if pattern else self._literal_match(parts)
                # a remover's word after an expansion or an unknown cd (rare) may also name a folder above one, but
                # only through a dot folder (``$HOME/.claude``, ``$D/.verigate``): a plain name (``$BUILD/src``,
                # ``$HOME/projects``) is on the way to some protected file too often to refuse
                if label is None and above and any(part.startswith(".") and part not in (".", "..") for part in parts):
                    label = self.names_match(parts if pattern else [part.translate(GLOB_ESCAPE) for part in parts],
                                             anchored=False, above=True)
            self._tails[key] = label if label is not None or pattern else self._glob_tail(parts)
        return self._tails[key]

    def _glob_tail(self, parts: Sequence[str]) -> str | None:
        """A folder's glob target (``<transcripts>/*.jsonl``) whose folder ends with the tail's folders and whose
        glob takes its name: ``-project/sess-1.jsonl``, which the few sample names of ``names_match`` miss. A
        bare name is not enough: ``out.jsonl`` is any folder's file."""
        if len(parts) < 2:
            return None
        *folders, name = parts
        for protected, target in self.targets:
            if target.glob is None:
                continue
            folds = folds_case(protected)
            names, wanted = _parts(protected), [part.casefold() for part in folders] if folds else folders
            if folds:
                names = [part.casefold() for part in names]
            glob, named = (target.glob.casefold(), name.casefold()) if folds else (target.glob, name)
            if names[-len(wanted):] == wanted and fnmatch.fnmatchcase(named, glob):
                return target.label
        return None

