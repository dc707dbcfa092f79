"""The PostgreSQL store against a real server: migrations, roles, a server that is down, dead pooled connections,
driver errors mapped to StoreError and never a password in a message."""

from __future__ import annotations

import secrets
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg
import pytest
from verigate_postgres import SCHEMA_VERSION, PostgresStore

from postgres_server import Server
from verigate import StoreError
from verigate.store import Store


def _version(server: Server, schema: str) -> int:
    with server.admin() as conn:
        row = conn.execute(f"SELECT version FROM {schema}.verigate_schema").fetchone()
    assert row is not None
    return int(row[0])


def test_implements_the_store_protocol(pg_url: str) -> None:
    with PostgresStore(pg_url, lock_timeout_s=5) as store:
        assert isinstance(store, Store)


def test_first_use_migrates_and_migrate_is_idempotent(pg_server: Server) -> None:
    schema = pg_server.fresh_schema()
    url = pg_server.url_for(schema)
    with PostgresStore(url, lock_timeout_s=5) as store:
        assert _version(pg_server, schema) == SCHEMA_VERSION
        store.append_ledger("k", {"n": 1})
        assert store.migrate() == SCHEMA_VERSION
        assert store.migrate() == SCHEMA_VERSION
        assert store.verify_ledger() == 1
    with PostgresStore(url, lock_timeout_s=5, create=False) as again:  # reopening finds it as it was
        assert again.verify_ledger() == 1
        assert again.migrate() == SCHEMA_VERSION


def test_create_false_refuses_an_empty_database(pg_url: str) -> None:
    with pytest.raises(StoreError, match="no store in this database"):
        PostgresStore(pg_url, lock_timeout_s=5, create=False)


def test_a_newer_schema_is_refused_untouched(pg_server: Server) -> None:
    schema = pg_server.fresh_schema()
    PostgresStore(pg_server.url_for(schema), lock_timeout_s=5).close()
    with pg_server.admin() as conn:
        conn.execute(f"UPDATE {schema}.verigate_schema SET version = %s", (SCHEMA_VERSION + 1,))
    with pytest.raises(StoreError, match="newer than this verigate"):
        PostgresStore(pg_server.url_for(schema), lock_timeout_s=5)
    assert _version(pg_server, schema) == SCHEMA_VERSION + 1


def test_foreign_verigate_tables_are_refused_untouched(pg_server: Server) -> None:
    schema = pg_server.fresh_schema()
    with pg_server.admin() as conn:
        conn.execute(f"CREATE TABLE {schema}.verigate_ledger (x int)")
    with pytest.raises(StoreError, match="not a store this verigate made"):
        PostgresStore(pg_server.url_for(schema), lock_timeout_s=5)
    with pg_server.admin() as conn:
        assert conn.execute(f"SELECT to_regclass('{schema}.verigate_schema')").fetchone() == (None,)


def test_processes_opening_a_fresh_schema_at_once_all_succeed(pg_url: str, tmp_path: Path) -> None:
    """Hook invocations start together on a new database: one migrates, the others wait, none fails."""
    script = ("import sys\nfrom verigate_postgres import PostgresStore\n"
              "with PostgresStore(sys.argv[1], lock_timeout_s=60) as s:\n    s.append_ledger('k', {})\n")
    workers = [subprocess.Popen([sys.executable, "-c", script, pg_url], stderr=subprocess.PIPE, text=True)
               for _ in range(6)]
    for worker in workers:
        _, stderr = worker.communicate(timeout=120)
        assert worker.returncode == 0, stderr
    with PostgresStore(pg_url, lock_timeout_s=5) as store:
        assert store.verify_ledger() == 6


def test_a_role_that_may_not_migrate_is_told_to_run_store_migrate(pg_server: Server) -> None:
    schema = pg_server.fresh_schema()
    role = "r_" + uuid.uuid4().hex[:12]
    with pg_server.admin() as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN")
        conn.execute(f"GRANT USAGE ON SCHEMA {schema} TO {role}")
    limited = pg_server.url_for(schema, user=role)
    with pytest.raises(StoreError, match="verigate store migrate"):
        PostgresStore(limited, lock_timeout_s=5)
    # an operator migrates with a privileged role and grants the worker role what it needs; it then works
    PostgresStore(pg_server.url_for(schema), lock_timeout_s=5).close()
    with pg_server.admin() as conn:
        conn.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {schema} TO {role}")
    with PostgresStore(limited, lock_timeout_s=5) as store:
        review_id = store.create_pending_review("s", policy_action="escalate", reason="r", pending_text="held",
                                                candidate={}, verdict=None)
        assert store.approve_review(review_id, by="alice").status == "approved"
        assert store.verify_ledger() == 1
        assert store.migrate() == SCHEMA_VERSION  # nothing to do: no privilege needed


def _unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_down_server_is_a_store_error_without_the_password() -> None:
    password = secrets.token_hex(12)  # secret-shaped data made at test time
    url = f"postgresql://verigate:{password}@127.0.0.1:{_unused_port()}/verigate?password={password}"
    with pytest.raises(StoreError) as raised:
        PostgresStore(url, lock_timeout_s=1)
    assert "cannot be reached" in raised.value.message
    assert password not in str(raised.value)
    assert password not in repr(raised.value.source)


