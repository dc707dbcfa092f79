"""The PostgreSQL schema as forward-only migrations; the row of ``verigate_schema`` is the applied version.

Every table is named ``verigate_…`` and created in the first schema of the role's ``search_path``, so a database
shared with an application keeps its own tables apart. Text columns compare with the ``C`` collation: timestamps
and ids order byte-wise, as they do in SQLite, whatever the database's locale. Payloads are ``text`` holding
canonical JSON, never ``jsonb``, which would rewrite the text the ledger hashes.
"""

from __future__ import annotations

from verigate.store import GENESIS_HASH

__all__ = ["MIGRATIONS", "NOTIFY_CHANNEL", "SCHEMA_VERSION", "VERSION_TABLE"]

VERSION_TABLE = "verigate_schema"
#: the channel a new pending review is announced on (payload: its review id)
NOTIFY_CHANNEL = "verigate_reviews"

_C = 'COLLATE "C"'

#: MIGRATIONS[n] takes a store from version n to n + 1; released entries are never edited, only appended
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        f"""CREATE TABLE verigate_sessions (
            session_id text {_C} PRIMARY KEY,
            state text NOT NULL CHECK (state IN ('running', 'completed', 'paused', 'ended')),
            attempt bigint NOT NULL DEFAULT 0 CHECK (attempt >= 0),
            follow_up text NOT NULL DEFAULT '',
            created_at text {_C} NOT NULL,
            updated_at text {_C} NOT NULL
        )""",
        f"""CREATE TABLE verigate_attempts (
            session_id text {_C} NOT NULL,
            attempt bigint NOT NULL CHECK (attempt >= 0),
            candidate text NOT NULL,
            created_at text {_C} NOT NULL,
            PRIMARY KEY (session_id, attempt)
        )""",
        f"""CREATE TABLE verigate_checkpoints (
            checkpoint_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            session_id text {_C} NOT NULL,
            payload text NOT NULL,
            created_at text {_C} NOT NULL
        )""",
        "CREATE INDEX verigate_checkpoints_by_session ON verigate_checkpoints (session_id, checkpoint_id)",
        f"""CREATE TABLE verigate_reviews (
            review_id text {_C} PRIMARY KEY,
            session_id text {_C} NOT NULL,
            status text NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'expired')),
            policy_action text NOT NULL,
            reason text NOT NULL,
            pending_text text NOT NULL,
            candidate text NOT NULL,
            verdict text,
            created_at text {_C} NOT NULL,
            resolved_at text {_C},
            resolved_by text,
            note text NOT NULL DEFAULT ''
        )""",
        "CREATE INDEX verigate_reviews_by_status ON verigate_reviews (status, created_at)",
        f"""CREATE TABLE verigate_timeline (
            row_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            session_id text {_C} NOT NULL,
            kind text NOT NULL,
            payload text NOT NULL,
            created_at text {_C} NOT NULL
        )""",
        "CREATE INDEX verigate_timeline_by_session ON verigate_timeline (session_id, row_id)",
        f"""CREATE TABLE verigate_ledger (
            seq bigint PRIMARY KEY CHECK (seq >= 1),
            kind text NOT NULL,
            payload text NOT NULL,
            created_at text {_C} NOT NULL,
            prev_hash text NOT NULL,
            row_hash text NOT NULL
        )""",
        # the last appended row as the store saw it: catches rows cut off the end, which the chain cannot; its row
        # lock is what serializes appenders on every host
        """CREATE TABLE verigate_ledger_head (
            one integer PRIMARY KEY CHECK (one = 1),
            seq bigint NOT NULL,
            row_hash text NOT NULL
        )""",
        f"INSERT INTO verigate_ledger_head (one, seq, row_hash) VALUES (1, 0, '{GENESIS_HASH}')",
        # append-only against accidents; deliberate tampering (dropping these) is what the hash chain catches
        """CREATE FUNCTION verigate_ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS
           $$ BEGIN RAISE EXCEPTION 'the ledger is append-only'; END $$""",
        """CREATE TRIGGER verigate_ledger_no_change BEFORE UPDATE OR DELETE ON verigate_ledger
           FOR EACH ROW EXECUTE FUNCTION verigate_ledger_append_only()""",
        """CREATE TRIGGER verigate_ledger_no_truncate BEFORE TRUNCATE ON verigate_ledger
           FOR EACH STATEMENT EXECUTE FUNCTION verigate_ledger_append_only()""",
        # the judge-call cache (cached_verdict / cache_verdict): one verdict per request key until it expires
        f"""CREATE TABLE verigate_judge_cache (
            cache_key text {_C} PRIMARY KEY,
            entry text NOT NULL,
            created_at text {_C} NOT NULL,
            expires_at text {_C} NOT NULL
        )""",
        "CREATE INDEX verigate_judge_cache_by_expiry ON verigate_judge_cache (expires_at)",
    ),
)

SCHEMA_VERSION = len(MIGRATIONS)
