"""The PostgreSQL server of the store tests (tests/store/postgres/conftest.py): its URL, fresh schemas, and
restart / stop for a server the test session started itself."""

from __future__ import annotations

import os
import uuid
from typing import Any
from urllib.parse import quote

import psycopg
import pytest
from verigate_postgres.testing import PostgresUnavailable, TemporaryServer

__all__ = ["URL_ENV", "Server", "start_server"]

URL_ENV = "VERIGATE_TEST_POSTGRES_URL"


class Server:
    """The server the tests use: its superuser URL, and (for one this session started) restart / stop."""

    def __init__(self, url: str, owned: TemporaryServer | None) -> None:
        self.base_url = url
        self.owned = owned

    def admin(self) -> psycopg.Connection[Any]:
        return psycopg.connect(self.base_url, autocommit=True, connect_timeout=10)

    def fresh_schema(self) -> str:
        name = "t_" + uuid.uuid4().hex[:16]
        with self.admin() as conn:
            conn.execute(f"CREATE SCHEMA {name}")
        return name

    def url_for(self, schema: str, *, user: str | None = None) -> str:
        url = self.base_url
        if user is not None:
            scheme, rest = url.split("://", 1)
            rest = rest.split("@", 1)[1] if "@" in rest else rest
            url = f"{scheme}://{user}@{rest}"
        joiner = "&" if "?" in url else "?"
        return f"{url}{joiner}options={quote(f'-c search_path={schema}', safe='')}"

    def fresh_url(self) -> str:
        return self.url_for(self.fresh_schema())


def start_server() -> Server:
    given = os.environ.get(URL_ENV)
    if given:
        return Server(given, None)
    try:
        server = TemporaryServer()
    except PostgresUnavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the PostgreSQL store tests: {exc}")
        pytest.skip(str(exc))
    try:
        server.start()
    except BaseException:
        server.close()
        raise
    return Server(server.url(), server)
