"""verigate: only verification turns an agent's proposal to stop into a completion."""

from __future__ import annotations

from . import _face

#: the distribution verigate-agents reads its version from here (pyproject.toml, [tool.hatch.version])
__version__ = "1.0.0"

from ._errors import (
    CandidateError,
    ConfigError,
    EvidenceError,
    EvidenceLegacyError,
    EvidencePartialError,
    GateHeldError,
    InputError,
    JudgeError,
    LedgerTamperedError,
    PluginError,
    ReviewError,
    ReviewPendingError,
    RuleError,
    SchemaError,
    StoreError,
    StrictJSONError,
    UnverifiedError,
    VerigateError,
)

#: ``typing`` costs milliseconds on every hook call; type checkers read this constant as typing.TYPE_CHECKING
_TYPE_CHECKING = False
if _TYPE_CHECKING:
    from ._json import loads as strict_loads
    from ._models import (
        Candidate,
        FinalizeResult,
        HookRecord,
        PostDecision,
        Reflection,
        StageContext,
        StopDirective,
        Strengthen,
        StructuralFinding,
        Termination,
        TerminationReason,
        ToolObservation,
        Verdict,
    )
    from ._plugins import priority
    from .gate import (
        AgentTurn,
        Gate,
        LoopResult,
        StepResult,
        finalize_and_return,
        finalize_and_return_async,
        parse_candidate,
        parse_termination,
        run_gated,
        run_gated_async,
    )
    from .hookspecs import hookimpl

#: everything but the exceptions loads on first use: the CLI imports this package on every hook invocation
#: (a PreToolUse hook runs before each tool call), and attrs, pluggy, asyncio and cattrs cost tens of ms there
_LAZY = {
    "AgentTurn": "verigate.gate",
    "Candidate": "verigate._models",
    "FinalizeResult": "verigate._models",
    "Gate": "verigate.gate",
    "HookRecord": "verigate._models",
    "LoopResult": "verigate.gate",
    "PostDecision": "verigate._models",
    "Reflection": "verigate._models",
    "StageContext": "verigate._models",
    "StepResult": "verigate.gate",
    "StopDirective": "verigate._models",
    "Strengthen": "verigate._models",
    "StructuralFinding": "verigate._models",
    "Termination": "verigate._models",
    "TerminationReason": "verigate._models",
    "ToolObservation": "verigate._models",
    "Verdict": "verigate._models",
    "finalize_and_return": "verigate.gate",
    "finalize_and_return_async": "verigate.gate",
    "hookimpl": "verigate.hookspecs",
    "parse_candidate": "verigate.gate",
    "parse_termination": "verigate.gate",
    "priority": "verigate._plugins",
    "run_gated": "verigate.gate",
    "run_gated_async": "verigate.gate",
    "strict_loads": "verigate._json:loads",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'verigate' has no attribute {name!r}")
    import importlib  # here, not at the top: ``import verigate`` alone stays as cheap as its exceptions

    module, _, attribute = module.partition(":")
    value = getattr(importlib.import_module(module), attribute or name)
    _face.present_one(value, "verigate", name)
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
    "GateHeldError",
    "HookRecord",
    "InputError",
    "JudgeError",
    "LedgerTamperedError",
    "LoopResult",
    "PluginError",
    "PostDecision",
    "Reflection",
    "ReviewError",
    "ReviewPendingError",
    "RuleError",
    "SchemaError",
    "StageContext",
    "StepResult",
    "StopDirective",
    "StoreError",
    "Strengthen",
    "StrictJSONError",
    "StructuralFinding",
    "Termination",
    "TerminationReason",
    "ToolObservation",
    "UnverifiedError",
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
    "strict_loads",
]

_face.present(globals(), "verigate")  # the exceptions, loaded above
