"""The :class:`verigate.store.Store` protocol on PostgreSQL, with the semantics of verigate's SQLite store.

One module past 400 lines on purpose, as verigate's ``_sqlite`` is: every method is one transaction over the same
pool and schema (sessions, attempts, reviews and the ledger rows they append); split, each part would need the
others' private helpers. The pool, retries and error mapping live in ``_connection``, the hash chain in
``verigate.store`` (the same hashing as SQLite, so one verifier reads both).

Concurrency across workers and hosts: read-then-write steps take row locks — the review row (``FOR UPDATE``) when
resolving, so one decision wins and the other sees it; the ledger head row when appending, so the chain is
extended by one worker at a time and ``verify_ledger`` holds with any number of writers.
"""

from __future__ import annotations

import logging
import math
import re
import threading
import uuid
from collections.abc import Mapping, Sequence
from datetime import timedelta
from types import TracebackType
from typing import Any, Literal

import psycopg

from verigate import LedgerTamperedError, ReviewError, StoreError, StrictJSONError, strict_loads
from verigate.store import (
    Clock,
    Decision,
    LedgerRow,
    PendingReview,
    ReviewStatus,
    SessionRecord,
    TimelineRow,
    cache_entry_text,
    canonical_json,
    check_cache_key,
    check_resolver,
    ledger_row_hash_of_json,
    read_cache_entry,
    resolution_rows,
    settled,
    state_after,
    verify_chain,
)

# the one timestamp format of every store (fixed width, so text order is time order); same repository, same release
from verigate.store._clock import format_timestamp, utc_now

from ._connection import Connector
from ._listen import Listener
from ._schema import MIGRATIONS, NOTIFY_CHANNEL, SCHEMA_VERSION, VERSION_TABLE

__all__ = ["EXPIRY_ACTOR", "PostgresStore"]

#: ``resolved_by`` of reviews the store expired itself (as in the SQLite store)
EXPIRY_ACTOR = "verigate:expiry"
log = logging.getLogger("verigate.store")

_REVIEW_COLUMNS = ("review_id, session_id, status, policy_action, reason, pending_text, candidate, verdict, "
                   "created_at, resolved_at, resolved_by, note")
_LEDGER_COLUMNS = "seq, kind, payload, created_at, prev_hash, row_hash"
_HASH = re.compile(r"[0-9a-f]{64}")
#: one arbitrary constant: the advisory lock that serializes migrations of one database
_MIGRATION_LOCK = 0x76657269_67617465 & 0x7FFF_FFFF_FFFF_FFFF
Conn = psycopg.Connection[Any]




def _finite(value: object, name: str) -> float:
    if not (isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value >= 0):
        raise StoreError(f"{name} must be a finite number >= 0, got {value!r}", field=name)
    return float(value)


