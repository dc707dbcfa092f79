"""RunEvidence (PlanGate seed 003): a pure, byte-deterministic producer and a verifier that trusts nothing."""

from __future__ import annotations

from .._face import present as _present
from ._adapters import (
    apply_canary_rollback,
    to_improvement_task_descriptor,
    to_paired_replay,
    to_promotion_provenance,
    to_shadow_candidate_input,
)
from ._c3 import check_c3, check_snapshot_trio, parse_c3
from ._canonical import canonical_hash, dump_record, sha256_of_bytes
from ._delivery import (
    completed_rounds,
    derive_delivery_fields,
    derive_quality_metrics,
    derive_terminal_state,
    entry_id,
    load_entries,
)
from ._gitname import repository_name
from ._harness import corpus_hash, harness_version
from ._privacy import check_output_privacy, redact
from ._produce import produce, write_evidence
from ._producer import Injected, TaskSources, build_evidence
from ._scrub import secret_scanner
from ._sources import read_arbiter_records, read_c3, read_record, read_task_sources
from ._verify import unavailable_paths, verify

__all__ = [
    "Injected",
    "TaskSources",
    "apply_canary_rollback",
    "build_evidence",
    "canonical_hash",
    "check_c3",
    "check_output_privacy",
    "check_snapshot_trio",
    "completed_rounds",
    "corpus_hash",
    "derive_delivery_fields",
    "derive_quality_metrics",
    "derive_terminal_state",
    "dump_record",
    "entry_id",
    "harness_version",
    "load_entries",
    "parse_c3",
    "produce",
    "read_arbiter_records",
    "read_c3",
    "read_record",
    "read_task_sources",
    "redact",
    "repository_name",
    "secret_scanner",
    "sha256_of_bytes",
    "to_improvement_task_descriptor",
    "to_paired_replay",
    "to_promotion_provenance",
    "to_shadow_candidate_input",
    "unavailable_paths",
    "verify",
    "write_evidence",
]

_present(globals(), __name__)
