"""For every test: verigate's per-user state (the self-gate's store and caches) lives in the test's own folder,
never in the real home of whoever runs the suite. Folders with fixtures of their own (tests/selfgate) set it too.

Property tests run without hypothesis's per-example deadline and its too-slow health check: both are wall-clock
assertions, which no test makes (a loaded CI machine, or an example that first imports a module, would fail them
as "flaky" while the property holds). A test that sets ``deadline`` itself keeps it."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# on top of the profile in force: scripts/mutation.py loads its own (a fixed database, derandomized, every health
# check off) before this file, and keeps it
settings.register_profile("verigate", deadline=None,
                          suppress_health_check=[*settings.default.suppress_health_check, HealthCheck.too_slow])
settings.load_profile("verigate")


@pytest.fixture(autouse=True)
def _private_state_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    state = tmp_path_factory.mktemp("state-home")
    monkeypatch.setenv("VERIGATE_STATE_HOME", str(state))
    return state
