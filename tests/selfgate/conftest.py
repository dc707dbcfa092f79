"""Fixtures of the self-gate tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# tests/ is on the pythonpath but this folder is not: make its helper module importable by name
sys.path.insert(0, str(Path(__file__).parent))

from selfgate_helpers import Session


@pytest.fixture
def session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Session:
    made = Session(tmp_path)
    # in-process decisions see the same environment the hook subprocesses get
    monkeypatch.setenv("HOME", str(made.home))
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    monkeypatch.delenv("VERIGATE_SELF_GATE_MODE", raising=False)
    return made
