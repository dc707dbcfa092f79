"""Source readers: the only place the producer's inputs are read from disk (task folder and runs folder).

The verifier reads eight files per EV (the EV, c3.json, the six Plan Package artifacts, record.jsonl), so they are
read through os on str paths with one ``os.read`` each: Path objects and buffered file objects cost more than
reading the files. Each fast read answers exactly as the pathlib read it replaces (the same bytes, the same text,
universal newlines included); on any error the pathlib read runs instead, so every error and its message stay
the same."""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path
from typing import Any

from .. import _json as strict_json
from .._errors import EvidenceError, InputError
from ._c3 import ARTIFACTS, parse_c3
from ._delivery import load_entries
from ._producer import TaskSources
from ._scrub import secret_scanner

__all__ = [
    "read_arbiter_records",
    "read_bytes",
    "read_c3",
    "read_c3_sources",
    "read_record",
    "read_record_text",
    "read_task_sources",
    "repo_relative",
    "repository_name",
]

_TASK_PART = re.compile(r"^TASK-[0-9]{4}$")


def repo_relative(path: Path) -> str:
    """A path relative to the enclosing repository (the nearest folder holding ``.git``).

    Outside a repository the path starts at its TASK-NNNN component, else it is the bare file name, so an
    absolute path never reaches an EV.
    """
    resolved = path.resolve()
    for parent in resolved.parents:
        if (parent / ".git").exists():
            return resolved.relative_to(parent).as_posix()
    parts = resolved.parts
    starts = [i for i, part in enumerate(parts) if _TASK_PART.match(part)]
    return "/".join(parts[starts[0]:]) if starts else resolved.name


def read_c3(task_dir: Path) -> tuple[dict[str, Any], dict[str, bytes | None]]:
    """approvals/c3.json (c3-prime only; legacy refused) and the six Plan Package artifacts it binds."""
    text, artifacts = read_c3_sources(task_dir)
    return parse_c3(text, "approvals/c3.json"), artifacts


def read_c3_sources(task_dir: Path) -> tuple[str, dict[str, bytes | None]]:
    """approvals/c3.json's text, unparsed, and the six Plan Package artifacts' bytes (None: not a regular file).

    The artifacts are read only once c3.json could be read, as ``read_c3`` always did."""
    folder = os.fspath(task_dir)
    text = _fast_text(os.path.join(folder, "approvals", "c3.json"))
    if text is None:
        try:
            text = (task_dir / "approvals" / "c3.json").read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise EvidenceError([f"approvals/c3.json cannot be read: {exc}"]) from exc
    return text, {name: _regular_file_bytes(os.path.join(folder, name)) for name in ARTIFACTS}


def _read_open(fd: int, size: int) -> bytes:
    """The rest of the open file ``fd``, expected to hold ``size`` bytes (one read when it does; a file that grew
    meanwhile is read to its end, as ``read()`` does). A shorter read is not the end: a read may stop early
    (Linux gives at most 2 GiB - 4 KiB at once), so reading goes on until a read is empty."""
    data = os.read(fd, size + 1)
    if len(data) == size:
        return data
    chunks = [data]
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def read_bytes(path: str) -> bytes:
    """``Path(path).read_bytes()`` of a regular file without a Path or a buffered file object (raises OSError, but
    not always pathlib's: a folder opens and fails at the read, so a caller wanting pathlib's error reads again)."""
    fd = os.open(path, _READ_FLAGS)
    try:
        return _read_open(fd, os.fstat(fd).st_size)
    finally:
        os.close(fd)


def _fast_text(path: str) -> str | None:
    """``Path(path).read_text(encoding="utf-8")`` (universal newlines: CR LF and a lone CR read as LF), or
    None on any error, for the caller to read again with pathlib and raise exactly its error."""
    try:
        text = read_bytes(path).decode("utf-8")
    except (OSError, ValueError):
        return None
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


#: the errors for which Path.is_file() answers False instead of raising (pathlib's own lists, Python 3.11)
_ABSENT = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP})
_ABSENT_WINDOWS = frozenset({21, 123, 1921})


