"""The SQLite schema as forward-only migrations; ``PRAGMA user_version`` is the applied version."""

from __future__ import annotations

from ._chain import GENESIS_HASH

__all__ = ["MIGRATIONS", "SCHEMA_VERSION"]

#: MIGRATIONS[n] takes a store from version n to n + 1; released entries are never edited, only appended
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE sessions (
            session_id TEXT PRIMARY KEY,
            state TEXT NOT NULL CHECK (state IN ('running', 'completed', 'paused', 'ended')),
            attempt INTEGER NOT NULL DEFAULT 0 CHECK (attempt >= 0),
            follow_up TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )""",
        """CREATE TABLE attempts (
            session_id TEXT NOT NULL,
            attempt INTEGER NOT NULL CHECK (attempt >= 0),
            candidate TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (session_id, attempt)
        )""",
        """CREATE TABLE checkpoints (
            checkpoint_id INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL,
            payload TEXT NOT NULL,
            created_at TEXT NOT NULL
        )""",
        "CREATE INDEX checkpoints_by_session ON checkpoints (session_id, checkpoint_id)",
        """CREATE TABLE pending_reviews (
            review_id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'expired')),
            policy_action TEXT NOT NULL,
            reason TEXT NOT NULL,
            pending_text TEXT NOT NULL,
            candidate TEXT NOT NULL,
            verdict TEXT,
            created_at TEXT NOT NULL,
            resolved_at TEXT,
            resolved_by TEXT,
            note TEXT NOT NULL DEFAULT ''
        )""",
        "CREATE INDEX pending_reviews_by_status ON pending_reviews (status, created_at)",
        """CREATE TABLE timeline (
            row_id INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            payload TEXT NOT NULL,
            created_at TEXT NOT NULL
        )""",
        "CREATE INDEX timeline_by_session ON timeline (session_id, row_id)",
        """CREATE TABLE ledger (
            seq INTEGER PRIMARY KEY CHECK (seq >= 1),
            kind TEXT NOT NULL,
            payload TEXT NOT NULL,
            created_at TEXT NOT NULL,
            prev_hash TEXT NOT NULL,
            row_hash TEXT NOT NULL
        )""",
        # the last appended row as the store saw it: catches rows cut off the end, which the chain cannot
        """CREATE TABLE ledger_head (
            one INTEGER PRIMARY KEY CHECK (one = 1),
            seq INTEGER NOT NULL,
            row_hash TEXT NOT NULL
        )""",
        f"INSERT INTO ledger_head (one, seq, row_hash) VALUES (1, 0, '{GENESIS_HASH}')",
        # append-only against accidents; deliberate tampering (dropping these) is what the hash chain catches
        """CREATE TRIGGER ledger_no_update BEFORE UPDATE ON ledger
           BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END""",
        """CREATE TRIGGER ledger_no_delete BEFORE DELETE ON ledger
           BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END""",
    ),
    (
        # the judge-call cache: one entry per key (sha256 hex), gone once expires_at has passed
        """CREATE TABLE judge_cache (
            cache_key TEXT PRIMARY KEY,
            entry TEXT NOT NULL,
            created_at TEXT NOT NULL,
            expires_at TEXT NOT NULL
        )""",
        "CREATE INDEX judge_cache_by_expiry ON judge_cache (expires_at)",
    ),
)

SCHEMA_VERSION = len(MIGRATIONS)
