"""The embedded store: one SQLite file in WAL mode, shared safely by several processes.

One module past 400 lines on purpose: every method is one transaction over the same connection, lock and schema
(sessions, attempts, reviews and the ledger rows they append); split, each part would need the others' private
helpers. The hash chain itself lives in ``_chain``.
"""

from __future__ import annotations

import math
import re
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from .. import _json as strict_json
from .._errors import LedgerTamperedError, ReviewError, StoreError
from .._logging import get_logger
from .._models import SessionState
from ._base import LedgerRow, PendingReview, ReviewStatus, SessionRecord, TimelineRow
from ._cache_entry import cache_entry_text, check_cache_key, read_cache_entry
from ._chain import GENESIS_HASH, canonical_json, ledger_row_hash_of_json, verify_chain
from ._clock import Clock, format_timestamp, utc_now
from ._resolution import Decision, check_resolver, resolution_rows, settled, state_after
from ._schema import MIGRATIONS, SCHEMA_VERSION

__all__ = ["DEFAULT_STORE_PATH", "MEMORY", "SqliteStore", "sqlite_path"]

DEFAULT_STORE_PATH = ".verigate/verigate.db"
MEMORY = ":memory:"
#: ``resolved_by`` of reviews the store expired itself
EXPIRY_ACTOR = "verigate:expiry"
log = get_logger("verigate.store")

_REVIEW_COLUMNS = ("review_id, session_id, status, policy_action, reason, pending_text, candidate, verdict, "
                   "created_at, resolved_at, resolved_by, note")
_LEDGER_COLUMNS = "seq, kind, payload, created_at, prev_hash, row_hash"
_LEDGER_TEXT_COLUMNS = _LEDGER_COLUMNS.split(", ")[1:]
#: SQLite's own functions and the sqlite3 shell end a text at a NUL: a kind holding one reads as another kind
_NUL = "\x00"
_HASH = re.compile(r"[0-9a-f]{64}")
# every text column's storage class and its raw bytes: verification decodes them itself (see _ledger_rows)
_LEDGER_COLUMNS_AS_BYTES = ", ".join(["seq", *(f"typeof({name})" for name in _LEDGER_TEXT_COLUMNS),
                                      *(f"CAST({name} AS BLOB)" for name in _LEDGER_TEXT_COLUMNS)])
#: what the sqlite3 module raises, including for an integer too large for an SQLite INTEGER and for text that
#: cannot be UTF-8 (a lone surrogate)
_DRIVER_ERRORS = (sqlite3.Error, OverflowError, UnicodeEncodeError)
#: how often wait_for_reviews looks for another process's commit
_POLL_S = 0.1
#: create the session or update it; a NULL attempt or follow-up (?3, ?4) leaves that column as it is
_UPSERT_SESSION = ("INSERT INTO sessions (session_id, state, attempt, follow_up, created_at, updated_at) "
                   "VALUES (?1, ?2, coalesce(?3, 0), coalesce(?4, ''), ?5, ?5) "
                   "ON CONFLICT (session_id) DO UPDATE SET state = ?2, attempt = coalesce(?3, attempt), "
                   "follow_up = coalesce(?4, follow_up), updated_at = ?5")
_INSERT_TIMELINE = "INSERT INTO timeline (session_id, kind, payload, created_at) VALUES (?, ?, ?, ?)"



