"""Where a Claude Code session keeps its sub-agent transcripts — the grader attaches them to the session, the
self-gate reads them for gates. A place that cannot be listed, or a sibling that cannot be read, is an InputError
naming it: a sub-agent left out is a run graded, or a declaration read, as if it never happened.

A top-level module with nothing heavy imported (``verigate.transcripts`` re-exports it): the self-gate's
pre-tool-use check lists a session's sub-agent logs at every full check, and the transcripts package loads attrs."""

# os.path in session_of on purpose (its docstring says why)
# ruff: noqa: PTH119, PTH120
from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from ._errors import InputError
from ._transcript_lines import bounded_lines, listed_entries, listed_logs, open_log_stream

__all__ = ["is_workflow_journal", "journal_session", "session_of", "subagent_files"]

#: every sub-agent transcript's name is ``agent-<id>.jsonl``
_PREFIX = "agent-"


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


def subagent_files(session_path: str | Path, *, before_reading: Callable[[Path], object] | None = None,
                   ) -> list[Path]:
    """The sub-agent transcripts of a session: ``<session>/subagents/agent-*.jsonl``, then the Workflow tool's
    ``<session>/subagents/workflows/<run>/agent-*.jsonl`` (its ``journal.jsonl`` and ``*.meta.json`` are no
    transcripts), then, for older versions, ``agent-*.jsonl`` beside the session file whose first record carries
    the session's id; each part sorted. ``before_reading`` is called with every folder before it is listed and
    every old-layout sibling before it is read (the self-gate takes their stat signatures there: a change to any
    of them may change the answer). Raises InputError for a place that cannot be listed or a sibling that cannot
    be read."""
    session = Path(session_path)
    note = before_reading or (lambda _: None)
    subagents = session.parent / session.stem / "subagents"
    note(subagents)
    found = listed_logs(subagents, prefix=_PREFIX)
    workflows = subagents / "workflows"
    note(workflows)
    for run in listed_entries(workflows):
        note(run)  # every entry: a link to nothing, or to a file, lists nothing now but may lead to a folder later
        if run.is_dir():
            found += listed_logs(run, prefix=_PREFIX)
    if not session.name.startswith(_PREFIX):
        note(session.parent)
        for sibling in listed_logs(session.parent, prefix=_PREFIX, missing_ok=False):
            note(sibling)
            if _first_session_id(sibling) == session.stem:
                found.append(sibling)
    return found


def session_of(path: str) -> str | None:
    """The inverse of :func:`subagent_files` for its two folder layouts: ``<session>.jsonl`` for
    ``<session>/subagents/agent-*.jsonl`` or ``<session>/subagents/workflows/<run>/agent-*.jsonl``; None for any
    other path (an old-layout sibling names its session in its lines, not its path). str paths and os.path on
    purpose: the result is compared with paths spelt as a pattern spelt them, which pathlib would normalise."""
    name = os.path.basename(path)
    if not (name.startswith(_PREFIX) and name.endswith(".jsonl")):
        return None
    folder = os.path.dirname(path)
    if os.path.basename(os.path.dirname(folder)) == "workflows":
        folder = os.path.dirname(os.path.dirname(folder))
    return os.path.dirname(folder) + ".jsonl" if os.path.basename(folder) == "subagents" else None


def journal_session(path: str) -> str | None:
    """``<session>.jsonl`` for a Workflow run's journal, ``<session>/subagents/workflows/<run>/journal.jsonl``: the
    session's bookkeeping beside its Workflow agents' logs, no transcript (``subagent_files`` never reads it);
    None for any other path."""
    if os.path.basename(path) != "journal.jsonl":
        return None
    workflows = os.path.dirname(os.path.dirname(path))
    subagents = os.path.dirname(workflows)
    if os.path.basename(workflows) != "workflows" or os.path.basename(subagents) != "subagents":
        return None
    return os.path.dirname(subagents) + ".jsonl"


#: keys through which a reader of any trace format takes a line as an event (a message, a Codex payload, an audit
#: tool call): a Workflow journal's lines (``started``, ``result``: ``type``, ``key``, ``agentId``, ``result``)
#: hold none
_EVENT_KEYS = frozenset({"message", "payload", "tool_name", "tool", "tool_input", "toolUseResult"})


def is_workflow_journal(path: str) -> bool:
    """Whether the file at ``path`` reads as a Workflow run's journal by its own records: every line a JSON object
    with an ``agentId`` and a ``type`` other than a message's, and none of the keys a transcript reader takes an
    event from. Anything else — a line that is no JSON object, a line past the bound, a file that cannot be read —
    is not (it is graded, and so reported)."""
    try:
        with open_log_stream(path) as stream:
            for raw in bounded_lines(stream, path):
                if not raw.strip():
                    continue
                record = json.loads(raw)
                if not (isinstance(record, dict) and "agentId" in record and isinstance(record.get("type"), str)
                        and record["type"] not in ("user", "assistant") and _EVENT_KEYS.isdisjoint(record)):
                    return False
    except (OSError, ValueError, RecursionError, InputError):
        return False
    return True

