"""Fixtures for the store tests: real SQLite files in tmp_path, a controllable clock, the CLI as a subprocess."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from verigate.store import SqliteStore
from verigate.testing import StepClock


@pytest.fixture
def clock() -> StepClock:
    return StepClock()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "state" / "verigate.db"


@pytest.fixture
def store(db_path: Path, clock: StepClock) -> Iterator[SqliteStore]:
    with SqliteStore(db_path, clock=clock, lock_timeout_s=5) as opened:
        yield opened


def raw_connection(path: Path) -> sqlite3.Connection:
    """A plain sqlite3 connection, as another program (or an attacker) would open the file."""
    return sqlite3.connect(path, isolation_level=None)


@pytest.fixture
def raw() -> Callable[[Path], sqlite3.Connection]:
    return raw_connection


CliRun = Callable[..., "subprocess.CompletedProcess[str]"]


@pytest.fixture
def verigate_cli(tmp_path: Path) -> CliRun:
    """Run ``python -m verigate ARGS`` in a folder (tmp_path by default) and capture its output."""

    def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "verigate", *args], cwd=cwd or tmp_path, capture_output=True,
                              text=True, timeout=60, check=False)

    return run
