"""The Stop hook's own per-session counters, in a small JSON file beside the store (not in it: the store may be
what fails)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import attrs

from .. import _json as strict_json
from .._errors import InputError
from .._fileio import replace_file

__all__ = ["STATE_FOLDER", "StopState", "load_state", "save_state", "state_path"]

#: under the project directory, beside the default store (.verigate/verigate.db)
STATE_FOLDER = Path(".verigate") / "stop-hook"


@attrs.frozen
class StopState:
    """Counters of one session: consecutive internal errors, and consecutive blocks for the current request.

    The revise counter itself lives in the store (the gate's attempt number); ``blocks_in_row`` only backs it
    up, so that no store trouble can turn into an endless Stop loop.
    """

    #: sha256 of the raw (unredacted) request the counters belong to ("" before the first request); never the text
    request_sha256: str = ""
    blocks_in_row: int = attrs.field(default=0, validator=attrs.validators.ge(0))
    errors_in_row: int = attrs.field(default=0, validator=attrs.validators.ge(0))


def state_path(project_dir: Path, session_key: str) -> Path:
    digest = hashlib.sha256(session_key.encode("utf-8")).hexdigest()[:32]
    return project_dir / STATE_FOLDER / f"{digest}.json"


def load_state(project_dir: Path, session_key: str) -> StopState:
    """The session's counters (fresh ones when there is no file); an unreadable file is an InputError."""
    path = state_path(project_dir, session_key)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return StopState()
    except OSError as exc:
        raise InputError(f"cannot read the Stop hook state: {exc}", source=str(path)) from exc
    try:
        data = strict_json.loads(text, max_chars=4096)
        return StopState(str(data["request_sha256"]), int(data["blocks_in_row"]), int(data["errors_in_row"]))
    except (strict_json.StrictJSONError, ValueError, KeyError, TypeError) as exc:
        raise InputError(f"the Stop hook state is corrupt: {exc}", source=str(path)) from exc


def save_state(project_dir: Path, session_key: str, state: StopState) -> None:
    """Write atomically (temporary file, then rename): a concurrent hook reads the old or the new state."""
    path = state_path(project_dir, session_key)
    path.parent.mkdir(parents=True, exist_ok=True)
    ignore = path.parent / ".gitignore"
    if not ignore.exists():  # local state: never shows up in `git status`, never committed by an agent
        ignore.write_text("*\n", encoding="utf-8")
    replace_file(path, json.dumps(attrs.asdict(state), sort_keys=True).encode("utf-8"), mode=0o600)