class PostgresStore:
    """The Store protocol on a PostgreSQL database named by a ``postgresql://`` URL.

    ``lock_timeout_s`` bounds every wait: a connection from the pool, a row lock, a statement (the server's
    ``statement_timeout`` and ``lock_timeout``), the retries after a lost connection. ``clock`` returns an aware
    datetime (tests inject one to drive expiry). ``create=False`` refuses a database holding no store yet; with
    ``create=True`` a missing or older schema is migrated when the role may create tables, and otherwise a
    :class:`StoreError` says to run ``verigate store migrate``. One instance may be shared by threads; each
    process opens its own. Every commit is durable as the server is configured (``synchronous_commit``).
    """

    def __init__(self, url: str, *, lock_timeout_s: float = 30.0, clock: Clock | None = None, create: bool = True,
                 min_size: int = 1, max_size: int = 4) -> None:
        self._connector = Connector(url, lock_timeout_s=lock_timeout_s, min_size=min_size, max_size=max_size)
        self.url = self._connector.source  # never the password
        self.lock_timeout_s = self._connector.lock_timeout_s
        self._clock: Clock = clock or utc_now
        self._listener = Listener(self._connector, NOTIFY_CHANNEL)
        self._lock = threading.Lock()
        self._closed = False
        conn = self._connector.connect()
        try:
            self._check_database(conn)
            version = self._version(conn)
            if version is None and not create:
                raise StoreError("no store in this database (nothing has been recorded yet)", source=self.url)
            if version != SCHEMA_VERSION:
                self._migrate(conn)
        except psycopg.Error as exc:
            raise self._connector.error(exc, "opening the store") from None
        finally:
            conn.close()
        self._connector.open_pool()

    # schema

    def _check_database(self, conn: Conn) -> None:
        encoding = conn.execute("SHOW server_encoding").fetchone()
        if encoding is None or str(encoding[0]).upper() not in ("UTF8", "UTF-8"):
            raise StoreError(f"the database's encoding is {encoding and encoding[0]!r}, not UTF8: it could not hold "
                             "every text verigate stores exactly", source=self.url)

    def _version(self, conn: Conn) -> int | None:
        """The applied schema version, None for a database holding no verigate store; refuses a newer one."""
        # pg_tables, not to_regclass: a plain snapshot sees tables another migrator committed while this one
        # waited for the migration lock (the catalog cache may not have caught up yet)
        tables = {row[0] for row in conn.execute(
            "SELECT tablename FROM pg_catalog.pg_tables WHERE tablename LIKE 'verigate\\_%%' "
            "AND schemaname = current_schema()")}
        if VERSION_TABLE not in tables:
            if tables:
                raise StoreError("the schema holds verigate_… tables but no verigate schema version: not a store "
                                 "this verigate made; it was left untouched", source=self.url)
            return None
        row = conn.execute(f"SELECT version FROM {VERSION_TABLE} WHERE one = 1").fetchone()
        version = 0 if row is None else int(row[0])
        if version > SCHEMA_VERSION:
            raise StoreError(f"the store has schema version {version}, newer than this verigate understands "
                             f"({SCHEMA_VERSION}); upgrade verigate-agents-postgres to use it", source=self.url)
        return version

    def _migrate(self, conn: Conn) -> int:
        try:
            with conn.transaction():
                # concurrent first uses: one migrates, the others wait here and then find nothing to do
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
                version = self._version(conn)
                if version is None:
                    conn.execute(f"CREATE TABLE {VERSION_TABLE} (one integer PRIMARY KEY CHECK (one = 1), "
                                 "version integer NOT NULL)")
                    conn.execute(f"INSERT INTO {VERSION_TABLE} (one, version) VALUES (1, 0)")
                    version = 0
                if version < SCHEMA_VERSION:  # a current schema is left alone: any role may "migrate" it
                    for statements in MIGRATIONS[version:]:
                        for statement in statements:
                            conn.execute(statement)
                    conn.execute(f"UPDATE {VERSION_TABLE} SET version = %s WHERE one = 1", (SCHEMA_VERSION,))
        except psycopg.errors.InsufficientPrivilege as exc:
            raise StoreError(f"the store's schema needs migrating and this role may not create tables ({exc}); run "
                             "`verigate store migrate` with a role that may", source=self.url) from None
        if version < SCHEMA_VERSION:
            log.info("store %s migrated from schema version %d to %d", self.url, version, SCHEMA_VERSION)
        return SCHEMA_VERSION

    def migrate(self) -> int:
        """Apply pending migrations (none: nothing happens) and return the schema version now in force."""
        self._open()
        conn = self._connector.connect()
        try:
            return self._migrate(conn)
        except psycopg.Error as exc:
            raise self._connector.error(exc, "migrating the store") from None
        finally:
            conn.close()

    # helpers

    def _open(self) -> None:
        if self._closed:
            raise StoreError("the store is closed", source=self.url)

    def _now(self) -> str:
        return format_timestamp(self._clock())

    def _load(self, text: str, what: str) -> Any:
        try:
            return strict_loads(text)
        except StrictJSONError as exc:
            raise StoreError(f"stored {what} is not strict JSON: {exc.message}", source=self.url) from None

    # sessions and attempts

    def get_session(self, session_id: str) -> SessionRecord | None:
        row = self._connector.run("reading a session", lambda conn: conn.execute(
            "SELECT session_id, state, attempt, created_at, updated_at, follow_up FROM verigate_sessions "
            "WHERE session_id = %s", (session_id,)).fetchone(), transaction=False)
        if row is None:
            return None
        return SessionRecord(session_id=row[0], state=row[1], attempt=row[2], created_at=row[3], updated_at=row[4],
                             follow_up=row[5])

    @staticmethod
    def _upsert_session(conn: Conn, session_id: str, now: str, *, state: str, attempt: int | None = None,
                        follow_up: str | None = None) -> None:
        """Create the session or update it; ``None`` leaves a column as it is."""
        conn.execute(
            "INSERT INTO verigate_sessions AS s (session_id, state, attempt, follow_up, created_at, updated_at) "
            "VALUES (%(id)s, %(state)s, coalesce(%(attempt)s::bigint, 0), coalesce(%(follow_up)s::text, ''), "
            "%(now)s, %(now)s) ON CONFLICT (session_id) DO UPDATE SET state = EXCLUDED.state, "
            "attempt = coalesce(%(attempt)s::bigint, s.attempt), follow_up = coalesce(%(follow_up)s::text, "
            "s.follow_up), updated_at = EXCLUDED.updated_at",
            {"id": session_id, "state": state, "attempt": attempt, "follow_up": follow_up, "now": now})

    def begin_attempt(self, session_id: str, attempt: int, candidate: Mapping[str, Any]) -> None:
        """Store this attempt's candidate; the session is running at this attempt (the follow-up stays)."""
        payload = canonical_json(candidate, field="candidate")

        def work(conn: Conn) -> None:
            now = self._now()
            self._upsert_session(conn, session_id, now, state="running", attempt=attempt)
            conn.execute("INSERT INTO verigate_attempts (session_id, attempt, candidate, created_at) "
                         "VALUES (%s, %s, %s, %s) ON CONFLICT (session_id, attempt) DO UPDATE SET "
                         "candidate = EXCLUDED.candidate, created_at = EXCLUDED.created_at",
                         (session_id, attempt, payload, now))

        self._connector.run("beginning an attempt", work)

    def attempts(self, session_id: str) -> Sequence[Mapping[str, Any]]:
        rows = self._connector.run("reading attempts", lambda conn: conn.execute(
            "SELECT candidate FROM verigate_attempts WHERE session_id = %s ORDER BY attempt",
            (session_id,)).fetchall(), transaction=False)
        return [self._load(row[0], "candidate") for row in rows]

    def set_revise(self, session_id: str, next_attempt: int, follow_up: str) -> None:
        self._connector.run("recording a revise", lambda conn: self._upsert_session(
            conn, session_id, self._now(), state="running", attempt=next_attempt, follow_up=follow_up))

    def set_session_state(self, session_id: str, state: str) -> None:
        self._connector.run("setting the session state", lambda conn: self._upsert_session(
            conn, session_id, self._now(), state=state))

    def reset_request(self, session_id: str) -> None:
        def work(conn: Conn) -> None:
            self._upsert_session(conn, session_id, self._now(), state="running", attempt=0, follow_up="")
            conn.execute("DELETE FROM verigate_attempts WHERE session_id = %s", (session_id,))

        self._connector.run("starting a new request", work)

    # checkpoints

    def save_checkpoint(self, session_id: str, payload: Mapping[str, Any]) -> None:
        text = canonical_json(payload, field="checkpoint")
        self._connector.run("saving a checkpoint", lambda conn: conn.execute(
            "INSERT INTO verigate_checkpoints (session_id, payload, created_at) VALUES (%s, %s, %s)",
            (session_id, text, self._now())))

    def latest_checkpoint(self, session_id: str) -> Mapping[str, Any] | None:
        row = self._connector.run("reading a checkpoint", lambda conn: conn.execute(
            "SELECT payload FROM verigate_checkpoints WHERE session_id = %s ORDER BY checkpoint_id DESC LIMIT 1",
            (session_id,)).fetchone(), transaction=False)
        return None if row is None else self._load(row[0], "checkpoint")

    # pending reviews

    def create_pending_review(self, session_id: str, *, policy_action: str, reason: str, pending_text: str,
                              candidate: Mapping[str, Any], verdict: Mapping[str, Any] | None) -> str:
        """Store the review and announce it (``NOTIFY verigate_reviews``) in the same transaction."""
        candidate_text = canonical_json(candidate, field="candidate")
        verdict_text = None if verdict is None else canonical_json(verdict, field="verdict")
        review_id = "rv_" + uuid.uuid4().hex

        def work(conn: Conn) -> None:
            now = self._now()
            self._upsert_session(conn, session_id, now, state="paused")
            conn.execute(f"INSERT INTO verigate_reviews ({_REVIEW_COLUMNS}) "
                         "VALUES (%s, %s, 'pending', %s, %s, %s, %s, %s, %s, NULL, NULL, '')",
                         (review_id, session_id, policy_action, reason, pending_text, candidate_text, verdict_text,
                          now))
            # delivered on commit only: a listener never hears of a review that was rolled back
            conn.execute("SELECT pg_notify(%s, %s)", (NOTIFY_CHANNEL, review_id))

        # the same review id on a retry: a second attempt after a lost connection cannot file it twice
        self._connector.run("creating a pending review", work)
        return review_id

    def _review(self, row: Sequence[Any]) -> PendingReview:
        return PendingReview(
            review_id=row[0], session_id=row[1], status=row[2], policy_action=row[3], reason=row[4],
            pending_text=row[5], candidate=self._load(row[6], "candidate"),
            verdict=None if row[7] is None else self._load(row[7], "verdict"),
            created_at=row[8], resolved_at=row[9], resolved_by=row[10], note=row[11])

    def list_reviews(self, status: ReviewStatus | None = None) -> Sequence[PendingReview]:
        """Reviews oldest first; ``status=None`` lists every status."""
        rows = self._connector.run("listing reviews", lambda conn: conn.execute(
            f"SELECT {_REVIEW_COLUMNS} FROM verigate_reviews WHERE %(status)s::text IS NULL OR status = %(status)s "
            "ORDER BY created_at, review_id", {"status": status}).fetchall(), transaction=False)
        return [self._review(row) for row in rows]

    def _select_review(self, conn: Conn, review_id: str, *, lock: bool = False) -> PendingReview:
        row = conn.execute(f"SELECT {_REVIEW_COLUMNS} FROM verigate_reviews WHERE review_id = %s"
                           + (" FOR UPDATE" if lock else ""), (review_id,)).fetchone()
        if row is None:
            raise ReviewError(f"no review with id {review_id!r}", source=self.url, field="review_id")
        return self._review(row)

    def get_review(self, review_id: str) -> PendingReview:
        return self._connector.run("reading a review", lambda conn: self._select_review(conn, review_id),
                                   transaction=False)

    def approve_review(self, review_id: str, *, by: str, note: str = "") -> PendingReview:
        """Release the held answer (``pending_text`` of the result) and complete the session."""
        return self._resolve(review_id, "approved", by=by, note=note)

    def reject_review(self, review_id: str, *, by: str, note: str = "") -> PendingReview:
        return self._resolve(review_id, "rejected", by=by, note=note)

    def _resolve(self, review_id: str, decision: Literal["approved", "rejected"], *, by: str,
                 note: str) -> PendingReview:
        check_resolver(by)

        def work(conn: Conn) -> PendingReview:
            # the row lock: a racing resolver waits here and then reads the decision that won
            review = self._select_review(conn, review_id, lock=True)
            if settled(review, decision, source=self.url):
                return review
            self._record_resolution(conn, review, decision, by=by, note=note, now=self._now())
            return self._select_review(conn, review_id)

        return self._connector.run("resolving a review", work)

    def _record_resolution(self, conn: Conn, review: PendingReview, decision: Decision, *, by: str, note: str,
                           now: str) -> None:
        conn.execute("UPDATE verigate_reviews SET status = %s, resolved_at = %s, resolved_by = %s, note = %s "
                     "WHERE review_id = %s", (decision, now, by, note, review.review_id))
        # a session that moved on (a new request is running) is not completed or ended by an old review
        conn.execute("UPDATE verigate_sessions SET state = %s, updated_at = %s WHERE session_id = %s "
                     "AND state = 'paused'", (state_after(decision), now, review.session_id))
        event, ledger_payload = resolution_rows(review, decision, by=by, note=note)
        self._insert_timeline(conn, review.session_id, "review", event, now)
        self._insert_ledger(conn, "review_resolution", ledger_payload, now)

    def expire_reviews(self, older_than_s: float) -> Sequence[str]:
        """Mark pending reviews created more than ``older_than_s`` ago ``expired`` (their sessions end)."""
        age = _finite(older_than_s, "older_than_s")
        moment = self._clock()
        now = format_timestamp(moment)
        cutoff = format_timestamp(moment - timedelta(seconds=age))
        due = "FROM verigate_reviews WHERE status = 'pending' AND created_at < %s"
        # a read first: the common case (nothing due) takes no lock at all
        count = self._connector.run("expiring reviews", lambda conn: conn.execute(
            f"SELECT count(*) {due}", (cutoff,)).fetchone(), transaction=False)
        if not (count and count[0]):
            return []

        def work(conn: Conn) -> list[str]:
            # locked in one order by every expirer; a review resolved meanwhile no longer matches and is skipped
            rows = conn.execute(f"SELECT {_REVIEW_COLUMNS} {due} ORDER BY created_at, review_id FOR UPDATE",
                                (cutoff,)).fetchall()
            expired = [self._review(row) for row in rows]
            for review in expired:
                self._record_resolution(conn, review, "expired", by=EXPIRY_ACTOR,
                                        note=f"not resolved within {older_than_s:g} s", now=now)
            return [review.review_id for review in expired]

        return self._connector.run("expiring reviews", work)

    def wait_for_reviews(self, timeout_s: float) -> None:
        """Block until a new pending review may exist (``LISTEN verigate_reviews``) or ``timeout_s`` passed."""
        self._open()
        self._listener.wait(_finite(timeout_s, "timeout_s"))

    # the judge-call cache

    def cached_verdict(self, key: str) -> Mapping[str, Any] | None:
        """The unexpired entry under ``key`` (read strictly: a damaged one is a StoreError), else None."""
        check_cache_key(key)
        row = self._connector.run("reading the judge cache", lambda conn: conn.execute(
            "SELECT entry FROM verigate_judge_cache WHERE cache_key = %s AND expires_at > %s",
            (key, self._now())).fetchone(), transaction=False)
        if row is None:
            return None
        return read_cache_entry(row[0], source=self.url)

    def cache_verdict(self, key: str, verdict: Mapping[str, Any], ttl_s: float) -> None:
        """Store or replace the entry; expired entries are dropped in the same transaction (the TTL bounds the
        table)."""
        check_cache_key(key)
        entry = cache_entry_text(verdict, ttl_s)

        def work(conn: Conn) -> None:
            moment = self._clock()
            now = format_timestamp(moment)
            conn.execute("DELETE FROM verigate_judge_cache WHERE expires_at <= %s", (now,))
            conn.execute("INSERT INTO verigate_judge_cache (cache_key, entry, created_at, expires_at) "
                         "VALUES (%s, %s, %s, %s) ON CONFLICT (cache_key) DO UPDATE SET entry = EXCLUDED.entry, "
                         "created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at",
                         (key, entry, now, format_timestamp(moment + timedelta(seconds=ttl_s))))

        self._connector.run("writing the judge cache", work)

    # records

    @staticmethod
    def _insert_timeline(conn: Conn, session_id: str, kind: str, payload: Mapping[str, Any], now: str) -> None:
        conn.execute("INSERT INTO verigate_timeline (session_id, kind, payload, created_at) VALUES (%s, %s, %s, %s)",
                     (session_id, kind, canonical_json(payload, field="payload"), now))

    def append_timeline(self, session_id: str, kind: str, payload: Mapping[str, Any]) -> None:
        canonical_json(payload, field="payload")  # refuse an unstorable payload before connecting
        self._connector.run("appending a timeline row", lambda conn: self._insert_timeline(
            conn, session_id, kind, payload, self._now()))

    def timeline(self, session_id: str) -> Sequence[TimelineRow]:
        rows = self._connector.run("reading the timeline", lambda conn: conn.execute(
            "SELECT row_id, session_id, kind, payload, created_at FROM verigate_timeline WHERE session_id = %s "
            "ORDER BY row_id", (session_id,)).fetchall(), transaction=False)
        return [TimelineRow(row_id=row[0], session_id=row[1], kind=row[2],
                            payload=self._load(row[3], "timeline payload"), created_at=row[4]) for row in rows]

    def _insert_ledger(self, conn: Conn, kind: str, payload_json: str, now: str) -> LedgerRow:
        """Chain a row onto the last one. The head row's lock makes appenders of every worker take turns; it is
        held to the commit, so the next appender reads this row as the last one."""
        conn.execute("SELECT seq FROM verigate_ledger_head WHERE one = 1 FOR UPDATE")
        last = conn.execute("SELECT seq, row_hash FROM verigate_ledger ORDER BY seq DESC LIMIT 1").fetchone()
        seq, prev_hash = (int(last[0]) + 1, str(last[1])) if last else (1, "0" * 64)
        row_hash = ledger_row_hash_of_json(prev_hash, seq, kind, payload_json, now)
        conn.execute(f"INSERT INTO verigate_ledger ({_LEDGER_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s)",
                     (seq, kind, payload_json, now, prev_hash, row_hash))
        conn.execute("UPDATE verigate_ledger_head SET seq = %s, row_hash = %s WHERE one = 1", (seq, row_hash))
        return LedgerRow(seq=seq, kind=kind, payload=self._load(payload_json, "ledger payload"), created_at=now,
                         prev_hash=prev_hash, row_hash=row_hash)

    def append_ledger(self, kind: str, payload: Mapping[str, Any]) -> LedgerRow:
        if "\x00" in kind:  # PostgreSQL text cannot hold it; refused before anything is written, as SQLite does
            raise StoreError("a ledger kind cannot hold a NUL character", field="kind")
        payload_json = canonical_json(payload, field="payload")
        return self._connector.run("appending a ledger row",
                                   lambda conn: self._insert_ledger(conn, kind, payload_json, self._now()))

    def _ledger_rows(self, conn: Conn) -> list[LedgerRow]:
        """The rows in ``seq`` order, each read as strictly as it was written: a column of another type, a
        malformed hash, a payload that is not strict JSON or not in canonical form is tampering (nothing verigate
        writes looks like that), so no two readers can see two different rows."""
        rows = []
        for raw in conn.execute(f"SELECT {_LEDGER_COLUMNS} FROM verigate_ledger ORDER BY seq"):
            seq, kind, payload, created_at, prev_hash, row_hash = raw
            where = f"seq {seq}"
            if not isinstance(seq, int) or not all(isinstance(text, str) for text in raw[1:]):
                raise LedgerTamperedError("a column holds a value of the wrong type", source=self.url, field=where)
            if not all(_HASH.fullmatch(text) for text in (prev_hash, row_hash)):
                raise LedgerTamperedError("a column holds a malformed hash", source=self.url, field=where)
            try:
                loaded = strict_loads(payload)
            except StrictJSONError as exc:
                raise LedgerTamperedError(f"payload is not strict JSON ({exc.message})", source=self.url,
                                          field=where) from None
            if not isinstance(loaded, dict) or canonical_json(loaded) != payload:
                raise LedgerTamperedError("payload is not the canonical JSON of an object", source=self.url,
                                          field=where)
            rows.append(LedgerRow(seq=seq, kind=kind, payload=loaded, created_at=created_at, prev_hash=prev_hash,
                                  row_hash=row_hash))
        return rows

    def ledger(self) -> Sequence[LedgerRow]:
        return self._connector.run("reading the ledger", self._ledger_rows, transaction=False)

    def verify_ledger(self) -> int:
        """Re-hash what is stored and check it against the recorded head; raise naming the first bad ``seq``."""
        def work(conn: Conn) -> tuple[tuple[int, str] | None, list[LedgerRow]]:
            # one snapshot: a concurrent append cannot slip in between the head and the rows
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            head = conn.execute("SELECT seq, row_hash FROM verigate_ledger_head WHERE one = 1").fetchone()
            return (None if head is None else (int(head[0]), str(head[1]))), self._ledger_rows(conn)

        head, rows = self._connector.run("verifying the ledger", work)
        if head is None:
            raise LedgerTamperedError("the recorded ledger head is missing", source=self.url, field="ledger_head")
        return verify_chain(rows, source=self.url, head=head)

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._listener.close()
        self._connector.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PostgresStore({self.url!r})"
