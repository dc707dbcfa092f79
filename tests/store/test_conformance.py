"""The store conformance suite (``verigate.testing.StoreConformance``) on SQLite: a file, and ``:memory:``."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import pytest

from verigate.store import Clock, Store, open_store
from verigate.testing import StoreConformance


class TestSqliteFile(StoreConformance):
    @pytest.fixture
    def store_factory(self, tmp_path: Path) -> Callable[..., Store]:
        numbers = itertools.count()

        def fresh(clock: Clock | None = None) -> Store:
            return open_store(str(tmp_path / "stores" / f"{next(numbers)}.db"), clock=clock, lock_timeout_s=60)

        return fresh

    @pytest.fixture
    def store_url(self, tmp_path: Path) -> str:
        return f"sqlite:///{tmp_path / 'shared' / 'verigate.db'}"


class TestSqliteMemory(StoreConformance):
    @pytest.fixture
    def store_factory(self) -> Callable[..., Store]:
        def fresh(clock: Clock | None = None) -> Store:
            return open_store(":memory:", clock=clock)

        return fresh

    @pytest.fixture
    def store_url(self) -> str:
        pytest.skip("a :memory: store is private to the connection that opened it")


def test_the_suites_workers_never_carry_the_store_url_in_their_command_line(tmp_path: Path) -> None:
    # a backend's author runs the suite against a database URL holding a password: another user of the machine
    # reads every process's command line (ps, /proc/PID/cmdline), so the URL reaches the workers another way
    import hashlib
    import secrets

    from verigate._conformance._processes import _PRELUDE, run_workers

    password = secrets.token_hex(12)
    url = f"vgfile://alice:{password}@db.example/verigate"
    code = _PRELUDE + (
        "import hashlib\n"
        "cmdline = Path('/proc/self/cmdline').read_bytes().decode('utf-8', 'replace')\n"
        "print(json.dumps({'cmdline': cmdline, 'url_sha256': hashlib.sha256(url.encode()).hexdigest()}))\n")
    [[seen]] = run_workers(code, url, tmp_path, [[]], timeout_s=120)
    assert password not in seen["cmdline"]
    assert seen["url_sha256"] == hashlib.sha256(url.encode()).hexdigest()  # the worker still has the URL
