"""The CLI on a PostgreSQL store, as a subprocess: ``store migrate``, ``review watch``, approving and
``ledger verify`` all reach the server through the plug-in's ``postgresql://`` scheme."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from verigate_postgres import SCHEMA_VERSION, PostgresStore


def _cli(tmp_path: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "verigate", *args], cwd=tmp_path, capture_output=True, text=True,
                          timeout=timeout, check=False)


def test_store_migrate_creates_the_schema_and_is_idempotent(pg_url: str, tmp_path: Path) -> None:
    for _ in range(2):
        done = _cli(tmp_path, "store", "migrate", "--store", pg_url, "--json")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["schema_version"] == SCHEMA_VERSION


def test_review_watch_approve_and_ledger_verify(pg_url: str, tmp_path: Path) -> None:
    with PostgresStore(pg_url, lock_timeout_s=10) as store:
        backlog = store.create_pending_review("s1", policy_action="escalate", reason="judge_unavailable",
                                              pending_text="held one", candidate={}, verdict=None)
    done = _cli(tmp_path, "review", "watch", "--store", pg_url, "--once", "--json")
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["review_id"] for line in done.stdout.splitlines()] == [backlog]
    assert "held one" not in done.stdout  # a watch never prints the held answer

    # a watch with nothing pending is woken by the review another process files
    with PostgresStore(pg_url, lock_timeout_s=10) as store:
        store.approve_review(backlog, by="alice")
    watch = subprocess.Popen([sys.executable, "-m", "verigate", "review", "watch", "--store", pg_url, "--once",
                              "--json"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with PostgresStore(pg_url, lock_timeout_s=10) as store:
        filed = store.create_pending_review("s2", policy_action="escalate", reason="judge_unavailable",
                                            pending_text="held two", candidate={}, verdict=None)
    stdout, stderr = watch.communicate(timeout=120)
    assert watch.returncode == 0, stderr
    assert [json.loads(line)["review_id"] for line in stdout.splitlines()] == [filed]

    done = _cli(tmp_path, "review", "approve", filed, "--store", pg_url, "--by", "bob", "--yes")
    assert done.returncode == 0, done.stderr
    assert "held two" in done.stdout  # the released answer
    done = _cli(tmp_path, "ledger", "verify", "--store", pg_url, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["rows"] == 2


def test_demo_names_a_database_store_without_its_password(pg_server: Any, tmp_path: Path) -> None:
    import secrets

    password = secrets.token_hex(12)  # trust authentication: any password passes, none may be printed
    url = pg_server.url_for(pg_server.fresh_schema()).replace("verigate@", f"verigate:{password}@")
    config = tmp_path / "verigate.yaml"
    config.write_text(json.dumps({"store": {"url": url}}), encoding="utf-8")  # JSON is YAML
    done = _cli(tmp_path, "demo", "--config", str(config))
    assert password not in done.stdout + done.stderr
    assert "store: postgresql://verigate:***@" in done.stdout, done.stdout + done.stderr
