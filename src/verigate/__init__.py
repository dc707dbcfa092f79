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

__all__ = [
    "Candidate",
    "CandidateError",
    "ConfigError",
    "EvidenceError",
    "EvidenceLegacyError",
    "EvidencePartialError",
    "FinalizeResult",
    "HookDecisionError",
    "HookRecord",
    "InputError",
    "JudgeError",
    "LedgerTamperedError",
    "PluginError",
    "PostDecision",
    "Reflection",
    "ReviewError",
    "RuleError",
    "SchemaError",
    "StopDirective",
    "StoreError",
    "Strengthen",
    "StructuralFinding",
    "Termination",
    "TerminationReason",
    "ToolObservation",
    "Verdict",
    "VerigateError",
    "hookimpl",
    "priority",
]
