"""Connections to the server: the URL shown without its password, the pool, retries and the error mapping.

Every psycopg and pool error becomes :class:`verigate.StoreError` here, so callers see the same error tree as with
SQLite: a server that is down, restarting or refusing the role is handled like a locked SQLite file (the gate keeps
its records best effort and never loses the pending candidate). A unit of work that failed because its
connection died (a restart, ``pg_terminate_backend``, a pooler closing it) or that lost a deadlock or
serialization race is run again on a fresh connection until the lock timeout; a failure while committing is not
retried, since the commit may have happened.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import psycopg
from psycopg import errors as pgerrors
from psycopg_pool import ConnectionPool, PoolClosed, PoolTimeout

from verigate import StoreError

# how every store backend shows a URL: the password replaced by ***, the query (where libpq takes password=) left
# out; private to verigate, of the same repository and release
from verigate.store._open import shown_url

__all__ = ["Connector", "Work"]

T = TypeVar("T")
#: one unit of work: runs inside one transaction on one connection; may run again after a lost connection
Work = Callable[[psycopg.Connection[Any]], T]

#: libpq's connect_timeout is whole seconds and at least 2; a dead host must not hold a hook longer than this
_MAX_CONNECT_TIMEOUT_S = 10
#: SQLSTATE classes / codes after which the same work may simply run again on a fresh connection
_RETRY_CLASSES = ("08",)  # connection exceptions
_RETRY_CODES = {
    "40001",  # serialization_failure
    "40P01",  # deadlock_detected
    "57P01",  # admin_shutdown (pg_terminate_backend, a fast shutdown or restart)
    "57P02",  # crash_shutdown
    "57P03",  # cannot_connect_now (starting up or shutting down)
}
_RECONNECT_TIMEOUT_S = 1.0
#: how long one request for a pooled connection waits before asking again (each ask may start a connection)
_ASK_EVERY_S = 0.5


def _retryable(exc: BaseException, conn: psycopg.Connection[Any] | None) -> bool:
    if isinstance(exc, PoolTimeout | PoolClosed):
        return False
    if not isinstance(exc, psycopg.Error):
        return False
    state = exc.sqlstate or ""
    if state in _RETRY_CODES or state.startswith(_RETRY_CLASSES):
        return True
    # a connection that died mid-statement reports no SQLSTATE; the connection says it is broken
    return isinstance(exc, psycopg.OperationalError) and (conn is None or conn.broken)


class Connector:
    """The pool of one store and the one place its driver errors are translated."""

    def __init__(self, url: str, *, lock_timeout_s: float, min_size: int = 1, max_size: int = 4) -> None:
        if not (isinstance(lock_timeout_s, int | float) and math.isfinite(lock_timeout_s) and lock_timeout_s >= 0):
            raise StoreError(f"lock_timeout_s must be a finite number >= 0, got {lock_timeout_s!r}",
                             field="lock_timeout_s")
        self.source = shown_url(url)
        self.lock_timeout_s = float(lock_timeout_s)
        try:
            given = psycopg.conninfo.conninfo_to_dict(url)
        except psycopg.Error:
            # libpq's parse error may quote the URL, password and all: it is not repeated
            raise StoreError("not a PostgreSQL connection URL libpq can read", source=self.source) from None
        self._conninfo = url
        self._kwargs: dict[str, Any] = {"autocommit": True}
        if "connect_timeout" not in given:
            self._kwargs["connect_timeout"] = max(2, min(_MAX_CONNECT_TIMEOUT_S, math.ceil(self.lock_timeout_s)))
        # a lock wait or a statement is bounded by the store's lock timeout (0 would mean "no limit" to the server)
        limit_ms = max(1, int(self.lock_timeout_s * 1000))
        self._settings = (f"SET statement_timeout = {limit_ms}", f"SET lock_timeout = {limit_ms}",
                          "SET idle_in_transaction_session_timeout = " + str(max(limit_ms, 60_000)))
        self._pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
            self._conninfo, kwargs=self._kwargs, min_size=min_size, max_size=max_size, open=False,
            configure=self._configure, check=ConnectionPool.check_connection, timeout=self.lock_timeout_s,
            # the pool's own reconnection backs off exponentially (1 s, 2 s, 4 s …): after a long outage its next
            # try could come long after the server is back. Giving up after one retry instead lets the next
            # request start a fresh attempt at once (``_pooled`` asks every half second)
            reconnect_timeout=_RECONNECT_TIMEOUT_S, num_workers=1, name="verigate-store")
        self._opened = False

    # connections

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        for statement in self._settings:
            conn.execute(statement)

    def connect(self) -> psycopg.Connection[Any]:
        """A connection of its own (not from the pool), retried while the server is away until the lock timeout."""
        deadline = time.monotonic() + self.lock_timeout_s
        delay = 0.05
        while True:
            try:
                conn = psycopg.Connection.connect(self._conninfo, **self._kwargs)
            except psycopg.Error as exc:
                # a refused connection or a server starting up may pass; a wrong password or database will not
                transient = exc.sqlstate in (None, "57P03")
                if not transient or time.monotonic() + delay >= deadline:
                    raise self.error(exc, "connecting to the server") from None
                time.sleep(delay)
                delay = min(delay * 2, 1.0)
                continue
            try:
                self._configure(conn)
            except psycopg.Error as exc:
                conn.close()
                raise self.error(exc, "configuring a connection") from None
            return conn

    def open_pool(self) -> None:
        if not self._opened:
            self._pool.open(wait=False)
            self._opened = True

    def close(self) -> None:
        if self._opened:
            self._opened = False
            self._pool.close(timeout=max(1.0, min(self.lock_timeout_s, 5.0)))

    @contextlib.contextmanager
    def _pooled(self, deadline: float) -> Iterator[psycopg.Connection[Any]]:
        """A healthy connection from the pool (its check replaces dead ones), waiting at most to ``deadline``."""
        while True:
            remaining = deadline - time.monotonic()
            try:
                conn = self._pool.getconn(timeout=max(0.001, min(remaining, _ASK_EVERY_S)))
                break
            except PoolTimeout:
                if time.monotonic() >= deadline:
                    raise
        try:
            yield conn
        finally:
            self._pool.putconn(conn)

    # running work

    def run(self, doing: str, work: Work[T], *, transaction: bool = True) -> T:
        """Run ``work`` in one transaction (or, with ``transaction=False``, as autocommit statements) on a pooled
        connection; retried after a lost connection or a lost race until the lock timeout."""
        if not self._opened:
            raise StoreError("the store is closed", source=self.source)
        deadline = time.monotonic() + self.lock_timeout_s
        delay = 0.02
        while True:
            conn: psycopg.Connection[Any] | None = None
            committing = False
            try:
                with self._pooled(deadline) as conn:
                    if not transaction:
                        return work(conn)
                    with conn.transaction():
                        result = work(conn)
                        committing = True
                    return result
            except (psycopg.Error, UnicodeError) as exc:
                if committing or not _retryable(exc, conn) or time.monotonic() + delay >= deadline:
                    if committing:
                        raise self.error(exc, doing + " (the commit's outcome is unknown)") from None
                    raise self.error(exc, doing) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.5)

    # errors

    @staticmethod
    def _describe(exc: BaseException) -> str:
        # libpq's messages name the host, port and user, never the password
        text = " ".join(str(exc).split())
        return text or type(exc).__name__

    def error(self, exc: BaseException, doing: str) -> StoreError:
        """Translate a driver or pool error: callers only ever see StoreError naming the (password-free) URL."""
        text = self._describe(exc)
        if isinstance(exc, PoolTimeout):
            return StoreError(f"{doing}: no connection to the server within the lock timeout of "
                              f"{self.lock_timeout_s:g} s (is it down or restarting?)", source=self.source)
        if isinstance(exc, PoolClosed):
            return StoreError("the store is closed", source=self.source)
        if isinstance(exc, pgerrors.LockNotAvailable | pgerrors.QueryCanceled):
            return StoreError(f"{doing}: the store is locked by another worker; gave up after the lock timeout "
                              f"of {self.lock_timeout_s:g} s", source=self.source)
        if isinstance(exc, pgerrors.InsufficientPrivilege):
            return StoreError(f"{doing}: the role may not do this ({text})", source=self.source)
        if isinstance(exc, pgerrors.UndefinedTable | pgerrors.UndefinedFunction):
            return StoreError(f"{doing}: the store's tables are missing or damaged ({text}); run `verigate store "
                              "migrate` with a role that may create tables", source=self.source)
        if isinstance(exc, UnicodeError):
            return StoreError(f"{doing}: text that is not valid Unicode cannot be stored ({text})",
                              source=self.source)
        if isinstance(exc, psycopg.DataError) and "NUL" in text:
            return StoreError(f"{doing}: PostgreSQL text cannot hold a NUL character", source=self.source)
        if isinstance(exc, psycopg.OperationalError):
            return StoreError(f"{doing}: the PostgreSQL server cannot be reached or dropped the connection "
                              f"({text})", source=self.source)
        return StoreError(f"{doing}: {text}", source=self.source)
