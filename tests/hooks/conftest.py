"""Fixtures of the Stop-hook and verigate-git tests."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# tests/ is on the pythonpath but this folder is not: make its helper modules importable by name
sys.path.insert(0, str(Path(__file__).parent))

from stop_helpers import write_config

from judge_servers import JudgeServer


@pytest.fixture
def judge() -> Iterator[JudgeServer]:
    with JudgeServer("openai", required_key="sk-loopback-test") as server:
        yield server


@pytest.fixture
def project(tmp_path: Path, judge: JudgeServer) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    write_config(folder, judge.base_url)
    return folder


@pytest.fixture
def in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hook in this process: no project or repository variable of the caller's leaks into it."""
    for name in ("CLAUDE_PROJECT_DIR", "VERIGATE_GIT_REPO"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("VERIGATE_TEST_JUDGE_KEY", "sk-loopback-test")
