"""Self-set gate enforcement: an agent that declares an approval gate is held to it until a person closes it."""

from __future__ import annotations

from ._enforce import PromptOutcome, Settings, ToolDecision, decide_prompt, decide_tool_call, settings_for
from ._entries import GateEntry, GateSource, gate_id
from ._fold import CloseRequest, Gate, GateState, fold
from ._phrases import CloseCommand, PhraseHit, Phrases, mask_non_prose
from ._scan import SyncResult, request_close, sync
from ._store import Cursor, GateStore, StoreProblem, StoreSnapshot

__all__ = [
    "CloseCommand",
    "CloseRequest",
    "Cursor",
    "Gate",
    "GateEntry",
    "GateSource",
    "GateState",
    "GateStore",
    "PhraseHit",
    "Phrases",
    "PromptOutcome",
    "Settings",
    "StoreProblem",
    "StoreSnapshot",
    "SyncResult",
    "ToolDecision",
    "decide_prompt",
    "decide_tool_call",
    "fold",
    "gate_id",
    "mask_non_prose",
    "request_close",
    "settings_for",
    "sync",
]