class SqliteStore:
    """The :class:`Store` protocol on SQLite: every write is one ``BEGIN IMMEDIATE`` transaction.

    ``path`` is a file (its folder is created) or ``:memory:``. ``lock_timeout_s`` is how long a write waits
    for another process's write to finish (SQLite's busy timeout) before :class:`StoreError`. ``clock``
    returns an aware datetime (injected by tests to drive review expiry). ``create=False`` refuses to start
    a new store where none exists. One instance may be shared by threads; each process opens its own.

    Durability: a pending review and every review resolution are flushed to disk (fsync) before the call
    returns, and that flush also carries every earlier write. Other writes (attempts, sessions, checkpoints,
    timeline, ledger) survive a crash of the process at once but reach the disk with the next flush, so a power
    loss can drop the last of them; ``sync_every_write=True`` flushes every write instead (much slower).
    """

    def __init__(self, path: str | Path = DEFAULT_STORE_PATH, *, lock_timeout_s: float = 30.0,
                 clock: Clock | None = None, create: bool = True, sync_every_write: bool = False) -> None:
        if not (isinstance(lock_timeout_s, int | float) and math.isfinite(lock_timeout_s) and lock_timeout_s >= 0):
            raise StoreError(f"lock_timeout_s must be a finite number >= 0, got {lock_timeout_s!r}",
                             field="lock_timeout_s")
        self.path = str(path)
        self.lock_timeout_s = float(lock_timeout_s)
        self._clock: Clock = clock or utc_now
        self._lock = threading.RLock()
        self._memory = self.path == MEMORY
        self._sync_every_write = sync_every_write
        # wait_for_reviews wakes on a review this instance filed (another thread) without polling for it
        self._filed = threading.Condition()
        self._reviews_filed = 0
        self._conn: sqlite3.Connection | None = self._connect(create)
        try:
            self._initialise()
        except BaseException:
            self.close()
            raise

    @property
    def in_memory(self) -> bool:
        """True for ``:memory:``: the store lives in this process and does no I/O (see ``gate._offloop``)."""
        return self._memory

    @property
    def clock_is_default(self) -> bool:
        """True when no clock was injected: every call of this store runs verigate's code alone."""
        return self._clock is utc_now

    @contextmanager
    def held_if_free(self) -> Iterator[bool]:
        """The store's lock for the block when no other thread holds it (True), else nothing (False): a caller
        that must not wait (the event loop) holds it for several calls at once, or goes elsewhere."""
        held = self._lock.acquire(blocking=False)
        try:
            yield held
        finally:
            if held:
                self._lock.release()

    # connection, schema and error mapping

    def _connect(self, create: bool) -> sqlite3.Connection:
        if not self._memory:
            file = Path(self.path)
            if not create and not file.exists():
                raise StoreError("no store here (nothing has been recorded yet)", source=self.path)
            if file.is_dir():
                raise StoreError("is a folder, not a store file", source=self.path)
            try:
                file.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create the store's folder: {exc}", source=self.path) from exc
        try:
            # isolation_level=None: transactions are exactly the BEGIN IMMEDIATE … COMMIT this class issues
            return sqlite3.connect(self.path, timeout=self.lock_timeout_s, isolation_level=None,
                                   check_same_thread=False)
        except sqlite3.Error as exc:
            raise self._error(exc, "opening the store") from exc

    def _initialise(self) -> int:
        """Check the file, switch to WAL and migrate, retrying while another process is doing the same; returns
        the schema version in force."""
        deadline = time.monotonic() + self.lock_timeout_s
        while True:
            try:
                return self._initialise_once()
            except sqlite3.OperationalError as exc:
                # changing the journal mode can report busy without waiting on the busy timeout
                if not self._is_locked(exc) or time.monotonic() >= deadline:
                    raise self._error(exc, "opening the store") from exc
                time.sleep(0.01)
            except sqlite3.Error as exc:
                raise self._error(exc, "opening the store") from exc

    def _initialise_once(self) -> int:
        conn = self._connection()
        conn.execute(f"PRAGMA busy_timeout = {int(self.lock_timeout_s * 1000)}")
        conn.execute(f"PRAGMA synchronous = {'FULL' if self._sync_every_write else 'NORMAL'}")
        if self._memory:  # sorts and statement journals in memory too: a store in memory never touches a file
            conn.execute("PRAGMA temp_store = MEMORY")
        version = self._check_version(conn)  # the first read: a file that is not a database fails here
        migrated_from = None
        if version != SCHEMA_VERSION:
            conn.execute("BEGIN IMMEDIATE")
            try:
                # under the write lock: another process may have migrated meanwhile, or another program may have
                # made its tables in what was an empty file (refused here, still untouched)
                migrated_from = self._check_version(conn)
                for statements in MIGRATIONS[migrated_from:]:
                    for statement in statements:
                        conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        # only a file known to be ours (its schema version committed) is switched to WAL, a persistent change
        if not self._memory and conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            conn.execute("PRAGMA journal_mode = WAL")
        if migrated_from is not None and migrated_from < SCHEMA_VERSION:
            log.info("store %s migrated from schema version %d to %d", self.path, migrated_from, SCHEMA_VERSION)
        return SCHEMA_VERSION

    def migrate(self) -> int:
        """Apply pending migrations (opening the store already did, so this is the explicit, idempotent form of
        the same step); returns the schema version in force."""
        with self._lock:
            self._connection()
            return self._initialise()

    def wait_for_reviews(self, timeout_s: float) -> None:
        """Return once a review may have been filed (by this instance, or any commit of another connection:
        SQLite has no notifications, so ``PRAGMA data_version`` is polled) or after ``timeout_s``."""
        if not (isinstance(timeout_s, int | float) and math.isfinite(timeout_s) and timeout_s >= 0):
            raise StoreError(f"timeout_s must be a finite number >= 0, got {timeout_s!r}", field="timeout_s")
        deadline = time.monotonic() + timeout_s
        with self._filed:
            seen = self._reviews_filed
        version = self._data_version()
        while (remaining := deadline - time.monotonic()) > 0:
            with self._filed:
                if self._filed.wait_for(lambda: self._reviews_filed != seen, timeout=min(remaining, _POLL_S)):
                    return
            if self._data_version() != version:
                return

    def _data_version(self) -> int:
        """Changes whenever another connection commits (never for this connection's own commits)."""
        with self._reading("waiting for reviews") as conn:
            value: int = conn.execute("PRAGMA data_version").fetchone()[0]
        return value

    def _check_version(self, conn: sqlite3.Connection) -> int:
        """The applied schema version; refuses a newer store and another program's database (read only)."""
        # one statement, so one snapshot: read apart, another process's migration can commit between the two
        # reads, and its tables would be read beside the version 0 it had before
        row = conn.execute("SELECT user_version, (SELECT count(*) FROM sqlite_master) FROM pragma_user_version")
        version: int
        version, tables = row.fetchone()
        if version > SCHEMA_VERSION:
            raise StoreError(f"the store has schema version {version}, newer than this verigate understands "
                             f"({SCHEMA_VERSION}); upgrade verigate to use it", source=self.path)
        if version == 0 and tables:
            raise StoreError("is a SQLite database but not a verigate store (it has other tables and no verigate "
                             "schema version); it was left untouched", source=self.path)
        return version

    @staticmethod
    def _is_locked(exc: Exception) -> bool:
        name = getattr(exc, "sqlite_errorname", "") or ""
        text = str(exc).lower()
        return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in text or "busy" in text

    def _error(self, exc: Exception, doing: str) -> StoreError:
        """Translate a sqlite3 error: callers only ever see StoreError naming the file."""
        name = getattr(exc, "sqlite_errorname", "") or ""
        text = str(exc)
        if self._is_locked(exc):
            return StoreError(f"{doing}: the store is locked by another process or connection; gave up after "
                              f"the lock timeout of {self.lock_timeout_s:g} s", source=self.path)
        if name.startswith(("SQLITE_NOTADB", "SQLITE_CORRUPT")) or "not a database" in text or "malformed" in text:
            return StoreError(f"{doing}: not a SQLite database, or a damaged one ({text}); the file was left "
                              "untouched", source=self.path)
        return StoreError(f"{doing}: {text}", source=self.path)

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreError("the store is closed", source=self.path)
        return self._conn

    @contextmanager
    def _reading(self, doing: str) -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn = self._connection()
            try:
                yield conn
            except _DRIVER_ERRORS as exc:
                raise self._error(exc, doing) from exc

    @contextmanager
    def _writing(self, doing: str, *, durable: bool = False) -> Iterator[sqlite3.Connection]:
        """One write transaction; taking the write lock up front makes read-then-write steps atomic.

        ``durable`` commits with an fsync of the WAL (synchronous FULL), which also makes every earlier
        write of any process durable: the WAL is one file.
        """
        flush = durable and not self._sync_every_write
        with self._lock:
            conn = self._connection()
            try:
                if flush:
                    conn.execute("PRAGMA synchronous = FULL")
                conn.execute("BEGIN IMMEDIATE")
                yield conn
                conn.execute("COMMIT")
            except BaseException as exc:
                if conn.in_transaction:
                    try:
                        conn.execute("ROLLBACK")
                    except sqlite3.Error:
                        log.warning("store %s: rollback after a failed %s also failed", self.path, doing)
                if isinstance(exc, _DRIVER_ERRORS):
                    raise self._error(exc, doing) from exc
                raise
            finally:
                if flush:
                    try:
                        conn.execute("PRAGMA synchronous = NORMAL")
                    except sqlite3.Error:
                        log.warning("store %s: could not restore synchronous = NORMAL; writes stay fully synced",
                                    self.path)

    def _write_one(self, doing: str, sql: str, parameters: Sequence[Any]) -> None:
        """A write of one statement, in its own (autocommit) transaction: SQLite runs a lone write statement
        exactly as ``BEGIN IMMEDIATE``, the statement, ``COMMIT`` (the same write lock taken up front, the same busy
        timeout), minus two round trips through the driver. Only for writes that are one statement and need no
        read first; the lock keeps another thread's transaction on this connection from absorbing it."""
        with self._lock:
            conn = self._connection()
            if conn.in_transaction:  # one left open (a rollback that failed): never join it; fail as BEGIN does
                with self._writing(doing) as open_conn:
                    open_conn.execute(sql, parameters)
                return
            try:
                conn.execute(sql, parameters)
            except _DRIVER_ERRORS as exc:
                raise self._error(exc, doing) from exc

    def _now(self) -> str:
        return format_timestamp(self._clock())

    def _load(self, text: str, what: str) -> Any:
        try:
            return strict_json.loads(text)
        except strict_json.StrictJSONError as exc:
            raise StoreError(f"stored {what} is not strict JSON: {exc.message}", source=self.path) from None

    # sessions and attempts

    def get_session(self, session_id: str) -> SessionRecord | None:
        with self._reading("reading a session") as conn:
            row = conn.execute("SELECT session_id, state, attempt, created_at, updated_at, follow_up FROM sessions "
                               "WHERE session_id = ?", (session_id,)).fetchone()
        if row is None:
            return None
        return SessionRecord(session_id=row[0], state=row[1], attempt=row[2], created_at=row[3],
                             updated_at=row[4], follow_up=row[5])

    @staticmethod
    def _upsert_session(conn: sqlite3.Connection, session_id: str, now: str, *, state: SessionState,
                        attempt: int | None = None, follow_up: str | None = None) -> None:
        """Create the session or update it; ``None`` leaves a column as it is."""
        conn.execute(_UPSERT_SESSION, (session_id, state, attempt, follow_up, now))

    def begin_attempt(self, session_id: str, attempt: int, candidate: Mapping[str, Any]) -> None:
        """Store this attempt's candidate; the session is running at this attempt.

        The follow-up stays until the attempt's outcome replaces it (``set_revise``) or a new request clears it
        (``reset_request``): an attempt that crashes half-way still counts against the revise budget.
        """
        payload = canonical_json(candidate, field="candidate")
        with self._writing("beginning an attempt") as conn:
            now = self._now()
            self._upsert_session(conn, session_id, now, state="running", attempt=attempt)
            conn.execute("INSERT OR REPLACE INTO attempts (session_id, attempt, candidate, created_at) "
                         "VALUES (?, ?, ?, ?)", (session_id, attempt, payload, now))

    def attempts(self, session_id: str) -> Sequence[Mapping[str, Any]]:
        with self._reading("reading attempts") as conn:
            rows = conn.execute("SELECT candidate FROM attempts WHERE session_id = ? ORDER BY attempt",
                                (session_id,)).fetchall()
        return [self._load(row[0], "candidate") for row in rows]

    def set_revise(self, session_id: str, next_attempt: int, follow_up: str) -> None:
        self._write_one("recording a revise", _UPSERT_SESSION,
                        (session_id, "running", next_attempt, follow_up, self._now()))

    def set_session_state(self, session_id: str, state: SessionState) -> None:
        self._write_one("setting the session state", _UPSERT_SESSION, (session_id, state, None, None, self._now()))

    def reset_request(self, session_id: str) -> None:
        with self._writing("starting a new request") as conn:
            self._upsert_session(conn, session_id, self._now(), state="running", attempt=0, follow_up="")
            conn.execute("DELETE FROM attempts WHERE session_id = ?", (session_id,))

    # checkpoints

    def save_checkpoint(self, session_id: str, payload: Mapping[str, Any]) -> None:
        text = canonical_json(payload, field="checkpoint")
        self._write_one("saving a checkpoint", "INSERT INTO checkpoints (session_id, payload, created_at) "
                        "VALUES (?, ?, ?)", (session_id, text, self._now()))

    def latest_checkpoint(self, session_id: str) -> Mapping[str, Any] | None:
        with self._reading("reading a checkpoint") as conn:
            row = conn.execute("SELECT payload FROM checkpoints WHERE session_id = ? ORDER BY checkpoint_id DESC "
                               "LIMIT 1", (session_id,)).fetchone()
        return None if row is None else self._load(row[0], "checkpoint")

    # pending reviews

    def create_pending_review(self, session_id: str, *, policy_action: str, reason: str, pending_text: str,
                              candidate: Mapping[str, Any], verdict: Mapping[str, Any] | None) -> str:
        candidate_text = canonical_json(candidate, field="candidate")
        verdict_text = None if verdict is None else canonical_json(verdict, field="verdict")
        review_id = "rv_" + uuid.uuid4().hex
        with self._writing("creating a pending review", durable=True) as conn:
            now = self._now()
            self._upsert_session(conn, session_id, now, state="paused")
            conn.execute(f"INSERT INTO pending_reviews ({_REVIEW_COLUMNS}) "
                         "VALUES (?, ?, 'pending', ?, ?, ?, ?, ?, ?, NULL, NULL, '')",
                         (review_id, session_id, policy_action, reason, pending_text, candidate_text, verdict_text,
                          now))
        with self._filed:
            self._reviews_filed += 1
            self._filed.notify_all()
        return review_id

    def _review(self, row: Sequence[Any]) -> PendingReview:
        return PendingReview(
            review_id=row[0], session_id=row[1], status=row[2], policy_action=row[3], reason=row[4],
            pending_text=row[5], candidate=self._load(row[6], "candidate"),
            verdict=None if row[7] is None else self._load(row[7], "verdict"),
            created_at=row[8], resolved_at=row[9], resolved_by=row[10], note=row[11])

    def list_reviews(self, status: ReviewStatus | None = None) -> Sequence[PendingReview]:
        """Reviews oldest first; ``status=None`` lists every status."""
        with self._reading("listing reviews") as conn:
            rows = conn.execute(f"SELECT {_REVIEW_COLUMNS} FROM pending_reviews WHERE ?1 IS NULL OR status = ?1 "
                                "ORDER BY created_at, review_id", (status,)).fetchall()
        return [self._review(row) for row in rows]

    def _select_review(self, conn: sqlite3.Connection, review_id: str) -> PendingReview:
        row = conn.execute(f"SELECT {_REVIEW_COLUMNS} FROM pending_reviews WHERE review_id = ?",
                           (review_id,)).fetchone()
        if row is None:
            raise ReviewError(f"no review with id {review_id!r}", source=self.path, field="review_id")
        return self._review(row)

    def get_review(self, review_id: str) -> PendingReview:
        with self._reading("reading a review") as conn:
            return self._select_review(conn, review_id)

    def approve_review(self, review_id: str, *, by: str, note: str = "") -> PendingReview:
        """Release the held answer (``pending_text`` of the result) and complete the session."""
        return self._resolve(review_id, "approved", by=by, note=note)

    def reject_review(self, review_id: str, *, by: str, note: str = "") -> PendingReview:
        return self._resolve(review_id, "rejected", by=by, note=note)

    def _resolve(self, review_id: str, decision: Literal["approved", "rejected"], *, by: str,
                 note: str) -> PendingReview:
        check_resolver(by)
        with self._writing("resolving a review", durable=True) as conn:
            review = self._select_review(conn, review_id)
            if settled(review, decision, source=self.path):
                return review
            self._record_resolution(conn, review, decision, by=by, note=note, now=self._now())
            return self._select_review(conn, review_id)

    def _record_resolution(self, conn: sqlite3.Connection, review: PendingReview, decision: Decision, *,
                           by: str, note: str, now: str) -> None:
        conn.execute("UPDATE pending_reviews SET status = ?, resolved_at = ?, resolved_by = ?, note = ? "
                     "WHERE review_id = ?", (decision, now, by, note, review.review_id))
        # a session that moved on (a new request is running) is not completed or ended by an old review
        conn.execute("UPDATE sessions SET state = ?, updated_at = ? WHERE session_id = ? AND state = 'paused'",
                     (state_after(decision), now, review.session_id))
        event, ledger_payload = resolution_rows(review, decision, by=by, note=note)
        self._insert_timeline(conn, review.session_id, "review", event, now)
        self._insert_ledger(conn, "review_resolution", ledger_payload, now)

    def expire_reviews(self, older_than_s: float) -> Sequence[str]:
        """Mark pending reviews created more than ``older_than_s`` ago ``expired`` (their sessions end)."""
        if not (isinstance(older_than_s, int | float) and math.isfinite(older_than_s) and older_than_s >= 0):
            raise StoreError(f"older_than_s must be a finite number >= 0, got {older_than_s!r}",
                             field="older_than_s")
        moment = self._clock()
        now = format_timestamp(moment)
        cutoff = format_timestamp(moment - timedelta(seconds=older_than_s))
        due = "FROM pending_reviews WHERE status = 'pending' AND created_at < ?"
        # a read first: the common case (nothing due) never waits for another process's write lock
        with self._reading("expiring reviews") as conn:
            if not conn.execute(f"SELECT count(*) {due}", (cutoff,)).fetchone()[0]:
                return []
        with self._writing("expiring reviews", durable=True) as conn:
            rows = conn.execute(f"SELECT {_REVIEW_COLUMNS} {due} ORDER BY created_at, review_id",
                                (cutoff,)).fetchall()
            expired = [self._review(row) for row in rows]
            for review in expired:
                self._record_resolution(conn, review, "expired", by=EXPIRY_ACTOR,
                                        note=f"not resolved within {older_than_s:g} s", now=now)
        return [review.review_id for review in expired]

    # records

    @staticmethod
    def _insert_timeline(conn: sqlite3.Connection, session_id: str, kind: str, payload: Mapping[str, Any],
                         now: str) -> None:
        conn.execute(_INSERT_TIMELINE, (session_id, kind, canonical_json(payload, field="payload"), now))

    def append_timeline(self, session_id: str, kind: str, payload: Mapping[str, Any]) -> None:
        text = canonical_json(payload, field="payload")  # an unstorable payload is refused before the write lock
        self._write_one("appending a timeline row", _INSERT_TIMELINE, (session_id, kind, text, self._now()))

    def timeline(self, session_id: str) -> Sequence[TimelineRow]:
        with self._reading("reading the timeline") as conn:
            rows = conn.execute("SELECT row_id, session_id, kind, payload, created_at FROM timeline "
                                "WHERE session_id = ? ORDER BY row_id", (session_id,)).fetchall()
        return [TimelineRow(row_id=row[0], session_id=row[1], kind=row[2],
                            payload=self._load(row[3], "timeline payload"), created_at=row[4]) for row in rows]

    def _insert_ledger(self, conn: sqlite3.Connection, kind: str, payload_json: str, now: str) -> LedgerRow:
        """Chain a row onto the last one; the caller's IMMEDIATE transaction keeps concurrent appenders in line."""
        last = conn.execute("SELECT seq, row_hash FROM ledger ORDER BY seq DESC LIMIT 1").fetchone()
        seq, prev_hash = (last[0] + 1, last[1]) if last else (1, GENESIS_HASH)
        row_hash = ledger_row_hash_of_json(prev_hash, seq, kind, payload_json, now)
        conn.execute(f"INSERT INTO ledger ({_LEDGER_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
                     (seq, kind, payload_json, now, prev_hash, row_hash))
        conn.execute("UPDATE ledger_head SET seq = ?, row_hash = ? WHERE one = 1", (seq, row_hash))
        return LedgerRow(seq=seq, kind=kind, payload=self._load(payload_json, "ledger payload"), created_at=now,
                         prev_hash=prev_hash, row_hash=row_hash)

    def append_ledger(self, kind: str, payload: Mapping[str, Any]) -> LedgerRow:
        if _NUL in kind:  # the verifier would call the row tampered: refuse it here, before anything is written
            raise StoreError("a ledger kind cannot hold a NUL character", field="kind")
        payload_json = canonical_json(payload, field="payload")
        with self._writing("appending a ledger row") as conn:
            return self._insert_ledger(conn, kind, payload_json, self._now())

    def _ledger_rows(self, conn: sqlite3.Connection) -> Iterator[LedgerRow]:
        """The rows in ``seq`` order, each read as strictly as it was written: a column of the wrong type (a BLOB
        kind), text that is not UTF-8 (a lone surrogate), a payload that is not strict JSON (a repeated key — which
        SQLite's ``json_extract`` would read first-wins — NaN, deep nesting) or not in canonical form is tampering
        (nothing verigate writes looks like that), so no two readers can see two different rows."""
        cursor = conn.execute(f"SELECT {_LEDGER_COLUMNS_AS_BYTES} FROM ledger ORDER BY seq")
        columns = len(_LEDGER_TEXT_COLUMNS)
        for raw in cursor:
            seq, storage, values = raw[0], raw[1:1 + columns], raw[1 + columns:]
            where = f"seq {seq}"
            if not isinstance(seq, int) or any(kind != "text" for kind in storage):
                raise LedgerTamperedError("a column holds a value of the wrong type", source=self.path, field=where)
            try:
                kind, payload, created_at, prev_hash, row_hash = (value.decode("utf-8") for value in values)
            except UnicodeDecodeError as exc:
                raise LedgerTamperedError(f"a column is not UTF-8 text ({exc.reason})", source=self.path,
                                          field=where) from None
            if _NUL in kind or _NUL in created_at or not all(_HASH.fullmatch(text) for text in (prev_hash, row_hash)):
                raise LedgerTamperedError("a column holds a NUL or a malformed hash", source=self.path, field=where)
            try:
                loaded = strict_json.loads(payload)
            except strict_json.StrictJSONError as exc:
                raise LedgerTamperedError(f"payload is not strict JSON ({exc.message})", source=self.path,
                                          field=where) from None
            if not isinstance(loaded, dict) or canonical_json(loaded) != payload:
                raise LedgerTamperedError("payload is not the canonical JSON of an object", source=self.path,
                                          field=where)
            yield LedgerRow(seq=seq, kind=kind, payload=loaded, created_at=created_at, prev_hash=prev_hash,
                            row_hash=row_hash)

    def ledger(self) -> Sequence[LedgerRow]:
        with self._reading("reading the ledger") as conn:
            return list(self._ledger_rows(conn))

    def verify_ledger(self) -> int:
        """Re-hash the chain and check it against the recorded head; raise naming the first bad ``seq``."""
        with self._reading("verifying the ledger") as conn:
            # one read transaction: a concurrent append cannot slip in between the head and the rows
            conn.execute("BEGIN")
            try:
                head = conn.execute("SELECT seq, row_hash FROM ledger_head WHERE one = 1").fetchone()
                if head is None:
                    raise LedgerTamperedError("the recorded ledger head is missing", source=self.path,
                                              field="ledger_head")
                return verify_chain(self._ledger_rows(conn), source=self.path, head=(head[0], head[1]))
            finally:
                conn.execute("ROLLBACK")

    # the judge-call cache

    def cached_verdict(self, key: str) -> Mapping[str, Any] | None:
        """The unexpired entry under ``key`` (read strictly: a damaged one is a StoreError), else None."""
        check_cache_key(key)
        with self._reading("reading the judge cache") as conn:
            row = conn.execute("SELECT entry FROM judge_cache WHERE cache_key = ? AND expires_at > ?",
                               (key, self._now())).fetchone()
        if row is None:
            return None
        return read_cache_entry(row[0], source=self.path)

    def cache_verdict(self, key: str, verdict: Mapping[str, Any], ttl_s: float) -> None:
        """Store or replace the entry; expired entries are dropped in the same transaction (the TTL bounds the
        table)."""
        check_cache_key(key)
        entry = cache_entry_text(verdict, ttl_s)
        with self._writing("writing the judge cache") as conn:
            moment = self._clock()
            now = format_timestamp(moment)
            conn.execute("DELETE FROM judge_cache WHERE expires_at <= ?", (now,))
            conn.execute("INSERT OR REPLACE INTO judge_cache (cache_key, entry, created_at, expires_at) "
                         "VALUES (?, ?, ?, ?)",
                         (key, entry, now, format_timestamp(moment + timedelta(seconds=ttl_s))))

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                conn, self._conn = self._conn, None
                try:
                    conn.close()
                except sqlite3.Error as exc:
                    raise self._error(exc, "closing the store") from exc

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SqliteStore({self.path!r})"


def sqlite_path(url: str) -> str:
    """A file path, ``:memory:``, or a SQLAlchemy-style ``sqlite:///relative`` / ``sqlite:////absolute`` URL."""
    if url in (MEMORY, "sqlite://", "sqlite:///" + MEMORY):
        return MEMORY
    if url.startswith("sqlite:///"):
        path = url[len("sqlite:///"):]
    elif url.startswith("sqlite:"):
        raise StoreError("a SQLite URL is sqlite:///relative/path or sqlite:////absolute/path", source=url)
    else:
        path = url
    if not path:
        raise StoreError("the store URL names no file", source=url)
    return str(Path(path).expanduser())
