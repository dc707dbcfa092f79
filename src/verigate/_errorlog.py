"""Where the tracebacks of unexpected errors go: a log file beside the store, never the terminal by default.

The CLI and the hooks print one line per error. A traceback on stderr is noise for a person and, from a hook,
text the host hands to the model; it is appended to ``<store folder>/logs/verigate-errors.log`` instead (created
0600, rotated to ``.1`` past :data:`MAX_LOG_BYTES`) and printed only with ``--debug`` / ``VERIGATE_DEBUG=1``.

The log is written only where a verigate project already is (the store folder exists, or ``verigate.yaml`` does):
an error never creates folders nobody chose. Exception messages can carry data (a token in a candidate, a path),
so the whole report (messages and source lines) passes the shipped redaction packs first; when redaction itself
fails only the frames' places and the exception types are written.
Logging never raises: a log that cannot be written is no log.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

# datetime, traceback and pathlib load only when an error is logged: the CLI imports this module on every run
# (debug_enabled), hooks included, and together they cost milliseconds a hook that succeeds does not need.
# ``typing`` too: type checkers read this constant as typing.TYPE_CHECKING
_TYPE_CHECKING = False
if _TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "DEBUG_ENV", "LOG_NAME", "MAX_LOG_BYTES", "debug_enabled", "error_log_folder", "format_debug", "log_exception",
    "redacted_message",
]

DEBUG_ENV = "VERIGATE_DEBUG"
LOG_NAME = "verigate-errors.log"
#: past this size the log becomes ``verigate-errors.log.1`` (one older file kept): at most twice this on disk
MAX_LOG_BYTES = 1024 * 1024


def debug_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """``VERIGATE_DEBUG`` is set to a true value (1, true, yes, on)."""
    value = (os.environ if environ is None else environ).get(DEBUG_ENV, "")
    return value.strip().lower() in ("1", "true", "yes", "on")


def error_log_folder(base: Path) -> Path | None:
    """``<store folder>/logs`` for the project at ``base`` (its verigate.yaml's store, else the default store
    folder), or None when ``base`` is not a verigate project or the store is not a local file."""
    from ._config import DEFAULT_CONFIG_NAME, Config, load_config, store_folder

    config_path = base / DEFAULT_CONFIG_NAME
    try:
        config = load_config(config_path) if config_path.is_file() else Config()
    except Exception:  # the configuration may be the very thing that failed: use the default store folder
        config = Config()
    folder = store_folder(config, base)
    if folder is None or not (folder.is_dir() or config_path.is_file()):
        return None
    return folder / "logs"


def _report(exc: BaseException, context: str) -> str:
    """Time, context, and every exception of the chain with its frames and message, all passed through the shipped
    redaction packs (a message or a source line can hold a token); when redaction is unavailable, only the frames'
    places and the exception types, which carry no data."""
    import datetime
    import traceback

    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain and len(chain) < 10:
        chain.append(current)
        current = current.__cause__ or current.__context__
    header = f"--- {datetime.datetime.now(datetime.UTC).isoformat(timespec='seconds')} pid {os.getpid()} {context}"
    full, bare = [header], [header]
    for item in reversed(chain):  # the oldest first, as Python prints a chain
        frames = traceback.extract_tb(item.__traceback__)
        full += [line.rstrip("\n") for line in traceback.format_list(frames)]
        bare += [f'  File "{frame.filename}", line {frame.lineno}, in {frame.name}' for frame in frames]
        name = f"{type(item).__module__}.{type(item).__qualname__}"
        full.append(f"{name}: {item}")
        bare.append(f"{name}: <message withheld: redaction failed>")
    try:
        from .redact import redact

        return redact("\n".join(full)).text + "\n"
    except Exception:  # redaction is unavailable: write nothing that could hold a secret
        return "\n".join(bare) + "\n"


def _append(path: Path, text: str) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        if path.stat().st_size + len(text) > MAX_LOG_BYTES:
            path.replace(path.with_name(path.name + ".1"))
    except FileNotFoundError:
        pass
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(descriptor, text.encode("utf-8", "backslashreplace"))
    finally:
        os.close(descriptor)


def log_exception(exc: BaseException, base: Path | None = None, *, context: str = "") -> Path | None:
    """Append ``exc``'s report to the error log of the project at ``base`` (default: the working directory);
    the log's path, or None when there is no log to write to or writing failed."""
    try:
        from pathlib import Path

        folder = error_log_folder(Path.cwd() if base is None else base)
        if folder is None:
            return None
        path = folder / LOG_NAME
        _append(path, _report(exc, context))
        return path
    except Exception:  # never fail because of logging
        return None


def redacted_message(exc: BaseException) -> str:
    """``exc``'s message through the shipped redaction packs, for the one stderr line (which a hook's host hands
    to the model); withheld when redaction is unavailable."""
    try:
        from .redact import redact

        return redact(str(exc)).text
    except Exception:
        return "<message withheld: redaction failed>"


def format_debug(exc: BaseException) -> str:
    """The full traceback, for ``--debug`` only."""
    import traceback

    return "".join(traceback.format_exception(exc))
