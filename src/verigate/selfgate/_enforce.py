"""Enforcement decisions for the two host events: a tool call (pre-tool-use) and a typed prompt."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from .._errors import ConfigError, InputError
from . import _caches, _wall
from ._defaults import (
    BEST_EFFORT,
    DEFAULT_BLOCKED_TOOLS,
    DEFAULT_HARDENING,
    DEFAULT_MODE,
    DEFAULT_STORE,
    MODE_ENV,
    Mode,
    mode_from_env,
)
from ._guard import protected_for, violation
from ._keywords import SHORT_PROMPT, normalise_prompt
from ._location import STORE_NAME, config_candidates, legacy_store, project_state_dir, protected_paths
from ._phrases import Screen
from ._statsig import Signature, signature
from ._store import GateStore
from ._tool_policy import (
    TOOL_ALIASES,
    ToolDecisionKind,
    boundary_verdict,
    gate_verdict,
    hardening_verdict,
    is_blocked,
    listed,
    still_open,
)
from ._tool_policy import describe as describe_refs
from ._tool_policy import how_to_close as how_to_close_refs

if TYPE_CHECKING:
    from ._fold import SelfGate
    from ._scan import SyncResult

__all__ = ["DEFAULT_BLOCKED_TOOLS", "DEFAULT_HARDENING", "DEFAULT_MODE", "DEFAULT_STORE", "MODE_ENV", "TOOL_ALIASES",
           "Mode", "PromptOutcome", "Settings", "ToolDecision", "decide_prompt", "decide_tool_call", "settings_for"]

@attrs.frozen
class Settings:
    project_dir: str
    mode: Mode
    blocked_tools: tuple[str, ...]
    store: GateStore
    #: the host whose sandbox is the boundary block mode relies on
    host: _wall.Host = "claude-code"
    #: "os" (block mode needs the host's sandbox) or "best-effort" (written by a person in the configuration)
    hardening: str = DEFAULT_HARDENING
    #: the configuration file the self_gate section came from ("" when none exists)
    config_path: str = ""
    #: the store is the one named by ``self_gate.store`` (not the per-user default)
    custom_store: bool = False
    #: what was done to the state on the way (an old store imported), for the person's systemMessage
    notice: str = ""


@attrs.frozen
class ToolDecision:
    """``deny`` refuses the call; ``warn`` lets it run with a warning (audit mode); ``allow`` says nothing."""

    decision: ToolDecisionKind
    reason: str = ""
    #: shown to the person (systemMessage)
    notice: str = ""


@attrs.frozen
class PromptOutcome:
    """``block`` refuses the prompt (internal errors in block mode only); ``context`` goes to the agent."""

    context: str = ""
    notice: str = ""
    block: bool = False


def settings_for(hook_input: Mapping[str, Any], host: _wall.Host = "claude-code", *,
                 import_legacy: bool = True) -> Settings:
    """The project is ``CLAUDE_PROJECT_DIR`` when set, else the hook input's ``cwd``. The self_gate section comes
    from the first configuration file found (``_location.config_candidates``: the per-user state folder,
    ``.codex/verigate.yaml``, the project's ``verigate.yaml``); the store is in the project's per-user state
    folder unless ``self_gate.store`` names one (relative to the project). ``VERIGATE_SELF_GATE_MODE``
    overrides the mode. An old ``.verigate/self-gates.jsonl`` is imported into a store that does not exist yet
    (``import_legacy=False``: left alone, as ``verigate doctor`` does)."""
    from .._project import project_dir  # the one resolver: Codex ignores an inherited CLAUDE_PROJECT_DIR

    project = project_dir(host, hook_input)
    state = project_state_dir(project)
    default_store = Path(state) / STORE_NAME
    candidates = config_candidates(project)
    # signatures before reading: an edit made meanwhile changes them, and the fast path then steps aside
    try:
        read_at: list[tuple[str, Signature | None]] | None = [(path, signature(path)) for path in candidates]
    except OSError:
        read_at = None
    config_path = next((path for path in candidates if Path(path).is_file()), "")
    mode, store, hardening = DEFAULT_MODE, DEFAULT_STORE, DEFAULT_HARDENING
    blocked: tuple[str, ...] = DEFAULT_BLOCKED_TOOLS
    if config_path:
        from .._config import load_config

        config = load_config(config_path)
        section = config.self_gate
        mode, blocked, store, hardening = section.mode, tuple(section.blocked_tools), section.store, section.hardening
        if read_at is not None and not config.warnings and store is None:
            # the fast path finds this cache in the default store's state folder, protected like the store;
            # a configuration that warns or names another store is read in full every time
            _caches.remember_config(GateStore(default_store).state_dir, read_at, mode, blocked, hardening)
    try:
        mode = mode_from_env(mode)
    except ValueError as exc:
        raise ConfigError(str(exc), source=MODE_ENV) from exc
    gate_store = GateStore(default_store if store is None else _store_path(project, store))
    notice = ""
    if import_legacy:  # not for verigate doctor, which changes nothing
        _write_project_note(project, state)
        notice = "" if store is not None else _import_legacy(project, gate_store)
    return Settings(project, mode, blocked, gate_store, host, hardening, config_path, store is not None, notice)


def _import_legacy(project: str, store: GateStore) -> str:
    """Bring the entries of the store's old place (``<project>/.verigate/self-gates.jsonl``) over, once."""
    legacy = legacy_store(project)
    if store.path.exists() or not os.path.exists(legacy):  # noqa: PTH110  (str paths from _location)
        return ""
    count = store.import_legacy(legacy)
    if not count:
        return ""
    return (f"verigate: imported {count} line(s) of the old self-gate store {legacy} into {store.path} (the "
            "per-user state folder, outside the agent's sandbox); the old file is no longer read and may be deleted")


def _write_project_note(project: str, state: str) -> None:
    """``project.json`` in the state folder says which project it belongs to (the folder's name is a hash)."""
    note = Path(state) / "project.json"
    if note.exists():
        return
    import json

    from .._fileio import replace_file

    try:
        note.parent.mkdir(parents=True, exist_ok=True)
        replace_file(note, json.dumps({"project": os.path.realpath(project)}, ensure_ascii=False).encode())
    except OSError:
        pass  # only for people reading the folder; the store does not depend on it


def _store_path(project: str, store: str) -> Path:
    return Path(store) if Path(store).is_absolute() else Path(project) / store


def _required_str(hook_input: Mapping[str, Any], field: str) -> str:
    value = hook_input.get(field)
    if not isinstance(value, str) or not value:
        raise InputError(f"the hook input has no {field}", source="<stdin>", field=field)
    return value


def _transcript(hook_input: Mapping[str, Any]) -> str | None:
    value = hook_input.get("transcript_path")
    return value if isinstance(value, str) and value else None


def _refs(gates: Sequence[SelfGate]) -> list[tuple[str, str]]:
    return [(gate.gate_id, gate.gate_text) for gate in gates]


def how_to_close(gates: Sequence[SelfGate]) -> str:
    return how_to_close_refs(_refs(gates))


def describe(gates: Sequence[SelfGate]) -> str:
    return describe_refs(_refs(gates))


def _pack_file() -> tuple[Path, Signature] | None:
    """The shipped pack's file and its signature, taken before anything reads the pack; None when the pack is
    not a plain file (a zipped install) or cannot be examined: then the fast path gets no phrase cache."""
    from .. import _data

    pack = _data.data_root() / "rules" / "self-gate.yaml"
    try:
        read_at = signature(pack) if isinstance(pack, Path) else None
    except OSError:
        read_at = None
    return (pack, read_at) if isinstance(pack, Path) and read_at is not None else None


def _remember_phrases(screen: Screen, state_dir: Path, pack: tuple[Path, Signature] | None) -> None:
    """Cache the prefilter's keywords for the fast path, unless a close rule has none (it always runs)."""
    prefilter = screen.prefilter
    keywords = prefilter.close_keywords()
    if pack is not None and keywords is not None:
        _caches.remember_phrases(state_dir, pack[0], pack[1], keywords, prefilter.keywords.get("open", ()),
                                 prefilter.keywords.get("not_close", ()))


def _remember_fold(settings: Settings, session_id: str, transcript: str, result: SyncResult) -> None:
    """Cache this answer's inputs for the fast path, unless the store has problems (they are reported, and the
    full check reports them on every call) or a source could not be examined."""
    if result.store_problems or result.sources is None or result.cursor is None:
        return
    _caches.remember_fold(settings.store.state_dir, session_id, transcript, result.store_signature, result.sources,
                         _refs(result.state.open_gates(session_id)), cursor=result.cursor.to_json(),
                         cursor_path=settings.store.cursor_path(session_id, transcript), head_crc=result.head_crc,
                         pending=bool(result.state.pending_requests(session_id)))


def decide_tool_call(hook_input: Mapping[str, Any], settings: Settings) -> ToolDecision:
    """Hardening first (denied in both modes), then the session's open gates for blocked tools. Leaves what
    the fast path (``_quick``) needs to give the same answer next time without this work."""
    session_id = _required_str(hook_input, "session_id")
    tool_name = _required_str(hook_input, "tool_name")
    tool_input = hook_input.get("tool_input")
    if tool_input is None:
        tool_input = {}
    if not isinstance(tool_input, Mapping):
        raise InputError("tool_input must be an object", source="<stdin>", field="tool_input")
    transcript = _transcript(hook_input)
    cwd = hook_input.get("cwd") if isinstance(hook_input.get("cwd"), str) else settings.project_dir
    project = settings.project_dir
    protected = protected_for(project, protected_paths(project, str(settings.store.path),
                                                       project_state_dir(project), settings.custom_store), transcript)
    screen = Screen(settings.store.state_dir)
    pack = _pack_file()
    # every tool, MCP tools included (they run outside the host's sandbox): the fast path does the same
    refused = violation(tool_name, tool_input, str(cwd), protected, screen.is_close_phrase)
    if refused:
        return ToolDecision(*hardening_verdict(tool_name, refused))
    _remember_phrases(screen, settings.store.state_dir, pack)
    if not is_blocked(tool_name, settings.blocked_tools):
        return ToolDecision("allow", notice=settings.notice)
    refused_by_boundary = _boundary_refusal(settings, tool_name)
    if refused_by_boundary is not None:
        return refused_by_boundary
    try:
        if transcript is None:
            raise InputError("the hook input has no transcript_path: open gates cannot be checked",
                             source="<stdin>", field="transcript_path")
        from ._scan import sync  # only blocked tools scan: a Read never imports the scanner

        result = sync(settings.store, session_id, transcript, screen.openings)
    except Exception as exc:
        # block mode fails closed; audit mode warns (hardening above was already enforced)
        problem = f"verigate self-gate could not check this session's gates: {exc}"
        if settings.mode == "block":
            return ToolDecision("deny", problem, problem)
        return ToolDecision("warn", problem, problem)
    _remember_fold(settings, session_id, transcript, result)
    problems = listed([str(problem) for problem in result.store_problems])
    decision, reason, notice = gate_verdict(settings.mode, tool_name, _refs(result.state.open_gates(session_id)),
                                            problems, str(settings.store.path))
    return ToolDecision(decision, reason, "\n".join(part for part in (settings.notice, notice) if part))


def _boundary_refusal(settings: Settings, tool_name: str) -> ToolDecision | None:
    """Block mode without the host's sandbox refuses blocked tools (unless a person wrote
    ``hardening: best-effort``); the verdict is cached for the fast path, keyed by the settings files."""
    if settings.mode != "block" or settings.hardening == BEST_EFFORT:
        return None
    project, store, state_dir = settings.project_dir, str(settings.store.path), str(settings.store.state_dir)
    files = _wall.watched_files(settings.host, project, config_candidates(project))
    lacking: list[str] | None = None
    if not settings.custom_store:
        # the verdict cached under the signatures of every file it read, which the fast path answers from: while
        # none of them changed, checking them again (thirty path rules as regexes) could only give the same lines
        try:
            lacking = _wall.cached_missing(state_dir, settings.host, project, store, files)
        except Exception:  # no cache, a changed file, a damaged cache: the check below decides
            lacking = None
    if lacking is None:
        # the key (the files' signatures) before reading them: a file changed meanwhile makes the next call check
        # again
        key = _wall.key(settings.host, project, store, files)
        resolved: dict[str, str] = {}  # the links the verdict followed: the cache holds while they resolve alike
        try:
            from ._boundary import missing

            lacking = missing(settings.host, project, store, settings.config_path, settings.custom_store,
                              seen=resolved)
        except Exception as exc:  # the boundary cannot be shown to hold: refuse, and cache nothing (it may pass)
            return ToolDecision(*boundary_verdict(tool_name, settings.host,
                                                  [f"the boundary check failed ({type(exc).__name__}: {exc})"],
                                                  settings.config_path))
        if not settings.custom_store:
            _wall.remember_missing(state_dir, settings.host, key, lacking, resolved)
    if not lacking:
        return None
    return ToolDecision(*boundary_verdict(tool_name, settings.host, lacking, settings.config_path))


def decide_prompt(hook_input: Mapping[str, Any], settings: Settings) -> PromptOutcome:
    """The human channel: a prompt that is, as a whole, a close phrase requests a close, confirmed once the
    transcript shows a person typed it; anything else closes nothing, and the agent is told why."""
    session_id = _required_str(hook_input, "session_id")
    prompt = hook_input.get("prompt")
    if not isinstance(prompt, str):
        raise InputError("the hook input has no prompt", source="<stdin>", field="prompt")
    from ._scan import request_close, sync

    transcript = _transcript(hook_input)
    if transcript is not None and not Path(transcript).exists():
        # a session's first prompt can arrive before the host has created its log: nothing to scan yet (the store
        # still knows every gate), and the person's prompt must not be refused for it
        transcript = None
    screen = Screen(settings.store.state_dir)
    pack = _pack_file()
    result = sync(settings.store, session_id, transcript, screen.openings)
    if transcript is not None:
        _remember_fold(settings, session_id, transcript, result)
    _remember_phrases(screen, settings.store.state_dir, pack)
    gates = result.state.open_gates(session_id)
    if not gates and len(normalise_prompt(prompt)) > SHORT_PROMPT:
        return PromptOutcome()
    command = screen.close_command(prompt)
    if command is not None:
        if not gates:
            return PromptOutcome(context="verigate: there is no open self-set gate in this session to close.")
        chosen, written = request_close(settings.store, session_id, transcript, command, prompt)
        if not chosen:
            return PromptOutcome(context=f"verigate: {command.gate_id} is not an open gate of this session; open: "
                                         f"{describe(gates)}.")
        ids = listed([gate.gate_id for gate in chosen], separator=", ")
        refused = [entry for entry in written if entry.status == "close_refused"]
        if any(entry.status == "closed" for entry in written):
            return PromptOutcome(context=f"verigate: a person closed self-set gate(s) {ids}. You may continue.",
                                 notice=f"verigate: closed gate(s) {ids}")
        if refused:
            return PromptOutcome(context=f"verigate: this close phrase did not come from a person typing it "
                                         f"({refused[0].closed_reason}); gate(s) {ids} stay open.")
        return PromptOutcome(
            context=f"verigate: the person asked to close gate(s) {ids}; the close takes effect once verigate "
                    "sees this typed prompt in the session transcript (by your next tool call).",
            notice=f"verigate: close of {ids} requested")
    if not gates:
        return PromptOutcome()
    refusals = screen.not_close(prompt)
    if refusals:
        return PromptOutcome(context=(
            f"verigate: this prompt does not close your self-set gate(s) ({refusals[0].matched!r} is "
            f"{refusals[0].rule_id.rsplit('.', 1)[-1]}, not a person's release). Still open: {describe(gates)}. "
            f"{how_to_close(gates)}"))
    return PromptOutcome(context=still_open(_refs(gates)))

