"""Fixtures of the attack suites: the RunEvidence task folder and EV of the evidence tests
(``tests/evidence/evidence_helpers.py``, made importable here as in that folder)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "evidence"))

from evidence_helpers import fullest_ev, merge_task

__all__ = ["fullest_ev", "merge_task"]
