"""For every test: verigate's per-user state (the self-gate's store and caches) lives in the test's own folder,
never in the real home of whoever runs the suite. Folders with fixtures of their own (tests/selfgate) set it too."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _private_state_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    state = tmp_path_factory.mktemp("state-home")
    monkeypatch.setenv("VERIGATE_STATE_HOME", str(state))
    return state
