"""Where a Claude Code session keeps its sub-agent transcripts. A place that cannot be listed, or a sibling that
cannot be read, is an InputError naming it: a sub-agent left out is a run graded as if it never happened."""

from __future__ import annotations

import json
from pathlib import Path

from .._errors import InputError
from .._transcript_lines import bounded_lines, listed_logs, open_log_stream

__all__ = ["subagent_files"]


def _first_session_id(path: Path) -> str | None:
    """The session id of an old-layout sub-agent transcript's first record (None: it names none, or nothing is
    there to read). A file that cannot be read may be this session's: an InputError, neither attached nor dropped."""
    try:  # a regular file only: a pipe would block, a device never end (open_log_stream's InputError)
        with open_log_stream(str(path)) as stream:
            for raw in bounded_lines(stream, str(path)):  # a line past the bound: InputError, never cut
                try:
                    record = json.loads(raw)
                except (ValueError, RecursionError):
                    continue
                if isinstance(record, dict) and isinstance(record.get("sessionId"), str):
                    return str(record["sessionId"])
                return None
    except FileNotFoundError:  # a link to nothing, or gone since the folder was listed: no transcript
        return None
    except OSError as error:
        raise InputError(f"a sub-agent transcript beside the session cannot be read, so whose it is cannot be told "
                         f"({error.strerror})", source=str(path)) from None
    return None


def subagent_files(session_path: str | Path) -> list[Path]:
    """The sub-agent transcripts of a session, sorted: ``<session>/subagents/agent-*.jsonl`` (current layout)
    and, for older versions, ``agent-*.jsonl`` beside the session file whose lines carry the session's id.
    Raises InputError for a place that cannot be listed or a sibling that cannot be read."""
    session = Path(session_path)
    found = listed_logs(session.parent / session.stem / "subagents", prefix="agent-")
    if not session.name.startswith("agent-"):
        found += [path for path in listed_logs(session.parent, prefix="agent-", missing_ok=False)
                  if _first_session_id(path) == session.stem]
    return found
