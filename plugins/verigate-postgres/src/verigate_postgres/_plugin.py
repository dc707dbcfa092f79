"""The ``verigate_store_backends`` hook: ``postgresql://`` and ``postgres://`` URLs open a PostgresStore."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from verigate import hookimpl
from verigate.store import Clock

from ._store import PostgresStore

__all__ = ["SCHEMES", "PostgresBackend", "Unsupported", "open_postgres_store"]

#: the URL schemes libpq accepts
SCHEMES = ("postgresql", "postgres")


def open_postgres_store(url: str, *, lock_timeout_s: float = 30.0, clock: Clock | None = None,
                        create: bool = True) -> PostgresStore:
    """The store opener registered for both schemes (``verigate.store.open_store`` calls it)."""
    return PostgresStore(url, lock_timeout_s=lock_timeout_s, clock=clock, create=create)


class PostgresBackend:
    """The plug-in object the ``verigate`` entry point registers."""

    @staticmethod
    def supported() -> bool:
        """Whether this verigate has the store-backend hook (verigate refuses an implementation of a hook it
        lacks, and with it every other plug-in's loading would fail)."""
        from verigate import hookspecs

        return hasattr(hookspecs, "verigate_store_backends")

    @hookimpl
    def verigate_store_backends(self) -> Mapping[str, Any]:
        return dict.fromkeys(SCHEMES, open_postgres_store)


class Unsupported:
    """What the entry point registers on a verigate without the store-backend hook: nothing."""
