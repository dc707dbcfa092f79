"""Where a Claude Code session keeps its sub-agent transcripts."""

from __future__ import annotations

import json
from pathlib import Path

from .._errors import InputError
from .._transcript_lines import bounded_lines, open_log_stream

__all__ = ["subagent_files"]


def _first_session_id(path: Path) -> str | None:
    try:  # a regular file only: a pipe would block, a device never end (InputError: no id told)
        with open_log_stream(str(path)) as stream:
            for raw in bounded_lines(stream, str(path)):
                try:
                    record = json.loads(raw)
                except (ValueError, RecursionError):
                    continue
                if isinstance(record, dict) and isinstance(record.get("sessionId"), str):
                    return str(record["sessionId"])
                return None
    except (OSError, InputError):  # unreadable, or a line past the bound: no session id can be told
        return None
    return None


def subagent_files(session_path: str | Path) -> list[Path]:
    """The sub-agent transcripts of a session, sorted: ``<session>/subagents/agent-*.jsonl`` (current layout)
    and, for older versions, ``agent-*.jsonl`` beside the session file whose lines carry the session's id."""
    session = Path(session_path)
    found = sorted((session.parent / session.stem / "subagents").glob("agent-*.jsonl"))
    if not session.name.startswith("agent-"):
        found += [path for path in sorted(session.parent.glob("agent-*.jsonl"))
                  if _first_session_id(path) == session.stem]
    return found
