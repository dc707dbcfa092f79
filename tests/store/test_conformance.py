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
