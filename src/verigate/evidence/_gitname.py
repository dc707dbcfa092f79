"""``evidence produce --from-git``: the repository's name from its ``origin`` remote URL, read without a git binary.

The repository folder is input like any other (an agent's checkout): its ``.git``, ``commondir`` and ``config``
are read through ``_files``' bounded reader, so a FIFO there is refused instead of waited on and a huge or
endless file (a link to /dev/zero) is refused at its bound. dulwich parses the config text (git's syntax:
sections, quoting, escapes), but is never given a path to open: its ``Repo`` reads those same files unbounded.
Includes (``[include]``, ``[includeIf]``) are not followed: the ``origin`` URL must be in the repository's own
config, where ``git clone`` writes it.
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

from .._errors import InputError
from ._files import RefusedFile, read_regular

__all__ = ["repository_name"]

#: ``.git`` (a worktree's or submodule's ``gitdir: <path>``) and ``commondir`` hold one path each
_POINTER_BYTES = 64 * 1024
#: far past any real repository config
_CONFIG_BYTES = 1024 * 1024
_FIELD = "--from-git"
#: a repository name as hosts spell one (GitHub: letters, digits, ``.``, ``_``, ``-``): nothing else reaches the EV
_NAME = re.compile(r"[A-Za-z0-9._-]{1,100}")


def repository_name(repo_dir: Path) -> str:
    """The owner-stripped repository name from the ``origin`` remote URL of the repository at ``repo_dir``."""
    from dulwich.config import ConfigFile

    git_dir = _git_dir(repo_dir)
    common = _pointer(git_dir / "commondir", git_dir) or git_dir
    if not (_is_file(git_dir / "HEAD") and _is_dir(common / "objects") and _is_dir(common / "refs")):
        # git's own test of a git folder: a pointer to any other folder (~/.ssh) must not have its config read
        raise InputError(f"{repo_dir.name!r} is not a git repository (its git folder holds no HEAD, objects and "
                         "refs)", field=_FIELD)
    text = _read(common / "config", _CONFIG_BYTES)
    try:
        config = ConfigFile.from_file(io.BytesIO(text), expand_includes=False)
        raw = config.get((b"remote", b"origin"), b"url")
    except KeyError:
        raise InputError("the repository has no remote 'origin' url", field=_FIELD) from None
    except ValueError:  # dulwich's parse errors quote the line: not repeated (the file may not be a git config)
        raise InputError("the repository's config cannot be parsed", field=_FIELD) from None
    try:
        url = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError("the origin url is not UTF-8", field=_FIELD) from None
    name = re.split(r"[/:]", url.rstrip("/"))[-1].removesuffix(".git")
    if not _NAME.fullmatch(name) or name in (".", ".."):
        raise InputError("cannot take a repository name from the origin url (letters, digits, '.', '_' and '-', "
                         "at most 100)", field=_FIELD)
    return name


def _git_dir(repo_dir: Path) -> Path:
    """The repository's git folder, found as git finds it from a work tree's top: ``.git`` as a folder, ``.git``
    as a file naming one (a linked worktree, a submodule), else the folder itself, a bare repository if git's test
    in ``repository_name`` passes."""
    dot_git = repo_dir / ".git"
    if _is_dir(dot_git):
        return dot_git
    return _pointer(dot_git, repo_dir, prefix="gitdir:") or repo_dir


def _pointer(path: Path, base: Path, *, prefix: str = "") -> Path | None:
    """The folder a one-line pointer file names (relative to ``base``); None when there is no such file."""
    if not os.path.lexists(path):  # os.path answers False for any OSError (a name too long, no permission)
        return None
    try:
        line = _read(path, _POINTER_BYTES).decode("utf-8").strip()
    except UnicodeDecodeError:
        raise InputError(f"{path.name!r} is not UTF-8", field=_FIELD) from None
    named = line[len(prefix):].strip() if line.startswith(prefix) else ""
    if not named or "\x00" in named:
        raise InputError(f"{path.name!r} does not name a git folder", field=_FIELD)
    folder = base / named
    if not _is_dir(folder):
        raise InputError(f"{path.name!r} names a folder that does not exist", field=_FIELD)
    return folder


def _is_dir(path: Path) -> bool:
    return os.path.isdir(path)  # noqa: PTH112 -- Path.is_dir raises for errors other than ENOENT (ENAMETOOLONG)


def _is_file(path: Path) -> bool:
    return os.path.isfile(path)  # noqa: PTH113 -- as _is_dir


def _read(path: Path, limit: int) -> bytes:
    try:
        return read_regular(str(path), limit)
    except RefusedFile as exc:
        raise InputError(f"the repository's {path.name!r} is refused: {exc.reason}", field=_FIELD) from None
    except (OSError, ValueError) as exc:
        raise InputError(f"the repository's {path.name!r} cannot be read: {exc}", field=_FIELD) from None
