"""The self-gate store: append-only JSONL under an exclusive lock with fsync, plus per-transcript scan cursors."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import attrs

from .._errors import StoreError
from .._fileio import replace_file
from ._cursorfile import CURSORS_DIR, FIELDS, file_name
from ._entries import GateEntry, entry_from_mapping
from ._flock import LockBusy, hold, open_lock
from ._location import store_paths

__all__ = ["Cursor", "GateStore", "StoreProblem", "StoreSnapshot"]

#: how long a hook waits for another process holding the store lock before failing closed
LOCK_TIMEOUT_S = 20.0


@attrs.frozen
class StoreProblem:
    """A store line the fold could not use: reported everywhere the state is shown, never silently dropped."""

    line: int
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"


@attrs.frozen
class StoreSnapshot:
    entries: tuple[GateEntry, ...]
    problems: tuple[StoreProblem, ...]
    #: the 1-based file line of each entry (closures cite their request by line)
    lines: tuple[int, ...] = ()


@attrs.frozen
class Cursor:
    """How far a transcript has been scanned: byte offset and line count, plus what identifies the file
    (device, inode, a hash of its first bytes) so a rotated or truncated transcript is rescanned."""

    offset: int = 0
    line: int = 0
    device: int = 0
    inode: int = 0
    head_sha: str = ""

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)


def _validator() -> Any:
    # imported here: fastjsonschema is only needed once a store line is actually read or written
    from .. import _data

    return _data.compiled_schema("self-gate.schema.json")


def _check(entry_json: dict[str, Any], source: str, line: int | None) -> None:
    from .. import _data

    _data.validate("self-gate.schema.json", entry_json, source=source, line=line)


class GateStore:
    """One store file (by default ``self-gates.jsonl`` in the project's per-user state folder, see
    ``_location``) and its companions: ``<name>.lock`` (the exclusive lock every writer takes) and
    ``<name>.state/`` (scan cursors, one small JSON file per scanned transcript, and the fast path's caches)."""

    def __init__(self, path: str | Path) -> None:
        self.path, self.lock_path, self.state_dir = (Path(item) for item in store_paths(os.fspath(path)))
        self._lock_fd: int | None = None

    # -- locking -------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def locked(self, timeout_s: float = LOCK_TIMEOUT_S) -> Iterator[GateStore]:
        """Hold the exclusive store lock (re-entrant within one object)."""
        if self._lock_fd is not None:
            yield self
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = open_lock(self.lock_path)
        except OSError as exc:
            raise StoreError(f"cannot open the self-gate lock: {exc}", source=str(self.lock_path)) from exc
        try:
            try:
                hold(fd, timeout_s)
            except LockBusy as exc:
                raise StoreError(f"the self-gate store stayed locked for {timeout_s:g} s",
                                 source=str(self.path)) from exc.__cause__
            except OSError as exc:
                raise StoreError(f"cannot lock the self-gate store: {exc}", source=str(self.path)) from exc
            self._lock_fd = fd
            yield self
        finally:
            self._lock_fd = None
            os.close(fd)  # closing the descriptor releases the flock

    # -- entries -------------------------------------------------------------------------------------
    def read(self) -> StoreSnapshot:
        """Every valid entry in file order, and a problem for every line that is not one (a torn last line,
        invalid JSON, a schema violation). A missing file is an empty store."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return StoreSnapshot((), (), ())
        except OSError as exc:
            raise StoreError(f"cannot read the self-gate store: {exc}", source=str(self.path)) from exc
        entries: list[GateEntry] = []
        numbers: list[int] = []
        problems: list[StoreProblem] = []
        lines = raw.split(b"\n")
        torn_tail = lines.pop()  # b"" when the file ends with a newline, as every complete write does
        validate = _validator()
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            entry, reason = _parse_line(line, validate)
            if entry is None:
                problems.append(StoreProblem(number, reason))
            else:
                entries.append(entry)
                numbers.append(number)
        if torn_tail:
            problems.append(StoreProblem(len(lines) + 1, "torn last line (an interrupted write); it is ignored "
                                                         "by the fold and sealed by the next write"))
        return StoreSnapshot(tuple(entries), tuple(problems), tuple(numbers))

    def append(self, entries: Iterable[GateEntry]) -> None:
        """Append entries as whole lines, fsync'd, under the lock. A torn last line left by a crashed writer
        is first sealed with a newline so it stays one reported bad line instead of corrupting this one."""
        payload = b""
        for entry in entries:
            data = entry.to_json()
            _check(data, str(self.path), None)
            payload += json.dumps(data, ensure_ascii=False, sort_keys=True).encode("utf-8") + b"\n"
        if not payload:
            return
        with self.locked():
            created = not self.path.exists()
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            except OSError as exc:
                raise StoreError(f"cannot open the self-gate store: {exc}", source=str(self.path)) from exc
            try:
                size = os.fstat(fd).st_size
                if size and _last_byte(self.path, size) != b"\n":
                    payload = b"\n" + payload
                _write_all(fd, payload)
                os.fsync(fd)
            except OSError as exc:
                raise StoreError(f"cannot write the self-gate store: {exc}", source=str(self.path)) from exc
            finally:
                os.close(fd)
            if created:
                _fsync_dir(self.path.parent)

    def import_legacy(self, legacy: str | Path) -> int:
        """Copy the lines of a store from its old place (``<project>/.verigate/self-gates.jsonl``) into this
        one, once: only while this store does not exist yet and nothing was imported before. The bytes are
        copied as they are, damaged lines included (they stay reported problems), so no entry is lost and every
        closure's ``request_line`` still names its request. The old file is left in place. Returns the number
        of lines imported (0: nothing to do)."""
        marker = self.state_dir / "legacy-imported"
        with self.locked():
            if self.path.exists() or marker.exists():
                return 0
            try:
                raw = Path(legacy).read_bytes()
            except FileNotFoundError:
                return 0
            except OSError as exc:
                raise StoreError(f"cannot read the old self-gate store: {exc}", source=str(legacy)) from exc
            if raw and not raw.endswith(b"\n"):
                raw += b"\n"  # seal a torn last line, as append() would
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                try:
                    _write_all(fd, raw)
                    os.fsync(fd)
                finally:
                    os.close(fd)
                _fsync_dir(self.path.parent)
                marker.parent.mkdir(parents=True, exist_ok=True)
                replace_file(marker, f"{legacy}\n".encode("utf-8", "surrogateescape"))
            except OSError as exc:
                raise StoreError(f"cannot import the old self-gate store: {exc}", source=str(self.path)) from exc
            return raw.count(b"\n")

    # -- cursors -------------------------------------------------------------------------------------
    def cursor_path(self, session_id: str, transcript: str) -> Path:
        return self.state_dir / CURSORS_DIR / file_name(session_id, transcript)

    def read_cursor(self, session_id: str, transcript: str) -> Cursor:
        """The saved position, or the start when none is saved or it is unreadable (a rescan is always safe:
        gate ids are stable)."""
        try:
            data = json.loads(self.cursor_path(session_id, transcript).read_text(encoding="utf-8"))
            return Cursor(**{key: data[key] for key in FIELDS})
        except (OSError, ValueError, KeyError, TypeError):
            return Cursor()

    def write_cursor(self, session_id: str, transcript: str, cursor: Cursor) -> None:
        """Replace the cursor atomically. Not fsync'd on purpose: a cursor lost in a crash only costs a rescan,
        and cursors are written only after the entries they depend on are fsync'd."""
        path = self.cursor_path(session_id, transcript)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            replace_file(path, json.dumps(cursor.to_json()).encode("utf-8"))
        except OSError as exc:
            raise StoreError(f"cannot save the scan cursor: {exc}", source=str(path)) from exc

    def protected_paths(self) -> tuple[Path, ...]:
        """Every path the agent must not write: the store, its lock and its state folder."""
        return (self.path, self.lock_path, self.state_dir)


def _parse_line(line: bytes, validate: Any) -> tuple[GateEntry | None, str]:
    import fastjsonschema

    from .. import _json as strict_json  # a store line is a file anyone may have edited: one meaning or none
    from .._schema_errors import schema_failure

    try:
        data = strict_json.loads(line, max_chars=1 << 20)
    except strict_json.StrictJSONError as exc:
        return None, f"not JSON ({exc.message})"
    try:
        validate(data)
    except fastjsonschema.JsonSchemaValueException as exc:
        return None, f"not a self-gate entry: {schema_failure(exc).message}"
    return entry_from_mapping(data), ""


def _last_byte(path: Path, size: int) -> bytes:
    with path.open("rb") as handle:
        handle.seek(size - 1)
        return handle.read(1)


def _write_all(fd: int, payload: bytes) -> None:
    view = memoryview(payload)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems refuse fsync on directories; the file itself is already fsync'd
    finally:
        os.close(fd)

