"""Fixtures for the RunEvidence tests; makes this folder's ``evidence_helpers`` importable by name."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from evidence_helpers import fullest_ev, merge_task

__all__ = ["fullest_ev", "merge_task"]
