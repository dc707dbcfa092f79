"""Per-session baselines: which HEAD a request started from, kept in ``<repo>/.verigate/git-claims/``."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import attrs

from verigate import InputError, StrictJSONError, strict_loads

__all__ = ["STATE_FOLDER", "RequestBaseline", "advance", "state_file"]

#: verigate's own folder (store, this plug-in's state): never counted as a change the agent made (kept here, not
#: in ``_repo``, so that importing the plug-in does not import dulwich)
STATE_FOLDER = ".verigate"


def state_file(root: Path, session_id: str) -> Path:
    """One small JSON file per session; the name is a hash so any session id is a safe file name."""
    digest = hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:32]
    return root / STATE_FOLDER / "git-claims" / f"{digest}.json"


@attrs.frozen
class RequestBaseline:
    """What the current request is compared with.

    ``head`` is the HEAD before the request (the HEAD seen when the session's previous request was last
    checked) or, from the request's second attempt on, the HEAD of its first attempt when nothing earlier is
    known (None: the repository had no commit). ``known`` is False on the session's first attempt: there is
    nothing earlier to compare with.
    """

    known: bool
    head: str | None = None


def _read(path: Path) -> dict[str, Any] | None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InputError(f"cannot read the git-claims state: {exc}", source=str(path)) from exc
    try:
        data = strict_loads(text)
    except StrictJSONError as exc:
        raise InputError(f"the git-claims state is not strict JSON: {exc.message}", source=str(path)) from None
    if not isinstance(data, dict) or data.get("version") != 1:
        raise InputError("the git-claims state has an unknown shape (expected version 1)", source=str(path))
    return data


def _write(path: Path, data: dict[str, Any]) -> None:
    """Replace atomically, so a concurrent reader sees the old or the new state, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    ignore = path.parent / ".gitignore"
    if not ignore.exists():  # local state: never shows up in `git status`, never committed by an agent
        ignore.write_text("*\n", encoding="utf-8")
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(data, stream, sort_keys=True)
        Path(temporary).replace(path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def advance(root: Path, session_id: str, request: str, attempt: int, head: str | None) -> RequestBaseline:
    """The baseline for this check, and record ``head`` as the latest one seen for the session.

    A request is recognised by the hash of its text. Checking the same attempt twice (a retried hook) gives
    the same baseline both times.
    """
    path = state_file(root, session_id)
    record = _read(path)
    request_key = hashlib.sha256(request.encode("utf-8")).hexdigest()
    if record is None or record.get("request_key") != request_key:
        known = record is not None
        previous = record.get("last_head") if record is not None else None
        baseline = RequestBaseline(known, previous)
        data = {"baseline_known": known, "request_baseline": previous, "request_first_head": head,
                "first_attempt": attempt}
    else:
        data = {key: record.get(key)
                for key in ("baseline_known", "request_baseline", "request_first_head", "first_attempt")}
        if record.get("baseline_known"):
            baseline = RequestBaseline(True, record.get("request_baseline"))
        elif attempt == record.get("first_attempt"):
            baseline = RequestBaseline(False)  # the same first attempt, checked again
        else:
            baseline = RequestBaseline(True, record.get("request_first_head"))
    _write(path, {"version": 1, "session_id": session_id, "request_key": request_key, "last_head": head, **data})
    return baseline
