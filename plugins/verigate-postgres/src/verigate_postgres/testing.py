"""A throwaway PostgreSQL server for tests and benchmarks: ``initdb`` into a temporary folder, started on
127.0.0.1 only (a free port, its unix socket inside the folder), stopped and removed at the end.

PostgreSQL refuses to run as root: as root the server runs as the ``postgres`` user (Debian's package makes it)
through ``runuser``, the folder given to that user. The binaries are found with ``pg_config --bindir``, else in
Debian's ``/usr/lib/postgresql/<version>/bin``. Authentication is ``trust`` for the one superuser ``verigate``:
only loopback and the folder's socket reach it, and it lives as long as the test run.

    with TemporaryServer() as server:
        store = open_store(server.url())
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from types import TracebackType

__all__ = ["PostgresUnavailable", "TemporaryServer", "find_bindir"]

_SUPERUSER = "verigate"
_RUN_AS = "postgres"  # the system user Debian's postgresql package creates


class PostgresUnavailable(RuntimeError):
    """The PostgreSQL server binaries are not installed (or cannot be run here)."""


def _has_server(folder: Path) -> bool:
    return (folder / "initdb").is_file() and (folder / "pg_ctl").is_file()


def find_bindir() -> Path:
    """The folder of ``initdb`` and ``pg_ctl``; raises PostgresUnavailable naming where it looked."""
    pg_config = shutil.which("pg_config")
    if pg_config is not None:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            done = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, timeout=30, check=True)
            folder = Path(done.stdout.strip())
            if _has_server(folder):
                return folder
    # Debian's client package puts pg_config on PATH pointing at a bindir without the server: look there too
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin"),
                      key=lambda path: int(path.parent.name) if path.parent.name.isdigit() else -1, reverse=True)
    for folder in versions:
        if _has_server(folder):
            return folder
    initdb = shutil.which("initdb")
    if initdb is not None and _has_server(Path(initdb).resolve().parent):
        return Path(initdb).resolve().parent
    raise PostgresUnavailable("no PostgreSQL server binaries (initdb, pg_ctl): looked at `pg_config --bindir`, "
                              "/usr/lib/postgresql/*/bin and PATH; Debian: apt-get install postgresql")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class TemporaryServer:
    """A PostgreSQL cluster of its own. ``fsync=False`` (tests) trades crash safety for speed; benchmarks keep
    the server's default (an fsync per commit)."""

    def __init__(self, *, fsync: bool = False, max_connections: int = 200) -> None:
        self.bindir = find_bindir()
        self._fsync = fsync
        self._max_connections = max_connections
        self._as_root = os.geteuid() == 0
        self.folder = Path(tempfile.mkdtemp(prefix="verigate-pg-"))
        self.data = self.folder / "data"
        self.socket_dir = self.folder / "socket"
        self.log = self.folder / "server.log"
        self.port = 0
        self._started = False

    # the commands, as the postgres user when we are root

    def _command(self, *args: str) -> list[str]:
        if not self._as_root:
            return list(args)
        runuser = shutil.which("runuser")
        if runuser is None:
            raise PostgresUnavailable("running as root and `runuser` is missing: PostgreSQL refuses to run as root")
        return [runuser, "-u", _RUN_AS, "--", *args]

    def _run(self, *args: str, timeout: float = 120) -> None:
        done = subprocess.run(self._command(*args), capture_output=True, text=True, timeout=timeout, check=False,
                              cwd=self.folder)
        if done.returncode != 0:
            log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise RuntimeError(f"{Path(args[0]).name} failed ({done.returncode}): {done.stderr.strip()[-2000:]}\n{log}")

    def start(self) -> TemporaryServer:
        """Create the cluster (the first time) and start the server; after :meth:`stop` it starts again on the
        same port with the same data."""
        if self._started:
            return self
        if not self.data.exists():
            self._initdb()
        for attempt in range(5):  # another process may take the free port before the server binds it
            port = self.port or _free_port()
            options = (f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={self.socket_dir}"
                       f" -c max_connections={self._max_connections} -c fsync={'on' if self._fsync else 'off'}")
            try:
                self._run(str(self.bindir / "pg_ctl"), "start", "-w", "-t", "120", "-D", str(self.data),
                          "-l", str(self.log), "-o", options)
            except RuntimeError:
                if attempt == 4 or self.port:
                    raise
                continue
            self.port = port
            self._started = True
            return self
        raise AssertionError("unreachable")

    def _initdb(self) -> None:
        self.socket_dir.mkdir()
        if self._as_root:
            import pwd

            try:
                user = pwd.getpwnam(_RUN_AS)
            except KeyError:
                raise PostgresUnavailable(f"running as root and there is no {_RUN_AS!r} user to run the server "
                                          "as (PostgreSQL refuses to run as root)") from None
            for path in (self.folder, self.socket_dir):
                os.chown(path, user.pw_uid, user.pw_gid)
        self._run(str(self.bindir / "initdb"), "-D", str(self.data), "-U", _SUPERUSER, "--auth=trust",
                  "--encoding=UTF8", "--locale=C.UTF-8" if _has_locale("C.UTF-8") else "--no-locale", "--no-sync")

    def url(self, database: str = "postgres", *, options: str = "") -> str:
        """A URL of the server for the superuser (``options`` are appended as the URL's query)."""
        query = f"?{options}" if options else ""
        return f"postgresql://{_SUPERUSER}@127.0.0.1:{self.port}/{database}{query}"

    def restart(self) -> None:
        """``pg_ctl restart -m fast``: every connection is cut, the server is back when this returns."""
        self._run(str(self.bindir / "pg_ctl"), "restart", "-w", "-t", "120", "-m", "fast", "-D", str(self.data),
                  "-l", str(self.log))

    def stop(self) -> None:
        if self._started:
            self._started = False
            self._run(str(self.bindir / "pg_ctl"), "stop", "-w", "-t", "120", "-m", "fast", "-D", str(self.data))

    def close(self) -> None:
        try:
            self.stop()
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> TemporaryServer:
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()


def _has_locale(name: str) -> bool:
    try:
        done = subprocess.run(["locale", "-a"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    wanted = name.lower().replace("-", "")
    return any(line.strip().lower().replace("-", "") == wanted for line in done.stdout.splitlines())
