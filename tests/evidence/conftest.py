"""Fixtures for the RunEvidence tests; makes this folder's ``evidence_helpers`` importable by name."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import pytest
from evidence_helpers import HARNESS, make_complete, merge_ready, produce_kwargs, receipt, state, write_task

from verigate.evidence import produce


@pytest.fixture
def merge_task(tmp_path: Path) -> Path:
    """TASK-0001 that reached MERGE_READY after one review repair round."""
    return write_task(tmp_path, "TASK-0001", entries=[
        receipt("repair_review", 1, "F-2"), state("MERGE_READY"),
        merge_ready({"CI": "success", "lint": "success"}, {"F-1": "resolved"}, 1),
    ])


@pytest.fixture
def complete_ev(merge_task: Path) -> dict[str, Any]:
    """A synthetic complete EV: every field available (Phase 1 never produces one; the exit-0 path needs it)."""
    text = produce(merge_task, **produce_kwargs(routing_decisions="[]", harness_version_end=dict(HARNESS)))
    return make_complete(json.loads(text))
