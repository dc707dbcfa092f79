"""``wait_for_reviews``: one connection of its own that ``LISTEN``s on the review channel.

A notification is delivered only to sessions that were listening when the creating transaction committed, so the
first wait (and the first after the connection was lost) returns at once: the caller lists the pending reviews
with the listener already in place and misses nothing. Spurious wake-ups are allowed by the protocol.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any

import psycopg
from psycopg import sql

from ._connection import Connector

__all__ = ["Listener"]


class Listener:
    def __init__(self, connector: Connector, channel: str) -> None:
        self._connector = connector
        self._channel = channel
        self._conn: psycopg.Connection[Any] | None = None
        self._lock = threading.Lock()

    def wait(self, timeout_s: float) -> None:
        with self._lock:
            if self._conn is None or self._conn.closed or self._conn.broken:
                self._drop()
                conn = self._connector.connect()
                try:
                    conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self._channel)))
                except psycopg.Error as exc:
                    conn.close()
                    raise self._connector.error(exc, "listening for new reviews") from None
                self._conn = conn
                return  # newly listening: whatever was filed before is for the caller's listing to find
            conn = self._conn
            deadline = time.monotonic() + timeout_s
            try:
                # woken by the first notification; several filed together arrive as one wake-up
                for _ in conn.notifies(timeout=max(0.0, deadline - time.monotonic()), stop_after=1):
                    break
            except psycopg.Error:
                # the server went away (a restart): listen again on the next call, which returns at once
                self._drop()

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(psycopg.Error):
                conn.close()

    def close(self) -> None:
        with self._lock:
            self._drop()
