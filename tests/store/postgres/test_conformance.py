"""The store conformance suite (``verigate.testing.StoreConformance``) on a real PostgreSQL server, each store in a
fresh schema of its own; other processes open the same URL through ``open_store`` and the plug-in's hook."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from postgres_server import Server
from verigate.store import Clock, Store, open_store
from verigate.testing import StoreConformance


class TestPostgres(StoreConformance):
    @pytest.fixture
    def store_factory(self, pg_server: Server) -> Iterator[Callable[..., Store]]:
        opened: list[Store] = []

        def fresh(clock: Clock | None = None) -> Store:
            store = open_store(pg_server.fresh_url(), clock=clock, lock_timeout_s=60)
            opened.append(store)
            return store

        yield fresh
        for store in opened:  # closing twice is harmless; a test may have closed its own
            store.close()

    @pytest.fixture
    def store_url(self, pg_server: Server) -> str:
        return pg_server.fresh_url()
