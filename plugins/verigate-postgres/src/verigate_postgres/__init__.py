"""verigate-postgres: the verigate store on PostgreSQL, shared by many workers on many hosts.

``store.url: postgresql://…`` in ``verigate.yaml`` (or ``verigate.store.open_store("postgresql://…")``) opens a
:class:`PostgresStore` through the ``verigate_store_backends`` hook; ``verigate_postgres.testing`` starts a
throwaway server for tests and benchmarks.
"""

from __future__ import annotations

from ._plugin import SCHEMES, PostgresBackend, Unsupported, open_postgres_store
from ._schema import NOTIFY_CHANNEL, SCHEMA_VERSION
from ._store import PostgresStore

__all__ = ["NOTIFY_CHANNEL", "SCHEMA_VERSION", "SCHEMES", "PostgresBackend", "PostgresStore", "open_postgres_store",
           "plugin"]

#: the instance the ``verigate`` entry point registers (an empty one where verigate has no store-backend hook)
plugin: PostgresBackend | Unsupported = PostgresBackend() if PostgresBackend.supported() else Unsupported()
