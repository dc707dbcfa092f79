"""Fixtures of the self-gate tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# tests/ is on the pythonpath but this folder is not: make its helper module importable by name
sys.path.insert(0, str(Path(__file__).parent))

from selfgate_helpers import HOST_VARIABLES, Session


@pytest.fixture(autouse=True)
def _state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every self-gate test keeps its state in its own folder: never the real home's state folder."""
    monkeypatch.setenv("VERIGATE_STATE_HOME", str(tmp_path / "state"))
    for name in HOST_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Session:
    made = Session(tmp_path)
    # in-process decisions see the same environment the hook subprocesses get
    monkeypatch.setenv("HOME", str(made.home))
    return made
