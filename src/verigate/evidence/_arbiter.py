"""Arbiter run records (docs/working/ai-loop-runs/*.json): recognition and run filtering (pure)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["ARBITER_MARKER_KEYS", "is_arbiter_record", "records_for_run"]

#: the 9 keys both arbiter generations (9-key and 14-key) carry; none of them is an EV property
ARBITER_MARKER_KEYS = frozenset({
    "boundary_check", "class_check", "decision", "issued_by", "lite_check", "policy_ref", "target_sha",
    "timestamp", "w_check",
})


def is_arbiter_record(record: Mapping[str, Any], ev_properties: Iterable[str]) -> bool:
    """True for an arbiter record handed over in place of an EV: every marker key and no EV property."""
    return set(record) >= ARBITER_MARKER_KEYS and not set(record) & set(ev_properties)


def records_for_run(records: Sequence[Any], run_id: str) -> list[dict[str, Any]]:
    """Only this run's records (``run.run_id`` equal), so unrelated records never change the output."""
    return [r for r in records if isinstance(r, dict) and isinstance(r.get("run"), dict)
            and r["run"].get("run_id") == run_id]