def test_a_server_that_stops_after_opening_gives_store_errors_then_recovers(own_server: Server) -> None:
    assert own_server.owned is not None
    url = own_server.fresh_url()
    with PostgresStore(url, lock_timeout_s=2) as store:
        store.append_ledger("k", {"n": 1})
        own_server.owned.stop()
        with pytest.raises(StoreError):
            store.append_ledger("k", {"n": 2})
        with pytest.raises(StoreError):
            store.list_reviews()
        own_server.owned.start()
        store.append_ledger("k", {"n": 3})  # the pool reconnected by itself
        assert [row.payload["n"] for row in store.ledger()] == [1, 3]
        assert store.verify_ledger() == 2


def test_pooled_connections_killed_on_the_server_are_replaced(pg_server: Server, pg_url: str) -> None:
    with PostgresStore(pg_url, lock_timeout_s=5) as store:
        store.append_ledger("k", {"n": 0})
        for n in range(1, 4):
            with pg_server.admin() as conn:
                killed = conn.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE "
                                      "pid <> pg_backend_pid() AND backend_type = 'client backend'").fetchone()
            assert killed is not None and killed[0] >= 1
            store.append_ledger("k", {"n": n})  # no failed record: the health check swapped the connection
        assert store.verify_ledger() == 4


@pytest.mark.parametrize("call", [
    lambda s: s.begin_attempt("nul\x00session", 0, {}),
    lambda s: s.create_pending_review("s", policy_action="a\x00", reason="r", pending_text="t", candidate={},
                                      verdict=None),
    lambda s: s.append_timeline("s\ud800", "k", {}),
    lambda s: s.begin_attempt("s", 2**70, {}),
], ids=["NUL", "NUL in a review", "lone surrogate", "integer out of range"])
def test_driver_errors_are_store_errors(pg_url: str, call: object) -> None:
    with PostgresStore(pg_url, lock_timeout_s=5) as store:
        with pytest.raises(StoreError) as raised:
            call(store)  # type: ignore[operator]
        assert not isinstance(raised.value.__cause__, psycopg.Error) or raised.value.__suppress_context__
        assert store.list_reviews() == []  # nothing half-written


def test_a_held_row_lock_times_out_as_a_locked_store(pg_server: Server, pg_url: str) -> None:
    with PostgresStore(pg_url, lock_timeout_s=1) as store:
        store.append_ledger("k", {"n": 1})
        schema = pg_url.rsplit("%3D", 1)[1]
        with pg_server.admin() as conn, conn.transaction():
            conn.execute(f"SELECT * FROM {schema}.verigate_ledger_head FOR UPDATE")
            with pytest.raises(StoreError, match="locked by another worker"):
                store.append_ledger("k", {"n": 2})
        assert store.verify_ledger() == 1


def test_the_url_is_shown_without_its_password(pg_server: Server) -> None:
    password = secrets.token_hex(12)
    schema = pg_server.fresh_schema()
    url = pg_server.url_for(schema).replace("verigate@", f"verigate:{password}@")  # trust: any password passes
    with PostgresStore(url, lock_timeout_s=5) as store:
        assert password not in repr(store) and password not in store.url


def test_the_judge_cache_keeps_an_entry_until_its_ttl_by_the_store_clock(pg_server: Server, pg_url: str) -> None:
    from datetime import UTC, datetime, timedelta

    now = [datetime(2026, 1, 1, tzinfo=UTC)]
    key, other = secrets.token_hex(32), secrets.token_hex(32)
    with PostgresStore(pg_url, lock_timeout_s=5, clock=lambda: now[0]) as store:
        assert store.cached_verdict(key) is None
        store.cache_verdict(key, {"passed": True, "score": 0.5}, ttl_s=60)
        store.cache_verdict(key, {"passed": False}, ttl_s=60)  # replaced
        store.cache_verdict(other, {"passed": True}, ttl_s=30)
        assert store.cached_verdict(key) == {"passed": False}
        now[0] += timedelta(seconds=45)
        assert store.cached_verdict(other) is None and store.cached_verdict(key) == {"passed": False}
        now[0] += timedelta(seconds=15)
        assert store.cached_verdict(key) is None
        for bad_key in ("x", key.upper(), key[:-1]):
            with pytest.raises(StoreError, match="sha256"):
                store.cached_verdict(bad_key)
        for ttl in (0, -1, float("nan"), float("inf"), True, 1e12):
            with pytest.raises(StoreError, match="ttl_s"):
                store.cache_verdict(key, {}, ttl_s=ttl)
        store.cache_verdict(key, {"passed": True}, ttl_s=60)
        schema = pg_url.rsplit("%3D", 1)[1]
        with pg_server.admin() as conn:
            conn.execute(f"UPDATE {schema}.verigate_judge_cache SET entry = '{{\"a\":1,\"a\":2}}'")
        with pytest.raises(StoreError, match="not strict JSON"):
            store.cached_verdict(key)
