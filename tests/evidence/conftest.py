"""Fixtures for the RunEvidence tests; makes this folder's ``evidence_helpers`` importable by name."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import pytest
from evidence_helpers import complete_ev_for, write_merge_task


@pytest.fixture
def merge_task(tmp_path: Path) -> Path:
    """TASK-0001 that reached MERGE_READY after one review repair round."""
    return write_merge_task(tmp_path)


@pytest.fixture
def complete_ev(merge_task: Path) -> dict[str, Any]:
    """A synthetic complete EV: every field available (Phase 1 never produces one; the exit-0 path needs it)."""
    return complete_ev_for(merge_task)
