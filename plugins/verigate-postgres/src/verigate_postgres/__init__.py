"""verigate-postgres: the verigate store on PostgreSQL, shared by many workers on many hosts.

``store.url: postgresql://…`` in ``verigate.yaml`` (or ``verigate.store.open_store("postgresql://…")``) opens a
:class:`PostgresStore` through the ``verigate_store_backends`` hook; ``verigate_postgres.testing`` starts a
throwaway server for tests and benchmarks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._plugin import SCHEMES, PostgresBackend, open_postgres_store

if TYPE_CHECKING:
    from ._schema import NOTIFY_CHANNEL, SCHEMA_VERSION
    from ._store import PostgresStore

__all__ = ["NOTIFY_CHANNEL", "SCHEMA_VERSION", "SCHEMES", "PostgresBackend", "PostgresStore", "open_postgres_store",
           "plugin"]

#: the instance the ``verigate`` entry point registers
plugin = PostgresBackend()


def __getattr__(name: str) -> Any:
    # PostgresStore imports psycopg, the schema verigate's store package: loaded on first use, so loading the
    # plug-in (every hook and grading process does) stays cheap
    if name == "PostgresStore":
        from ._store import PostgresStore

        return PostgresStore
    if name in ("NOTIFY_CHANNEL", "SCHEMA_VERSION"):
        from . import _schema

        return getattr(_schema, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
