"""Fixtures of the attack suites: the RunEvidence task folder and EV of the evidence tests, built by the same
helpers (``tests/evidence/evidence_helpers.py``, made importable here as in that folder)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[1] / "evidence"))

import pytest
from evidence_helpers import complete_ev_for, write_merge_task


@pytest.fixture
def merge_task(tmp_path: Path) -> Path:
    return write_merge_task(tmp_path)


@pytest.fixture
def complete_ev(merge_task: Path) -> dict[str, Any]:
    return complete_ev_for(merge_task)
