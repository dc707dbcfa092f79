"""Store backends from plug-ins: ``open_store`` dispatches a URL scheme to a ``verigate_store_backends`` opener.

The backend here is real, not a mock: ``vgfile://PATH`` URLs open a SQLite file, as a third-party backend in
miniature would open its database. The CLI runs as a subprocess with the plug-in listed in ``verigate.yaml``.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from verigate import Candidate, Gate, PluginError, StoreError, Termination, finalize_and_return, hookimpl
from verigate.store import SqliteStore, Store, StoreOpener, open_store

BACKEND_MODULE = '''
"""A store backend plug-in: vgfile://PATH is the SQLite file at PATH."""
from verigate import hookimpl
from verigate.store import SqliteStore

SCHEME = "vgfile://"

def open_vgfile(url, *, lock_timeout_s, clock, create):
    return SqliteStore(url[len(SCHEME):], lock_timeout_s=lock_timeout_s, clock=clock, create=create)

@hookimpl
def verigate_store_backends():
    return {"vgfile": open_vgfile}
'''


class FileBackend:
    """The same backend as an object plug-in that remembers how it was called."""

    __name__ = "test-vgfile-backend"

    def __init__(self, scheme: str = "vgfile", result: Any = None, error: BaseException | None = None) -> None:
        self.scheme = scheme
        self.result = result
        self.error = error
        self.calls: list[dict[str, Any]] = []

    @hookimpl
    def verigate_store_backends(self) -> Mapping[str, StoreOpener]:
        return {self.scheme: self.open}

    def open(self, url: str, *, lock_timeout_s: float, clock: Any, create: bool) -> Store:
        self.calls.append({"url": url, "lock_timeout_s": lock_timeout_s, "clock": clock, "create": create})
        if self.error is not None:
            raise self.error
        if self.result is not None:
            return self.result  # type: ignore[no-any-return]
        return SqliteStore(url.split("://", 1)[1], lock_timeout_s=lock_timeout_s, clock=clock, create=create)


def test_a_plug_in_scheme_opens_the_backends_store(tmp_path: Path) -> None:
    backend = FileBackend()
    path = tmp_path / "db.sqlite"
    store = open_store(f"vgfile://{path}", lock_timeout_s=7, create=True, plugins=[backend])
    try:
        assert isinstance(store, SqliteStore) and store.path == str(path)
        store.append_ledger("k", {})
    finally:
        store.close()
    assert backend.calls == [{"url": f"vgfile://{path}", "lock_timeout_s": 7, "clock": None, "create": True}]
    with SqliteStore(path) as reopened:
        assert reopened.verify_ledger() == 1


def test_schemes_are_case_insensitive(tmp_path: Path) -> None:
    store = open_store(f"VGFile://{tmp_path / 'x.db'}", plugins=[FileBackend()])
    store.close()
    assert (tmp_path / "x.db").is_file()


def test_the_gate_opens_store_url_through_its_own_plug_ins(tmp_path: Path) -> None:
    path = tmp_path / "gate.db"
    backend = FileBackend()
    with Gate.from_config({"store": {"url": f"vgfile://{path}", "lock_timeout_s": 3}}, plugins=[backend],
                          entry_points=False) as gate:
        # no judge configured: the gate fails closed into a pending review, stored by the backend
        result = finalize_and_return(gate, Candidate(request="r", final_text="done", session_id="s"),
                                     Termination("natural"))
    assert backend.calls[0]["lock_timeout_s"] == 3
    assert result.outcome == "pending_review" and result.store_error is None
    with SqliteStore(path) as store:
        assert [review.review_id for review in store.list_reviews("pending")] == [result.pending_id]


def test_an_unknown_scheme_names_the_installed_ones_and_never_the_password() -> None:
    password = secrets.token_hex(8)
    query_secret = secrets.token_hex(8)
    url = f"nope://alice:{password}@db.example:5432/verigate?sslmode=require&password={query_secret}"
    with pytest.raises(StoreError, match="no store backend for 'nope' URLs is installed") as caught:
        open_store(url, plugins=[FileBackend()])
    assert "vgfile" in str(caught.value)
    assert password not in str(caught.value) and query_secret not in str(caught.value)
    assert caught.value.source == "nope://alice:***@db.example:5432/verigate?…"


@pytest.mark.parametrize("error", [RuntimeError, SystemExit, ConnectionRefusedError])
def test_a_failing_opener_is_a_store_error_without_the_password(error: type[BaseException]) -> None:
    password = secrets.token_hex(8)
    url = f"vgfile://bob:{password}@host/db"
    backend = FileBackend(error=error(f"could not connect to {url}"))
    with pytest.raises(StoreError, match=f"the 'vgfile' store backend failed to open the store: {error.__name__}") \
            as caught:
        open_store(url, plugins=[backend])
    assert password not in str(caught.value)
    assert isinstance(caught.value.__cause__, error)


def test_a_store_error_of_the_backend_passes_through() -> None:
    raised = StoreError("the database is down", source="vgfile://host/db")
    with pytest.raises(StoreError) as caught:
        open_store("vgfile://host/db", plugins=[FileBackend(error=raised)])
    assert caught.value is raised


def test_a_keyboard_interrupt_is_not_swallowed() -> None:
    with pytest.raises(KeyboardInterrupt):
        open_store("vgfile://host/db", plugins=[FileBackend(error=KeyboardInterrupt())])


def test_an_opener_returning_something_else_than_a_store_is_refused() -> None:
    with pytest.raises(StoreError, match=r"returned object, which does not implement verigate\.store\.Store"):
        open_store("vgfile://host/db", plugins=[FileBackend(result=object())])


def test_two_plug_ins_registering_one_scheme_is_a_plugin_error() -> None:
    first, second = FileBackend(), FileBackend()
    second.__name__ = "second-backend"
    with pytest.raises(PluginError, match="'vgfile' is registered by both"):
        open_store("vgfile://host/db", plugins=[first, second])


def test_sync_every_write_is_sqlites_own() -> None:
    with pytest.raises(StoreError, match="SQLite stores only"):
        open_store("vgfile://host/db", sync_every_write=True, plugins=[FileBackend()])


class Exploding:
    __name__ = "exploding-backend"

    @hookimpl
    def verigate_store_backends(self) -> Mapping[str, StoreOpener]:
        raise AssertionError("a SQLite store must not consult the store plug-ins")


@pytest.mark.parametrize("url", [":memory:", "sqlite://", "{tmp}/a.db", "sqlite:///{tmp}/b.db"])
def test_sqlite_urls_never_consult_the_plug_ins(tmp_path: Path, url: str) -> None:
    store = open_store(url.format(tmp=tmp_path), plugins=[Exploding()])
    store.close()


def test_opening_a_sqlite_store_loads_no_plug_in_machinery(tmp_path: Path) -> None:
    """The hook path opens its SQLite store on every invocation: that must not import pluggy or scan plug-ins."""
    code = ("import sys\nfrom verigate.store import open_store\n"
            f"open_store({str(tmp_path / 'h.db')!r}).close()\n"
            "print(sorted(m for m in sys.modules if m == 'pluggy' or m.startswith('verigate._plugin')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("url", ["SQLite:///x.db", "://x"])
def test_malformed_scheme_spellings_are_refused(url: str) -> None:
    with pytest.raises(StoreError):
        open_store(url, plugins=[Exploding()])


@pytest.fixture
def project(tmp_path: Path) -> dict[str, str]:
    """A project whose verigate.yaml loads the backend module (importable from the environment's PYTHONPATH)."""
    (tmp_path / "modules").mkdir()
    (tmp_path / "modules" / "vgfile_backend.py").write_text(BACKEND_MODULE)
    (tmp_path / "verigate.yaml").write_text("plugins: [vgfile_backend]\n")
    return {**os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path / "modules"), os.environ.get("PYTHONPATH")]))}


def _cli(tmp_path: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "verigate", *args], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120, check=False)


def test_the_cli_opens_a_plug_in_store_named_by_store(tmp_path: Path, project: dict[str, str]) -> None:
    path = tmp_path / "cli.db"
    with SqliteStore(path) as store:
        review_id = store.create_pending_review("s", policy_action="escalate", reason="r", pending_text="held",
                                                candidate={}, verdict=None)
    listed = _cli(tmp_path, project, "review", "list", "--store", f"vgfile://{path}")
    assert listed.returncode == 0, listed.stderr
    assert review_id in listed.stdout
    verified = _cli(tmp_path, project, "ledger", "verify", "--store", f"vgfile://{path}")
    assert (verified.returncode, verified.stdout.strip()) == (0, "ledger ok: 0 rows verified")


def test_the_cli_names_an_unknown_scheme_and_exits_2(tmp_path: Path, project: dict[str, str]) -> None:
    password = secrets.token_hex(8)
    done = _cli(tmp_path, project, "review", "list", "--store", f"nope://u:{password}@h/db")
    assert done.returncode == 2
    assert "no store backend for 'nope' URLs is installed (plug-in schemes: " in done.stderr
    assert "vgfile" in done.stderr.split("plug-in schemes: ", 1)[1].split(";")[0].split(", ")
    assert password not in done.stderr + done.stdout


def test_a_plug_in_module_named_by_string_serves_its_scheme(tmp_path: Path, project: dict[str, str]) -> None:
    sys.path.insert(0, str(tmp_path / "modules"))
    try:
        store = open_store(f"vgfile://{tmp_path / 'm.db'}", plugins=["vgfile_backend"])
        store.close()
    finally:
        sys.path.remove(str(tmp_path / "modules"))
        sys.modules.pop("vgfile_backend", None)
    assert (tmp_path / "m.db").is_file()


def test_doctor_names_a_database_store_without_its_password(tmp_path: Path) -> None:
    from verigate._config import load_config
    from verigate.cli._doctor_checks import store_check

    password = secrets.token_hex(8)
    check = store_check(str(tmp_path), load_config({"store": {"url": f"postgresql://alice:{password}@db/verigate"}}))
    assert check.skipped
    assert check.detail == "postgresql://alice:***@db/verigate is not a local file"


@pytest.mark.parametrize("separator", ["#", "?", "/", "@", ":"])
def test_a_password_with_a_uri_delimiter_is_never_shown(tmp_path: Path, separator: str) -> None:
    # libpq takes everything before the '@' as the credentials ('#' and '?' included): no half of such a password
    # may reach a message, the doctor or a store error (a '/' or '@' one is masked too: over-masking is harmless)
    from verigate._config import load_config
    from verigate.cli._doctor_checks import store_check

    left, right = secrets.token_hex(6), secrets.token_hex(6)
    url = f"postgresql://alice:{left}{separator}{right}@db.example:5432/verigate"
    with pytest.raises(StoreError) as caught:
        open_store(url.replace("postgresql", "nope"), plugins=[FileBackend()])
    check = store_check(str(tmp_path), load_config({"store": {"url": url}}))
    backend = FileBackend(error=RuntimeError(f"could not connect to {url}"))
    with pytest.raises(StoreError) as failed:
        open_store(url.replace("postgresql", "vgfile"), plugins=[backend])
    for shown in (str(caught.value), str(caught.value.source), check.detail, str(failed.value),
                  str(failed.value.source)):
        assert left not in shown and right not in shown, shown


def test_a_backend_error_quoting_the_decoded_password_never_shows_it() -> None:
    # a driver reports the password as it used it: percent-decoded
    left, right = secrets.token_hex(6), secrets.token_hex(6)
    url = f"vgfile://alice:{left}%40{right}@host/db?password={left}%26{right}"
    backend = FileBackend(error=RuntimeError(f"auth failed for password {left}@{right} or {left}&{right}"))
    with pytest.raises(StoreError) as failed:
        open_store(url, plugins=[backend])
    assert f"{left}@{right}" not in str(failed.value) and f"{left}&{right}" not in str(failed.value)
