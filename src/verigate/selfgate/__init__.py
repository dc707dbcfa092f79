"""Self-set gate enforcement: an agent that declares an approval gate is held to it until a person closes it."""

from __future__ import annotations

from .. import _face

_TYPE_CHECKING = False  # type checkers read this constant as typing.TYPE_CHECKING
if _TYPE_CHECKING:
    from ._enforce import PromptOutcome, Settings, ToolDecision, decide_prompt, decide_tool_call, settings_for
    from ._entries import GateEntry, GateSource, gate_id
    from ._fold import CloseRequest, SelfGate, SelfGateState, fold
    from ._phrases import CloseCommand, PhraseHit, Phrases, mask_non_prose
    from ._scan import SyncResult, request_close, sync
    from ._store import Cursor, GateStore, StoreProblem, StoreSnapshot

# The pre-tool-use hook runs on every tool call: names are imported on first use, so that a call that
# never scans (a Read, say) does not pay for the scanner's modules.
_EXPORTS: dict[str, tuple[str, ...]] = {
    "_enforce": ("PromptOutcome", "Settings", "ToolDecision", "decide_prompt", "decide_tool_call", "settings_for"),
    "_entries": ("GateEntry", "GateSource", "gate_id"),
    "_fold": ("CloseRequest", "SelfGate", "SelfGateState", "fold"),
    "_phrases": ("CloseCommand", "PhraseHit", "Phrases", "mask_non_prose"),
    "_scan": ("SyncResult", "request_close", "sync"),
    "_store": ("Cursor", "GateStore", "StoreProblem", "StoreSnapshot"),
}


__all__ = [
    "CloseCommand",
    "CloseRequest",
    "Cursor",
    "GateEntry",
    "GateSource",
    "GateStore",
    "PhraseHit",
    "Phrases",
    "PromptOutcome",
    "SelfGate",
    "SelfGateState",
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

__getattr__, __dir__ = _face.lazy(globals())
