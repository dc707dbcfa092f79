"""Reading the Stop / SubagentStop hook input: strictly for the run (``parse_stop_input``), leniently for the
error path (``error_context``: whatever a refused input still says about where to count and file a review)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import attrs

from .._errors import InputError
from .._project import find_project, project_dir
from ._protocol import Host

__all__ = ["ErrorContext", "Event", "StopInput", "error_context", "parse_stop_input", "stop_hook_active"]

Event = Literal["stop", "subagent-stop"]


@attrs.frozen
class StopInput:
    """The fields of a Stop / SubagentStop hook input that the gate uses."""

    host: Host
    event: Event
    session_id: str
    #: the gate's session: the host session, or ``<session>/agent/<agent_id>`` for a sub-agent
    session_key: str
    project_dir: Path
    transcript_path: Path | None
    last_assistant_message: str
    stop_hook_active: bool
    turn_id: str = ""


def _text_field(data: Mapping[str, Any], name: str, *, required: bool = False) -> str:
    value = data.get(name)
    if value is None:
        if required:
            raise InputError(f"the hook input has no {name}", source="<stdin>", field=name)
        return ""
    if not isinstance(value, str):
        raise InputError(f"{name} must be a string, not {type(value).__name__}", source="<stdin>", field=name)
    return value


def parse_stop_input(data: Mapping[str, Any], host: Host, event: Event,
                     environ: Mapping[str, str] | None = None) -> StopInput:
    """Check the stdin JSON of a Stop hook. The project is resolved as every hook resolves it
    (``verigate._project``): Claude Code's ``CLAUDE_PROJECT_DIR`` when set, else ``cwd``; Codex's ``cwd`` only."""
    environ = os.environ if environ is None else environ
    session_id = _text_field(data, "session_id", required=True)
    if not session_id:
        raise InputError("session_id is empty", source="<stdin>", field="session_id")
    project = project_dir(host, data, environ)
    folder = Path(project)
    if not folder.is_dir():
        raise InputError(f"the project directory {project} does not exist", source="<stdin>", field="cwd")
    session_key, transcript = session_id, _text_field(data, "transcript_path")
    if event == "subagent-stop":
        agent_id = _text_field(data, "agent_id", required=True)
        session_key = f"{session_id}/agent/{agent_id}"
        transcript = _text_field(data, "agent_transcript_path") or transcript
    return StopInput(
        host=host,
        event=event,
        session_id=session_id,
        session_key=session_key,
        project_dir=folder,
        transcript_path=Path(transcript) if transcript else None,
        last_assistant_message=_text_field(data, "last_assistant_message"),
        stop_hook_active=stop_hook_active(data) is True,
        turn_id=_text_field(data, "turn_id"),
    )


def stop_hook_active(data: Mapping[str, Any]) -> bool | None:
    """The host's one-bit loop hint, read leniently (None when the input does not carry it): it only ever makes
    the hook hand over sooner, so a value of an unknown shape counts as set instead of failing the input."""
    if "stop_hook_active" not in data:
        return None
    return data["stop_hook_active"] not in (None, False, 0, "", "false", "False", "0")


def is_project(folder: Path) -> bool:
    """A folder that already is a verigate project: it has verigate.yaml or .verigate/."""
    return (folder / "verigate.yaml").is_file() or (folder / ".verigate").is_dir()


@attrs.frozen
class ErrorContext:
    """What the error path could still learn from the input: where to count and file a review, and the flag."""

    #: the folder holding the counter file and the store (None: neither is reachable)
    project_dir: Path | None
    session_key: str
    #: the host's flag; None when the input does not carry one
    stop_hook_active: bool | None
    last_assistant_message: str = ""
    turn_id: str = ""


def error_context(stop: StopInput | None, raw: Mapping[str, Any] | None, host: Host, event: Event,
                  environ: Mapping[str, str]) -> ErrorContext:
    """The parsed input when there is one; else whatever the raw input still says, read leniently. A folder the
    input names only counts as the project when it already is a verigate project (verigate.yaml or .verigate/):
    the error path never creates a store in a folder nobody chose."""
    raw = raw or {}
    active = stop_hook_active(raw)
    if stop is not None:
        return ErrorContext(stop.project_dir, stop.session_key, active, stop.last_assistant_message, stop.turn_id)

    def text(name: str) -> str:
        value = raw.get(name)
        return value if isinstance(value, str) else ""

    # the folders the resolver may name, in its order: the one it picks when that is a project, else (it named a
    # folder that is no project, e.g. a CLAUDE_PROJECT_DIR that moved away) the input's own cwd when that is one
    folders = [find_project(host, raw, environ) or "", text("cwd")]
    project = next((Path(folder) for folder in folders if folder and is_project(Path(folder))), None)
    # an input without a readable session still gets a counter: shared by every such input of the project, it
    # only makes the hook hand over sooner
    session_key = text("session_id") or "<unreadable hook input>"
    if event == "subagent-stop":
        session_key = f"{session_key}/agent/{text('agent_id') or '<no agent_id>'}"
    return ErrorContext(project, session_key, active, text("last_assistant_message"), text("turn_id"))
