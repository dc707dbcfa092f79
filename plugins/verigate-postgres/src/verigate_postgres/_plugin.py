"""The ``verigate_store_backends`` hook: ``postgresql://`` and ``postgres://`` URLs open a PostgresStore."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from verigate import hookimpl

if TYPE_CHECKING:
    from verigate.store import Clock

    from ._store import PostgresStore

__all__ = ["SCHEMES", "PostgresBackend", "open_postgres_store"]

#: the URL schemes libpq accepts
SCHEMES = ("postgresql", "postgres")


def open_postgres_store(url: str, *, lock_timeout_s: float = 30.0, clock: Clock | None = None,
                        create: bool = True) -> PostgresStore:
    """The store opener registered for both schemes (``verigate.store.open_store`` calls it). psycopg is
    imported here, at the first PostgreSQL store, not when the plug-in loads: every hook process loads every
    plug-in, and a project on SQLite must not pay ~150 ms for a driver it never uses."""
    from ._store import PostgresStore

    return PostgresStore(url, lock_timeout_s=lock_timeout_s, clock=clock, create=create)


class PostgresBackend:
    """The plug-in object the ``verigate`` entry point registers."""

    @hookimpl
    def verigate_store_backends(self) -> Mapping[str, Any]:
        return dict.fromkeys(SCHEMES, open_postgres_store)

