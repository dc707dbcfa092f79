"""produce(): read a task folder through the source readers, then run the pure producer; write_evidence(): its
output to a file, atomically."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .._fileio import replace_file
from ._canonical import dump_record
from ._producer import Injected, build_evidence
from ._sources import read_task_sources

__all__ = ["produce", "write_evidence"]


def produce(
    task_dir: str | Path,
    *,
    now: str | None,
    started_at: str | None,
    repository: str | None,
    run_id: str | None,
    harness_version: Any,
    harness_version_end: Any = None,
    pr_number: str | int | None = None,
    routing_decisions: Any = None,
    observation: str | None = None,
    cause_hypothesis: str | None = None,
    evidence_refs: Iterable[str] = (),
    runs_dir: str | Path | None = None,
) -> str:
    """The EV text for a terminal run (sorted keys, indent 2, trailing newline); EvidenceError lists every reason."""
    sources = read_task_sources(Path(task_dir), Path(runs_dir) if runs_dir is not None else None)
    injected = Injected(now=now, started_at=started_at, repository=repository, run_id=run_id,
                        harness_version=harness_version, harness_version_end=harness_version_end,
                        pr_number=pr_number, routing_decisions=routing_decisions, observation=observation,
                        cause_hypothesis=cause_hypothesis, evidence_refs=tuple(evidence_refs))
    return dump_record(build_evidence(sources, injected))


def write_evidence(out: str | Path, text: str) -> None:
    """Write the EV text to ``out`` (its folder created): a temporary file beside it, renamed over it. A reader
    sees the old EV or the new one, never half of one, and a link planted at ``out`` is replaced by the file,
    never followed to overwrite what it points to (raises OSError)."""
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_file(path, text.encode("utf-8"))
