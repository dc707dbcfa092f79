"""A read-only view of a git repository through dulwich (no git binary): HEAD, blobs, pending paths, remotes.

Only this module imports dulwich, and the plug-in imports this module only when it reads a repository: loading the
plug-in (every Gate and hook process does) stays free of dulwich's import time."""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, cast

from dulwich.errors import NotGitRepository
from dulwich.object_store import tree_lookup_path
from dulwich.objects import Blob, Commit
from dulwich.porcelain import status
from dulwich.repo import Repo

if TYPE_CHECKING:  # dulwich's typed names (newer releases); plain bytes at run time
    from dulwich.objects import ObjectID
    from dulwich.refs import Ref

from ._state import STATE_FOLDER

__all__ = ["STATE_FOLDER", "RepoView", "discover"]

#: how far back a commit named in a tool output is looked for in HEAD's history
_HISTORY_DEPTH = 500


def discover(start: str | Path) -> RepoView | None:
    """The repository holding ``start`` (searching upwards), or None when there is none."""
    try:
        return RepoView(Repo.discover(str(Path(start).resolve())))
    except NotGitRepository:
        return None


def _text(path: bytes | str) -> str:
    return os.fsdecode(path)


class RepoView:
    """The facts the claim checks need, each read once per check."""

    def __init__(self, repo: Repo) -> None:
        self.repo = repo
        self.root = Path(repo.path).resolve()

    @functools.cached_property
    def head(self) -> str | None:
        """The commit HEAD points at; None in a repository without commits."""
        try:
            return _text(self.repo.head())
        except KeyError:
            return None

    @functools.cached_property
    def pending(self) -> frozenset[str]:
        """Paths (relative, "/"-separated) with staged, unstaged or untracked changes, outside .verigate/."""
        found = status(self.repo, untracked_files="all")
        paths: set[str] = {_text(path) for path in found.unstaged}
        paths.update(_text(path) for path in found.untracked)
        for group in found.staged.values():
            paths.update(_text(path) for path in group)
        return frozenset(path for path in paths if not path.startswith(STATE_FOLDER + "/"))

    @functools.cached_property
    def known_paths(self) -> frozenset[str]:
        """Tracked paths plus pending ones: where a named file is looked for."""
        tracked = {_text(path) for path in self.repo.open_index()}
        return frozenset(tracked | self.pending)

    def resolve(self, named: str, cwd: Path | None = None) -> tuple[str, ...] | None:
        """Repository paths a name in the answer can mean: exact, relative to ``cwd``, or by path suffix.

        None for an absolute path outside the repository (nothing this view can check); () when nothing matches.
        """
        candidate = Path(named).expanduser()
        if candidate.is_absolute():
            try:
                return (candidate.resolve().relative_to(self.root).as_posix(),)
            except ValueError:
                return None
        exact = [candidate.as_posix()]
        if cwd is not None:
            with contextlib.suppress(ValueError):  # a project folder outside the repository adds nothing
                exact.append((cwd.resolve() / candidate).relative_to(self.root).as_posix())
        present = [path for path in exact if path in self.known_paths or (self.root / path).exists()]
        if present:
            return tuple(dict.fromkeys(present))
        suffix = "/" + candidate.as_posix().lstrip("./")
        return tuple(sorted(path for path in self.known_paths if path.endswith(suffix)))

    def exists(self, path: str) -> bool:
        return (self.root / path).is_file()

    def blob_in(self, commit: str | None, path: str) -> str | None:
        """The blob id of ``path`` in ``commit``'s tree, or None (no commit, or no such file there)."""
        if commit is None:
            return None
        tree = self._commit(commit).tree
        try:
            _mode, blob = tree_lookup_path(self.repo.object_store.__getitem__, tree, path.encode())
        except KeyError:
            return None
        return _text(blob)

    def first_parent(self, commit: str | None) -> str | None:
        if commit is None:
            return None
        parents = self._commit(commit).parents
        return _text(parents[0]) if parents else None

    def working_blob(self, path: str) -> str | None:
        try:
            data = (self.root / path).read_bytes()
        except (FileNotFoundError, IsADirectoryError):
            return None
        return _text(Blob.from_string(data).id)

    def history_contains(self, sha_prefixes: Iterable[str]) -> bool:
        """True when a commit of HEAD's recent history starts with one of the (lower-case hex) prefixes."""
        prefixes = tuple(prefix.lower() for prefix in sha_prefixes)
        if self.head is None or not prefixes:
            return False
        walker = self.repo.get_walker(include=[cast("ObjectID", self.head.encode())], max_entries=_HISTORY_DEPTH)
        return any(_text(entry.commit.id).startswith(prefixes) for entry in walker)

    def remote_heads(self) -> dict[str, str]:
        """Remote-tracking branches (``origin/main`` → commit id): a push moves them."""
        refs = self.repo.refs.as_dict(cast("Ref", b"refs/remotes"))
        return {_text(name): _text(target) for name, target in refs.items() if not name.endswith(b"HEAD")}

    def _commit(self, commit: str) -> Commit:
        obj = self.repo[commit.encode()]
        if not isinstance(obj, Commit):
            raise TypeError(f"{commit} is not a commit")
        return obj
