"""verigate: only verification turns an agent's proposal to stop into a completion."""

from __future__ import annotations

from ._errors import (
    CandidateError,
    ConfigError,
    EvidenceError,
    EvidenceLegacyError,
    EvidencePartialError,
    HookDecisionError,
    InputError,
    JudgeError,
    LedgerTamperedError,
    PluginError,
    ReviewError,
    RuleError,
    SchemaError,
    StoreError,
    VerigateError,
)
from ._models import (
    Candidate,
    FinalizeResult,
    HookRecord,
    PostDecision,
    Reflection,
    StopDirective,
    Strengthen,
    StructuralFinding,
    Termination,
    TerminationReason,
    ToolObservation,
    Verdict,
)
from ._plugins import priority
from .hookspecs import hookimpl

#: the gate pulls in asyncio, cattrs and the configuration; it is imported on first use so that the CLI (which
#: imports this package on every hook invocation) starts fast
_LAZY = {
    "AgentTurn": "verigate.gate",
    "Gate": "verigate.gate",
    "LoopResult": "verigate.gate",
    "StepResult": "verigate.gate",
    "finalize_and_return": "verigate.gate",
    "finalize_and_return_async": "verigate.gate",
    "parse_candidate": "verigate.gate",
    "parse_termination": "verigate.gate",
    "run_gated": "verigate.gate",
    "run_gated_async": "verigate.gate",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'verigate' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "AgentTurn",
    "Candidate",
    "CandidateError",
    "ConfigError",
    "EvidenceError",
    "EvidenceLegacyError",
    "EvidencePartialError",
    "FinalizeResult",
    "Gate",
    "HookDecisionError",
    "HookRecord",
    "InputError",
    "JudgeError",
    "LedgerTamperedError",
    "LoopResult",
    "PluginError",
    "PostDecision",
    "Reflection",
    "ReviewError",
    "RuleError",
    "SchemaError",
    "StepResult",
    "StopDirective",
    "StoreError",
    "Strengthen",
    "StructuralFinding",
    "Termination",
    "TerminationReason",
    "ToolObservation",
    "Verdict",
    "VerigateError",
    "finalize_and_return",
    "finalize_and_return_async",
    "hookimpl",
    "parse_candidate",
    "parse_termination",
    "priority",
    "run_gated",
    "run_gated_async",
]
