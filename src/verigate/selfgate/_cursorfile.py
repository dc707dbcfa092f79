"""A scan cursor as saved in ``<store>.state/cursors/``: its fields, its file name, and the check of a saved one.

``_store.GateStore`` reads and writes cursors; the fast path moves one on after catching up and checks a cursor
named in its fold cache the same way, so a damaged cache can never make it write anything but a cursor file.
"""

# os.path rather than pathlib: the pre-tool-use fast path imports this module on every tool call
from __future__ import annotations

import os
import re
from typing import Any

__all__ = ["CURSORS_DIR", "FIELDS", "checked", "file_name", "is_cursor_file"]

CURSORS_DIR = "cursors"
#: every field of a saved cursor and its JSON type (``_store.Cursor``)
FIELDS: dict[str, type] = {"offset": int, "line": int, "device": int, "inode": int, "head_sha": str}
_NAME = re.compile(r"[0-9a-f]{32}\.json")


def file_name(session_id: str, transcript: str) -> str:
    """The cursor file's name for a session's transcript (a hash: both are arbitrary text)."""
    from .._builtin_sha256 import sha256_hex  # the full check only: the fast path never names a new cursor

    return sha256_hex(f"{session_id}\x1f{transcript}".encode())[:32] + ".json"


def checked(data: Any) -> dict[str, Any] | None:
    """The saved cursor's fields when it has exactly the cursor's fields, each of its type; else None."""
    if not isinstance(data, dict) or set(data) != set(FIELDS) or not all(
            type(data[name]) is kind for name, kind in FIELDS.items()):
        return None
    return data


def is_cursor_file(path: Any, state_dir: str) -> bool:
    """Whether ``path`` names a cursor file of the store whose state folder is ``state_dir``."""
    return isinstance(path, str) and _NAME.fullmatch(os.path.basename(path)) is not None and \
        os.path.normpath(os.path.dirname(path)) == os.path.normpath(os.path.join(state_dir, CURSORS_DIR))
