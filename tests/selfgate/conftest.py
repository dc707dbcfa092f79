"""Fixtures of the self-gate tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# tests/ is on the pythonpath but this folder is not: make its helper module importable by name
sys.path.insert(0, str(Path(__file__).parent))

from selfgate_helpers import Session


@pytest.fixture
def session(tmp_path: Path) -> Session:
    return Session(tmp_path)
