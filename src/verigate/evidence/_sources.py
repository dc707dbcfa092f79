"""Source readers: the only place the producer's inputs are read from disk (task folder and runs folder).

Every file goes through ``_files``' bounded reader: a regular file only, within its size bound, never a wait (the
verifier reads eight files per EV, each with one stat, one open and one ``os.read`` on a str path). Text is read
as pathlib's text mode reads it: UTF-8, universal newlines."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from .. import _json as strict_json
from .._errors import EvidenceError
from ._c3 import ARTIFACTS, parse_c3
from ._delivery import load_entries
from ._files import (
    MAX_ARTIFACT_BYTES,
    MAX_JSON_BYTES,
    MAX_RECORD_BYTES,
    MAX_RUNS_BYTES,
    RefusedFile,
    read_if_file,
    read_input,
    read_regular,
    utf8_text,
)
from ._producer import TaskSources
from ._scrub import secret_scanner

__all__ = [
    "read_arbiter_records",
    "read_c3",
    "read_c3_sources",
    "read_record",
    "read_record_text",
    "read_task_sources",
    "repo_relative",
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
    data = read_input(os.path.join(folder, "approvals", "c3.json"), "approvals/c3.json", MAX_JSON_BYTES)
    text = utf8_text(data, "approvals/c3.json")
    return text, {name: read_if_file(os.path.join(folder, name), name, MAX_ARTIFACT_BYTES) for name in ARTIFACTS}


def read_record(task_dir: Path) -> tuple[tuple[dict[str, Any], ...], bool]:
    """delivery/record.jsonl entries (entry_id recomputed) and whether the file exists."""
    text = read_record_text(task_dir)
    if text is None:
        return (), False
    return load_entries(text, "delivery/record.jsonl"), True


def read_record_text(task_dir: Path) -> str | None:
    """delivery/record.jsonl's text, unparsed; None when it is not a regular file (the format: no record)."""
    data = read_if_file(os.path.join(os.fspath(task_dir), "delivery", "record.jsonl"), "delivery/record.jsonl",
                        MAX_RECORD_BYTES)
    return None if data is None else utf8_text(data, "delivery/record.jsonl")


def read_arbiter_records(runs_dir: Path | None) -> tuple[Any, ...]:
    """Every parseable ``*.json`` in the runs folder, by file name; unreadable or unparseable files are skipped, but
    one that is not a regular file or is past its bound, or all of them together past theirs, is refused."""
    if runs_dir is None:
        return ()
    if not runs_dir.is_dir():
        raise EvidenceError([f"--runs-dir {runs_dir.name!r} is not a directory"])
    records: list[Any] = []
    total = 0
    for path in sorted(runs_dir.glob("*.json")):
        try:
            data = read_regular(os.fspath(path), MAX_JSON_BYTES)
        except RefusedFile as exc:  # a FIFO, a device or a huge file is not skipped: it is planted, not stale
            raise EvidenceError([f"--runs-dir {path.name!r} is refused: {exc.reason}"]) from None
        except (OSError, ValueError):  # gone or unreadable since the listing: not a record, as a broken one
            continue
        total += len(data)
        if total > MAX_RUNS_BYTES:
            raise EvidenceError([f"--runs-dir: its *.json files hold more than {MAX_RUNS_BYTES} bytes together"])
        try:
            records.append(strict_json.loads(data, max_chars=strict_json.MAX_RECORD_CHARS))
        except strict_json.StrictJSONError:  # not a record this verifier can trust to mean one thing
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