def _regular_file_bytes(path: str) -> bytes | None:
    """``Path(path).read_bytes() if Path(path).is_file() else None`` with one stat and no Path per file (the
    verifier reads six artifacts per EV): the same answers, raising where ``is_file`` raises."""
    try:
        is_file = stat.S_ISREG(os.stat(path).st_mode)
    except OSError as exc:
        if exc.errno not in _ABSENT and getattr(exc, "winerror", None) not in _ABSENT_WINDOWS:
            raise
        is_file = False
    except ValueError:  # a path the OS cannot take (an embedded NUL): is_file answers False
        is_file = False
    if not is_file:
        return None
    return read_bytes(path)


def read_record(task_dir: Path) -> tuple[tuple[dict[str, Any], ...], bool]:
    """delivery/record.jsonl entries (entry_id recomputed) and whether the file exists."""
    text = read_record_text(task_dir)
    if text is None:
        return (), False
    return load_entries(text, "delivery/record.jsonl"), True


def read_record_text(task_dir: Path) -> str | None:
    """delivery/record.jsonl's text, undecoded; None when it is not a file."""
    fast = os.path.join(os.fspath(task_dir), "delivery", "record.jsonl")
    try:
        is_file = stat.S_ISREG(os.stat(fast).st_mode)
    except (OSError, ValueError):
        is_file = None  # pathlib decides below, with its own error handling
    if is_file is False:
        return None
    text = _fast_text(fast) if is_file else None
    if text is not None:
        return text
    path = task_dir / "delivery" / "record.jsonl"
    if not path.is_file():
        return None
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise EvidenceError([f"delivery/record.jsonl cannot be read: {exc}"]) from exc


def read_arbiter_records(runs_dir: Path | None) -> tuple[Any, ...]:
    """Every parseable ``*.json`` in the runs folder, by file name; unparseable files are skipped."""
    if runs_dir is None:
        return ()
    if not runs_dir.is_dir():
        raise EvidenceError([f"--runs-dir {runs_dir.name!r} is not a directory"])
    records: list[Any] = []
    for path in sorted(runs_dir.glob("*.json")):
        try:
            records.append(strict_json.loads(path.read_bytes(), max_chars=strict_json.MAX_RECORD_CHARS))
        except (OSError, strict_json.StrictJSONError):  # not a record this verifier can trust to mean one thing
            continue
    return tuple(records)


def read_task_sources(task_dir: Path, runs_dir: Path | None = None) -> TaskSources:
    """Read the allow-listed sources of one task folder (and the arbiter records of a runs folder), plus the
    shipped secrets/pii rule packs the producer reduces free text with."""
    if not task_dir.is_dir():
        raise EvidenceError([f"task folder {task_dir.name!r} is not a directory"])
    c3, artifacts = read_c3(task_dir)
    entries, record_exists = read_record(task_dir)
    record_path = task_dir / "delivery" / "record.jsonl"
    return TaskSources(
        task_name=task_dir.resolve().name,
        c3_ref=repo_relative(task_dir / "approvals" / "c3.json"),
        record_ref=repo_relative(record_path) if record_exists else None,
        c3=c3,
        artifacts=artifacts,
        entries=entries,
        arbiter_records=read_arbiter_records(runs_dir),
        secrets=secret_scanner(),
    )


def repository_name(repo_dir: Path) -> str:
    """The owner-stripped repository name from the ``origin`` remote URL (dulwich; no git binary)."""
    from dulwich.errors import NotGitRepository
    from dulwich.repo import Repo

    try:
        with Repo(str(repo_dir)) as repo:
            config = repo.get_config()
            url = config.get((b"remote", b"origin"), b"url").decode("utf-8")
    except NotGitRepository as exc:
        raise InputError(f"{repo_dir.name!r} is not a git repository", field="--from-git") from exc
    except KeyError as exc:
        raise InputError("the repository has no remote 'origin' url", field="--from-git") from exc
    name = re.split(r"[/:]", url.rstrip("/"))[-1].removesuffix(".git")
    if not name:
        raise InputError("cannot take a repository name from the origin url", field="--from-git")
    return name
