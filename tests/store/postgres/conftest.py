"""A real PostgreSQL server for the store tests: one per test session, started from the installed binaries
(``verigate_postgres.testing``), or the server ``VERIGATE_TEST_POSTGRES_URL`` names.

Every test gets a fresh schema of its own (``search_path`` set in the URL's ``options``), so stores never see
each other's rows and nothing needs dropping. Without the binaries the tests skip here and FAIL under ``CI``,
which must run this tier (``scripts/install-postgres.sh`` installs Debian's package there).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from postgres_server import URL_ENV, Server, start_server


def _serving() -> Iterator[Server]:
    """A server for the fixture's scope; one this process started is stopped and removed after it."""
    server = start_server()
    try:
        yield server
    finally:
        if server.owned is not None:
            server.owned.close()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Server]:
    yield from _serving()


@pytest.fixture
def pg_url(pg_server: Server) -> str:
    """The URL of a fresh, empty store (its own schema)."""
    return pg_server.fresh_url()


@pytest.fixture
def own_server() -> Iterator[Server]:
    """A server of this test alone, for restarting and stopping it (skipped on a server given by URL)."""
    if os.environ.get(URL_ENV):
        pytest.skip(f"{URL_ENV} names a server these tests cannot restart")
    yield from _serving()
